/* Unit tests: message shapes and event batches, as the NIF and workers send them. */
#include <ei.h>

#include "decode.h"
#include "tap.h"

#define NODE "t@h"

static erlang_pid pid(unsigned num)
{
	erlang_pid p = { .num = num, .serial = 0, .creation = 7 };
	strcpy(p.node, NODE);
	return p;
}

static void ev_head(ei_x_buff *x, const char *tag, unsigned tracee, long long ts)
{
	erlang_pid p = pid(tracee);
	ei_x_encode_tuple_header(x, 6);
	ei_x_encode_atom(x, tag);
	ei_x_encode_pid(x, &p);
	ei_x_encode_longlong(x, ts);
}

static char labels[4][LABEL_MAX + 1];
static int nlabels;

static void label_got(void *arg, struct bs_pid p, const char *text,
		      const char *label, bool again)
{
	(void)arg;
	(void)text;
	if (nlabels < 4)
		snprintf(labels[nlabels++], sizeof(labels[0]), "%u %s%s",
			 p.num, label ? label : "-", again ? " again" : "");
}

static char infos[4][128];
static int ninfos;

static void info_got(void *arg, struct bs_pid p, const char *text,
		     const char *name, const char *current, long mqlen)
{
	(void)arg;
	(void)text;
	if (ninfos < 4)
		snprintf(infos[ninfos++], sizeof(infos[0]), "%u %s %s %ld",
			 p.num, name ? name : "-", current ? current : "-",
			 mqlen);
}

static char sizes[4][128];
static int nsizes;

static void sizes_got(void *arg, struct bs_pid p, struct psize memory,
		      long reductions, struct psize heap)
{
	(void)arg;
	if (nsizes < 4)
		snprintf(sizes[nsizes++], sizeof(sizes[0]), "%u %s%ld %ld %s%ld",
			 p.num, memory.at_least ? ">" : "", memory.bytes,
			 reductions, heap.at_least ? ">" : "", heap.bytes);
}

/* {Pid, Name, {M, F, A}, Mq} and, with Mem set, Mem, Reds, Heap after
 * it: a size is a number, or {at_least, N} when at_least */
static void info_entry(ei_x_buff *x, unsigned num, const char *name, long mq,
		       long mem, bool mem_at_least, long reds, long heap,
		       bool heap_at_least)
{
	erlang_pid p = pid(num);
	ei_x_encode_tuple_header(x, mem < 0 ? 4 : 7);
	ei_x_encode_pid(x, &p);
	ei_x_encode_atom(x, name);
	ei_x_encode_tuple_header(x, 3);
	ei_x_encode_atom(x, "m");
	ei_x_encode_atom(x, "f");
	ei_x_encode_long(x, 1);
	ei_x_encode_long(x, mq);
	if (mem < 0)
		return;
	long v[] = { mem, heap };
	bool lb[] = { mem_at_least, heap_at_least };
	for (int i = 0; i < 2; i++) {
		if (lb[i]) {
			ei_x_encode_tuple_header(x, 2);
			ei_x_encode_atom(x, "at_least");
		}
		ei_x_encode_long(x, v[i]);
		if (i == 0)
			ei_x_encode_long(x, reds);
	}
}

static struct relations rels[4];
static int nrels;

static void rel_got(void *arg, const struct relations *r)
{
	(void)arg;
	if (nrels < 4)
		rels[nrels++] = *r;
}

/* {process, Pid} */
static void monitor_pid(ei_x_buff *x, unsigned num)
{
	erlang_pid p = pid(num);
	ei_x_encode_tuple_header(x, 2);
	ei_x_encode_atom(x, "process");
	ei_x_encode_pid(x, &p);
}

static struct event got[16];
static char strs[16][7][128];
static int ngot;

static void keep(const char *s, char *dst, const char **field)
{
	if (s) {
		snprintf(dst, 128, "%s", s);
		*field = dst;
	} else {
		*field = NULL;
	}
}

static void collect(void *arg, const struct event *ev)
{
	(void)arg;
	if (ngot >= 16)
		return;
	got[ngot] = *ev;
	keep(ev->pid_text, strs[ngot][0], &got[ngot].pid_text);
	keep(ev->name, strs[ngot][1], &got[ngot].name);
	keep(ev->peer, strs[ngot][2], &got[ngot].peer);
	keep(ev->peer_name, strs[ngot][3], &got[ngot].peer_name);
	keep(ev->mfa, strs[ngot][4], &got[ngot].mfa);
	keep(ev->payload, strs[ngot][5], &got[ngot].payload);
	keep(ev->extra, strs[ngot][6], &got[ngot].extra);
	ngot++;
}

static char prof_got[4][400];
static int nprof;

/* a stack as "root;...;leaf status whole" */
static void prof_one(void *arg, const struct prof_sample *s)
{
	(void)arg;
	if (nprof == 4)
		return;
	char *o = prof_got[nprof++];
	o[0] = '\0';
	for (int i = 0; i < s->nframes; i++)
		snprintf(o + strlen(o), 400 - strlen(o), "%s%s", i ? ";" : "",
			 s->frames[i]);
	snprintf(o + strlen(o), 400 - strlen(o), " %s %s %s", s->status,
		 s->whole ? "whole" : "cut", s->pid_text);
}

/* {beamscope_profile, {Stats, [Sample]}}: a sample of frames (leaf
 * first, as the agent sends them), a malformed one, a cut one */
static void prof_msg(ei_x_buff *x)
{
	static const char *const frames[] = {
		"'Elixir.Shop.Cache':handle_call/3", "gen_server:try_handle_call/4",
		"proc_lib:init_p_do_apply/3",
	};
	erlang_pid p = pid(85);
	ei_x_new_with_version(x);
	ei_x_encode_tuple_header(x, 2);
	ei_x_encode_atom(x, "beamscope_profile");
	ei_x_encode_tuple_header(x, 2);
	ei_x_encode_map_header(x, 3);
	ei_x_encode_atom(x, "samples");
	ei_x_encode_long(x, 2);
	ei_x_encode_atom(x, "used_us");
	ei_x_encode_long(x, 730);
	ei_x_encode_atom(x, "waited_us");
	ei_x_encode_long(x, 9000);
	ei_x_encode_list_header(x, 3);
	ei_x_encode_tuple_header(x, 5);
	ei_x_encode_longlong(x, 1000);
	ei_x_encode_pid(x, &p);
	ei_x_encode_atom(x, "running");
	ei_x_encode_list_header(x, 3);
	for (int i = 0; i < 3; i++)
		ei_x_encode_binary(x, frames[i], (long)strlen(frames[i]));
	ei_x_encode_empty_list(x);
	ei_x_encode_boolean(x, 1);
	ei_x_encode_tuple_header(x, 5);          /* a frame that is no binary */
	ei_x_encode_longlong(x, 1001);
	ei_x_encode_pid(x, &p);
	ei_x_encode_atom(x, "running");
	ei_x_encode_list_header(x, 1);
	ei_x_encode_atom(x, "not_a_frame");
	ei_x_encode_empty_list(x);
	ei_x_encode_boolean(x, 1);
	ei_x_encode_tuple_header(x, 5);
	ei_x_encode_longlong(x, 1002);
	ei_x_encode_pid(x, &p);
	ei_x_encode_atom(x, "waiting");
	ei_x_encode_list_header(x, 2);
	ei_x_encode_binary(x, "lists:seq/2", 11);
	ei_x_encode_binary(x, "...", 3);
	ei_x_encode_empty_list(x);
	ei_x_encode_boolean(x, 0);
	ei_x_encode_empty_list(x);
}

static void test_profile(struct names *names)
{
	ei_x_buff x;
	struct msg m;
	struct decoder d;
	struct prof_stats st;
	prof_msg(&x);
	is_num(decode_msg(x.buff, &m), WIRE_PROFILE, "profile recognised");
	for (int syn = TERM_ERLANG; syn <= TERM_ELIXIR; syn++) {
		decoder_init(&d, NODE, 0, names);
		d.syn = (enum term_syntax)syn;
		nprof = 0;
		int idx = m.body;
		is_num(decode_profile(&d, x.buff, &idx, &st, prof_one, NULL), 2,
		       "profile: two samples, the malformed one skipped");
		is_num(d.malformed, 1, "profile: the malformed one counted");
		is_num(st.samples, 2, "profile: its stats");
		is_num(st.used_us + st.waited_us, 9730, "profile: its costs");
		is(prof_got[0], syn == TERM_ERLANG ?
		   "proc_lib:init_p_do_apply/3;gen_server:try_handle_call/4;"
		   "'Elixir.Shop.Cache':handle_call/3 running whole <0.85.0>" :
		   ":proc_lib.init_p_do_apply/3;:gen_server.try_handle_call/4;"
		   "Shop.Cache.handle_call/3 running whole <0.85.0>",
		   "profile: root first, in the syntax in force");
		is(prof_got[1], syn == TERM_ERLANG ?
		   "...;lists:seq/2 waiting cut <0.85.0>" :
		   "...;:lists.seq/2 waiting cut <0.85.0>",
		   "profile: a cut stack");
		decoder_release(&d);
	}
	ei_x_free(&x);
}

static char alarm_got[4][400];
static int nalarm;

static void alarm_one(void *arg, const struct event *ev)
{
	(void)arg;
	if (nalarm < 4)
		snprintf(alarm_got[nalarm++], sizeof(alarm_got[0]),
			 "%d %s %s %s %s %s %lld %ld %ld", ev->type == EV_ALARM,
			 ev->pid_text, ev->extra, ev->peer ? ev->peer : "-",
			 ev->peer_name ? ev->peer_name : "-",
			 ev->payload ? ev->payload : "-", (long long)ev->elapsed_us,
			 ev->heap[0], ev->heap[1]);
}

/* one alarm: {Ts, Kind, Pid 85, Port 7 | undefined, Ms, Bytes, QLen, Detail}
 * with Detail a binary, or {In, Out} when out is not NULL */
static void alarm_entry(ei_x_buff *x, long long ts, const char *kind,
			bool port, long ms, long bytes, const char *in,
			const char *out)
{
	erlang_pid p = pid(85);
	erlang_port pt = { .id = 7, .creation = 7 };
	strcpy(pt.node, NODE);
	ei_x_encode_tuple_header(x, 8);
	ei_x_encode_longlong(x, ts);
	ei_x_encode_atom(x, kind);
	ei_x_encode_pid(x, &p);
	if (port)
		ei_x_encode_port(x, &pt);
	else
		ei_x_encode_atom(x, "undefined");
	ei_x_encode_long(x, ms);
	ei_x_encode_long(x, bytes);
	ei_x_encode_long(x, -1);
	if (out)
		ei_x_encode_tuple_header(x, 2);
	ei_x_encode_binary(x, in, (long)strlen(in));
	if (out)
		ei_x_encode_binary(x, out, (long)strlen(out));
}

/* {beamscope_alarms, Suppressed, [Alarm]}: long_gc, a long_schedule of a
 * port, an alarm of no known kind (skipped and counted), busy_dist_port */
static void alarms_msg(ei_x_buff *x)
{
	ei_x_new_with_version(x);
	ei_x_encode_tuple_header(x, 3);
	ei_x_encode_atom(x, "beamscope_alarms");
	ei_x_encode_long(x, 5);
	ei_x_encode_list_header(x, 4);
	alarm_entry(x, 1000, "long_gc", false, 812, 67108864, "", NULL);
	alarm_entry(x, 1001, "long_schedule", true, 300, -1,
		    "'Elixir.Shop':f/1", "");
	alarm_entry(x, 1002, "long_lunch", false, 1, -1, "", NULL);
	alarm_entry(x, 1003, "busy_dist_port", true, -1, -1, "b@h\n", NULL);
	ei_x_encode_empty_list(x);
}

static void test_alarms(struct names *names)
{
	ei_x_buff x;
	struct msg m;
	struct decoder d;
	alarms_msg(&x);
	is_num(decode_msg(x.buff, &m), WIRE_ALARMS, "alarms recognised");
	is_num(m.dropped, 5, "alarms: the suppressed count");
	for (int syn = TERM_ERLANG; syn <= TERM_ELIXIR; syn++) {
		decoder_init(&d, NODE, 0, names);
		d.syn = (enum term_syntax)syn;
		nalarm = 0;
		int idx = m.body;
		is_num(decode_alarms(&d, x.buff, &idx, alarm_one, NULL), 3,
		       "alarms: three, the unknown kind skipped");
		is_num(d.malformed, 1, "alarms: the unknown kind counted");
		is(alarm_got[0], "1 <0.85.0> long_gc - - - 812000 67108864 -1",
		   "alarms: long_gc, its time and heap");
		is(alarm_got[1], syn == TERM_ERLANG ?
		   "1 <0.85.0> long_schedule #Port<0.7> - in 'Elixir.Shop':f/1, out ? 300000 -1 -1" :
		   "1 <0.85.0> long_schedule #Port<0.7> - in Shop.f/1, out ? 300000 -1 -1",
		   "alarms: long_schedule, its port and where, in the syntax in force");
		is(alarm_got[2], "1 <0.85.0> busy_dist_port #Port<0.7> b@h? - -1 -1 -1",
		   "alarms: busy_dist_port, the node (a control byte made safe)");
		decoder_release(&d);
	}
	ei_x_free(&x);

	static const struct { const char *what, *want; } st[] = {
		{ "alarm state: off", "1    " },
		{ "alarm state: on, by system_monitor, without one",
		  "0 system_monitor long_message_queue  " },
		{ "alarm state: held, by whom", "2   <0.90.0> holder" },
	};
	for (int i = 0; i < 3; i++) {
		struct alarm_state as;
		erlang_pid h = pid(90);
		ei_x_new_with_version(&x);
		ei_x_encode_tuple_header(&x, 2);
		ei_x_encode_atom(&x, "beamscope_alarm_state");
		if (i == 0) {
			ei_x_encode_atom(&x, "off");
		} else if (i == 1) {
			ei_x_encode_tuple_header(&x, 3);
			ei_x_encode_atom(&x, "on");
			ei_x_encode_atom(&x, "system_monitor");
			ei_x_encode_list_header(&x, 1);
			ei_x_encode_atom(&x, "long_message_queue");
			ei_x_encode_empty_list(&x);
		} else {
			ei_x_encode_tuple_header(&x, 3);
			ei_x_encode_atom(&x, "held");
			ei_x_encode_pid(&x, &h);
			ei_x_encode_atom(&x, "holder");
		}
		is_num(decode_msg(x.buff, &m), WIRE_ALARM_STATE, "alarm state recognised");
		decoder_init(&d, NODE, 0, names);
		int idx = m.body;
		is_num(decode_alarm_state(&d, x.buff, &idx, &as), 0, "alarm state decoded");
		char said[600];
		snprintf(said, sizeof(said), "%d %s %s %s %s", (int)as.kind, as.how,
			 as.unsupported, as.holder, as.holder_name);
		is(said, st[i].want, st[i].what);
		decoder_release(&d);
		ei_x_free(&x);
	}
}

/* exact mode: the totals in both syntaxes, a bad row skipped, the
 * three states */
static void test_calls(struct names *names)
{
	ei_x_buff x;
	struct msg m;
	struct decoder d;
	static struct prof_calls pc;
	for (int syn = 0; syn < 2; syn++) {
		ei_x_new_with_version(&x);
		ei_x_encode_tuple_header(&x, 3);
		ei_x_encode_atom(&x, "beamscope_calls");
		ei_x_encode_map_header(&x, 4);
		ei_x_encode_atom(&x, "functions");
		ei_x_encode_long(&x, 9);
		ei_x_encode_atom(&x, "read");
		ei_x_encode_long(&x, 7);
		ei_x_encode_atom(&x, "read_us");
		ei_x_encode_long(&x, 46);
		ei_x_encode_atom(&x, "ms");
		ei_x_encode_long(&x, 3003);
		ei_x_encode_list_header(&x, 3);
		ei_x_encode_tuple_header(&x, 4);
		ei_x_encode_binary(&x, "'Elixir.Shop':get/2", 19);
		ei_x_encode_long(&x, 1000);
		ei_x_encode_long(&x, 161);
		ei_x_encode_long(&x, 20000);
		ei_x_encode_tuple_header(&x, 4);   /* calls < 0: skipped */
		ei_x_encode_binary(&x, "m:f/1", 5);
		ei_x_encode_long(&x, -1);
		ei_x_encode_long(&x, 0);
		ei_x_encode_long(&x, 0);
		ei_x_encode_tuple_header(&x, 4);
		ei_x_encode_binary(&x, "m:g/2", 5);
		ei_x_encode_long(&x, 3);
		ei_x_encode_long(&x, 9);
		ei_x_encode_long(&x, -1);
		ei_x_encode_empty_list(&x);
		is_num(decode_msg(x.buff, &m), WIRE_CALLS, "calls recognised");
		decoder_init(&d, NODE, 0, names);
		d.syn = syn ? TERM_ELIXIR : TERM_ERLANG;
		int idx = m.body;
		is_num(decode_calls(&d, x.buff, &idx, &pc), 0, "calls decoded");
		char said[400];
		snprintf(said, sizeof(said), "%ld %ld %ld %ld %d %s %lld %lld %lld %s %lld",
			 pc.functions, pc.read, pc.read_us, pc.ms, pc.n, pc.rows[0].name,
			 pc.rows[0].calls, pc.rows[0].us, pc.rows[0].words,
			 pc.n > 1 ? pc.rows[1].name : "-", pc.n > 1 ? pc.rows[1].words : 0);
		is(said, syn ? "9 7 46 3003 2 Shop.get/2 1000 161 20000 :m.g/2 -1" :
		   "9 7 46 3003 2 'Elixir.Shop':get/2 1000 161 20000 m:g/2 -1",
		   syn ? "calls: Elixir names, a bad row skipped" :
		   "calls: totals, a bad row skipped");
		decoder_release(&d);
		ei_x_free(&x);
	}
	const char *want[] = { "0 0 ", "1 9 ", "2 0 m:_: not?loaded" };
	for (int i = 0; i < 3; i++) {
		struct calls_state cs;
		ei_x_new_with_version(&x);
		ei_x_encode_tuple_header(&x, 2);
		ei_x_encode_atom(&x, "beamscope_calls_state");
		if (i == 0) {
			ei_x_encode_atom(&x, "off");
		} else {
			ei_x_encode_tuple_header(&x, 2);
			ei_x_encode_atom(&x, i == 1 ? "on" : "error");
			if (i == 1)
				ei_x_encode_long(&x, 9);
			else
				ei_x_encode_binary(&x, "m:_: not\nloaded", 15);
		}
		is_num(decode_msg(x.buff, &m), WIRE_CALLS_STATE, "calls state recognised");
		int idx = m.body;
		is_num(decode_calls_state(x.buff, &idx, &cs), 0, "calls state decoded");
		char said[500];
		snprintf(said, sizeof(said), "%d %ld %s", (int)cs.kind, cs.functions,
			 cs.why);
		is(said, want[i], "calls state: off, on, an error made safe");
		ei_x_free(&x);
	}
}

int main(void)
{
	ei_x_buff x;
	struct msg m;
	struct names names;
	struct decoder d;

	plan(67 + 2 + 2 * 5 + 3 * 3 + 2 * 3 + 3 * 3);
	names_init(&names);

	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "rex");
	ei_x_encode_atom(&x, "ok");
	is_num(decode_msg(x.buff, &m), WIRE_RPC_REPLY, "rex reply recognised");
	ei_x_free(&x);

	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 3);
	ei_x_encode_atom(&x, "whatever");
	ei_x_encode_atom(&x, "a");
	ei_x_encode_atom(&x, "b");
	is_num(decode_msg(x.buff, &m), WIRE_UNKNOWN, "unknown shape is unknown");
	ei_x_free(&x);

	/* what someone else cleared of ours: the list is read by the session */
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "beamscope_cleared");
	ei_x_encode_list_header(&x, 1);
	ei_x_encode_atom(&x, "flags");
	ei_x_encode_empty_list(&x);
	ok(decode_msg(x.buff, &m) == WIRE_CLEARED && m.body > 0,
	   "cleared recognised, its list after the tag");
	ei_x_free(&x);

	/* a batch: register, send (to the registered pid), receive with a cut
	 * payload, spawn, exit, and one malformed event in the middle */
	erlang_pid sink = pid(85), child = pid(99);
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 5);
	ei_x_encode_atom(&x, "beamscope_batch");
	ei_x_encode_long(&x, 1);
	ei_x_encode_long(&x, 4);
	ei_x_encode_long(&x, 17);
	ei_x_encode_list_header(&x, 6);

	ev_head(&x, "register", 85, 100);
	ei_x_encode_atom(&x, "sink");
	ei_x_encode_empty_list(&x);
	ei_x_encode_atom(&x, "false");

	ev_head(&x, "send", 90, 101);
	ei_x_encode_pid(&x, &sink);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "msg");
	ei_x_encode_long(&x, 1);
	ei_x_encode_atom(&x, "false");

	ei_x_encode_atom(&x, "garbage");   /* malformed: not a tuple */

	ev_head(&x, "receive", 85, 102);
	ei_x_encode_empty_list(&x);
	ei_x_encode_binary(&x, "0123456789abcdef", 16);
	ei_x_encode_atom(&x, "true");

	ev_head(&x, "spawn", 85, 103);
	ei_x_encode_pid(&x, &child);
	ei_x_encode_tuple_header(&x, 4);
	ei_x_encode_atom(&x, "worker");
	ei_x_encode_atom(&x, "init");
	ei_x_encode_long(&x, 2);
	ei_x_encode_list_header(&x, 2);
	ei_x_encode_long(&x, 1);
	ei_x_encode_atom(&x, "x");
	ei_x_encode_empty_list(&x);
	ei_x_encode_atom(&x, "false");

	ev_head(&x, "exit", 99, 104);
	ei_x_encode_empty_list(&x);
	ei_x_encode_atom(&x, "normal");
	ei_x_encode_atom(&x, "false");

	ei_x_encode_empty_list(&x);

	is_num(decode_msg(x.buff, &m), WIRE_BATCH, "batch recognised");
	is_num(m.worker, 1, "worker id");
	is_num(m.seq, 4, "sequence number");
	is_num(m.dropped, 17, "drop count");

	decoder_init(&d, NODE, 12, &names);
	int idx = m.body;
	long n = decode_events(&d, x.buff, &idx, 1, collect, NULL);
	is_num(n, 5, "five good events");
	is_num(d.malformed, 1, "one malformed event counted");
	is_num(idx, x.index, "whole batch consumed");

	is_num(got[0].type, EV_REGISTER, "register first");
	is(got[0].name, "sink", "register carries the name");
	is_num(got[1].type, EV_SEND, "then send");
	is(got[1].pid_text, "<0.90.0>", "sender pid");
	is(got[1].peer, "<0.85.0>", "receiver");
	is(got[1].peer_name, "sink", "receiver's name from the register event");
	is(got[1].payload, "{msg,1}", "send payload");
	is_num(got[2].type, EV_RECEIVE, "receive");
	is(got[2].name, "sink", "receiver named");
	ok(got[2].truncated, "target cut and local cut flagged");
	ok(strlen(got[2].payload) <= 12, "payload within --payload-bytes");
	is_num(got[3].type, EV_SPAWN, "spawn");
	is(got[3].peer, "<0.99.0>", "child pid");
	is(got[3].mfa, "worker:init/2", "spawn mfa with arity");
	is(got[4].payload, "normal", "exit reason");
	ok(got[4].ts == 104, "timestamp carried");

	ei_x_free(&x);

	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 4);
	ei_x_encode_atom(&x, "beamscope_eos");
	ei_x_encode_long(&x, 0);
	ei_x_encode_long(&x, 9);
	ei_x_encode_long(&x, 3);
	ok(decode_msg(x.buff, &m) == WIRE_EOS && m.seq == 9 && m.dropped == 3,
	   "eos recognised with batch count and drops");
	ei_x_free(&x);

	/* payload_max 0: nothing rendered */
	ei_x_new_with_version(&x);
	ei_x_encode_list_header(&x, 1);
	ev_head(&x, "receive", 85, 1);
	ei_x_encode_empty_list(&x);
	ei_x_encode_atom(&x, "secret");
	ei_x_encode_atom(&x, "false");
	ei_x_encode_empty_list(&x);
	decoder_release(&d);
	decoder_init(&d, NODE, 0, &names);
	ngot = 0;
	idx = 1;
	decode_events(&d, x.buff, &idx, 0, collect, NULL);
	ok(ngot == 1 && got[0].payload == NULL, "--payload-bytes 0 sends no contents");
	ei_x_free(&x);

	/* a spawn by proc_lib names what the process runs; a call cannot */
	ei_x_new_with_version(&x);
	ei_x_encode_list_header(&x, 2);
	for (int k = 0; k < 2; k++) {
		ev_head(&x, k ? "call" : "spawned", 99, 105);
		if (k)
			ei_x_encode_empty_list(&x);
		else
			ei_x_encode_pid(&x, &sink);
		ei_x_encode_tuple_header(&x, 5);
		ei_x_encode_atom(&x, "proc_lib");
		ei_x_encode_atom(&x, "init_p");
		ei_x_encode_long(&x, 5);
		ei_x_encode_empty_list(&x);
		ei_x_encode_tuple_header(&x, 3);
		ei_x_encode_atom(&x, "my_job");
		ei_x_encode_atom(&x, "run");
		ei_x_encode_long(&x, 2);
		ei_x_encode_atom(&x, "false");
	}
	ei_x_encode_empty_list(&x);
	ngot = 0;
	idx = 1;
	unsigned long bad = d.malformed;
	decode_events(&d, x.buff, &idx, 0, collect, NULL);
	ok(ngot == 1 && got[0].type == EV_SPAWNED &&
	   !strcmp(got[0].mfa, "proc_lib:init_p/5") && got[0].extra &&
	   !strcmp(got[0].extra, "my_job:run/2") && d.malformed == bad + 1,
	   "a proc_lib spawn: its function, and the initial call it runs");
	ei_x_free(&x);

	/* labels: a text, nothing to say, a malformed entry, a text too long */
	static char long_text[LABEL_MAX + 2];
	memset(long_text, 'a', sizeof(long_text) - 1);
	erlang_pid l1 = pid(40), l2 = pid(41), l3 = pid(42);
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "beamscope_labels");
	ei_x_encode_list_header(&x, 4);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_pid(&x, &l1);
	ei_x_encode_binary(&x, "my_server:init/1", 16);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_pid(&x, &l2);
	ei_x_encode_empty_list(&x);
	ei_x_encode_atom(&x, "garbage");
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_pid(&x, &l3);
	ei_x_encode_binary(&x, long_text, (long)strlen(long_text));
	ei_x_encode_empty_list(&x);
	is_num(decode_msg(x.buff, &m), WIRE_LABELS, "labels recognised");
	idx = m.body;
	n = decode_labels(&d, x.buff, &idx, label_got, NULL);
	is_num(n, 2, "two good labels, the bad and the too long skipped");
	ok(nlabels == 2 && !strcmp(labels[0], "40 my_server:init/1"),
	   "a label with its pid");
	ok(nlabels == 2 && !strcmp(labels[1], "41 -"), "nothing to say: NULL");
	ei_x_free(&x);

	/* labels on OTP 27: no label yet, ask again; a mark that is not again */
	erlang_pid l4 = pid(43);
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "beamscope_labels");
	ei_x_encode_list_header(&x, 3);
	ei_x_encode_tuple_header(&x, 3);
	ei_x_encode_pid(&x, &l1);
	ei_x_encode_binary(&x, "my_server:init/1", 16);
	ei_x_encode_atom(&x, "again");
	ei_x_encode_tuple_header(&x, 3);
	ei_x_encode_pid(&x, &l4);
	ei_x_encode_binary(&x, "x", 1);
	ei_x_encode_atom(&x, "later");
	ei_x_encode_tuple_header(&x, 3);
	ei_x_encode_pid(&x, &l2);
	ei_x_encode_empty_list(&x);
	ei_x_encode_atom(&x, "again");
	ei_x_encode_empty_list(&x);
	nlabels = 0;
	decode_msg(x.buff, &m);
	idx = m.body;
	n = decode_labels(&d, x.buff, &idx, label_got, NULL);
	is_num(n, 2, "again twice, the other mark skipped");
	ok(nlabels == 2 && !strcmp(labels[0], "40 my_server:init/1 again") &&
	   !strcmp(labels[1], "41 - again"), "again: with a text, with none");
	ei_x_free(&x);

	/* process samples: an older agent's 4-tuple, sizes measured, sizes
	 * that are lower bounds, and a size that is neither */
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "beamscope_info");
	ei_x_encode_list_header(&x, 4);
	info_entry(&x, 60, "old", 2, -1, false, 0, 0, false);
	info_entry(&x, 61, "small", 3, 6400, false, 1000, 4000, false);
	info_entry(&x, 62, "big", 5000000, 160000000, true, 77, 1864, true);
	erlang_pid b63 = pid(63);
	ei_x_encode_tuple_header(&x, 7);
	ei_x_encode_pid(&x, &b63);
	ei_x_encode_empty_list(&x);
	ei_x_encode_empty_list(&x);
	ei_x_encode_long(&x, 0);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "at_most");
	ei_x_encode_long(&x, 1);
	ei_x_encode_long(&x, 1);
	ei_x_encode_long(&x, 1);
	ei_x_encode_empty_list(&x);
	is_num(decode_msg(x.buff, &m), WIRE_INFO, "samples recognised");
	idx = m.body;
	n = decode_info_sizes(&d, x.buff, &idx, info_got, sizes_got, NULL);
	is_num(n, 3, "three samples; a size neither a number nor at_least skipped");
	ok(ninfos == 3 && !strcmp(infos[0], "60 old m:f/1 2") &&
	   !strcmp(infos[2], "62 big m:f/1 5000000"), "names, functions, queues");
	ok(nsizes == 2 && !strcmp(sizes[0], "61 6400 1000 4000"),
	   "measured sizes; none from the 4-tuple");
	ok(nsizes == 2 && !strcmp(sizes[1], "62 >160000000 77 >1864"),
	   "sizes the agent did not measure are lower bounds");
	ei_x_free(&x);

	/* relations: links with a port and a pid of another node, monitors
	 * of a pid and of a name, ancestors; one with nothing and ancestors
	 * unknown; a malformed one; a long list of links, shown in part */
	erlang_pid r1 = pid(50), r2 = pid(51), r3 = pid(52), far = pid(7);
	strcpy(far.node, "o@h");
	erlang_port port = { .id = 5, .creation = 7 };
	strcpy(port.node, NODE);
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "beamscope_relations");
	ei_x_encode_list_header(&x, 4);
	ei_x_encode_tuple_header(&x, 7);
	ei_x_encode_pid(&x, &r1);
	ei_x_encode_long(&x, 4);
	ei_x_encode_list_header(&x, 4);
	erlang_pid l80 = pid(80), l81 = pid(81);
	ei_x_encode_pid(&x, &l80);
	ei_x_encode_pid(&x, &l81);
	ei_x_encode_port(&x, &port);
	ei_x_encode_pid(&x, &far);
	ei_x_encode_empty_list(&x);
	ei_x_encode_long(&x, 2);
	ei_x_encode_list_header(&x, 2);
	monitor_pid(&x, 82);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "process");
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "my_srv");
	ei_x_encode_atom(&x, NODE);
	ei_x_encode_empty_list(&x);
	ei_x_encode_long(&x, 3);
	ei_x_encode_list_header(&x, 3);
	erlang_pid a70 = pid(70);
	ei_x_encode_atom(&x, "my_sup");
	ei_x_encode_pid(&x, &a70);
	ei_x_encode_atom(&x, "...");
	ei_x_encode_empty_list(&x);

	ei_x_encode_tuple_header(&x, 7);
	ei_x_encode_pid(&x, &r2);
	ei_x_encode_long(&x, 0);
	ei_x_encode_empty_list(&x);
	ei_x_encode_long(&x, 0);
	ei_x_encode_empty_list(&x);
	ei_x_encode_long(&x, 0);
	ei_x_encode_atom(&x, "unknown");

	ei_x_encode_tuple_header(&x, 3);
	ei_x_encode_pid(&x, &r3);
	ei_x_encode_long(&x, 1);
	ei_x_encode_atom(&x, "garbage");

	ei_x_encode_tuple_header(&x, 7);
	ei_x_encode_pid(&x, &r3);
	ei_x_encode_long(&x, 10000);
	ei_x_encode_list_header(&x, 5);
	for (unsigned i = 0; i < 5; i++) {
		erlang_pid li = pid(100 + i);
		ei_x_encode_pid(&x, &li);
	}
	ei_x_encode_empty_list(&x);
	ei_x_encode_long(&x, 1);
	ei_x_encode_list_header(&x, 1);
	monitor_pid(&x, 83);
	ei_x_encode_empty_list(&x);
	ei_x_encode_long(&x, 0);
	ei_x_encode_empty_list(&x);
	ei_x_encode_empty_list(&x);
	is_num(decode_msg(x.buff, &m), WIRE_RELATIONS, "relations recognised");
	idx = m.body;
	n = decode_relations(&d, x.buff, &idx, rel_got, NULL);
	is_num(n, 3, "three good relations, the malformed one skipped");
	ok(nrels == 3 && rels[0].pid.num == 50 && rels[0].links == 4 &&
	   rels[0].monitors == 2 && rels[0].monitored_by == 3,
	   "the counts, with the pid");
	is(rels[0].link_list, "<0.80.0> <0.81.0> #Port<0.5> <o@h.7.0>",
	   "links: pids as the node writes them, a port, a far pid");
	is(rels[0].monitor_list, "<0.82.0> my_srv",
	   "monitors: a pid, a name of the node");
	ok(rels[0].ancestors_known, "ancestors known");
	is(rels[0].ancestors, "my_sup <0.70.0> ...",
	   "ancestors: a name, a pid, what was left out");
	ok(nrels == 3 && rels[1].links == 0 && !rels[1].link_list[0] &&
	   !rels[1].monitor_list[0] && !rels[1].ancestors_known,
	   "nothing linked, ancestors unknown");
	is(rels[2].link_list, "<0.100.0> <0.101.0> <0.102.0> <0.103.0> <0.104.0> ...",
	   "10000 links: the first five, and more");
	ok(rels[2].links == 10000 && rels[2].ancestors_known &&
	   !rels[2].ancestors[0], "its count; no ancestors");
	ei_x_free(&x);

	/* in Elixir syntax, names as Elixir writes them */
	d.syn = TERM_ELIXIR;
	nrels = 0;
	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "beamscope_relations");
	ei_x_encode_list_header(&x, 1);
	ei_x_encode_tuple_header(&x, 7);
	ei_x_encode_pid(&x, &r1);
	ei_x_encode_long(&x, 0);
	ei_x_encode_empty_list(&x);
	ei_x_encode_long(&x, 1);
	ei_x_encode_list_header(&x, 1);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "process");
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "Elixir.Shop.Cache");
	ei_x_encode_atom(&x, NODE);
	ei_x_encode_empty_list(&x);
	ei_x_encode_long(&x, 0);
	ei_x_encode_list_header(&x, 2);
	ei_x_encode_atom(&x, "Elixir.Shop.Sup");
	ei_x_encode_atom(&x, "plain");
	ei_x_encode_empty_list(&x);
	ei_x_encode_empty_list(&x);
	is_num(decode_msg(x.buff, &m), WIRE_RELATIONS, "relations recognised");
	idx = m.body;
	is_num(decode_relations(&d, x.buff, &idx, rel_got, NULL), 1,
	       "one relations entry");
	is(rels[0].ancestors, "Shop.Sup :plain", "Elixir names");
	is(rels[0].monitor_list, "Shop.Cache", "a monitored name, in Elixir");
	ei_x_free(&x);

	decoder_release(&d);
	test_profile(&names);
	test_alarms(&names);
	test_calls(&names);
	names_release(&names);
	return done_testing();
}
