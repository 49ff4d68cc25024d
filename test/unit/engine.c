/*
 * Unit tests: the engine (src/engine) with no node, against fake nodes
 * (test/unit/fake): attach and start, every event of every batch at the
 * sink, stop and drain with every worker's last word, an unknown node, a
 * refused start, a node lost mid-run, and two nodes merged into one
 * timeline in time order.
 */
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "exitcode.h"
#include "fake/fake.h"
#include "opts.h"
#include "session.h"
#include "tap.h"

struct seen {
	long events;
	long per_node[4];
	long sends, receives;
	int64_t last_ts;
	long out_of_order;
	int last_node;
	long switches;          /* events of another node than the last */
	long states;            /* node_state calls */
	char note[512];         /* the last warning or error */
};

static void on_event(void *arg, int node, const struct event *ev)
{
	struct seen *sn = arg;
	sn->events++;
	if (node >= 0 && node < 4)
		sn->per_node[node]++;
	if (ev->type == EV_SEND)
		sn->sends++;
	else if (ev->type == EV_RECEIVE)
		sn->receives++;
	if (ev->ts < sn->last_ts)
		sn->out_of_order++;
	if (sn->events > 1 && node != sn->last_node)
		sn->switches++;
	sn->last_node = node;
	sn->last_ts = ev->ts;
}

static void on_node_state(void *arg, int node)
{
	(void)node;
	((struct seen *)arg)->states++;
}

static void on_notice(void *arg, enum session_level level, const char *text)
{
	struct seen *sn = arg;
	if (level >= SESSION_WARN)
		snprintf(sn->note, sizeof(sn->note), "%s", text);
}

static int parse(struct config *cfg, const char *a1, const char *a2)
{
	char *argv[] = { "beamscope", (char *)a1, (char *)a2, "--batch", NULL };
	int argc = a2 ? 4 : 3;
	if (!a2)
		argv[2] = "--batch", argv[3] = NULL;
	struct sbuf err = SBUF_INIT;
	int rc = opts_parse(argc, argv, NULL, cfg, &err);
	if (rc != 0)
		printf("# opts_parse: %s\n", sbuf_str(&err));
	sbuf_release(&err);
	return rc;
}

struct run {
	struct config cfg;
	struct session_spec sp;
	struct session *s;
	struct seen seen;
	struct sbuf err;
};

static bool open_run(struct run *r, const char *n1, const char *n2)
{
	memset(r, 0, sizeof(*r));
	sbuf_init(&r->err);
	if (parse(&r->cfg, n1, n2) != 0)
		return false;
	session_spec_from_config(&r->sp, &r->cfg, SESSION_BATCH);
	struct session_sink sink = {
		.event = on_event, .node_state = on_node_state,
		.notice = on_notice, .arg = &r->seen,
	};
	r->s = session_new(&r->cfg, &r->sp, &sink);
	session_add_node(r->s, n1, true);
	if (n2)
		session_add_node(r->s, n2, true);
	return true;
}

static void close_run(struct run *r)
{
	session_free(r->s);
	opts_release(&r->cfg);
	sbuf_release(&r->err);
	fake_reset();
}

/* The engine's loop, a turn at a time, until done says so or ms pass. */
static bool run_until(struct run *r, bool (*done)(struct run *r), int ms)
{
	long long end = clock_mono_ms() + ms;
	while (!done(r)) {
		if (clock_mono_ms() > end)
			return false;
		struct pollfd pfd[16];
		int n = session_pollfds(r->s, pfd, 16);
		if (poll(pfd, (nfds_t)n, session_wait_ms(r->s, 20)) < 0)
			return false;
		session_poll_done(r->s, pfd, n, 64);
	}
	return true;
}

static long want_events;

static bool all_events(struct run *r)
{
	return r->seen.events >= want_events;
}

static int want_profiles;

static bool profiled(struct run *r)
{
	(void)r;
	return fake_seen("one@fake").profiles >= want_profiles;
}

static int want_alarms;

static bool alarmed(struct run *r)
{
	(void)r;
	return fake_seen("one@fake").alarms >= want_alarms;
}

static int want_exacts;

static bool exacted(struct run *r)
{
	(void)r;
	return fake_seen("one@fake").exacts >= want_exacts;
}

static bool never(struct run *r)
{
	(void)r;
	return false;
}

static bool settled(struct run *r)
{
	return session_settled(r->s);
}

static bool lost(struct run *r)
{
	return session_any_lost(r->s) && session_settled(r->s);
}

static void test_one_node(void)
{
	struct run r;
	fake_add(&(struct fake_node){ .name = "one@fake", .workers = 3,
				      .batches = 4, .events = 50 });
	ok(open_run(&r, "one@fake", NULL), "one node: a session");
	is_num(session_attach_wait(r.s, &r.err), EXIT_OK, "one node: attached");
	is_num(session_start_wait(r.s, &r.err), EXIT_OK, "one node: tracing");
	ok(session_tracing(r.s), "one node: the engine says it is tracing");
	is_num(session_node(r.s, 0)->state, SN_TRACING, "one node: its state");
	is(session_node(r.s, 0)->tr->tracing, "session",
	   "one node: the trace request's answer reaches the node's view");

	want_events = 3 * 4 * 50;
	ok(run_until(&r, all_events, 5000), "one node: the batches arrive");
	is_num(r.seen.events, want_events, "one node: every event at the sink");
	is_num(r.seen.sends, want_events / 2, "one node: the sends");
	is_num(r.seen.receives, want_events / 2, "one node: the receives");
	is_num(fake_seen("one@fake").shipped, want_events,
	       "one node: as many as the node shipped");
	is_num(r.seen.out_of_order, 0, "one node: in time order");
	is_num((long)session_delivered(r.s), want_events,
	       "one node: delivered counts them all");

	/* the profiler: asked of the agent once, then off once */
	struct pidsel_item it = { .is_pid = true, .num = 85, .serial = 0 };
	struct pidsel who = { .mode = SEL_LIST, .n = 1, .items = &it };
	session_profile(r.s, -1, &who, 100, 10000);
	want_profiles = 1;
	ok(run_until(&r, profiled, 2000), "profile: asked");
	run_until(&r, never, 100);
	is_num(fake_seen("one@fake").profiles, 1, "profile: asked once");
	is_num(fake_seen("one@fake").profile_procs, 1, "profile: of the one process");
	session_profile(r.s, -1, NULL, 0, 0);
	want_profiles = 2;
	ok(run_until(&r, profiled, 2000), "profile: off asked");
	run_until(&r, never, 100);
	is_num(fake_seen("one@fake").profiles, 2, "profile: off, asked once more");
	is_num(fake_seen("one@fake").profile_procs, -1, "profile: off");

	/* the alarms: never asked while off, then on once, off once */
	is_num(fake_seen("one@fake").alarms, 0, "alarms: not asked while off");
	struct alarm_spec asp;
	alarm_spec_default(&asp);
	session_alarms(r.s, &asp);
	ok(session_alarm_spec(r.s) != NULL, "alarms: wanted");
	want_alarms = 1;
	ok(run_until(&r, alarmed, 2000), "alarms: asked");
	run_until(&r, never, 100);
	is_num(fake_seen("one@fake").alarms, 1, "alarms: asked once");
	ok(fake_seen("one@fake").alarms_on, "alarms: on");
	session_alarms(r.s, NULL);
	want_alarms = 2;
	ok(run_until(&r, alarmed, 2000), "alarms: off asked");
	run_until(&r, never, 100);
	is_num(fake_seen("one@fake").alarms, 2, "alarms: off, asked once more");
	ok(!fake_seen("one@fake").alarms_on && !session_alarm_spec(r.s), "alarms: off");

	/* exact mode: never asked while off, then on once (a module alone
	 * is all its functions), off once */
	is_num(fake_seen("one@fake").exacts, 0, "exact: not asked while off");
	const char *pats[] = { "bs_exact", "m:f/2", "Shop.Cache", ":ets.lookup",
			       "Shop.Cache.get/2", ":ets", "'my mod':_" };
	struct sbuf eerr = SBUF_INIT;
	is_num(session_profile_calls(r.s, -1, pats, 7, &eerr), 0, "exact: wanted");
	const char *got[8];
	struct sbuf all = SBUF_INIT;
	for (int i = 0; i < session_exact(r.s, got, 8); i++)
		sbuf_addf(&all, "%s ", got[i]);
	is(all.buf, "bs_exact:_ m:f/2 'Elixir.Shop.Cache':_ ets:lookup "
	   "'Elixir.Shop.Cache':get/2 ets:_ 'my mod':_ ",
	   "exact: a module alone is mod:_, Elixir forms made Erlang");
	sbuf_release(&all);
	ok(session_profile_calls(r.s, -1, (const char *[]){ "a b c" }, 1, &eerr) < 0 &&
	   strstr(eerr.buf, "\"a b c\": a function pattern is"),
	   "exact: no pattern refused");
	sbuf_reset(&eerr);
	want_exacts = 1;
	ok(run_until(&r, exacted, 2000), "exact: asked");
	run_until(&r, never, 100);
	is_num(fake_seen("one@fake").exacts, 1, "exact: asked once");
	is_num(fake_seen("one@fake").exact_patterns, 7, "exact: every pattern");
	is_num(session_profile_calls(r.s, -1, NULL, 0, &eerr), 0, "exact: off");
	want_exacts = 2;
	ok(run_until(&r, exacted, 2000), "exact: off asked");
	run_until(&r, never, 100);
	is_num(fake_seen("one@fake").exact_patterns, 0, "exact: off sent");
	const char *many[SESSION_EXACT_MAX + 1];
	for (int i = 0; i <= SESSION_EXACT_MAX; i++)
		many[i] = "m";
	ok(session_profile_calls(r.s, -1, many, SESSION_EXACT_MAX + 1, &eerr) < 0 &&
	   strstr(eerr.buf, "at most 16 patterns"), "exact: too many patterns refused");
	sbuf_release(&eerr);

	/* stop and drain: the reply, every worker's last word, then gone */
	session_stop(r.s, "test");
	ok(run_until(&r, settled, 5000), "stop: the node settles");
	const struct node_view *v = session_node(r.s, 0);
	is_num(v->state, SN_IDLE, "stop: idle once its agent left");
	is_num(fake_seen("one@fake").stops, 1, "stop: one stop was sent");
	is_num(fake_seen("one@fake").gones, 1, "stop: the engine waited for the agent to go");
	ok(v->stats_ready && stats_all_eos(v->st),
	   "stop: every worker's last word counted");
	is_num((long)stats_dropped(v->st), 0, "stop: nothing dropped");
	ok(!stats_incomplete(v->st), "stop: the counts are complete");
	is_num(r.seen.events, want_events, "stop: nothing more, nothing lost");
	ok(!session_any_lost(r.s), "stop: the node was not lost");
	close_run(&r);
}

static void test_unknown(void)
{
	struct run r;
	ok(open_run(&r, "nobody@fake", NULL), "unknown: a session");
	int rc = session_attach_wait(r.s, &r.err);
	is_num(rc, EXIT_CONNECT, "unknown: the attach fails as for a name epmd lacks");
	ok(strstr(sbuf_str(&r.err), "nobody@fake") != NULL,
	   "unknown: the error names the node");
	printf("# error: %s\n", sbuf_str(&r.err));
	is_num(r.seen.events, 0, "unknown: no event");
	close_run(&r);
}

static void test_refused(void)
{
	struct run r;
	fake_add(&(struct fake_node){ .name = "no@fake", .workers = 1,
				      .batches = 1, .events = 2,
				      .refuse_trace = true });
	ok(open_run(&r, "no@fake", NULL), "refused: a session");
	is_num(session_attach_wait(r.s, &r.err), EXIT_OK, "refused: attached");
	int rc = session_start_wait(r.s, &r.err);
	is_num(rc, EXIT_REFUSED, "refused: the start fails with the node's reason");
	ok(strstr(sbuf_str(&r.err), "refuses") != NULL,
	   "refused: the node's words reach the user");
	ok(run_until(&r, settled, 5000), "refused: settles");
	is_num(fake_seen("no@fake").stops, 1,
	       "refused: the agent is sent away, so the next attempt finds the node free");
	is_num(r.seen.events, 0, "refused: no event");
	close_run(&r);
}

static void test_lost(void)
{
	struct run r;
	fake_add(&(struct fake_node){ .name = "gone@fake", .workers = 2,
				      .batches = 10, .events = 20,
				      .lose_after = 5 });
	ok(open_run(&r, "gone@fake", NULL), "lost: a session");
	is_num(session_attach_wait(r.s, &r.err), EXIT_OK, "lost: attached");
	is_num(session_start_wait(r.s, &r.err), EXIT_OK, "lost: tracing");
	ok(run_until(&r, lost, 5000), "lost: the engine sees the connection go");
	is_num(r.seen.events, 5 * 20, "lost: the events before it are all there");
	const struct node_view *v = session_node(r.s, 0);
	ok(v->ever_lost, "lost: the node says it was lost");
	is_num(v->state, SN_LOST, "lost: its state");
	ok(session_all_lost(r.s), "lost: every node lost");
	ok(r.seen.note[0] != '\0', "lost: the user is told");
	printf("# said: %s\n", r.seen.note);
	close_run(&r);
}

static void test_two_nodes(void)
{
	struct run r;
	/* b's events fall between a's: one timeline must interleave them */
	fake_add(&(struct fake_node){ .name = "a@fake", .workers = 2,
				      .batches = 5, .events = 40 });
	fake_add(&(struct fake_node){ .name = "b@fake", .workers = 1,
				      .batches = 8, .events = 30,
				      .ts0_us = 5 });
	ok(open_run(&r, "a@fake", "b@fake"), "two nodes: a session");
	is_num(session_attach_wait(r.s, &r.err), EXIT_OK, "two nodes: attached");
	ok(session_multi(r.s), "two nodes: one timeline");
	is_num(session_start_wait(r.s, &r.err), EXIT_OK, "two nodes: tracing");
	want_events = 2 * 5 * 40 + 8 * 30;
	ok(run_until(&r, all_events, 5000), "two nodes: the batches arrive");
	session_stop(r.s, "test");
	ok(run_until(&r, settled, 5000), "two nodes: both settle");
	is_num(r.seen.per_node[0], 2 * 5 * 40, "two nodes: every event of a");
	is_num(r.seen.per_node[1], 8 * 30, "two nodes: every event of b");
	is_num(r.seen.out_of_order, 0, "two nodes: merged in time order");
	/* b's events are 5 us after each of a's: in order, the nodes take
	 * turns until b's run out */
	ok(r.seen.switches >= 2 * 8 * 30 - 1,
	   "two nodes: interleaved event by event");
	printf("# node changes along the timeline: %ld\n", r.seen.switches);
	const struct merge_stats *ms = session_merge_stats(r.s);
	ok(ms != NULL, "two nodes: the merge reports");
	close_run(&r);
}

int main(void)
{
	plan(59 + 8 + 11);
	test_one_node();
	test_unknown();
	test_refused();
	test_lost();
	test_two_nodes();
	return done_testing();
}
