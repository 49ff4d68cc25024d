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

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "analyser.h"
#include "gencall_priv.h"
#include "xalloc.h"

/* ---------------------------------------------------------------------------
 * Lists of calls: a call is in several at once, each through its own
 * gc_link, named by its offset in the call.
 */

#define L_ALL offsetof(struct gc_call, all)
#define L_ROW offsetof(struct gc_call, in_row)
#define L_CALLER offsetof(struct gc_call, by_caller)
#define L_SERVER offsetof(struct gc_call, by_server)
#define L_GONE offsetof(struct gc_call, gone)

static struct gc_link *link_of(struct gc_call *c, size_t off)
{
	return (struct gc_link *)(void *)((char *)c + off);
}

static void list_push(struct gc_list *l, struct gc_call *c, size_t off)
{
	struct gc_link *k = link_of(c, off);
	k->prev = l->last;
	k->next = NULL;
	if (l->last)
		link_of(l->last, off)->next = c;
	else
		l->first = c;
	l->last = c;
}

static void list_cut(struct gc_list *l, struct gc_call *c, size_t off)
{
	struct gc_link *k = link_of(c, off);
	if (k->prev)
		link_of(k->prev, off)->next = k->next;
	else
		l->first = k->next;
	if (k->next)
		link_of(k->next, off)->prev = k->prev;
	else
		l->last = k->prev;
	k->prev = k->next = NULL;
}

/* ---------------------------------------------------------------------------
 * Rows, by (server, kind), and the first row of each server by server.
 */

static uint64_t str_hash(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static uint64_t row_key(const char *server, const char *kind)
{
	return str_hash(str_hash(0xcbf29ce484222325ULL, server) ^ 1, kind);
}

static uint64_t srv_key(const char *server)
{
	return str_hash(0xcbf29ce484222325ULL, server);
}

static void row_hash_put(struct gencalls *g, struct gc_row *r)
{
	/* the folds are reached through their server, or through g */
	if (r->other)
		return;
	uint64_t k = row_key(r->server, r->kind);
	struct gc_row **h = hmap_put(&g->row_map, &k, NULL);
	r->next_hash = *h;
	*h = r;
	if (r->head) {
		k = srv_key(r->server);
		h = hmap_put(&g->srv_map, &k, NULL);
		r->next_srv = *h;
		*h = r;
	}
}

void row_hash_build(struct gencalls *g)
{
	hmap_clear(&g->row_map);
	hmap_clear(&g->srv_map);
	for (size_t i = 0; i < g->nrows; i++)
		row_hash_put(g, g->rows[i]);
}

static struct gc_row *row_new(struct gencalls *g, int node, const char *server,
			      const char *kind, enum gc_other other)
{
	struct gc_row *r = xcalloc(1, sizeof(*r));
	r->server = xstrdup(server);
	r->kind = xstrdup(kind);
	r->node = node;
	r->other = other;
	r->idx = g->nrows;
	if (g->nrows == g->rows_cap) {
		g->rows_cap = g->rows_cap ? g->rows_cap * 2 : 32;
		g->rows = xrealloc(g->rows, g->rows_cap * sizeof(*g->rows));
	}
	g->rows[g->nrows++] = r;
	return r;
}

/* The row of (server, kind): made if new, or the fold that takes it. */
static struct gc_row *row_get(struct gencalls *g, int node, const char *server,
			      const char *kind)
{
	uint64_t k = row_key(server, kind);
	struct gc_row **chain = hmap_get(&g->row_map, &k), *r, *h = NULL;
	for (r = chain ? *chain : NULL; r; r = r->next_hash)
		if (!strcmp(r->server, server) && !strcmp(r->kind, kind))
			return r;
	k = srv_key(server);
	chain = hmap_get(&g->srv_map, &k);
	for (h = chain ? *chain : NULL; h; h = h->next_srv)
		if (!strcmp(h->server, server))
			break;
	if (g->nrows >= GC_ROWS_MAX) {
		if (!g->other_servers)
			g->other_servers = row_new(g, node, GC_OTHER, GC_OTHER,
						   GC_OTHER_SERVERS);
		return g->other_servers;
	}
	if (h && h->nkinds >= GC_KINDS_MAX) {
		if (!h->other_row) {
			h->other_row = row_new(g, node, server, GC_OTHER,
					       GC_OTHER_KINDS);
			g->nfolded++;
		}
		return h->other_row;
	}
	r = row_new(g, node, server, kind, GC_OTHER_NONE);
	if (!h) {
		r->head = true;
		h = r;
	}
	h->nkinds++;
	row_hash_put(g, r);
	return r;
}

static void row_changed(struct gencalls *g, struct gc_row *r)
{
	g->generation++;
	if (r->changed)
		return;
	r->changed = true;
	if (g->nchanged == g->changed_cap) {
		g->changed_cap = g->changed_cap ? g->changed_cap * 2 : 64;
		g->changed = xrealloc(g->changed,
				      g->changed_cap * sizeof(*g->changed));
	}
	g->changed[g->nchanged++] = r;
}

void gencall_changed(struct gencalls *g,
		     void (*fn)(void *arg, struct gc_row *r), void *arg)
{
	for (size_t i = 0; i < g->nchanged; i++) {
		g->changed[i]->changed = false;
		fn(arg, g->changed[i]);
	}
	g->nchanged = 0;
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
	gc_hist_release(&r->hist);
	free(r->server);
	free(r->server_name);
	free(r->kind);
	free(r->server_raw);
	free(r);
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
	struct gc_call *k = xcalloc(1, sizeof(*k));
	k->tag = c->tag;
	k->ts = c->ts;
	k->end_ts = c->end_ts;
	k->node = c->node;
	k->caller = c->caller;
	k->caller_text = xstrdup(c->caller_text);
	k->request = c->request ? xstrdup(c->request) : NULL;
	k->reply = c->reply ? xstrdup(c->reply) : NULL;
	k->request_raw = raw_dup(c->request_raw, c->request_raw_len);
	k->reply_raw = raw_dup(c->reply_raw, c->reply_raw_len);
	k->request_raw_len = c->request_raw_len;
	k->reply_raw_len = c->reply_raw_len;
	k->request_raw_part = c->request_raw_part;
	k->reply_raw_part = c->reply_raw_part;
	k->reply_node = c->reply_node;
	k->outcome = c->outcome;
	k->row = c->row;
	r->slow[i] = k;
	r->nslow++;
}

/* ---------------------------------------------------------------------------
 * Calls in flight: by tag, by caller and by server (each an hmap), in
 * the order they came, and per row.
 */

/* A chain of calls in an hmap, linked by next_tag: c put first. */
static void chain_push(struct hmap *m, struct gc_call *c)
{
	struct gc_call **h = hmap_put(m, &c->tag, NULL);
	c->next_tag = *h;
	*h = c;
}

/* c taken out of its chain; the key gone with the chain's last call. */
static void chain_cut(struct hmap *m, struct gc_call *c)
{
	struct gc_call **h = hmap_get(m, &c->tag), **pp = h;
	while (pp && *pp && *pp != c)
		pp = &(*pp)->next_tag;
	if (pp && *pp)
		*pp = c->next_tag;
	if (h && !*h)
		hmap_del(m, &c->tag);
}

/* The call of tag in the chains of m, or NULL. */
static struct gc_call *chain_find(const struct hmap *m, uint64_t tag)
{
	struct gc_call **h = hmap_get(m, &tag);
	return h ? *h : NULL;   /* a chain holds one tag */
}

/* A process of node, by its pid text: never 0. */
static uint64_t proc_key(int node, const char *pid_text)
{
	uint64_t h = str_hash(1469598103934665603ULL ^ (uint64_t)node, pid_text);
	return h ? h : 1;
}

/* c at the end of the list of key in m */
static void keyed_push(struct hmap *m, uint64_t key, struct gc_call *c,
		       size_t off)
{
	list_push(hmap_put(m, &key, NULL), c, off);
}

/* c out of the list of key in m; the key gone with the list's last */
static void keyed_cut(struct hmap *m, uint64_t key, struct gc_call *c,
		      size_t off)
{
	struct gc_list *l = hmap_get(m, &key);
	if (!l)
		return;
	list_cut(l, c, off);
	if (!l->first)
		hmap_del(m, &key);
}

static void index_call(struct gencalls *g, struct gc_call *c)
{
	chain_push(&g->tags, c);
	keyed_push(&g->by_caller, c->caller_key, c, L_CALLER);
	if (c->server_key)
		keyed_push(&g->by_server, c->server_key, c, L_SERVER);
}

static void unlink_call(struct gencalls *g, struct gc_call *c)
{
	chain_cut(&g->tags, c);
	if (g->unstuck == c)
		g->unstuck = c->all.next;
	list_cut(&g->all, c, L_ALL);
	list_cut(&c->row->inflight, c, L_ROW);
	keyed_cut(&g->by_caller, c->caller_key, c, L_CALLER);
	if (c->server_key)
		keyed_cut(&g->by_server, c->server_key, c, L_SERVER);
	g->inflight--;
	c->row->in_flight--;
	if (c->stuck)
		c->row->stuck--;
	if (c->gone_ts) {
		list_cut(&g->gone, c, L_GONE);
		g->gone_n--;
	}
	row_changed(g, c->row);
}

/* Close c (taken out already) with its outcome at ts, tell, free. */
static void close_call(struct gencalls *g, struct gc_call *c,
		       enum gc_outcome how, int64_t ts)
{
	struct gc_row *r = c->row;
	if (how == GC_REPLIED && ts < c->ts)
		how = GC_OUT_OF_ORDER;   /* never a latency */
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
	case GC_OUT_OF_ORDER:
		r->out_of_order++;
		g->out_of_order++;
		break;
	case GC_IN_FLIGHT:
		break;
	}
	row_changed(g, r);
	if (g->done)
		g->done(g->done_arg, r, c);
	call_free(c);
}

/* ---------------------------------------------------------------------------
 * Replies that came before their call.
 */

static void early_unlink(struct gencalls *g, struct gc_call *e)
{
	chain_cut(&g->early, e);
	list_cut(&g->early_list, e, L_ALL);
	g->nearly--;
}

static void early_add(struct gencalls *g, const struct event *ev)
{
	if (g->nearly >= GC_EARLY_MAX) {
		struct gc_call *old = g->early_list.first;
		early_unlink(g, old);
		g->unmatched++;
		call_free(old);
	}
	struct gc_call *e = xcalloc(1, sizeof(*e));
	e->tag = ev->gen_tag;
	e->ts = ev->ts;
	e->caller_text = xstrdup(ev->pid_text ? ev->pid_text : "?");
	e->reply = ev->payload ? xstrdup(ev->payload) : NULL;
	e->reply_raw = raw_dup(ev->raw, ev->raw_len);
	e->reply_raw_len = ev->raw_len;
	e->reply_raw_part = ev->raw_part;
	e->reply_node = (int)ev->pid.node;
	chain_push(&g->early, e);
	list_push(&g->early_list, e, L_ALL);
	g->nearly++;
}

static struct gc_call *early_take(struct gencalls *g, uint64_t tag)
{
	struct gc_call *e = g->nearly ? chain_find(&g->early, tag) : NULL;
	if (e)
		early_unlink(g, e);
	return e;
}

/* Early replies older than before have no call coming: unmatched. */
static void early_expire(struct gencalls *g, int64_t before)
{
	struct gc_call *e = g->early_list.first, *next;
	for (; e && e->ts < before; e = next) {
		next = e->all.next;
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

static void dead_add(struct gencalls *g, uint64_t h, int64_t ts)
{
	if (!g->dead)
		g->dead = xcalloc(GC_DEAD_SLOTS, sizeof(*g->dead));
	struct gc_dead *d = &g->dead[h & (GC_DEAD_SLOTS - 1)];
	d->h = h;
	d->ts = ts;
}

/* When the process died, or -1 if not known to have died. */
static int64_t dead_since(const struct gencalls *g, uint64_t h)
{
	if (!g->dead)
		return -1;
	const struct gc_dead *d = &g->dead[h & (GC_DEAD_SLOTS - 1)];
	return d->h == h ? d->ts : -1;
}

/* The oldest call in flight is given up on, to make room: counted. */
static void give_up_oldest(struct gencalls *g)
{
	struct gc_call *old = g->all.first;
	struct gc_row *r = old->row;
	unlink_call(g, old);
	g->given_up++;
	r->given_up++;
	call_free(old);
}

static void on_call(struct gencalls *g, int node, const struct event *ev)
{
	const char *server = ev->peer && *ev->peer && strcmp(ev->peer, "[]") ?
		ev->peer : "?";
	struct gc_row *r = row_get(g, node, server, ev->extra ? ev->extra : "");
	struct gc_call *c = xcalloc(1, sizeof(*c));

	if (!r->calls && !r->in_flight && !r->abandoned && !r->server_down)
		r->caller_pid = ev->pid;
	/* the fold of other servers names none */
	if (ev->peer_name && r->other != GC_OTHER_SERVERS &&
	    (!r->server_name || strcmp(r->server_name, ev->peer_name))) {
		free(r->server_name);
		r->server_name = xstrdup(ev->peer_name);
	}
	c->tag = ev->gen_tag;
	c->ts = ev->ts;
	c->node = node;
	c->caller = ev->pid;
	c->caller_text = xstrdup(ev->pid_text ? ev->pid_text : "?");
	c->caller_key = proc_key(node, c->caller_text);
	/* only a pid exits: a server that is a name is not looked up */
	c->server_key = server[0] == '<' ? proc_key(node, server) : 0;
	c->request = ev->payload ? xstrdup(ev->payload) : NULL;
	c->request_raw = raw_dup(ev->raw, ev->raw_len);
	c->request_raw_len = ev->raw_len;
	c->request_raw_part = ev->raw_part;
	/* a server that is no pid: its entry is kept whole (decode.c) */
	if (!r->server_raw && ev->raw && !(ev->raw_part & RAW_PAYLOAD) &&
	    server[0] != '<' && strcmp(server, "?") &&
	    r->other != GC_OTHER_SERVERS) {
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
	int64_t died = c->server_key ? dead_since(g, c->server_key) : -1;
	if (died >= 0 && died <= c->ts) {
		close_call(g, c, GC_SERVER_DOWN, c->ts);
		return;
	}
	if (g->inflight >= GC_INFLIGHT_MAX)
		give_up_oldest(g);
	index_call(g, c);
	list_push(&g->all, c, L_ALL);
	list_push(&r->inflight, c, L_ROW);
	if (!g->unstuck)
		g->unstuck = c;
	g->inflight++;
	r->in_flight++;
	row_changed(g, r);
}

static void on_reply(struct gencalls *g, const struct event *ev)
{
	struct gc_call *c = chain_find(&g->tags, ev->gen_tag);
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
 * through another worker), then are abandoned.  Only the calls of the
 * process are looked at (its buckets), whatever else is in flight.
 */
static void on_proc_exit(struct gencalls *g, int node, const struct event *ev)
{
	const char *who = ev->pid_text;
	if (!who)
		return;
	uint64_t key = proc_key(node, who);
	dead_add(g, key, ev->ts);
	if (!g->inflight)
		return;
	const struct gc_list *l = hmap_get(&g->by_caller, &key);
	/* pid texts are each node's own: compare them on one node only */
	for (struct gc_call *c = l ? l->first : NULL; c; c = c->by_caller.next) {
		if (c->caller_key != key || c->node != node ||
		    strcmp(c->caller_text, who) || c->gone_ts)
			continue;
		c->gone_ts = ev->ts > c->ts ? ev->ts : c->ts;
		list_push(&g->gone, c, L_GONE);
		g->gone_n++;
	}
	/* the list goes with its last call: only its calls are kept */
	l = hmap_get(&g->by_server, &key);
	struct gc_call *c = l ? l->first : NULL, *next;
	for (; c; c = next) {
		next = c->by_server.next;
		if (c->server_key != key || c->node != node)
			continue;
		unlink_call(g, c);
		close_call(g, c, GC_SERVER_DOWN, ev->ts);
	}
}

/* Calls whose caller died before limit are abandoned (in the order the
 * deaths came: the first that is not due ends the walk). */
static void give_up_gone(struct gencalls *g, int64_t limit)
{
	struct gc_call *c = g->gone.first, *next;
	for (; c && c->gone_ts < limit; c = next) {
		next = c->gone.next;
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
	if (g->gone_n)
		give_up_gone(g, g->now - GC_GRACE_US);
	if (g->nearly)
		early_expire(g, g->now - GC_GRACE_US);
	/* in the order they came: the first one not stuck ends the walk,
	 * and the next tick starts there */
	struct gc_call *c = g->unstuck;
	for (; c && g->now - c->ts >= g->stuck_us; c = c->all.next) {
		if (!c->stuck) {
			c->stuck = true;
			c->row->stuck++;
			row_changed(g, c->row);
		}
	}
	g->unstuck = c;
}

void gencall_set_stuck(struct gencalls *g, int64_t us)
{
	g->stuck_us = us;
	g->unstuck = NULL;
	/* a new threshold applies to the calls already marked, both ways */
	for (struct gc_call *c = g->all.first; c; c = c->all.next) {
		bool stuck = g->now - c->ts >= us;
		if (!stuck && !g->unstuck)
			g->unstuck = c;
		if (stuck != c->stuck) {
			c->stuck = stuck;
			if (stuck)
				c->row->stuck++;
			else
				c->row->stuck--;
			row_changed(g, c->row);
		}
	}
}

void gencall_settle(struct gencalls *g)
{
	give_up_gone(g, INT64_MAX);
	early_expire(g, INT64_MAX);
}

void gencall_init(struct gencalls *g)
{
	memset(g, 0, sizeof(*g));
	g->stuck_us = GC_STUCK_US_DEFAULT;
	hmap_init(&g->row_map, sizeof(uint64_t), sizeof(struct gc_row *), NULL);
	hmap_init(&g->srv_map, sizeof(uint64_t), sizeof(struct gc_row *), NULL);
	hmap_init(&g->tags, sizeof(uint64_t), sizeof(struct gc_call *), NULL);
	hmap_init(&g->early, sizeof(uint64_t), sizeof(struct gc_call *), NULL);
	hmap_init(&g->by_caller, sizeof(uint64_t), sizeof(struct gc_list),
		  NULL);
	hmap_init(&g->by_server, sizeof(uint64_t), sizeof(struct gc_list),
		  NULL);
}

void gencall_release(struct gencalls *g)
{
	struct gc_call *c = g->all.first, *next;
	for (; c; c = next) {
		next = c->all.next;
		call_free(c);
	}
	for (c = g->early_list.first; c; c = next) {
		next = c->all.next;
		call_free(c);
	}
	for (size_t i = 0; i < g->nrows; i++)
		row_free(g->rows[i]);
	free(g->rows);
	free(g->changed);
	hmap_release(&g->row_map);
	hmap_release(&g->srv_map);
	hmap_release(&g->tags);
	hmap_release(&g->early);
	hmap_release(&g->by_caller);
	hmap_release(&g->by_server);
	free(g->dead);
	int64_t stuck = g->stuck_us;
	gc_done_fn done = g->done;
	void *arg = g->done_arg;
	unsigned long gen = g->generation;
	gencall_init(g);
	g->stuck_us = stuck;
	g->done = done;
	g->done_arg = arg;
	g->generation = gen + 1;   /* what was shown is not any more */
}

static void on_event(void *st, int node, const struct event *ev)
{
	gencall_event(st, node, ev);
}

/* what closes calls, and the records, whatever the user asked to see */
static bool needs(int type)
{
	return type == EV_EXIT || type == EV_GEN_CALL || type == EV_GEN_REPLY;
}

static void tick(void *st, int64_t now_us)
{
	gencall_tick(st, now_us);
}

const struct analyser_ops gencall_analyser = {
	.name = "gen calls", .event = on_event, .needs = needs, .tick = tick,
};
