/*
 * store: ring of owned events plus per-process aggregates.
 * Invariant: ring[seq % cap] holds event seq for seq in
 * [store_oldest_seq, next_seq); everything older has been freed.
 */
#include "store.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pidtext.h"
#include "xalloc.h"

void store_init(struct store *st, size_t ring_cap)
{
	memset(st, 0, sizeof(*st));
	st->cap = ring_cap ? ring_cap : 1;
	st->ring = xcalloc(st->cap, sizeof(*st->ring));
	st->next_seq = 1;
	st->max_exited = 10000;
}

static void proc_free(struct proc *p)
{
	free(p->name);
	free(p->initial);
	free(p->current);
	free(p->reason);
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
	free(st->index);
	st->procs = NULL;
	st->index = NULL;
	st->nprocs = st->procs_cap = st->index_cap = 0;
}

static void free_events(struct store *st)
{
	for (size_t i = 0; i < st->cap; i++) {
		free(st->ring[i].pid_text);
		st->ring[i].pid_text = NULL;
		st->ring[i].seq = 0;
	}
}

void store_release(struct store *st)
{
	free_events(st);
	free(st->ring);
	free_procs(st);
	free_funcs(st);
	memset(st, 0, sizeof(*st));
}

void store_clear(struct store *st)
{
	free_events(st);
	free_procs(st);
	free_funcs(st);
	st->evicted = 0;
	st->next_seq = 1;
	st->nexited = 0;
	st->generation++;
}

uint64_t store_oldest_seq(const struct store *st)
{
	return st->next_seq > st->cap ? st->next_seq - st->cap : 1;
}

const struct sevent *store_event(const struct store *st, uint64_t seq)
{
	if (seq < store_oldest_seq(st) || seq >= st->next_seq)
		return NULL;
	const struct sevent *e = &st->ring[seq % st->cap];
	return e->seq == seq ? e : NULL;
}

static size_t pid_hash(struct bs_pid p)
{
	uint64_t h = (((uint64_t)p.num << 32) ^ p.serial) + p.node * 0x100000001b3ULL;
	h *= 0x9e3779b97f4a7c15ULL;
	return (size_t)(h >> 17);
}

static void index_put(struct store *st, size_t i)
{
	struct bs_pid p = st->procs[i]->pid;
	size_t mask = st->index_cap - 1;
	for (size_t k = pid_hash(p) & mask;; k = (k + 1) & mask)
		if (!st->index[k]) {
			st->index[k] = i + 1;
			return;
		}
}

struct proc *store_proc(const struct store *st, struct bs_pid pid)
{
	if (!st->index_cap)
		return NULL;
	size_t mask = st->index_cap - 1;
	for (size_t k = pid_hash(pid) & mask;; k = (k + 1) & mask) {
		size_t v = st->index[k];
		if (!v)
			return NULL;
		struct proc *p = st->procs[v - 1];
		if (bs_pid_eq(p->pid, pid))
			return p;
	}
}

static struct proc *proc_get(struct store *st, struct bs_pid pid,
			     const char *pid_text)
{
	struct proc *p = store_proc(st, pid);
	if (p)
		return p;
	if ((st->nprocs + 1) * 2 > st->index_cap) {
		free(st->index);
		st->index_cap = st->index_cap ? st->index_cap * 2 : 256;
		st->index = xcalloc(st->index_cap, sizeof(*st->index));
		for (size_t i = 0; i < st->nprocs; i++)
			index_put(st, i);
	}
	if (st->nprocs == st->procs_cap) {
		st->procs_cap = st->procs_cap ? st->procs_cap * 2 : 256;
		st->procs = xrealloc(st->procs, st->procs_cap * sizeof(*st->procs));
	}
	p = xcalloc(1, sizeof(*p));
	p->pid = pid;
	snprintf(p->pid_text, sizeof(p->pid_text), "%s", pid_text);
	p->mqlen = -1;
	p->in_ts = -1;
	st->procs[st->nprocs] = p;
	index_put(st, st->nprocs);
	st->nprocs++;
	return p;
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

uint64_t store_add_event(struct store *st, const struct event *ev)
{
	const char *fields[8] = { ev->pid_text, ev->name, ev->peer,
				  ev->peer_name, ev->mfa, ev->payload, ev->extra,
				  ev->from };
	size_t lens[8], total = 0;
	for (int i = 0; i < 8; i++) {
		lens[i] = fields[i] ? strlen(fields[i]) + 1 : 0;
		total += lens[i];
	}

	uint64_t seq = st->next_seq++;
	struct sevent *e = &st->ring[seq % st->cap];
	if (e->seq) {
		free(e->pid_text);
		st->evicted++;
	}
	memset(e, 0, sizeof(*e));
	e->seq = seq;
	e->type = ev->type;
	e->ts = ev->ts;
	e->pid = ev->pid;
	e->truncated = ev->truncated;
	char *blk = xmalloc(total ? total : 1), *at = blk;
	e->elapsed_us = ev->elapsed_us;
	memcpy(e->heap, ev->heap, sizeof(e->heap));
	char **dst[8] = { &e->pid_text, &e->name, &e->peer, &e->peer_name,
			  &e->mfa, &e->payload, &e->extra, &e->from };
	e->latency_us = ev->latency_us;
	for (int i = 0; i < 8; i++) {
		if (!fields[i])
			continue;
		memcpy(at, fields[i], lens[i]);
		*dst[i] = at;
		at += lens[i];
	}
	if (!total)
		e->pid_text = blk;

	struct proc *p = proc_get(st, ev->pid, ev->pid_text);
	p->last_ts = ev->ts;
	if (!p->first_seq)
		p->first_seq = seq;
	if (ev->name && ev->type != EV_UNREGISTER)
		set_str(&p->name, ev->name);
	switch (ev->type) {
	case EV_SEND:
	case EV_SEND_DEAD:
		p->sends++;
		break;
	case EV_RECEIVE:
		p->receives++;
		break;
	case EV_SPAWN: {
		p->spawns++;
		struct bs_pid child = { 0, 0, ev->pid.node };
		if (pid_of_text(ev->peer, &child)) {
			struct proc *c = proc_get(st, child, ev->peer);
			c->has_parent = true;
			c->parent = ev->pid;
			if (ev->mfa && !c->initial)
				c->initial = xstrdup(ev->mfa);
		}
		break;
	}
	case EV_SPAWNED: {
		struct bs_pid parent = { 0, 0, ev->pid.node };
		if (pid_of_text(ev->peer, &parent)) {
			p->has_parent = true;
			p->parent = parent;
		}
		if (ev->mfa)
			set_str(&p->initial, ev->mfa);
		break;
	}
	case EV_EXIT:
		if (!p->exited)
			st->nexited++;
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
	struct proc *p = proc_get(st, pid, pid_text);
	p->sends += sends;
	p->receives += receives;
	p->spawns += spawns;
	st->generation++;
}

void store_set_info(struct store *st, struct bs_pid pid, const char *pid_text,
		    const char *name, const char *current, long mqlen)
{
	struct proc *p = proc_get(st, pid, pid_text);
	if (name)
		set_str(&p->name, name);
	if (current)
		set_str(&p->current, current);
	p->mqlen = mqlen;
	st->generation++;
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
	}
	if (exited && !p->exited) {
		p->exited = true;
		st->nexited++;
		if (reason && !p->reason)
			p->reason = xstrdup(reason);
	}
	st->generation++;
}

static void prune(struct store *st)
{
	size_t drop = st->nexited - st->max_exited, j = 0;
	for (size_t i = 0; i < st->nprocs; i++) {
		struct proc *p = st->procs[i];
		if (drop && p->exited) {   /* first seen, first forgotten */
			proc_free(p);
			drop--;
			st->nexited--;
			st->pruned++;
			continue;
		}
		st->procs[j++] = p;
	}
	st->nprocs = j;
	memset(st->index, 0, st->index_cap * sizeof(*st->index));
	for (size_t i = 0; i < st->nprocs; i++)
		index_put(st, i);
}

void store_tick(struct store *st)
{
	if (st->nexited > st->max_exited)
		prune(st);
	for (size_t i = 0; i < st->nfuncs; i++) {
		struct fstat *f = st->funcs[i];
		f->rcalls = f->calls - f->tick_calls;
		f->tick_calls = f->calls;
	}
	for (size_t i = 0; i < st->nprocs; i++) {
		struct proc *p = st->procs[i];
		p->rsends = p->sends - p->tick_sends;
		p->rreceives = p->receives - p->tick_receives;
		p->rspawns = p->spawns - p->tick_spawns;
		p->tick_sends = p->sends;
		p->tick_receives = p->receives;
		p->tick_spawns = p->spawns;
	}
	st->generation++;
}
