/*
 * Unit tests: recordings written by the real writers (json_event,
 * json_counts, json_summary, export_json) read back field by field, and
 * the files a reader meets in the wild: malformed lines, a last line cut
 * short, empty, binary and compressed files, CRLF, lines over the cap,
 * several nodes, exports, pipes.
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export.h"
#include "json.h"
#include "recording.h"
#include "store.h"
#include "tap.h"

static char dir[] = "/tmp/bs-recording.XXXXXX";
static char path[4096];

static const char *file_of(const char *name)
{
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

static const char *put(const char *name, const void *data, size_t n)
{
	const char *p = file_of(name);
	FILE *f = fopen(p, "wb");
	if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
		printf("Bail out! cannot write %s\n", p);
		exit(1);
	}
	return p;
}

static const char *put_sb(const char *name, const struct sbuf *sb)
{
	return put(name, sb->buf ? sb->buf : "", sb->len);
}

/* What a sink saw. */
struct got {
	const struct recording *r;
	const struct event *want;    /* the events expected, in order */
	int nwant;
	const int *want_node;        /* each one's line node; NULL: all 0 */
	int nev, bad, first_bad;     /* events, mismatches, the first one */
	struct sbuf nodes;           /* "idx=name " per node callback */
	struct sbuf counts;          /* "node:pid.node pid name s/r/sp " */
	struct sbuf summaries;       /* "node:type:node-name:ended:events " */
	struct sbuf procs;           /* what proc callbacks saw, rendered */
	int64_t started_ts, duration_ms;
};

static int same_str(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

/* Every field of struct event but the worker. */
static int same_event(const struct event *a, const struct event *b)
{
	return a->type == b->type && a->ts == b->ts &&
		bs_pid_eq(a->pid, b->pid) && same_str(a->pid_text, b->pid_text) &&
		same_str(a->name, b->name) && same_str(a->peer, b->peer) &&
		same_str(a->peer_name, b->peer_name) && same_str(a->mfa, b->mfa) &&
		same_str(a->payload, b->payload) && same_str(a->extra, b->extra) &&
		a->elapsed_us == b->elapsed_us && a->heap[0] == b->heap[0] &&
		a->heap[1] == b->heap[1] && a->heap[2] == b->heap[2] &&
		a->heap[3] == b->heap[3] && a->truncated == b->truncated &&
		same_str(a->from, b->from) && a->latency_us == b->latency_us &&
		a->gen_tag == b->gen_tag;
}

static void show_event(const char *what, const struct event *e)
{
	printf("# %s: type %d ts %lld pid %u.%u@%u %s name %s peer %s/%s mfa %s "
	       "payload %s extra %s elapsed %lld heap %ld %ld %ld %ld trunc %d "
	       "from %s lat %lld\n", what, (int)e->type, (long long)e->ts,
	       e->pid.num, e->pid.serial, e->pid.node, e->pid_text,
	       e->name ? e->name : "-", e->peer ? e->peer : "-",
	       e->peer_name ? e->peer_name : "-", e->mfa ? e->mfa : "-",
	       e->payload ? e->payload : "-", e->extra ? e->extra : "-",
	       (long long)e->elapsed_us, e->heap[0], e->heap[1], e->heap[2],
	       e->heap[3], e->truncated, e->from ? e->from : "-",
	       (long long)e->latency_us);
}

static void on_node(void *arg, int idx, const char *name)
{
	struct got *g = arg;
	sbuf_addf(&g->nodes, "%d=%s ", idx, name);
}

static void on_event(void *arg, int node, const struct event *ev)
{
	struct got *g = arg;
	int i = g->nev++;
	if (!g->want)
		return;
	int ok_ = i < g->nwant && same_event(ev, &g->want[i]) &&
		node == (g->want_node ? g->want_node[i] : 0);
	if (!ok_ && !g->bad++) {
		g->first_bad = i;
		show_event("got", ev);
		if (i < g->nwant)
			show_event("expected", &g->want[i]);
		printf("# line node %d\n", node);
	}
}

static void on_counts(void *arg, int node, const struct recording_counts *c)
{
	struct got *g = arg;
	sbuf_addf(&g->counts, "%d:%u %s %s %lu/%lu/%lu@%lld ", node, c->pid.node,
		  c->pid_text, c->name ? c->name : "-", c->sends, c->receives,
		  c->spawns, (long long)c->ts);
}

static void on_summary(void *arg, int node, const struct recording_summary *s)
{
	struct got *g = arg;
	sbuf_addf(&g->summaries, "%d:%s:%s:%s:%lld ", node, s->type,
		  s->node ? s->node : "-", s->ended ? s->ended : "-",
		  (long long)s->events);
	g->started_ts = s->started_ts;
	g->duration_ms = s->duration_ms;
}

static void on_proc(void *arg, int node, const struct recording_proc *p)
{
	struct got *g = arg;
	sbuf_addf(&g->procs, "%d:%u.%u@%u %s %s %s %s %lu/%lu/%lu mq%ld run%lld "
		  "gc%lu ", node, p->pid.num, p->pid.serial, p->pid.node,
		  p->pid_text, p->name ? p->name : "-",
		  p->initial_call ? p->initial_call : "-",
		  p->current_function ? p->current_function : "-", p->sends,
		  p->receives, p->spawns, p->mqlen, (long long)p->running_us,
		  p->gcs);
	if (p->has_parent)
		sbuf_addf(&g->procs, "parent %u.%u@%u %s ", p->parent.num,
			  p->parent.serial, p->parent.node, p->parent_text);
	if (p->exited)
		sbuf_addf(&g->procs, "exited %s ", p->reason);
	sbuf_addstr(&g->procs, "| ");
}

static const struct recording_sink sink = {
	on_node, on_event, on_counts, on_proc, on_summary, NULL,
};

static void got_init(struct got *g, const struct event *want, int nwant)
{
	memset(g, 0, sizeof(*g));
	g->want = want;
	g->nwant = nwant;
	g->first_bad = -1;
}

static void got_release(struct got *g)
{
	sbuf_release(&g->nodes);
	sbuf_release(&g->counts);
	sbuf_release(&g->summaries);
	sbuf_release(&g->procs);
}

/* Read all of r in steps of max_items; the last return (0 or -1).
 * *calls counts the calls. */
static int read_all(struct recording *r, int max_items, struct got *g,
		    int *calls)
{
	int rc, n = 0;
	g->r = r;
	while ((rc = recording_read(r, max_items, &sink, g)) == 1)
		n++;
	if (calls)
		*calls = n + 1;
	return rc;
}

/* Open path and read it all; 0 or -1 from open, *rc from reading. */
static int open_read(struct recording *r, const char *p, struct got *g,
		     struct sbuf *err)
{
	if (recording_open(r, p, err) < 0)
		return -1;
	return read_all(r, 1000, g, NULL);
}

/* Events. */

static struct event base(enum event_type t, int64_t ts, const char *pid,
			 unsigned num)
{
	struct event e = { .type = t, .ts = ts, .pid = { num, 0, 0 },
			   .pid_text = pid, .elapsed_us = -1,
			   .heap = { -1, -1, -1, -1 } };
	return e;
}

/* One of every type that is written, as the decoder fills them. */
static int every_type(struct event *ev)
{
	int n = 0;
	struct event e;
	const int64_t t0 = 1763790000000000LL;

	e = base(EV_SEND, t0 + 1, "<0.85.0>", 85);
	e.name = "ping"; e.peer = "<0.86.0>"; e.peer_name = "pong";
	e.payload = "{hello,<<\"x\">>,[1,2.5]}"; e.truncated = true;
	ev[n++] = e;
	e = base(EV_SEND_DEAD, t0 + 2, "<0.85.0>", 85);
	e.peer = "<0.99.0>"; e.payload = "late";
	ev[n++] = e;
	e = base(EV_RECEIVE, t0 + 3, "<0.86.0>", 86);
	e.name = "pong"; e.payload = "quotes \" back\\slash \n\t\x01 \xc3\xa9 \xe2\x98\x83";
	ev[n++] = e;
	e = base(EV_SPAWN, t0 + 4, "<0.85.0>", 85);
	e.peer = "<0.87.0>"; e.mfa = "worker:init/1"; e.payload = "[a]";
	ev[n++] = e;
	e = base(EV_SPAWNED, t0 + 5, "<0.87.0>", 87);
	e.peer = "<0.85.0>"; e.peer_name = "ping"; e.mfa = "worker:init/1";
	e.payload = "[a]";
	ev[n++] = e;
	e = base(EV_EXIT, t0 + 6, "<0.87.0>", 87);
	e.payload = "normal";
	ev[n++] = e;
	static const enum event_type links[] = {
		EV_LINK, EV_UNLINK, EV_GETTING_LINKED, EV_GETTING_UNLINKED,
	};
	for (int i = 0; i < 4; i++) {
		e = base(links[i], t0 + 7 + i, "<0.85.0>", 85);
		e.peer = "<0.86.0>";
		e.peer_name = i & 1 ? NULL : "pong";
		ev[n++] = e;
	}
	e = base(EV_REGISTER, t0 + 11, "<0.88.0>", 88);
	e.name = "newname";
	ev[n++] = e;
	e = base(EV_UNREGISTER, t0 + 12, "<0.88.0>", 88);
	e.name = "newname";
	ev[n++] = e;
	e = base(EV_CALL, t0 + 13, "<0.85.0>", 85);
	e.mfa = "lists:seq/2"; e.extra = "{m,f,1}"; e.payload = "[1,10]";
	ev[n++] = e;
	e = base(EV_RETURN, t0 + 14, "<0.85.0>", 85);
	e.mfa = "lists:seq/2"; e.elapsed_us = 17; e.payload = "[1,2,3]";
	ev[n++] = e;
	e = base(EV_EXCEPTION, t0 + 15, "<0.85.0>", 85);
	e.mfa = "m:boom/0"; e.extra = "error"; e.payload = "badarg";
	e.elapsed_us = 3;
	ev[n++] = e;
	e = base(EV_GC_MINOR_END, t0 + 16, "<0.85.0>", 85);
	e.heap[0] = 987; e.heap[1] = 100; e.heap[2] = 0; e.heap[3] = 12;
	e.elapsed_us = 40;
	ev[n++] = e;
	e = base(EV_GC_MAJOR_END, t0 + 17, "<0.85.0>", 85);
	e.heap[0] = 4000; e.heap[1] = 376; e.heap[2] = 2000; e.heap[3] = 0;
	ev[n++] = e;
	static const enum event_type runs[] = {
		EV_IN, EV_OUT, EV_IN_EXITING, EV_OUT_EXITING, EV_OUT_EXITED,
	};
	for (int i = 0; i < 5; i++) {
		e = base(runs[i], t0 + 18 + i, "<0.85.0>", 85);
		e.mfa = i < 2 ? "gen_server:loop/7" : NULL;
		ev[n++] = e;
	}
	e = base(EV_TIMEOUT, t0 + 23, "<0.86.0>", 86);
	e.payload = "timeout";
	ev[n++] = e;
	e = base(EV_GEN_CALL, t0 + 24, "<0.85.0>", 85);
	e.peer = "<0.86.0>"; e.peer_name = "pong"; e.extra = "call";
	e.payload = "{get,1}"; e.gen_tag = 0x0123456789abcdefULL;
	ev[n++] = e;
	e = base(EV_GEN_REPLY, t0 + 25, "<0.86.0>", 86);
	e.payload = "{ok,1}"; e.gen_tag = 0x0123456789abcdefULL;
	ev[n++] = e;
	e = base(EV_ALARM, t0 + 26, "<0.85.0>", 85);
	e.extra = "long_gc"; e.elapsed_us = 812000; e.heap[0] = 67108864;
	ev[n++] = e;
	e = base(EV_ALARM, t0 + 27, "<0.86.0>", 86);
	e.extra = "busy_dist_port"; e.peer = "#Port<0.8>"; e.peer_name = "b@h";
	ev[n++] = e;
	e = base(EV_ALARM, t0 + 28, "<0.86.0>", 86);
	e.extra = "long_message_queue"; e.heap[1] = 12000; e.payload = "long";
	ev[n++] = e;
	/* the oldest last: the span is not the file order */
	e = base(EV_SEND, t0 - 5, "<0.4294967295.8191>", 4294967295U);
	e.pid.serial = 8191; e.peer = "name_not_pid";
	ev[n++] = e;
	return n;
}

static void write_events(struct sbuf *out, const struct event *ev, int n,
			 const char *const *nodes, const int *node)
{
	for (int i = 0; i < n; i++)
		json_event_paired(out, &ev[i], nodes[node ? node[i] : 0]);
}

/* The tests. */

static void test_round_trip(void)
{
	struct event ev[64];
	int n = every_type(ev);
	const char *node = "n@h";
	struct sbuf f = SBUF_INIT, err = SBUF_INIT;
	struct trace_stats ts;
	struct recording r;
	struct got g;

	/* every type that is written (a gc start never is) is in the round
	 * trip: one added to EVENT_TYPES must be added here too */
	for (int t = 0; t < EV__COUNT; t++) {
		int found = EVENT_IS_GC_START(t);
		for (int i = 0; i < n && !found; i++)
			found = (int)ev[i].type == t;
		char name[96];
		snprintf(name, sizeof(name), "round trip has an event of type %s",
			 event_types[t].tag);
		ok(found, name);
	}
	write_events(&f, ev, n, &node, NULL);
	json_counts(&f, node, 1763790000000100LL, "<0.85.0>", "ping", NULL, 3, 4, 1);
	json_counts(&f, node, 1763790000000200LL, "<0.86.0>", NULL, NULL, 0, 9, 0);
	stats_init(&ts, 2);
	ts.written = (unsigned long)n;
	struct summary_info si = {
		.node = node, .ended = "duration", .started_us = 1763789999000000LL,
		.duration_ms = 2500, .count_overflow = -1, .clock_error_us = -1,
	};
	json_summary(&f, &si, &ts);
	stats_release(&ts);
	const char *p = put_sb("round.ndjson", &f);

	got_init(&g, ev, n);
	int rc = open_read(&r, p, &g, &err);
	is_num(rc, 0, "a batch recording reads to its end");
	is(sbuf_str(&err), "", "no message");
	is_num(g.nev, n, "every event delivered");
	ok(!g.bad, "every field of every type read back as written");
	is(sbuf_str(&g.nodes), "0=n@h ", "one node, index 0");
	is(sbuf_str(&g.counts),
	   "0:0 <0.85.0> ping 3/4/1@1763790000000100 "
	   "0:0 <0.86.0> - 0/9/0@1763790000000200 ", "counts lines");
	char want[128];
	snprintf(want, sizeof(want), "0:summary:n@h:duration:%d ", n);
	is(sbuf_str(&g.summaries), want, "the summary line");
	ok(g.started_ts == 1763789999000000LL && g.duration_ms == 2500,
	   "the summary's start and duration");
	is_num(r.stats.lines, n + 3, "lines counted");
	is_num(r.stats.items, n + 3, "items counted");
	is_num(r.stats.events, n, "events counted");
	is_num(r.stats.malformed, 0, "nothing malformed");
	ok(!r.stats.truncated, "not cut short");
	ok(r.stats.bytes == f.len && r.stats.size == f.len, "bytes read: all of it");
	ok(r.stats.has_ts && r.stats.first_ts == 1763790000000000LL - 5 &&
	   r.stats.last_ts == 1763790000000000LL + 28, "the time span");
	ok(!r.stats.is_export, "not an export");
	is(recording_node(&r, 0), "n@h", "recording_node");
	ok(recording_node(&r, 1) == NULL && recording_node(&r, -1) == NULL,
	   "recording_node out of range");
	recording_release(&r);

	/* one item a call */
	int calls;
	got_release(&g);
	got_init(&g, ev, n);
	recording_open(&r, p, &err);
	rc = read_all(&r, 1, &g, &calls);
	ok(rc == 0 && g.nev == n && !g.bad, "read one item a call");
	ok(calls >= n + 3 && calls <= n + 4, "as many calls as items");
	recording_release(&r);

	/* no sink at all */
	recording_open(&r, p, &err);
	while ((rc = recording_read(&r, 10, NULL, NULL)) == 1)
		;
	ok(rc == 0 && r.stats.items == (unsigned long)n + 3, "read with no sink");
	recording_release(&r);
	recording_release(&r);   /* twice is harmless */

	got_release(&g);
	sbuf_release(&f);
	sbuf_release(&err);
}

static void test_several_nodes(void)
{
	static const char *const nodes[] = { "a@h", "b@127.0.0.1", "c@h" };
	struct event ev[8];
	int node[8], n = 0;
	struct event e;

	e = base(EV_SEND, 100, "<b@127.0.0.1.86.0>", 86);
	e.pid.node = 1; e.peer = "<a@h.85.0>"; e.payload = "ping";
	node[n] = 1; ev[n++] = e;
	e = base(EV_RECEIVE, 110, "<a@h.85.0>", 85);
	e.payload = "ping"; e.from = "<b@127.0.0.1.86.0>";
	e.latency_us = 10;
	node[n] = 0; ev[n++] = e;
	/* a pid of a node not named yet */
	e = base(EV_EXIT, 120, "<c@h.7.1>", 7);
	e.pid.serial = 1; e.pid.node = 2; e.payload = "killed";
	node[n] = 0; ev[n++] = e;
	e = base(EV_SEND, 130, "<c@h.7.2>", 7);
	e.pid.serial = 2; e.pid.node = 2; e.peer = "<a@h.85.0>";
	node[n] = 2; ev[n++] = e;

	struct sbuf f = SBUF_INIT, err = SBUF_INIT;
	write_events(&f, ev, n, nodes, node);
	/* what beamscope writes at the end of a run over several nodes */
	struct trace_stats ts;
	stats_init(&ts, 1);
	struct summary_info si = {
		.type = "node_summary", .node = "a@h", .ended = "interrupted",
		.started_us = 50, .duration_ms = 1, .count_overflow = -1,
		.clock_offset_us = 3, .clock_error_us = 1, .sessions = 1,
	};
	json_summary(&f, &si, &ts);
	stats_release(&ts);
	static const char *const all[] = { "a@h", "b@127.0.0.1", "c@h", "d@h" };
	static const bool lost[] = { false, false, true, false };
	struct cluster_summary cs = {
		.nodes = all, .lost = lost, .nnodes = 4, .ended = "interrupted",
		.started_us = 50, .duration_ms = 1, .events = 4,
	};
	json_cluster_summary(&f, &cs);
	const char *p = put_sb("nodes.ndjson", &f);

	/* the reader's indexes: first seen first */
	int remap[3] = { 1, 0, 2 };
	for (int i = 0; i < n; i++) {
		ev[i].pid.node = (uint32_t)remap[ev[i].pid.node];
		node[i] = remap[node[i]];
	}
	struct recording r;
	struct got g;
	got_init(&g, ev, n);
	g.want_node = node;
	int rc = open_read(&r, p, &g, &err);
	is_num(rc, 0, "several nodes: read to the end");
	ok(g.nev == n && !g.bad, "pids map to their node's index, line nodes too");
	is(sbuf_str(&g.nodes), "0=b@127.0.0.1 1=a@h 2=c@h 3=d@h ",
	   "nodes told in first-seen order, from lines, pids and the summary");
	is(sbuf_str(&g.summaries),
	   "1:node_summary:a@h:interrupted:0 -1:summary:-:interrupted:4 ",
	   "node summary, then the run's summary with no node");
	is_num(r.nnodes, 4, "four nodes");
	recording_release(&r);
	got_release(&g);
	sbuf_release(&f);
	sbuf_release(&err);
}

/* a literal, NUL bytes and all */
#define ADD(lit) sbuf_add(&f, lit, sizeof(lit) - 1)

static void test_malformed(void)
{
	struct event ev[3];
	const char *node = "n@h";
	struct sbuf f = SBUF_INIT, err = SBUF_INIT;

	ev[0] = base(EV_SEND, 1, "<0.1.0>", 1);
	ev[1] = base(EV_RECEIVE, 2, "<0.2.0>", 2);
	ev[2] = base(EV_EXIT, 3, "<0.3.0>", 3);
	write_events(&f, ev, 1, &node, NULL);
	sbuf_addstr(&f, "garbage\n");                                     /* 2 */
	write_events(&f, ev + 1, 1, &node, NULL);
	sbuf_addstr(&f, "{\"type\":\"nope\",\"ts\":1,\"node\":\"n@h\",\"pid\":\"<0.1.0>\"}\n");
	sbuf_addstr(&f, "{\"type\":\"send\",\"node\":\"n@h\",\"pid\":\"<0.1.0>\"}\n");
	sbuf_addstr(&f, "{\"type\":\"send\",\"ts\":\"1\",\"node\":\"n@h\",\"pid\":\"<0.1.0>\"}\n");
	sbuf_addstr(&f, "{\"type\":\"send\",\"ts\":1,\"node\":\"n@h\"}\n");
	sbuf_addstr(&f, "{\"type\":\"send\",\"ts\":1,\"node\":\"n@h\",\"pid\":\"<0.1>\"}\n");
	sbuf_addstr(&f, "{\"type\":\"send\",\"ts\":1.5,\"node\":\"n@h\",\"pid\":\"<0.1.0>\"}\n");
	sbuf_addstr(&f, "{\"type\":\"send\",\"ts\":1,\"node\":\"n@h\",\"pid\":\"<0.1.0>\",\"payload\":7}\n");
	sbuf_addstr(&f, "{\"type\":\"send\",\"ts\":1,\"node\":\"n@h\",\"pid\":\"<0.1.0>\",\"truncated\":1}\n");
	sbuf_addstr(&f, "{\"type\":\"gc\",\"ts\":1,\"node\":\"n@h\",\"pid\":\"<0.1.0>\"}\n");
	sbuf_addstr(&f, "{\"type\":\"running\",\"ts\":1,\"node\":\"n@h\",\"pid\":\"<0.1.0>\",\"state\":\"sideways\"}\n");
	sbuf_addstr(&f, "{\"type\":\"gc_start\",\"ts\":1,\"node\":\"n@h\",\"pid\":\"<0.1.0>\"}\n");
	sbuf_addstr(&f, "{\"type\":\"send\",\"ts\":1,\"pid\":\"<0.1.0>\"}\n");
	sbuf_addstr(&f, "[1,2]\n");
	sbuf_addstr(&f, "{\"type\":\"send\"} trailing\n");
	sbuf_addstr(&f, "{\"type\":\"counts\",\"ts\":1,\"node\":\"n@h\",\"pid\":\"<0.1.0>\",\"sends\":-1}\n");
	sbuf_addstr(&f, "{\"type\":\"summary\",\"ended\":\"x\"}\n");
	sbuf_addstr(&f, "{\"type\":\"send\",\"ts\":1e300,\"node\":\"n@h\",\"pid\":\"<0.1.0>\"}\n");
	sbuf_addstr(&f, "{\"type\":\"send\",\"ts\":1,\"node\":\"ghost@h\",\"pid\":\"<0.1>\"}\n");
	sbuf_addstr(&f, "{\"type\":\"send\",\"ts\":1,\"node\":\"n@h\",\"pid\":\"<ghost@h.1.0>\",\"payload\":7}\n");
	ADD("{\"type\":\"send\",\"ts\":1,\"node\":\"n@h\",\"pid\":\"<0.1.0>\"\0}\n");
	ADD("{\"type\":\"send\",\"ts\":1,\"node\":\"n@h\",\"pid\":\"<0.1.0>\"}\0\n");
	sbuf_addstr(&f, "\n   \n");                                     /* blank */
	write_events(&f, ev + 2, 1, &node, NULL);                      /* 27 */
	const char *p = put_sb("malformed.ndjson", &f);

	struct recording r;
	struct got g;
	got_init(&g, ev, 3);
	int rc = open_read(&r, p, &g, &err);
	is_num(rc, 0, "malformed lines: read to the end");
	ok(g.nev == 3 && !g.bad, "the good lines around them delivered");
	is_num(r.stats.malformed, 22, "each malformed line counted");
	is_num(r.stats.first_malformed, 2, "the first one's line number");
	is(r.stats.first_malformed_why, "not a JSON object", "and what is wrong");
	is_num(r.stats.lines, 27, "blank lines are lines too");
	ok(r.nnodes == 1 && !strcmp(sbuf_str(&g.nodes), "0=n@h "),
	   "malformed lines make up no node");
	ok(!r.stats.truncated, "nothing cut short");
	recording_release(&r);
	got_release(&g);
	sbuf_release(&f);
	sbuf_release(&err);
}

static void test_truncated(void)
{
	struct event ev[2];
	const char *node = "n@h";
	struct sbuf f = SBUF_INIT, err = SBUF_INIT;
	struct recording r;
	struct got g;

	ev[0] = base(EV_SEND, 1, "<0.1.0>", 1);
	ev[1] = base(EV_RECEIVE, 2, "<0.2.0>", 2);
	write_events(&f, ev, 2, &node, NULL);
	sbuf_addstr(&f, "{\"type\":\"send\",\"ts\":3,\"node\":\"n@");
	const char *p = put_sb("cut.ndjson", &f);
	got_init(&g, ev, 2);
	int rc = open_read(&r, p, &g, &err);
	ok(rc == 0 && g.nev == 2 && !g.bad, "a last line cut short: the rest read");
	ok(r.stats.truncated, "flagged as cut short");
	is_num(r.stats.malformed, 0, "not counted as malformed");
	is_num(r.stats.lines, 3, "but counted as a line");
	recording_release(&r);
	got_release(&g);

	/* a whole last line without its newline */
	sbuf_reset(&f);
	write_events(&f, ev, 2, &node, NULL);
	sbuf_truncate(&f, f.len - 1);
	p = put_sb("nonl.ndjson", &f);
	got_init(&g, ev, 2);
	rc = open_read(&r, p, &g, &err);
	ok(rc == 0 && g.nev == 2 && !g.bad && !r.stats.truncated,
	   "a last line without newline that parses is read");
	recording_release(&r);
	got_release(&g);

	/* a last line that parses but is not an event */
	sbuf_reset(&f);
	write_events(&f, ev, 1, &node, NULL);
	sbuf_addstr(&f, "{\"type\":\"what\"}");
	p = put_sb("nonl-bad.ndjson", &f);
	got_init(&g, ev, 1);
	rc = open_read(&r, p, &g, &err);
	ok(rc == 0 && g.nev == 1 && !r.stats.truncated && r.stats.malformed == 1,
	   "a last line that parses as something else is malformed");
	recording_release(&r);
	got_release(&g);
	sbuf_release(&f);
	sbuf_release(&err);
}

/* open must fail with a message that starts with want, the path for %s */
static void refused(const char *name, const void *data, size_t n,
		    const char *want, const char *what)
{
	struct recording r;
	struct sbuf err = SBUF_INIT, w = SBUF_INIT;
	const char *p = data ? put(name, data, n) : file_of(name);
	const char *at = strstr(want, "%s");   /* the path goes there */
	sbuf_add(&w, want, (size_t)(at - want));
	sbuf_addstr(&w, p);
	sbuf_addstr(&w, at + 2);
	int rc = recording_open(&r, p, &err);
	ok(rc == -1 && !strncmp(sbuf_str(&err), w.buf, w.len) &&
	   !strchr(sbuf_str(&err), '\n'), what);
	if (rc == 0)
		recording_release(&r);
	else if (strncmp(sbuf_str(&err), w.buf, w.len))
		printf("#   got: %s\n#  want: %s\n", sbuf_str(&err), w.buf);
	sbuf_release(&err);
	sbuf_release(&w);
}

static void test_refused(void)
{
	refused("empty", "", 0, "\"%s\" is empty; record one with beamscope "
		"--batch -o FILE or :record FILE", "an empty file");
	refused("blank", "\n \r\n\t\n", 6, "\"%s\" is empty;",
		"a file of blank lines is empty too");
	refused("binary", "{\"type\0\":1}\n", 12,
		"\"%s\" is not a beamscope recording: it holds binary data",
		"binary data");
	refused("gz", "\x1f\x8b\x08\x00\x00\x00", 6,
		"\"%s\" is compressed (gzip); uncompress it first",
		"a gzip file");
	refused("text", "hello world\n{\"type\":\"send\"}\n", 28,
		"\"%s\" is not a beamscope recording: line 1 is not JSON; "
		"open a file written by beamscope --batch -o FILE or :export FILE",
		"a text file");
	refused("later", "\n\nhello\n", 8,
		"\"%s\" is not a beamscope recording: line 3 is not JSON",
		"the first line that is not blank is judged");
	refused("notype", "{\"level\":\"info\"}\n", 17,
		"\"%s\" is not a beamscope recording: line 1 is JSON without a \"type\"",
		"JSON that is not ours");
	refused("array", "[1,2,3]\n", 8,
		"\"%s\" is not a beamscope recording: line 1 is not JSON",
		"JSON that is not an object");
	refused("no-such-file", NULL, 0,
		"cannot open \"%s\": No such file or directory", "a missing file");
	refused("", NULL, 0, "\"%s\" is a directory; open a file", "a directory");
	struct recording r;
	struct sbuf err = SBUF_INIT;
	ok(recording_open(&r, "/dev/null", &err) == -1 &&
	   strstr(sbuf_str(&err), "is not a file or a pipe"), "a device: refused");
	sbuf_release(&err);
}

static void test_crlf(void)
{
	struct event ev[3];
	const char *node = "n@h";
	struct sbuf f = SBUF_INIT, crlf = SBUF_INIT, err = SBUF_INIT;
	ev[0] = base(EV_SEND, 1, "<0.1.0>", 1);
	ev[0].payload = "a\r\nb";
	ev[1] = base(EV_RECEIVE, 2, "<0.2.0>", 2);
	ev[2] = base(EV_EXIT, 3, "<0.3.0>", 3);
	write_events(&f, ev, 3, &node, NULL);
	for (size_t i = 0; i < f.len; i++) {
		if (f.buf[i] == '\n')
			sbuf_addch(&crlf, '\r');
		sbuf_addch(&crlf, f.buf[i]);
	}
	const char *p = put_sb("crlf.ndjson", &crlf);
	struct recording r;
	struct got g;
	got_init(&g, ev, 3);
	int rc = open_read(&r, p, &g, &err);
	ok(rc == 0 && g.nev == 3 && !g.bad && !r.stats.malformed,
	   "CRLF line ends are read");
	recording_release(&r);
	got_release(&g);
	sbuf_release(&f);
	sbuf_release(&crlf);
	sbuf_release(&err);
}

static void test_long_lines(void)
{
	const char *node = "n@h";
	struct sbuf f = SBUF_INIT, err = SBUF_INIT, big = SBUF_INIT;
	struct event ev[3];
	struct recording r;
	struct got g;

	/* a payload over several reads' worth: read whole under the cap */
	for (int i = 0; i < 300000; i++)
		sbuf_addch(&big, (char)('a' + i % 26));
	ev[0] = base(EV_SEND, 1, "<0.1.0>", 1);
	ev[1] = base(EV_RECEIVE, 2, "<0.2.0>", 2);
	ev[1].payload = big.buf;
	ev[2] = base(EV_EXIT, 3, "<0.3.0>", 3);
	write_events(&f, ev, 3, &node, NULL);
	const char *p = put_sb("long.ndjson", &f);
	got_init(&g, ev, 3);
	int rc = open_read(&r, p, &g, &err);
	ok(rc == 0 && g.nev == 3 && !g.bad, "a line longer than a read is read whole");
	recording_release(&r);
	got_release(&g);

	/* the same over a lower cap: skipped, counted, the rest read */
	struct event short_ev[2] = { ev[0], ev[2] };
	got_init(&g, short_ev, 2);
	recording_open(&r, p, &err);
	r.line_max = 1000;
	rc = read_all(&r, 1000, &g, NULL);
	ok(rc == 0 && g.nev == 2 && !g.bad, "a line over the cap is skipped");
	ok(r.stats.malformed == 1 && r.stats.too_long == 1 &&
	   r.stats.first_malformed == 2, "counted as malformed, too long, line 2");
	is(r.stats.first_malformed_why, "line too long", "why");
	is_num(r.stats.lines, 3, "lines after it counted right");
	ok(r.line.cap <= 4096, "the long line was not kept");
	recording_release(&r);
	got_release(&g);

	/* too long, last, without its newline */
	sbuf_reset(&f);
	write_events(&f, ev, 2, &node, NULL);
	sbuf_truncate(&f, f.len - 1);
	p = put_sb("long-last.ndjson", &f);
	got_init(&g, ev, 1);
	recording_open(&r, p, &err);
	r.line_max = 1000;
	rc = read_all(&r, 1000, &g, NULL);
	ok(rc == 0 && g.nev == 1 && r.stats.too_long == 1 && !r.stats.truncated &&
	   r.stats.lines == 2, "a last line over the cap without newline");
	recording_release(&r);
	got_release(&g);

	/* the first line is longer than one read: opened on its start */
	sbuf_reset(&f);
	write_events(&f, ev + 1, 2, &node, NULL);
	p = put_sb("long-first.ndjson", &f);
	got_init(&g, ev + 1, 2);
	rc = open_read(&r, p, &g, &err);
	ok(rc == 0 && g.nev == 2 && !g.bad, "a first line longer than one read");
	recording_release(&r);
	got_release(&g);
	big.buf[0] = '{';
	p = put_sb("long-junk", &big);
	ok(recording_open(&r, p, &err) == 0, "which is judged by its start");
	read_all(&r, 10, &g, NULL);
	ok(r.stats.truncated && !r.stats.malformed, "and read as cut short");
	recording_release(&r);
	sbuf_release(&big);
	sbuf_release(&f);
	sbuf_release(&err);
}

/* The store's events as export_json writes them. */
static int store_events(const struct store *st, struct event *ev, int max)
{
	int n = 0;
	for (uint64_t s = store_oldest_seq(st); s < st->next_seq && n < max; s++) {
		const struct sevent *e = store_event(st, s);
		if (!e)
			continue;
		struct event x = {
			.type = e->type, .ts = e->ts, .pid = e->pid,
			.pid_text = e->pid_text, .name = e->name, .peer = e->peer,
			.peer_name = e->peer_name, .mfa = e->mfa,
			.payload = e->payload, .truncated = e->truncated,
			.extra = e->extra, .elapsed_us = e->elapsed_us,
			.heap = { e->heap[0], e->heap[1], e->heap[2], e->heap[3] },
			.from = e->from, .latency_us = e->latency_us,
		};
		ev[n++] = x;
	}
	return n;
}

static void test_export(void)
{
	struct store st;
	struct event ev[64];
	int n = every_type(ev);
	struct sbuf f = SBUF_INIT, err = SBUF_INIT;
	static const char *const node[] = { "n@h" };

	store_init(&st, 16);
	for (int i = 0; i < n; i++)
		store_add_event(&st, &ev[i]);
	store_set_info(&st, (struct bs_pid){ 85, 0, 0 }, "<0.85.0>", "ping",
		       "gen_server:loop/7", 4);
	export_json(&f, &st, node, 1);
	const char *p = put_sb("export.json", &f);

	struct event want[64];
	int nwant = store_events(&st, want, 64);
	struct recording r;
	struct got g;
	got_init(&g, want, nwant);
	int calls;
	recording_open(&r, p, &err);
	int rc = read_all(&r, 3, &g, &calls);
	ok(rc == 0 && g.nev == nwant && !g.bad, "an export's events read back");
	ok(nwant == 16 && st.evicted > 0, "(the ring kept the newest 16)");
	ok(r.stats.is_export && r.stats.evicted_events == (int64_t)st.evicted &&
	   r.stats.exported_ts > 0, "export: evicted events and when");
	is_num(r.stats.malformed, 0, "nothing malformed");
	ok(calls >= (nwant + (int)st.nprocs) / 3, "handed out a few at a time");
	is(sbuf_str(&g.nodes), "0=n@h ", "its node");

	/* the processes, as the store has them */
	struct sbuf want_procs = SBUF_INIT;
	for (size_t i = 0; i < st.nprocs; i++) {
		const struct proc *q = st.procs[i];
		sbuf_addf(&want_procs, "0:%u.%u@%u %s %s %s %s %lu/%lu/%lu mq%ld "
			  "run%lld gc%lu ", q->pid.num, q->pid.serial, q->pid.node,
			  q->pid_text, q->name ? q->name : "-",
			  q->initial ? q->initial : "-",
			  q->current ? q->current : "-", q->sends, q->receives,
			  q->spawns, q->mqlen, (long long)q->run_us, q->gcs);
		if (q->has_parent)
			sbuf_addf(&want_procs, "parent %u.%u@%u <0.%u.%u> ",
				  q->parent.num, q->parent.serial, q->parent.node,
				  q->parent.num, q->parent.serial);
		if (q->exited)
			sbuf_addf(&want_procs, "exited %s ", q->reason ? q->reason : "");
		sbuf_addstr(&want_procs, "| ");
	}
	is(sbuf_str(&g.procs), sbuf_str(&want_procs), "every process entry, every field");
	ok(strstr(sbuf_str(&g.procs), "ping - gen_server:loop/7") &&
	   strstr(sbuf_str(&g.procs), "parent 85.0@0") &&
	   strstr(sbuf_str(&g.procs), "exited normal") &&
	   strstr(sbuf_str(&g.procs), "mq4"), "(names, parents, exits, queues)");
	is_num(r.stats.items, nwant + st.nprocs, "items: events and processes");
	recording_release(&r);
	got_release(&g);
	store_release(&st);
	sbuf_release(&want_procs);

	/* several nodes: pids carry their node's name */
	static const char *const nodes2[] = { "a@h", "b@h" };
	struct event e2[3];
	e2[0] = base(EV_SPAWN, 10, "<a@h.1.0>", 1);
	e2[0].peer = "<a@h.2.0>"; e2[0].mfa = "m:f/0"; e2[0].payload = "[]";
	e2[1] = base(EV_SEND, 20, "<b@h.5.0>", 5);
	e2[1].pid.node = 1; e2[1].peer = "<a@h.1.0>"; e2[1].payload = "hi";
	e2[2] = base(EV_RECEIVE, 30, "<a@h.1.0>", 1);
	e2[2].payload = "hi"; e2[2].from = "<b@h.5.0>"; e2[2].latency_us = 10;
	int node2[3] = { 0, 1, 0 };
	store_init(&st, 16);
	for (int i = 0; i < 3; i++)
		store_add_event(&st, &e2[i]);
	sbuf_reset(&f);
	export_json(&f, &st, nodes2, 2);
	p = put_sb("export2.json", &f);
	got_init(&g, e2, 3);
	g.want_node = node2;
	recording_open(&r, p, &err);
	rc = read_all(&r, 100, &g, NULL);
	ok(rc == 0 && g.nev == 3 && !g.bad, "a multi-node export: events and pid nodes");
	is(sbuf_str(&g.nodes), "0=a@h 1=b@h ", "nodes in the export's order");
	ok(strstr(sbuf_str(&g.procs), "1:5.0@1 <b@h.5.0>") &&
	   strstr(sbuf_str(&g.procs), "0:2.0@0 <a@h.2.0>") &&
	   strstr(sbuf_str(&g.procs), "parent 1.0@0 <a@h.1.0>"),
	   "process entries on their nodes, parents too");
	recording_release(&r);
	got_release(&g);
	store_release(&st);

	/* a bad entry is counted, the others delivered */
	sbuf_reset(&f);
	sbuf_addstr(&f, "{\"type\":\"export\",\"node\":\"n@h\",\"processes\":[{\"pid\":\"x\"},"
		    "{\"pid\":\"<z@h.1.0>\",\"sends\":\"x\"},"
		    "{\"pid\":\"<0.1.0>\",\"sends\":2}],\"events\":[1,{\"type\":\"send\","
		    "\"ts\":5,\"node\":\"n@h\",\"pid\":\"<0.1.0>\"},{\"type\":\"zz\"}]}\n");
	p = put_sb("export-bad.json", &f);
	got_init(&g, NULL, 0);
	recording_open(&r, p, &err);
	rc = read_all(&r, 100, &g, NULL);
	ok(rc == 0 && g.nev == 1 && r.stats.malformed == 4 &&
	   r.stats.first_malformed == 1 && r.stats.items == 2,
	   "bad export entries counted on the export's line");
	ok(r.nnodes == 1 && !strcmp(sbuf_str(&g.nodes), "0=n@h "),
	   "and make up no node");
	recording_release(&r);
	got_release(&g);

	/* released half way: nothing leaks */
	recording_open(&r, p, &err);
	recording_read(&r, 1, &sink, &g);
	ok(r.export != NULL, "an export half handed out");
	recording_release(&r);
	got_release(&g);
	sbuf_release(&f);
	sbuf_release(&err);
}

static void test_pipe(void)
{
	struct event ev[2];
	const char *node = "n@h";
	struct sbuf f = SBUF_INIT, err = SBUF_INIT;
	int fds[2];

	ev[0] = base(EV_SEND, 1, "<0.1.0>", 1);
	ev[1] = base(EV_RECEIVE, 2, "<0.2.0>", 2);
	write_events(&f, ev, 2, &node, NULL);
	if (pipe(fds) < 0 || write(fds[1], f.buf, f.len) != (ssize_t)f.len) {
		printf("Bail out! pipe\n");
		exit(1);
	}
	close(fds[1]);
	struct recording r;
	struct got g;
	got_init(&g, ev, 2);
	int rc = recording_open_fd(&r, fds[0], "a pipe", &err);
	ok(rc == 0, "a pipe opens");
	rc = read_all(&r, 10, &g, NULL);
	ok(rc == 0 && g.nev == 2 && !g.bad && r.stats.size == 0 &&
	   r.stats.bytes == f.len, "and reads, size unknown");
	recording_release(&r);
	got_release(&g);

	if (pipe(fds) < 0) {
		printf("Bail out! pipe\n");
		exit(1);
	}
	close(fds[1]);
	rc = recording_open_fd(&r, fds[0], "an empty pipe", &err);
	ok(rc == -1 && !strcmp(sbuf_str(&err), "\"an empty pipe\" is empty; record "
			       "one with beamscope --batch -o FILE or :record FILE"),
	   "an empty pipe is empty");

	/* a read error stops reading with a message */
	const char *p = put_sb("err.ndjson", &f);
	recording_open(&r, p, &err);
	r.rpos = r.rlen;   /* as if it had all been taken */
	close(r.fd);
	r.fd = open(dir, O_RDONLY);
	got_init(&g, NULL, 0);
	rc = read_all(&r, 10, &g, NULL);
	ok(rc == -1 && strstr(sbuf_str(&r.error), "cannot read \"") &&
	   strstr(sbuf_str(&r.error), "Is a directory"), "a read error is reported");
	recording_release(&r);
	got_release(&g);
	sbuf_release(&f);
	sbuf_release(&err);
}

/* An export longer than the read buffer is streamed: an entry at a time,
 * each entry within line_max, the line never held whole. */
static void test_export_streamed(void)
{
	enum { N = 2000 };
	struct store st;
	static struct event ev[N], want[N];
	char pay[200];
	struct sbuf f = SBUF_INIT, err = SBUF_INIT;
	static const char *const node[] = { "n@h" };

	memset(pay, 'p', sizeof(pay) - 1);
	pay[sizeof(pay) - 1] = '\0';
	store_init(&st, N);
	for (int i = 0; i < N; i++) {
		ev[i] = base(EV_SEND, 1000 + i, "<0.85.0>", 85);
		ev[i].peer = "<0.86.0>";
		ev[i].payload = pay;
		store_add_event(&st, &ev[i]);
	}
	store_set_info(&st, (struct bs_pid){ 85, 0, 0 }, "<0.85.0>", "ping",
		       NULL, 4);
	export_json(&f, &st, node, 1);
	const char *p = put_sb("streamed.json", &f);
	int nwant = store_events(&st, want, N);

	struct recording r;
	struct got g;
	got_init(&g, want, nwant);
	recording_open(&r, p, &err);
	r.line_max = 4096;   /* the line is 100 times longer */
	int calls, rc = read_all(&r, 50, &g, &calls);
	ok(f.len > 100 * 4096, "(an export of a single line of 100 line caps)");
	ok(rc == 0 && g.nev == N && !g.bad, "streamed: every event, every field");
	is_num(r.stats.malformed, 0, "nothing malformed, nothing too long");
	ok(r.stats.is_export && r.stats.exported_ts > 0, "its header read");
	ok(strstr(sbuf_str(&g.procs), "ping") != NULL, "its process entry");
	is_num(r.stats.items, N + st.nprocs, "items: events and processes");
	ok(calls >= N / 50, "handed out a few at a time");
	ok(r.line.cap <= 2 * 4096, "never more than an entry held");
	recording_release(&r);
	got_release(&g);

	/* one entry over the cap is skipped and said; the others stand */
	char big[5000];
	memset(big, 'b', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ev[0].payload = big;
	store_add_event(&st, &ev[0]);
	sbuf_reset(&f);
	export_json(&f, &st, node, 1);
	p = put_sb("streamed-long.json", &f);
	got_init(&g, NULL, 0);
	recording_open(&r, p, &err);
	r.line_max = 4096;
	rc = read_all(&r, 50, &g, NULL);
	ok(rc == 0 && g.nev == N - 1, "an entry too long is left out, not the rest");
	ok(r.stats.malformed == 1 && r.stats.too_long == 1 &&
	   !strcmp(r.stats.first_malformed_why, "entry too long"), "and said");
	recording_release(&r);
	got_release(&g);

	/* cut short: what came before stands, flagged */
	sbuf_truncate(&f, f.len / 2);
	p = put_sb("streamed-cut.json", &f);
	got_init(&g, NULL, 0);
	recording_open(&r, p, &err);
	rc = read_all(&r, 50, &g, NULL);
	ok(rc == 0 && g.nev > N / 3 && g.nev < N, "cut in the middle: its first half read");
	ok(r.stats.truncated && r.stats.export_cut && !r.stats.malformed,
	   "cut short, not malformed");
	recording_release(&r);
	got_release(&g);
	store_release(&st);
	sbuf_release(&f);
	sbuf_release(&err);
}

/* What a replay writes last is a summary the reader takes. */
static void test_replay_summary(void)
{
	struct sbuf f = SBUF_INIT, err = SBUF_INIT;
	static const char *const one[] = { "n@h" }, *const three[] = {
		"a@h", "b@h", "c@h" };
	struct replay_summary rs = {
		.nodes = one, .nnodes = 1, .file = "in.ndjson",
		.ended = "max_events", .started_us = 5, .duration_ms = 7,
		.events = 10, .limit_events = 10, .over_limit = 1,
	};
	json_replay_summary(&f, &rs);
	rs.nodes = three;
	rs.nnodes = 3;
	rs.ended = "end_of_recording";
	rs.events = 3;
	json_replay_summary(&f, &rs);
	const char *p = put_sb("replayed.ndjson", &f);
	struct recording r;
	struct got g;
	got_init(&g, NULL, 0);
	int rc = open_read(&r, p, &g, &err);
	ok(rc == 0 && !r.stats.malformed, "a replay's summaries read back");
	is(sbuf_str(&g.summaries),
	   "0:summary:n@h:max_events:10 -1:summary:-:end_of_recording:3 ",
	   "one node, then several");
	recording_release(&r);
	got_release(&g);
	sbuf_release(&f);
	sbuf_release(&err);
}

int main(void)
{
	plan(95 + EV__COUNT);
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}
	test_round_trip();
	test_several_nodes();
	test_malformed();
	test_truncated();
	test_refused();
	test_crlf();
	test_long_lines();
	test_export();
	test_export_streamed();
	test_replay_summary();
	test_pipe();

	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
	return done_testing();
}
