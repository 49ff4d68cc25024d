/*
 * Unit tests for gencall: the latency histogram's quantiles against the
 * truth, pairing by tag (also across nodes), calls closed by a caller's or
 * a server's exit, stuck calls, and the slowest calls kept per row; a
 * reply stamped before its call; what stays bounded whatever is sent
 * (kinds and servers folded, calls in flight given up) and costs what
 * changed (the rows a tick reports, the oldest call of a row).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gencall.h"
#include "tap.h"

static struct event call_ev(int64_t ts, uint64_t tag, const char *caller,
			    const char *server, const char *kind,
			    const char *req)
{
	struct event e;
	memset(&e, 0, sizeof(e));
	e.type = EV_GEN_CALL;
	e.ts = ts;
	e.gen_tag = tag;
	e.pid_text = caller;
	e.peer = server;
	e.extra = kind;
	e.payload = req;
	return e;
}

static struct event reply_ev(int64_t ts, uint64_t tag, const char *server,
			     const char *reply)
{
	struct event e;
	memset(&e, 0, sizeof(e));
	e.type = EV_GEN_REPLY;
	e.ts = ts;
	e.gen_tag = tag;
	e.pid_text = server;
	e.payload = reply;
	return e;
}

static struct event exit_ev(int64_t ts, const char *who)
{
	struct event e;
	memset(&e, 0, sizeof(e));
	e.type = EV_EXIT;
	e.ts = ts;
	e.pid_text = who;
	return e;
}

static int within(int64_t got, int64_t want, double frac)
{
	double d = (double)(got - want);
	return d <= frac * (double)want && -d <= frac * (double)want;
}

static void histogram(void)
{
	struct gc_hist h;
	memset(&h, 0, sizeof(h));
	ok(gc_hist_quantile(&h, 0.5) == 0, "an empty histogram says 0");
	/* 900 of 1000..1100 us, 100 of 40000 us */
	for (int i = 0; i < 900; i++)
		gc_hist_add(&h, 1000 + i % 100);
	for (int i = 0; i < 100; i++)
		gc_hist_add(&h, 40000);
	ok(within(gc_hist_quantile(&h, 0.5), 1050, 0.04), "p50 within 4%");
	ok(within(gc_hist_quantile(&h, 0.99), 40000, 0.04), "p99 within 4%");
	is_num(gc_hist_quantile(&h, 1.0), 40000, "p100 is the max");
	is_num(h.count, 1000, "every value counted");
	for (int64_t v = 1; v < ((int64_t)1 << 40); v = v * 3 + 1) {
		struct gc_hist one;
		memset(&one, 0, sizeof(one));
		gc_hist_add(&one, v);
		one.max = INT64_MAX;   /* the bucket, not the max, answers */
		bool near = within(gc_hist_quantile(&one, 0.5), v, 1.0 / GC_SUB);
		gc_hist_release(&one);
		if (!near) {
			ok(0, "a single value's bucket is within 1/32");
			gc_hist_release(&h);
			return;
		}
	}
	ok(1, "a single value's bucket is within 1/32, 1 us to 2^40 us");
	gc_hist_release(&h);
}

static int closed[5];
static int64_t last_latency;
static char last_reply[64];

static void on_done(void *arg, const struct gc_row *row, const struct gc_call *c)
{
	(void)arg;
	(void)row;
	closed[c->outcome]++;
	last_latency = gc_latency(c);
	snprintf(last_reply, sizeof(last_reply), "%s", c->reply ? c->reply : "");
}

static void pairing(void)
{
	struct gencalls g;
	struct event e;
	gencall_init(&g);
	g.done = on_done;

	e = call_ev(1000, 7, "<0.90.0>", "<0.80.0>", "get", "{get,k}");
	gencall_event(&g, 0, &e);
	e = call_ev(1100, 8, "<0.91.0>", "<0.80.0>", "put", "{put,k,v}");
	gencall_event(&g, 0, &e);
	is_num(g.nrows, 2, "a row per server and kind");
	is_num(g.inflight, 2, "two calls in flight");
	e = reply_ev(6100, 8, "<0.80.0>", "ok");
	gencall_event(&g, 0, &e);
	is_num(last_latency, 5000, "the put took 5 ms");
	is(last_reply, "ok", "with its reply");
	e = reply_ev(9000, 99, "<0.80.0>", "{ok,1}");
	gencall_event(&g, 0, &e);
	is_num(g.nearly, 1, "a reply to no call waits for it");
	e = reply_ev(3000, 7, "<0.80.0>", "{ok,1}");
	gencall_event(&g, 0, &e);
	is_num(last_latency, 2000, "the get took 2 ms");
	is_num(g.inflight, 0, "nothing in flight");
	is_num(g.rows[0]->calls + g.rows[1]->calls, 2, "two calls replied");

	/* across nodes: the caller's node sends, the server's node replies */
	e = call_ev(10000, 42, "<a@h.90.0>", "<b@h.80.0>", "get", NULL);
	gencall_event(&g, 0, &e);
	e = reply_ev(10700, 42, "<b@h.80.0>", NULL);
	gencall_event(&g, 1, &e);
	is_num(last_latency, 700, "a call paired across nodes");

	/* stuck, then abandoned by its caller */
	e = call_ev(20000, 50, "<0.95.0>", "<0.80.0>", "block", "block");
	gencall_event(&g, 0, &e);
	gencall_tick(&g, 20000 + 4000000);
	const struct gc_call *old = NULL;
	struct gc_row *br = NULL;
	for (size_t i = 0; i < g.nrows; i++)
		if (!strcmp(g.rows[i]->kind, "block"))
			br = g.rows[i];
	ok(br && br->in_flight == 1 && br->stuck == 0, "in flight, not stuck yet");
	gencall_tick(&g, 20000 + 5000001);
	ok(br && br->stuck == 1, "stuck past the threshold");
	gencall_set_stuck(&g, 10000000);
	ok(br && br->stuck == 0, "a higher threshold unmarks it");
	gencall_set_stuck(&g, 5000000);
	ok(br && br->stuck == 1, "the old one marks it again");
	old = br ? gc_row_oldest(br) : NULL;
	ok(old && old->ts == 20000, "the oldest call in flight");
	e = exit_ev(20000 + 6000000, "<0.95.0>");
	gencall_event(&g, 0, &e);
	ok(br && br->in_flight == 1, "its caller died: a reply sent before may come");
	gencall_tick(&g, 20000 + 6000000 + GC_GRACE_US + 1);
	ok(br && br->in_flight == 0 && br->stuck == 0 && br->abandoned == 1,
	   "its caller died: abandoned");
	is_num(closed[GC_ABANDONED], 1, "told as abandoned");

	/* a server that dies closes the calls to it */
	e = call_ev(30000000, 60, "<0.96.0>", "<0.81.0>", "get", NULL);
	gencall_event(&g, 0, &e);
	e = exit_ev(30000100, "<0.81.0>");
	gencall_event(&g, 0, &e);
	is_num(closed[GC_SERVER_DOWN], 1, "the server died: server_down");
	is_num(g.inflight, 0, "nothing left in flight");

	/* a call to a server whose exit came first: closed at once */
	e = exit_ev(30000200, "<0.82.0>");
	gencall_event(&g, 0, &e);
	e = call_ev(30000300, 61, "<0.96.0>", "<0.82.0>", "get", NULL);
	gencall_event(&g, 0, &e);
	ok(closed[GC_SERVER_DOWN] == 2 && g.inflight == 0,
	   "a call to a server already dead: server_down, not in flight");
	/* the same pid text on another node is another process */
	e = call_ev(30000400, 62, "<0.96.0>", "<0.82.0>", "get", NULL);
	gencall_event(&g, 1, &e);
	is_num(g.inflight, 1, "a dead pid of one node is not dead on another");
	e = reply_ev(30000500, 62, "<0.82.0>", "ok");
	gencall_event(&g, 1, &e);

	/* a reply that comes before its call (another worker's batch) */
	e = reply_ev(40000500, 70, "<0.80.0>", "late");
	gencall_event(&g, 0, &e);
	e = call_ev(40000000, 70, "<0.97.0>", "<0.80.0>", "get", NULL);
	gencall_event(&g, 0, &e);
	ok(last_latency == 500 && !strcmp(last_reply, "late") && !g.inflight,
	   "a reply before its call is paired when the call comes");
	/* a caller that got its reply, then died; the exit comes first */
	e = call_ev(50000000, 80, "<0.98.0>", "<0.80.0>", "get", NULL);
	gencall_event(&g, 0, &e);
	e = exit_ev(50000900, "<0.98.0>");
	gencall_event(&g, 0, &e);
	e = reply_ev(50000800, 80, "<0.80.0>", "ok");
	gencall_event(&g, 0, &e);
	ok(last_latency == 800 && closed[GC_ABANDONED] == 1,
	   "a reply sent before the caller died is a reply");
	/* a reply sent after the caller died went nowhere */
	e = call_ev(60000000, 81, "<0.99.0>", "<0.80.0>", "get", NULL);
	gencall_event(&g, 0, &e);
	e = exit_ev(60000100, "<0.99.0>");
	gencall_event(&g, 0, &e);
	e = reply_ev(60000800, 81, "<0.80.0>", "ok");
	gencall_event(&g, 0, &e);
	is_num(closed[GC_ABANDONED], 2, "a reply after the caller died: abandoned");
	/* a reply whose call never comes */
	e = reply_ev(70000000, 82, "<0.80.0>", "ok");
	gencall_event(&g, 0, &e);
	unsigned long before = g.unmatched;
	gencall_tick(&g, 70000000 + GC_GRACE_US + 1);
	is_num(g.unmatched, before + 1, "an early reply with no call expires");
	gencall_release(&g);
}

static void slowest(void)
{
	struct gencalls g;
	struct event e;
	gencall_init(&g);
	for (int i = 0; i < 100; i++) {
		e = call_ev(i * 1000, (uint64_t)i + 1, "<0.90.0>", "<0.80.0>",
			    "get", NULL);
		gencall_event(&g, 0, &e);
		e = reply_ev(i * 1000 + (i * 37) % 100 + 1, (uint64_t)i + 1,
			     "<0.80.0>", NULL);
		gencall_event(&g, 0, &e);
	}
	struct gc_row *r = g.rows[0];
	int sorted = r->nslow == GC_SLOWEST;
	for (int i = 1; i < r->nslow; i++)
		sorted &= gc_latency(r->slow[i - 1]) >= gc_latency(r->slow[i]);
	ok(sorted, "the slowest calls are kept, slowest first");
	is_num(gc_latency(r->slow[0]), 100, "the slowest of all is first");
	is_num(r->calls, 100, "every call counted");
	gencall_release(&g);
}

static void many_in_flight(void)
{
	struct gencalls g;
	struct event e;
	gencall_init(&g);
	for (int i = 0; i < 5000; i++) {
		e = call_ev(i, (uint64_t)i * 7919, "<0.90.0>", "<0.80.0>", "get",
			    NULL);
		gencall_event(&g, 0, &e);
	}
	for (int i = 4999; i >= 0; i--) {
		e = reply_ev(10000, (uint64_t)i * 7919, "<0.80.0>", NULL);
		gencall_event(&g, 0, &e);
	}
	ok(g.inflight == 0 && g.rows[0]->calls == 5000 && !g.unmatched,
	   "5000 calls in flight, replied in reverse order, all paired");
	gencall_release(&g);
}

/* A reply stamped before its call is no 0 us call. */
static void out_of_order(void)
{
	struct gencalls g;
	struct event e;
	gencall_init(&g);
	g.done = on_done;
	memset(closed, 0, sizeof(closed));
	e = call_ev(5000, 1, "<0.90.0>", "<0.80.0>", "get", NULL);
	gencall_event(&g, 0, &e);
	e = reply_ev(4000, 1, "<0.80.0>", "ok");
	gencall_event(&g, 0, &e);
	struct gc_row *r = g.rows[0];
	ok(r->calls == 0 && r->hist.count == 0 && r->nslow == 0,
	   "a reply stamped before its call: no call timed, no latency");
	ok(r->out_of_order == 1 && g.out_of_order == 1 && !g.inflight &&
	   closed[GC_OUT_OF_ORDER] == 1 && closed[GC_REPLIED] == 0,
	   "it is counted out of order, and closed");
	/* the same when the reply's record comes first */
	e = reply_ev(6000, 2, "<0.80.0>", "ok");
	gencall_event(&g, 0, &e);
	e = call_ev(7000, 2, "<0.90.0>", "<0.80.0>", "get", NULL);
	gencall_event(&g, 0, &e);
	ok(r->calls == 0 && r->hist.count == 0 && g.out_of_order == 2,
	   "also when the reply's record came before the call's");
	/* a reply at the very microsecond of its call is a call */
	e = call_ev(8000, 3, "<0.90.0>", "<0.80.0>", "get", NULL);
	gencall_event(&g, 0, &e);
	e = reply_ev(8000, 3, "<0.80.0>", "ok");
	gencall_event(&g, 0, &e);
	ok(r->calls == 1 && g.out_of_order == 2, "the same stamp is a 0 us call");
	gencall_release(&g);
}

static int nchanged;
static struct gc_row *last_changed;

static void count_changed(void *arg, struct gc_row *r)
{
	(void)arg;
	nchanged++;
	last_changed = r;
}

/* Kinds past GC_KINDS_MAX of a server, and servers past GC_ROWS_MAX rows,
 * go to rows of their own; calls past GC_INFLIGHT_MAX give the oldest up. */
static void bounds(void)
{
	struct gencalls g;
	struct event e;
	char kind[32], srv[32];
	uint64_t tag = 1;
	gencall_init(&g);
	for (int k = 0; k < GC_KINDS_MAX + 10; k++) {
		snprintf(kind, sizeof(kind), "k%d", k);
		e = call_ev(1000 + k, tag++, "<0.90.0>", "<0.80.0>", kind, NULL);
		gencall_event(&g, 0, &e);
	}
	struct gc_row *o = g.rows[g.nrows - 1];
	ok(g.nrows == GC_KINDS_MAX + 1 && o->other == GC_OTHER_KINDS &&
	   !strcmp(o->kind, GC_OTHER) && !strcmp(o->server, "<0.80.0>") &&
	   o->in_flight == 10 && g.nfolded == 1,
	   "kinds past the limit of a server: one other row of it");
	/* a kind that has its row keeps it */
	e = call_ev(2000, tag++, "<0.90.0>", "<0.80.0>", "k3", NULL);
	gencall_event(&g, 0, &e);
	ok(g.nrows == GC_KINDS_MAX + 1 && g.rows[3]->in_flight == 2,
	   "a kind with a row still goes to it");
	/* a server's exit closes the calls of its other row too */
	e = exit_ev(3000, "<0.80.0>");
	gencall_event(&g, 0, &e);
	ok(g.inflight == 0 && o->server_down == 10,
	   "its exit closes every call to it, folded ones too");

	for (int i = 0; i < GC_ROWS_MAX + 5; i++) {
		snprintf(srv, sizeof(srv), "<0.%d.0>", 1000 + i);
		e = call_ev(4000, tag++, "<0.91.0>", srv, "get", NULL);
		gencall_event(&g, 0, &e);
	}
	ok(g.nrows == GC_ROWS_MAX + 1 && g.other_servers &&
	   g.other_servers->other == GC_OTHER_SERVERS &&
	   g.other_servers->in_flight > 0,
	   "servers past the rows' limit: one other row of all");
	size_t before = g.other_servers->in_flight;
	e = call_ev(4100, tag++, "<0.92.0>", "<0.77.0>", "get", NULL);
	gencall_event(&g, 0, &e);
	e = exit_ev(4200, "<0.77.0>");
	gencall_event(&g, 0, &e);
	ok(g.other_servers->in_flight == before &&
	   g.other_servers->server_down == 1,
	   "a folded server's exit closes its calls, not the others'");

	/* the rows a tick has news of: those that changed, each once */
	gencall_changed(&g, count_changed, NULL);
	nchanged = 0;
	gencall_tick(&g, 5000);
	gencall_changed(&g, count_changed, NULL);
	is_num(nchanged, 0, "nothing happened: no row changed");
	e = call_ev(5000, tag++, "<0.91.0>", "<0.1000.0>", "get", NULL);
	gencall_event(&g, 0, &e);
	e = call_ev(5001, tag++, "<0.91.0>", "<0.1000.0>", "get", NULL);
	gencall_event(&g, 0, &e);
	gencall_changed(&g, count_changed, NULL);
	ok(nchanged == 1 && last_changed == g.rows[GC_KINDS_MAX + 1],
	   "two calls to one row: that row, once");

	/* calls in flight: never more than GC_INFLIGHT_MAX, the oldest go */
	size_t had = g.inflight;
	uint64_t first = tag;
	for (int i = 0; i < GC_INFLIGHT_MAX; i++) {
		e = call_ev(6000 + i, tag++, "<0.93.0>", "<0.81.0>", "get", NULL);
		gencall_event(&g, 0, &e);
	}
	ok(g.inflight == GC_INFLIGHT_MAX && g.given_up == had,
	   "past the limit, the oldest calls in flight are given up, counted");
	/* the oldest of each row in no time, whatever is in flight */
	clock_t t0 = clock();
	size_t with = 0;
	for (int round = 0; round < 100; round++)
		for (size_t i = 0; i < g.nrows; i++)
			with += gc_row_oldest(g.rows[i]) != NULL;
	double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
	printf("# the oldest call of %zu rows, 100 times: %.3f s\n", g.nrows,
	       secs);
	ok(with > 0 && secs < 5, "the oldest call of every row, in no time");
	struct gc_row *r80 = g.other_servers;
	ok(gc_row_oldest(r80) && gc_row_oldest(r80)->tag == first,
	   "a row's oldest is its first call still in flight");
	/* a caller's exit looks at its own calls: abandoned after grace */
	e = exit_ev(200000, "<0.93.0>");
	gencall_event(&g, 0, &e);
	gencall_tick(&g, 200000 + GC_GRACE_US + 1);
	ok(g.inflight == 0 && g.gone_n == 0 &&
	   r80->abandoned == GC_INFLIGHT_MAX,
	   "a caller's death abandons its calls, each once");
	gencall_release(&g);
}

int main(void)
{
	plan(50);
	histogram();
	pairing();
	slowest();
	many_in_flight();
	out_of_order();
	bounds();
	return done_testing();
}
