/*
 * gencall: pairing gen calls with their replies, and their statistics.
 *
 * Where the pairing happens, and why.  The tracer only recognises the two
 * shapes in the sends it sees -- {'$gen_call', {From, Tag}, Request} and
 * {Tag, Reply} with Tag a reference or [alias | Ref] -- and writes a
 * compact record of each (the reference, caller or replier, destination,
 * the request's kind, a request or reply cut to 80 bytes), in the count
 * tier too, without shipping the message.  The pairing is here, on our side:
 *
 *  - measured (scripts/bench-gencalls, README "Measurements"; 160 000
 *    gen_server calls, 2 cores): untraced 1.00, count tier 1.09, count tier
 *    with the records 1.68, dbg 2.42.  Recognising the shapes costs every
 *    send a second callback (trace_send after enabled_send), which a
 *    pairing tracer would pay as well; the two records of a call are two
 *    small ring writes, since a call is two messages anyway.  Pairing in the tracer would
 *    save one record per call but need a shared table of calls in flight
 *    written by every scheduler, with a lock or a lock-free map, in the
 *    traced processes -- and what goes stuck there has to be aged and
 *    reported by the target;
 *  - only here can a call sent on one node be paired with the reply sent
 *    on another (the reference hashes the same on both: node name and
 *    words), on the merged clock;
 *  - the records are ordinary events, so recordings keep them and --open
 *    pairs them again with the same code.
 *
 * Only sends are recorded: the call's send by the caller and the reply's
 * send by the server give the latency the caller waits, less the time the
 * reply spends in flight, and keep every receive in the cheap count-tier
 * path (no second callback for receives).
 */
#include "gencall.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

/* ---------------------------------------------------------------------------
 * Histogram.  Bucket i < GC_SUB holds the value i; above, each power of two
 * [2^m, 2^(m+1)) is cut in GC_SUB equal buckets.
 */

static int bucket_of(int64_t v)
{
	if (v < GC_SUB)
		return v < 0 ? 0 : (int)v;
	int m = 63 - __builtin_clzll((unsigned long long)v);
	int shift = m - GC_SUB_BITS;
	int i = GC_SUB * (shift + 1) + (int)(((uint64_t)v >> shift) - GC_SUB);
	return i < GC_BUCKETS ? i : GC_BUCKETS - 1;
}

static int64_t bucket_mid(int i)
{
	if (i < GC_SUB)
		return i;
	int shift = i / GC_SUB - 1;
	uint64_t top = (uint64_t)(i % GC_SUB + GC_SUB);
	uint64_t lo = top << shift, hi = (top + 1) << shift;
	return (int64_t)((lo + hi - 1) / 2);
}

void gc_hist_add(struct gc_hist *h, int64_t us)
{
	if (us < 0)
		us = 0;
	h->n[bucket_of(us)]++;
	h->count++;
	h->sum += us;
	if (us > h->max)
		h->max = us;
}

int64_t gc_hist_quantile(const struct gc_hist *h, double q)
{
	if (!h->count)
		return 0;
	uint64_t rank = (uint64_t)(q * (double)h->count + 0.999999), seen = 0;
	if (rank < 1)
		rank = 1;
	for (int i = 0; i < GC_BUCKETS; i++) {
		seen += h->n[i];
		if (seen >= rank) {
			int64_t v = bucket_mid(i);
			return v > h->max ? h->max : v;
		}
	}
	return h->max;
}

/* ---------------------------------------------------------------------------
 * Rows, by (server, kind).
 */

static uint64_t str_hash(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static size_t row_slot(const struct gencalls *g, const char *server,
		       const char *kind)
{
	uint64_t h = str_hash(str_hash(0xcbf29ce484222325ULL, server) ^ 1, kind);
	return (size_t)(h & (g->row_hash_n - 1));
}

static void row_hash_grow(struct gencalls *g)
{
	size_t n = g->row_hash_n ? g->row_hash_n * 2 : 64;
	free(g->row_hash);
	g->row_hash = xcalloc(n, sizeof(*g->row_hash));
	g->row_hash_n = n;
	for (size_t i = 0; i < g->nrows; i++) {
		struct gc_row *r = g->rows[i];
		size_t k = row_slot(g, r->server, r->kind);
		r->next_hash = g->row_hash[k];
		g->row_hash[k] = r;
	}
}

static struct gc_row *row_get(struct gencalls *g, int node, const char *server,
			      const char *kind)
{
	if (g->row_hash_n) {
		for (struct gc_row *r = g->row_hash[row_slot(g, server, kind)]; r;
		     r = r->next_hash)
			if (!strcmp(r->server, server) && !strcmp(r->kind, kind))
				return r;
	}
	struct gc_row *r = xcalloc(1, sizeof(*r));
	r->server = xstrdup(server);
	r->kind = xstrdup(kind);
	r->node = node;
	if (g->nrows == g->rows_cap) {
		g->rows_cap = g->rows_cap ? g->rows_cap * 2 : 32;
		g->rows = xrealloc(g->rows, g->rows_cap * sizeof(*g->rows));
	}
	g->rows[g->nrows++] = r;
	if (g->nrows * 2 > g->row_hash_n) {
		row_hash_grow(g);
	} else {
		size_t k = row_slot(g, server, kind);
		r->next_hash = g->row_hash[k];
		g->row_hash[k] = r;
	}
	return r;
}

static void call_free(struct gc_call *c)
{
	if (!c)
		return;
	free(c->caller_text);
	free(c->request);
	free(c->reply);
	free(c->request_raw);
	free(c->reply_raw);
	free(c);
}

static void row_free(struct gc_row *r)
{
	for (int i = 0; i < r->nslow; i++)
		call_free(r->slow[i]);
	free(r->server);
	free(r->server_name);
	free(r->kind);
	free(r->server_raw);
	free(r);
}

double gc_row_rate(const struct gc_row *r, int64_t now)
{
	int64_t sec = now / 1000000;
	unsigned long n = 0;
	for (int i = 0; i < GC_RATE_SECS; i++)
		if (r->rate_sec[i] < sec && r->rate_sec[i] >= sec - GC_RATE_SECS)
			n += r->rate_n[i];
	return (double)n / GC_RATE_SECS;
}

static void rate_add(struct gc_row *r, int64_t ts)
{
	int64_t sec = ts / 1000000;
	int i = (int)(sec % GC_RATE_SECS);
	if (r->rate_sec[i] != sec) {
		r->rate_sec[i] = sec;
		r->rate_n[i] = 0;
	}
	r->rate_n[i]++;
}

static char *raw_dup(const char *raw, uint32_t len)
{
	if (!raw)
		return NULL;
	char *d = xmalloc(len ? len : 1);
	memcpy(d, raw, len);
	return d;
}

/* Keep a copy of c among the row's slowest, if it is one. */
static void slow_add(struct gc_row *r, const struct gc_call *c)
{
	int64_t lat = gc_latency(c);
	int i = r->nslow;
	if (i == GC_SLOWEST) {
		if (gc_latency(r->slow[i - 1]) >= lat)
			return;
		call_free(r->slow[--i]);
		r->nslow--;
	}
	while (i > 0 && gc_latency(r->slow[i - 1]) < lat) {
		r->slow[i] = r->slow[i - 1];
		i--;
	}
	struct gc_call *k = xmalloc(sizeof(*k));
	*k = *c;
	k->caller_text = xstrdup(c->caller_text);
	k->request = c->request ? xstrdup(c->request) : NULL;
	k->reply = c->reply ? xstrdup(c->reply) : NULL;
	k->request_raw = raw_dup(c->request_raw, c->request_raw_len);
	k->reply_raw = raw_dup(c->reply_raw, c->reply_raw_len);
	k->request_raw_part = c->request_raw_part;
	k->reply_raw_part = c->reply_raw_part;
	k->next_tag = k->prev = k->next = NULL;
	r->slow[i] = k;
	r->nslow++;
}

/* ---------------------------------------------------------------------------
 * Calls in flight: by tag (chained), and oldest first.
 */

static size_t tag_slot(const struct gencalls *g, uint64_t tag)
{
	return (size_t)((tag * 0x9e3779b97f4a7c15ULL) >> 20) & (g->ntags - 1);
}

static void tags_grow(struct gencalls *g)
{
	size_t n = g->ntags ? g->ntags * 2 : 1024;
	free(g->tags);
	g->tags = xcalloc(n, sizeof(*g->tags));
	g->ntags = n;
	for (struct gc_call *c = g->oldest; c; c = c->next) {
		size_t k = tag_slot(g, c->tag);
		c->next_tag = g->tags[k];
		g->tags[k] = c;
	}
}

static void unlink_call(struct gencalls *g, struct gc_call *c)
{
	struct gc_call **pp = &g->tags[tag_slot(g, c->tag)];
	while (*pp && *pp != c)
		pp = &(*pp)->next_tag;
	if (*pp)
		*pp = c->next_tag;
	if (c->prev)
		c->prev->next = c->next;
	else
		g->oldest = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		g->newest = c->prev;
	g->inflight--;
	c->row->in_flight--;
	if (c->stuck)
		c->row->stuck--;
	if (c->gone_ts)
		g->gone--;
}

/* Close c (taken out already) with its outcome at ts, tell, free. */
static void close_call(struct gencalls *g, struct gc_call *c,
		       enum gc_outcome how, int64_t ts)
{
	struct gc_row *r = c->row;
	c->outcome = how;
	c->end_ts = ts < c->ts ? c->ts : ts;
	switch (how) {
	case GC_REPLIED:
		r->calls++;
		g->replied++;
		gc_hist_add(&r->hist, gc_latency(c));
		rate_add(r, c->end_ts);
		slow_add(r, c);
		break;
	case GC_ABANDONED:
		r->abandoned++;
		break;
	case GC_SERVER_DOWN:
		r->server_down++;
		break;
	default:
		break;
	}
	if (g->done)
		g->done(g->done_arg, r, c);
	call_free(c);
}

/* ---------------------------------------------------------------------------
 * Replies that came before their call.
 */

static size_t early_slot(const struct gencalls *g, uint64_t tag)
{
	return (size_t)((tag * 0x9e3779b97f4a7c15ULL) >> 20) &
		(g->nearly_slots - 1);
}

static void early_grow(struct gencalls *g)
{
	size_t n = g->nearly_slots ? g->nearly_slots * 2 : 256;
	free(g->early);
	g->early = xcalloc(n, sizeof(*g->early));
	g->nearly_slots = n;
	for (struct gc_call *e = g->early_old; e; e = e->next) {
		size_t k = early_slot(g, e->tag);
		e->next_tag = g->early[k];
		g->early[k] = e;
	}
}

static void early_unlink(struct gencalls *g, struct gc_call *e)
{
	struct gc_call **pp = &g->early[early_slot(g, e->tag)];
	while (*pp && *pp != e)
		pp = &(*pp)->next_tag;
	if (*pp)
		*pp = e->next_tag;
	if (e->prev)
		e->prev->next = e->next;
	else
		g->early_old = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		g->early_new = e->prev;
	g->nearly--;
}

static void early_add(struct gencalls *g, const struct event *ev)
{
	if (g->nearly >= GC_EARLY_MAX) {
		struct gc_call *old = g->early_old;
		early_unlink(g, old);
		g->unmatched++;
		call_free(old);
	}
	if ((g->nearly + 1) * 2 > g->nearly_slots)
		early_grow(g);
	struct gc_call *e = xcalloc(1, sizeof(*e));
	e->tag = ev->gen_tag;
	e->ts = ev->ts;
	e->caller_text = xstrdup(ev->pid_text ? ev->pid_text : "?");
	e->reply = ev->payload ? xstrdup(ev->payload) : NULL;
	e->reply_raw = raw_dup(ev->raw, ev->raw_len);
	e->reply_raw_len = ev->raw_len;
	e->reply_raw_part = ev->raw_part;
	e->reply_node = (int)ev->pid.node;
	size_t k = early_slot(g, e->tag);
	e->next_tag = g->early[k];
	g->early[k] = e;
	e->prev = g->early_new;
	if (g->early_new)
		g->early_new->next = e;
	else
		g->early_old = e;
	g->early_new = e;
	g->nearly++;
}

static struct gc_call *early_take(struct gencalls *g, uint64_t tag)
{
	if (!g->nearly)
		return NULL;
	for (struct gc_call *e = g->early[early_slot(g, tag)]; e; e = e->next_tag)
		if (e->tag == tag) {
			early_unlink(g, e);
			return e;
		}
	return NULL;
}

/* Early replies older than before have no call coming: unmatched. */
static void early_expire(struct gencalls *g, int64_t before)
{
	struct gc_call *e = g->early_old, *next;
	for (; e && e->ts < before; e = next) {
		next = e->next;
		early_unlink(g, e);
		g->unmatched++;
		call_free(e);
	}
}

/* A reply to c (in flight, taken out already) at ts with text reply. */
static void replied(struct gencalls *g, struct gc_call *c, int64_t ts,
		    const char *reply, const char *raw, uint32_t raw_len,
		    uint8_t raw_part, int node)
{
	if (c->gone_ts && ts > c->gone_ts) {
		/* the caller had gone: the reply went nowhere */
		close_call(g, c, GC_ABANDONED, c->gone_ts);
		return;
	}
	c->reply = reply ? xstrdup(reply) : NULL;
	c->reply_raw = raw_dup(raw, raw_len);
	c->reply_raw_len = raw_len;
	c->reply_raw_part = raw_part;
	c->reply_node = node;
	close_call(g, c, GC_REPLIED, ts);
}

/* Recently exited processes, a direct-mapped table: a newer exit takes a
 * slot from an older one, so only a call to a process that died long ago
 * (thousands of exits ago) can be missed and wait for its caller. */
#define GC_DEAD_SLOTS 8192

static uint64_t proc_key(int node, const char *pid_text)
{
	uint64_t h = str_hash(1469598103934665603ULL ^ (uint64_t)node, pid_text);
	return h ? h : 1;
}

static void dead_add(struct gencalls *g, int node, const char *who, int64_t ts)
{
	if (!g->dead)
		g->dead = xcalloc(GC_DEAD_SLOTS, sizeof(*g->dead));
	uint64_t h = proc_key(node, who);
	struct gc_dead *d = &g->dead[h & (GC_DEAD_SLOTS - 1)];
	d->h = h;
	d->ts = ts;
}

/* When the process died, or -1 if not known to have died. */
static int64_t dead_since(const struct gencalls *g, int node, const char *who)
{
	if (!g->dead)
		return -1;
	uint64_t h = proc_key(node, who);
	const struct gc_dead *d = &g->dead[h & (GC_DEAD_SLOTS - 1)];
	return d->h == h ? d->ts : -1;
}

static void on_call(struct gencalls *g, int node, const struct event *ev)
{
	const char *server = ev->peer && *ev->peer && strcmp(ev->peer, "[]") ?
		ev->peer : "?";
	struct gc_row *r = row_get(g, node, server, ev->extra ? ev->extra : "");
	struct gc_call *c = xcalloc(1, sizeof(*c));

	if (!r->calls && !r->in_flight && !r->abandoned && !r->server_down)
		r->caller_pid = ev->pid;
	if (ev->peer_name && (!r->server_name || strcmp(r->server_name,
							ev->peer_name))) {
		free(r->server_name);
		r->server_name = xstrdup(ev->peer_name);
	}
	c->tag = ev->gen_tag;
	c->ts = ev->ts;
	c->node = node;
	c->caller = ev->pid;
	c->caller_text = xstrdup(ev->pid_text ? ev->pid_text : "?");
	c->request = ev->payload ? xstrdup(ev->payload) : NULL;
	c->request_raw = raw_dup(ev->raw, ev->raw_len);
	c->request_raw_len = ev->raw_len;
	c->request_raw_part = ev->raw_part;
	/* a server that is no pid: its entry is kept whole (decode.c) */
	if (!r->server_raw && ev->raw && !(ev->raw_part & RAW_PAYLOAD) &&
	    server[0] != '<' && strcmp(server, "?")) {
		r->server_raw = raw_dup(ev->raw, ev->raw_len);
		r->server_raw_len = ev->raw_len;
	}
	c->row = r;
	struct gc_call *e = early_take(g, c->tag);
	if (e) {
		replied(g, c, e->ts, e->reply, e->reply_raw, e->reply_raw_len,
			e->reply_raw_part, e->reply_node);
		call_free(e);
		return;
	}
	/* to a server already gone (its exit came first, through another
	 * worker): gen:call gets noproc at once, nothing will answer */
	int64_t died = dead_since(g, node, server);
	if (died >= 0 && died <= c->ts) {
		close_call(g, c, GC_SERVER_DOWN, c->ts);
		return;
	}
	if (g->inflight >= GC_INFLIGHT_MAX) {
		struct gc_call *old = g->oldest;
		unlink_call(g, old);
		g->given_up++;
		call_free(old);
	}
	if ((g->inflight + 1) * 2 > g->ntags)
		tags_grow(g);
	size_t k = tag_slot(g, c->tag);
	c->next_tag = g->tags[k];
	g->tags[k] = c;
	c->prev = g->newest;
	if (g->newest)
		g->newest->next = c;
	else
		g->oldest = c;
	g->newest = c;
	g->inflight++;
	r->in_flight++;
}

static void on_reply(struct gencalls *g, const struct event *ev)
{
	struct gc_call *c = NULL;
	if (g->ntags)
		for (c = g->tags[tag_slot(g, ev->gen_tag)]; c; c = c->next_tag)
			if (c->tag == ev->gen_tag)
				break;
	if (!c) {
		early_add(g, ev);
		return;
	}
	unlink_call(g, c);
	replied(g, c, ev->ts, ev->payload, ev->raw, ev->raw_len, ev->raw_part,
		(int)ev->pid.node);
}

/*
 * A process ended.  The calls to it are closed: its replies came through
 * the same worker as its exit, so they are all in.  Its own calls wait
 * GC_GRACE_US for a reply sent before it died (the server's events come
 * through another worker), then are abandoned.
 */
static void on_proc_exit(struct gencalls *g, int node, const struct event *ev)
{
	const char *who = ev->pid_text;
	struct gc_call *c = g->oldest, *next;
	if (!who)
		return;
	dead_add(g, node, who, ev->ts);
	/* pid texts are each node's own: compare them on one node only */
	for (; c && g->inflight; c = next) {
		next = c->next;
		if (c->node != node)
			continue;
		if (!strcmp(c->caller_text, who)) {
			if (!c->gone_ts) {
				c->gone_ts = ev->ts > c->ts ? ev->ts : c->ts;
				g->gone++;
			}
		} else if (!strcmp(c->row->server, who)) {
			unlink_call(g, c);
			close_call(g, c, GC_SERVER_DOWN, ev->ts);
		}
	}
}

/* Calls whose caller died before limit are abandoned. */
static void give_up_gone(struct gencalls *g, int64_t limit)
{
	struct gc_call *c = g->oldest, *next;
	for (; c && g->gone; c = next) {
		next = c->next;
		if (!c->gone_ts || c->gone_ts >= limit)
			continue;
		unlink_call(g, c);
		close_call(g, c, GC_ABANDONED, c->gone_ts);
	}
}

void gencall_event(struct gencalls *g, int node, const struct event *ev)
{
	if (ev->ts > g->now)
		g->now = ev->ts;
	switch (ev->type) {
	case EV_GEN_CALL:
		on_call(g, node, ev);
		break;
	case EV_GEN_REPLY:
		on_reply(g, ev);
		break;
	case EV_EXIT:
		on_proc_exit(g, node, ev);
		break;
	default:
		break;
	}
}

void gencall_tick(struct gencalls *g, int64_t now)
{
	if (now > g->now)
		g->now = now;
	if (g->gone)
		give_up_gone(g, g->now - GC_GRACE_US);
	if (g->nearly)
		early_expire(g, g->now - GC_GRACE_US);
	/* oldest first: the first one not stuck ends the walk */
	for (struct gc_call *c = g->oldest; c; c = c->next) {
		if (g->now - c->ts < g->stuck_us)
			break;
		if (!c->stuck) {
			c->stuck = true;
			c->row->stuck++;
		}
	}
}

void gencall_set_stuck(struct gencalls *g, int64_t us)
{
	g->stuck_us = us;
	/* a new threshold applies to the calls already marked, both ways */
	for (struct gc_call *c = g->oldest; c; c = c->next) {
		bool stuck = g->now - c->ts >= us;
		if (stuck != c->stuck) {
			c->stuck = stuck;
			if (stuck)
				c->row->stuck++;
			else
				c->row->stuck--;
		}
	}
}

void gencall_settle(struct gencalls *g)
{
	give_up_gone(g, INT64_MAX);
	early_expire(g, INT64_MAX);
}

const struct gc_call *gc_row_oldest(const struct gencalls *g,
				    const struct gc_row *r)
{
	if (!r->in_flight)
		return NULL;
	for (const struct gc_call *c = g->oldest; c; c = c->next)
		if (c->row == r)
			return c;
	return NULL;
}

size_t gc_row_inflight(const struct gencalls *g, const struct gc_row *r,
		       const struct gc_call **out, size_t max)
{
	size_t n = 0;
	if (!r->in_flight)
		return 0;
	for (const struct gc_call *c = g->oldest; c; c = c->next)
		if (c->row == r) {
			if (n < max)
				out[n] = c;
			n++;
		}
	return n;
}

void gencall_init(struct gencalls *g)
{
	memset(g, 0, sizeof(*g));
	g->stuck_us = GC_STUCK_US_DEFAULT;
}

void gencall_release(struct gencalls *g)
{
	struct gc_call *c = g->oldest, *next;
	for (; c; c = next) {
		next = c->next;
		call_free(c);
	}
	for (c = g->early_old; c; c = next) {
		next = c->next;
		call_free(c);
	}
	free(g->early);
	for (size_t i = 0; i < g->nrows; i++)
		row_free(g->rows[i]);
	free(g->rows);
	free(g->row_hash);
	free(g->tags);
	free(g->dead);
	int64_t stuck = g->stuck_us;
	gc_done_fn done = g->done;
	void *arg = g->done_arg;
	gencall_init(g);
	g->stuck_us = stuck;
	g->done = done;
	g->done_arg = arg;
}

/* One text of c rendered again, in place. */
static void call_retext(struct gc_call *c, gc_retext_fn fn, void *arg,
			struct sbuf *sb)
{
	sbuf_reset(sb);
	if (c->request && c->request_raw &&
	    fn(arg, c->node, GC_TEXT_REQUEST, c->request_raw,
	       c->request_raw_len, c->request_raw_part, c->request, sb)) {
		free(c->request);
		c->request = xstrdup(sbuf_str(sb));
	}
	sbuf_reset(sb);
	if (c->reply && c->reply_raw &&
	    fn(arg, c->reply_node, GC_TEXT_REPLY, c->reply_raw,
	       c->reply_raw_len, c->reply_raw_part, c->reply, sb)) {
		free(c->reply);
		c->reply = xstrdup(sbuf_str(sb));
	}
}

void gencall_retext(struct gencalls *g, gc_retext_fn fn, void *arg)
{
	struct sbuf sb = SBUF_INIT;
	for (struct gc_call *c = g->oldest; c; c = c->next)
		call_retext(c, fn, arg, &sb);
	for (struct gc_call *c = g->early_old; c; c = c->next)
		call_retext(c, fn, arg, &sb);
	for (size_t i = 0; i < g->nrows; i++) {
		struct gc_row *r = g->rows[i];
		for (int k = 0; k < r->nslow; k++)
			call_retext(r->slow[k], fn, arg, &sb);
		sbuf_reset(&sb);
		if (r->server_raw && fn(arg, r->node, GC_TEXT_SERVER,
					r->server_raw, r->server_raw_len,
					RAW_ENTRY, r->server, &sb)) {
			free(r->server);
			r->server = xstrdup(sbuf_str(&sb));
		}
		sbuf_reset(&sb);
		if (r->server_name && fn(arg, r->node, GC_TEXT_NAME, NULL, 0,
					 RAW_ENTRY, r->server_name, &sb)) {
			free(r->server_name);
			r->server_name = xstrdup(sbuf_str(&sb));
		}
	}
	sbuf_release(&sb);
	/* the rows' keys may have changed: hashed anew */
	if (g->row_hash_n) {
		g->row_hash_n /= 2;
		row_hash_grow(g);
	}
}
