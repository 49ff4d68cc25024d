/*
 * store: ring of owned events plus per-process aggregates.
 * Invariant: ring[seq % cap] holds event seq for seq in [oldest,
 * next_seq), with oldest >= next_seq - cap; everything older has been
 * freed (its slot's seq is 0 or a newer one); bytes is the sum of the
 * held events' sizes.
 * Every process has its own activity stamp (seen): the store's clock
 * steps once per touch, so no two processes share one and "the k least
 * recently active" is always exactly k processes.
 */
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pidtext.h"
#include "xalloc.h"

/* The index's key of a record: its pid. */
static const void *proc_key(const void *ctx, const void *val)
{
	(void)ctx;
	return &(*(struct proc *const *)val)->pid;
}

void store_init(struct store *st, size_t ring_cap)
{
	memset(st, 0, sizeof(*st));
	st->cap = ring_cap ? ring_cap : 1;
	st->ring = xcalloc(st->cap, sizeof(*st->ring));
	st->next_seq = st->oldest = 1;
	st->max_bytes = store_ring_bytes(st->cap);
	st->max_exited = 10000;
	hmap_init_outside(&st->index, sizeof(struct bs_pid),
			  sizeof(struct proc *), proc_key, NULL);
}

size_t store_ring_bytes(size_t ring_cap)
{
	size_t b = ring_cap * STORE_EVENT_BYTES;
	return b / STORE_EVENT_BYTES == ring_cap && b > STORE_BYTES_MIN ? b :
		STORE_BYTES_MIN;
}

static void proc_free(struct proc *p)
{
	free(p->name);
	free(p->initial);
	free(p->label);
	free(p->current);
	free(p->reason);
	free(p->hist);
	free(p);
}

static void free_funcs(struct store *st)
{
	for (size_t i = 0; i < st->nfuncs; i++) {
		free(st->funcs[i]->mfa);
		free(st->funcs[i]);
	}
	free(st->funcs);
	st->funcs = NULL;
	st->nfuncs = 0;
}

static void free_procs(struct store *st)
{
	for (size_t i = 0; i < st->nprocs; i++)
		proc_free(st->procs[i]);
	free(st->procs);
	hmap_release(&st->index);
	st->procs = NULL;
	st->nprocs = st->procs_cap = 0;
}

static void free_events(struct store *st)
{
	for (size_t i = 0; i < st->cap; i++) {
		free(st->ring[i].pid_text);
		st->ring[i].pid_text = NULL;
		st->ring[i].seq = 0;
	}
	st->bytes = 0;
}

void store_release(struct store *st)
{
	free_events(st);
	free(st->ring);
	free_procs(st);
	free_funcs(st);
	free(st->keep);
	memset(st, 0, sizeof(*st));
}

void store_clear(struct store *st)
{
	free_events(st);
	free_procs(st);
	free_funcs(st);
	st->evicted = 0;
	st->next_seq = st->oldest = 1;
	st->nexited = 0;
	st->generation++;
	st->tree_gen++;
}

uint64_t store_oldest_seq(const struct store *st)
{
	return st->oldest;
}

const struct sevent *store_event(const struct store *st, uint64_t seq)
{
	if (seq < store_oldest_seq(st) || seq >= st->next_seq)
		return NULL;
	const struct sevent *e = &st->ring[seq % st->cap];
	return e->seq == seq ? e : NULL;
}

static void index_put(struct store *st, struct proc *p)
{
	*(struct proc **)hmap_put(&st->index, &p->pid, NULL) = p;
}

struct proc *store_proc(const struct store *st, struct bs_pid pid)
{
	struct proc *const *p = hmap_get(&st->index, &pid);
	return p ? *p : NULL;
}

static void touch(struct store *st, struct proc *p)
{
	p->seen = ++st->clock;
}

static struct proc *proc_get(struct store *st, struct bs_pid pid,
			     const char *pid_text)
{
	struct proc *p = store_proc(st, pid);
	if (p) {
		touch(st, p);
		return p;
	}
	if (st->nprocs == st->procs_cap) {
		st->procs_cap = st->procs_cap ? st->procs_cap * 2 : 256;
		st->procs = xrealloc(st->procs, st->procs_cap * sizeof(*st->procs));
	}
	p = xcalloc(1, sizeof(*p));
	p->pid = pid;
	snprintf(p->pid_text, sizeof(p->pid_text), "%s", pid_text);
	p->mqlen = -1;
	p->memory.bytes = p->heap.bytes = p->reds = p->rreds = -1;
	p->in_ts = -1;
	touch(st, p);
	st->procs[st->nprocs++] = p;
	index_put(st, p);
	return p;
}

/* Make p the spawn tree parent of c (the last of its children). */
static void tree_link(struct store *st, struct proc *c, struct proc *p)
{
	if (c->up == p || c == p)
		return;
	if (c->up) {
		struct proc *o = c->up;
		if (c->prev_sib)
			c->prev_sib->next_sib = c->next_sib;
		else
			o->kids = c->next_sib;
		if (c->next_sib)
			c->next_sib->prev_sib = c->prev_sib;
		else
			o->kids_tail = c->prev_sib;
	}
	c->up = p;
	c->next_sib = NULL;
	c->prev_sib = p->kids_tail;
	if (p->kids_tail)
		p->kids_tail->next_sib = c;
	else
		p->kids = c;
	p->kids_tail = c;
	st->tree_gen++;
}

/* p is about to go: its parent forgets it, its children are orphans. */
static void tree_cut(struct proc *p)
{
	if (p->up) {
		if (p->prev_sib)
			p->prev_sib->next_sib = p->next_sib;
		else
			p->up->kids = p->next_sib;
		if (p->next_sib)
			p->next_sib->prev_sib = p->prev_sib;
		else
			p->up->kids_tail = p->prev_sib;
	}
	for (struct proc *k = p->kids, *next; k; k = next) {
		next = k->next_sib;
		k->up = k->prev_sib = k->next_sib = NULL;
	}
}

/* The k-th smallest (1-based, 1 <= k <= n) of keys[0..n), which it
 * reorders: a radix select, byte by byte from the highest one in which
 * the keys differ, keeping only the bucket the k-th falls in; O(n) per
 * byte, and a byte that does not tell them apart is skipped. */
static uint64_t kth_smallest(uint64_t *keys, size_t n, size_t k,
			     uint64_t *work)
{
	uint64_t diff = 0;
	for (size_t i = 1; i < n; i++)
		diff |= keys[i] ^ keys[0];
	*work += n;
	int shift = 56;
	while (shift > 0 && !(diff >> shift))
		shift -= 8;
	for (; shift >= 0 && n > 1; shift -= 8) {
		size_t count[256] = { 0 }, b = 0, m = 0;
		for (size_t i = 0; i < n; i++)
			count[(keys[i] >> shift) & 255]++;
		while (k > count[b])
			k -= count[b++];
		for (size_t i = 0; i < n; i++)
			if (((keys[i] >> shift) & 255) == b)
				keys[m++] = keys[i];
		*work += 2 * n;
		n = m;
	}
	return keys[0];   /* what is left is k copies of one key, or one */
}

/* How a process ranks for being forgotten: the smallest goes first.
 * Registered processes go after all the others, then the least recently
 * active first. */
static uint64_t quiet_key(const struct proc *p)
{
	return (p->name ? UINT64_C(1) << 63 : 0) | p->seen;
}

/* Forget the oldest exited processes beyond max_exited, then the quietest
 * until at most `want` are left; never the kept ones.  A few passes over
 * the table: O(n). */
static void forget(struct store *st, size_t want)
{
	size_t drop_exited = st->nexited > st->max_exited ?
		st->nexited - st->max_exited : 0;
	if (!drop_exited && st->nprocs <= want)
		return;
	for (size_t i = 0; i < st->nkeep; i++) {
		struct proc *p = store_proc(st, st->keep[i]);
		if (p)
			p->kept = true;
	}
	uint64_t *keys = xmalloc(st->nprocs * sizeof(*keys));
	/* exited processes stamped up to exit_bound go, and then the others
	 * ranked up to quiet_bound; stamps start at 1, so 0 spares all */
	uint64_t exit_bound = 0, quiet_bound = 0;
	size_t left = st->nprocs, n = 0;
	if (drop_exited) {
		for (size_t i = 0; i < st->nprocs; i++)
			if (!st->procs[i]->kept && st->procs[i]->exited)
				keys[n++] = st->procs[i]->seen;
		st->forget_work += st->nprocs;
		exit_bound = n <= drop_exited ? UINT64_MAX :
			kth_smallest(keys, n, drop_exited, &st->forget_work);
		left -= n < drop_exited ? n : drop_exited;
	}
	if (left > want) {
		n = 0;
		for (size_t i = 0; i < st->nprocs; i++) {
			const struct proc *p = st->procs[i];
			if (!p->kept && !(p->exited && p->seen <= exit_bound))
				keys[n++] = quiet_key(p);
		}
		st->forget_work += st->nprocs;
		quiet_bound = n <= left - want ? UINT64_MAX :
			kth_smallest(keys, n, left - want, &st->forget_work);
	}
	free(keys);

	size_t j = 0;
	for (size_t i = 0; i < st->nprocs; i++) {
		struct proc *p = st->procs[i];
		bool old_exit = p->exited && p->seen <= exit_bound;
		if (p->kept || (!old_exit && quiet_key(p) > quiet_bound)) {
			p->kept = false;
			st->procs[j++] = p;
			continue;
		}
		if (p->exited)
			st->nexited--;
		if (old_exit)
			st->pruned++;
		else
			st->forgotten++;
		tree_cut(p);
		proc_free(p);
	}
	st->forget_work += st->nprocs;
	st->nprocs = j;
	hmap_clear(&st->index);
	for (size_t i = 0; i < st->nprocs; i++)
		index_put(st, st->procs[i]);
	st->generation++;
	st->tree_gen++;
}

/* Below max_procs by an eighth after a pass, so that passes, O(n) each,
 * come once per n/8 new processes at most: O(1) a process, amortized. */
static size_t procs_low(const struct store *st)
{
	size_t slack = st->max_procs / 8;
	return st->max_procs - (slack ? slack : 1);
}

/* Before adding what may be a new process: room for it. */
static void make_room(struct store *st, struct bs_pid pid)
{
	if (st->max_procs && st->nprocs >= st->max_procs &&
	    !store_proc(st, pid))
		forget(st, procs_low(st));
}

void store_keep(struct store *st, const struct bs_pid *pids, size_t n)
{
	st->keep = xrealloc(st->keep, (n ? n : 1) * sizeof(*st->keep));
	if (n)
		memcpy(st->keep, pids, n * sizeof(*pids));
	st->nkeep = n;
}

static void set_str(char **dst, const char *s)
{
	if (s && *dst && !strcmp(*dst, s))
		return;
	free(*dst);
	*dst = s ? xstrdup(s) : NULL;
}

/* Parse "<0.N.S>" (or "<name@host.N.S>") back into a pid's numbers;
 * false for anything else. */
static bool pid_of_text(const char *s, struct bs_pid *out)
{
	struct pidtext pt;
	if (!s || pidtext_parse(s, &pt) < 0)
		return false;
	out->num = pt.num;
	out->serial = pt.serial;
	return true;
}

static struct fstat *func_get(struct store *st, const char *mfa)
{
	for (size_t i = 0; i < st->nfuncs; i++)
		if (!strcmp(st->funcs[i]->mfa, mfa))
			return st->funcs[i];
	st->funcs = xrealloc(st->funcs, (st->nfuncs + 1) * sizeof(*st->funcs));
	struct fstat *f = xcalloc(1, sizeof(*f));
	f->mfa = xstrdup(mfa);
	st->funcs[st->nfuncs++] = f;
	return f;
}

static void func_event(struct store *st, const struct event *ev)
{
	if (!ev->mfa)
		return;
	struct fstat *f = func_get(st, ev->mfa);
	if (ev->type == EV_CALL) {
		f->calls++;
		f->last_pid = ev->pid;
		snprintf(f->last_pid_text, sizeof(f->last_pid_text), "%s", ev->pid_text);
		return;
	}
	if (ev->type == EV_RETURN)
		f->returns++;
	else
		f->exceptions++;
	if (ev->elapsed_us >= 0) {
		f->lat[f->latpos] = ev->elapsed_us > UINT32_MAX ? UINT32_MAX :
			(uint32_t)ev->elapsed_us;
		f->latpos = (f->latpos + 1) % STORE_LATENCIES;
		if (f->nlat < STORE_LATENCIES)
			f->nlat++;
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

long store_latency(const struct fstat *f, int p)
{
	uint32_t tmp[STORE_LATENCIES];
	if (!f->nlat)
		return -1;
	memcpy(tmp, f->lat, f->nlat * sizeof(tmp[0]));
	qsort(tmp, f->nlat, sizeof(tmp[0]), cmp_u32);
	size_t i = (size_t)((p * (long)(f->nlat - 1) + 50) / 100);
	return (long)tmp[i];
}

/* e's strings and raw bytes (raw, raw_len: kept, or NULL) from ev's, in
 * one block; the old block is freed. */
static void put_text(struct sevent *e, const struct event *ev,
		     const char *raw, uint32_t raw_len)
{
	/* pid_text comes first, always: it is what frees the block */
	const char *fields[8] = { ev->pid_text ? ev->pid_text : "", ev->name,
				  ev->peer, ev->peer_name, ev->mfa, ev->payload,
				  ev->extra, ev->from };
	size_t lens[8], total = raw ? raw_len : 0;
	for (int i = 0; i < 8; i++) {
		lens[i] = fields[i] ? strlen(fields[i]) + 1 : 0;
		total += lens[i];
	}
	e->size = total;
	char *blk = xmalloc(total), *at = blk;
	char **dst[8] = { &e->pid_text, &e->name, &e->peer, &e->peer_name,
			  &e->mfa, &e->payload, &e->extra, &e->from };
	for (int i = 0; i < 8; i++) {
		*dst[i] = NULL;
		if (!fields[i])
			continue;
		memcpy(at, fields[i], lens[i]);
		*dst[i] = at;
		at += lens[i];
	}
	if (raw)   /* from another block: the caller's or the old one */
		memcpy(at, raw, raw_len);
	e->raw = raw ? at : NULL;
	e->raw_len = raw ? raw_len : 0;
}

void store_set_text(struct store *st, struct sevent *e,
		    const struct event *ev)
{
	char *old = e->pid_text;
	st->bytes -= e->size;
	put_text(e, ev, e->raw, e->raw_len);
	st->bytes += e->size;
	free(old);
	st->generation++;
}

/* The oldest event goes. */
static void evict(struct store *st)
{
	struct sevent *e = &st->ring[st->oldest % st->cap];
	if (e->seq == st->oldest) {
		free(e->pid_text);
		e->pid_text = NULL;
		e->seq = 0;
		st->bytes -= e->size;
		st->evicted++;
	}
	st->oldest++;
}

uint64_t store_add_event(struct store *st, const struct event *ev)
{
	uint64_t seq = st->next_seq;
	if (seq - st->oldest == st->cap)
		evict(st);   /* its slot */
	st->next_seq++;
	struct sevent *e = &st->ring[seq % st->cap];
	memset(e, 0, sizeof(*e));
	e->seq = seq;
	e->type = ev->type;
	e->ts = ev->ts;
	e->pid = ev->pid;
	e->truncated = ev->truncated;
	e->syn = ev->syn;
	e->raw_part = ev->raw_part;
	e->elapsed_us = ev->elapsed_us;
	memcpy(e->heap, ev->heap, sizeof(e->heap));
	e->latency_us = ev->latency_us;
	put_text(e, ev, ev->raw, ev->raw_len);
	/* the bytes bound: the oldest go, never the one just added */
	st->bytes += e->size;
	while (st->bytes > st->max_bytes && st->oldest < seq)
		evict(st);

	struct bs_pid child = { 0, 0, ev->pid.node };
	bool has_child = ev->type == EV_SPAWN && pid_of_text(ev->peer, &child);
	make_room(st, ev->pid);
	if (has_child)
		make_room(st, child);
	struct proc *p = proc_get(st, ev->pid, ev->pid_text);
	p->last_ts = ev->ts;
	if (!p->first_seq)
		p->first_seq = seq;
	if (ev->name && ev->type != EV_UNREGISTER)
		set_str(&p->name, ev->name);
	if (ev->label && !p->label)
		p->label = xstrdup(ev->label);
	switch (ev->type) {
	case EV_SEND:
	case EV_SEND_DEAD:
		p->sends++;
		break;
	case EV_RECEIVE:
		p->receives++;
		break;
	case EV_TIMEOUT:
		p->timeouts++;
		break;
	case EV_ALARM:
		p->alarms++;
		st->alarms++;
		snprintf(p->last_alarm, sizeof(p->last_alarm), "%s",
			 ev->extra ? ev->extra : "");
		break;
	case EV_SPAWN: {
		p->spawns++;
		if (has_child) {
			struct proc *c = proc_get(st, child, ev->peer);
			c->has_parent = true;
			c->parent = ev->pid;
			tree_link(st, c, p);
			/* what proc_lib runs, where the spawn says it */
			const char *init = ev->extra ? ev->extra : ev->mfa;
			if (init && !c->initial)
				c->initial = xstrdup(init);
		}
		break;
	}
	case EV_SPAWNED: {
		struct bs_pid parent = { 0, 0, ev->pid.node };
		if (pid_of_text(ev->peer, &parent)) {
			p->has_parent = true;
			p->parent = parent;
			struct proc *up = store_proc(st, parent);
			if (up)
				tree_link(st, p, up);
		}
		if (ev->extra || ev->mfa)
			set_str(&p->initial, ev->extra ? ev->extra : ev->mfa);
		break;
	}
	case EV_EXIT:
		if (!p->exited) {
			st->nexited++;
			p->exit_tick = st->ticks;
		}
		p->exited = true;
		set_str(&p->reason, ev->payload ? ev->payload : "?");
		break;
	case EV_UNREGISTER:
		set_str(&p->name, NULL);
		break;
	case EV_CALL:
	case EV_RETURN:
	case EV_EXCEPTION:
		func_event(st, ev);
		break;
	case EV_GC_MINOR_END:
	case EV_GC_MAJOR_END:
		p->gcs++;
		break;
	case EV_IN:
	case EV_IN_EXITING:
		p->in_ts = ev->ts;
		break;
	case EV_OUT:
	case EV_OUT_EXITING:
	case EV_OUT_EXITED:
		if (p->in_ts >= 0 && ev->ts >= p->in_ts)
			p->run_us += ev->ts - p->in_ts;
		p->in_ts = -1;
		break;
	default:
		break;
	}
	st->generation++;
	return seq;
}

void store_add_counts(struct store *st, struct bs_pid pid, const char *pid_text,
		      unsigned long sends, unsigned long receives,
		      unsigned long spawns)
{
	make_room(st, pid);
	struct proc *p = proc_get(st, pid, pid_text);
	p->sends += sends;
	p->receives += receives;
	p->spawns += spawns;
	st->generation++;
}

void store_set_info(struct store *st, struct bs_pid pid, const char *pid_text,
		    const char *name, const char *current, long mqlen)
{
	make_room(st, pid);
	size_t before = st->nprocs;
	struct proc *p = proc_get(st, pid, pid_text);
	/* a sample like the last one changes nothing a view shows */
	bool changed = st->nprocs != before || p->mqlen != mqlen ||
		(name && (!p->name || strcmp(p->name, name))) ||
		(current && (!p->current || strcmp(p->current, current)));
	if (name)
		set_str(&p->name, name);
	if (current)
		set_str(&p->current, current);
	p->mqlen = mqlen;
	if (changed)
		st->generation++;
}

bool store_size_stale(const struct proc_size *z, int64_t now_ms)
{
	return z->bytes >= 0 && !z->at_least && now_ms - z->ms > STORE_STALE_MS;
}

/* A lower bound says less than a measured value that is recent, or still
 * larger: that one stays. */
static void set_size(struct proc_size *z, long bytes, bool at_least,
		     int64_t now_ms)
{
	if (at_least && z->bytes >= 0 && !z->at_least &&
	    (!store_size_stale(z, now_ms) || z->bytes >= bytes))
		return;
	z->bytes = bytes;
	z->at_least = at_least;
	z->ms = now_ms;
}

void store_set_sizes(struct store *st, struct bs_pid pid, long memory,
		     bool memory_at_least, long reductions, long heap,
		     bool heap_at_least, int64_t now_ms)
{
	struct proc *p = store_proc(st, pid);
	if (!p)
		return;
	if (p->reds >= 0 && reductions >= p->reds && now_ms > p->reds_ms)
		p->rreds = (long)((reductions - p->reds) * 1000 /
				  (now_ms - p->reds_ms));
	p->reds = reductions;
	p->reds_ms = now_ms;
	set_size(&p->memory, memory, memory_at_least, now_ms);
	set_size(&p->heap, heap, heap_at_least, now_ms);
	st->generation++;
}

void store_set_label(struct store *st, struct bs_pid pid, const char *label)
{
	struct proc *p = store_proc(st, pid);
	if (!p || !label)
		return;
	set_str(&p->label, label);
	st->generation++;
}

const char *store_proc_title(const struct proc *p)
{
	return p->name ? p->name : p->label ? p->label :
		p->initial ? p->initial : "";
}

void store_recorded_proc(struct store *st, struct proc *p, const char *initial,
			 bool has_parent, struct bs_pid parent, bool exited,
			 const char *reason)
{
	if (initial && !p->initial)
		p->initial = xstrdup(initial);
	if (has_parent && !p->has_parent) {
		p->has_parent = true;
		p->parent = parent;
		struct proc *up = store_proc(st, parent);
		if (up)
			tree_link(st, p, up);
	}
	if (exited && !p->exited) {
		p->exited = true;
		p->exit_tick = st->ticks;
		st->nexited++;
		if (reason && !p->reason)
			p->reason = xstrdup(reason);
	}
	st->generation++;
}

static uint32_t clamp32(unsigned long v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* A second of a process's history; a process quiet for the whole of it
 * lets it go.  True when a sparkline drawn from it changed. */
static bool hist_push(struct proc *p, unsigned long s, unsigned long r)
{
	struct proc_history *h = p->hist;
	if (!h) {
		if (!s && !r)
			return false;
		h = p->hist = xcalloc(1, sizeof(*h));
	}
	if (h->n == STORE_HISTORY) {   /* the oldest goes */
		h->sum_sends -= h->sends[h->pos];
		h->sum_receives -= h->receives[h->pos];
	} else {
		h->n++;
	}
	h->sends[h->pos] = clamp32(s);
	h->receives[h->pos] = clamp32(r);
	h->sum_sends += h->sends[h->pos];
	h->sum_receives += h->receives[h->pos];
	h->pos = (uint8_t)((h->pos + 1) % STORE_HISTORY);
	h->quiet = s || r ? 0 : (uint8_t)(h->quiet + 1);
	if (h->quiet >= STORE_HISTORY) {
		free(h);
		p->hist = NULL;
	}
	return true;
}

static uint32_t hist_at(const struct proc_history *h, const uint32_t *v,
			unsigned i)
{
	if (!h || i >= h->n)
		return 0;
	return v[(h->pos + STORE_HISTORY - 1 - i) % STORE_HISTORY];
}

uint32_t store_hist_sends(const struct proc_history *h, unsigned i)
{
	return hist_at(h, h ? h->sends : NULL, i);
}

uint32_t store_hist_receives(const struct proc_history *h, unsigned i)
{
	return hist_at(h, h ? h->receives : NULL, i);
}

void store_tick(struct store *st)
{
	bool changed = false;
	st->ticks++;
	if (st->nexited > st->max_exited ||
	    (st->max_procs && st->nprocs > st->max_procs))
		forget(st, st->max_procs ? procs_low(st) : st->nprocs);
	for (size_t i = 0; i < st->nfuncs; i++) {
		struct fstat *f = st->funcs[i];
		changed |= f->rcalls != f->calls - f->tick_calls;
		f->rcalls = f->calls - f->tick_calls;
		f->tick_calls = f->calls;
	}
	for (size_t i = 0; i < st->nprocs; i++) {
		struct proc *p = st->procs[i];
		unsigned long s = p->sends - p->tick_sends,
			r = p->receives - p->tick_receives,
			sp = p->spawns - p->tick_spawns;
		if (st->history)
			changed |= hist_push(p, s, r);
		changed |= s != p->rsends || r != p->rreceives || sp != p->rspawns;
		p->rsends = s;
		p->rreceives = r;
		p->rspawns = sp;
		p->tick_sends = p->sends;
		p->tick_receives = p->receives;
		p->tick_spawns = p->spawns;
	}
	if (changed)   /* forget has counted its own */
		st->generation++;
}
