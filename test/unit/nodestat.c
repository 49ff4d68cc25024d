/* nodestat: a node's sample decoded as the agent sends it, and the rates
 * kept beside it. */
#include <ei.h>
#include <string.h>

#include "decode.h"
#include "json.h"
#include "nodestat.h"

#include "tap.h"

/* {beamscope_node, #{...}} with the keys the agent sends, and one more */
static void sample(ei_x_buff *x, int nsched, bool strings)
{
	ei_x_new_with_version(x);
	ei_x_encode_tuple_header(x, 2);
	ei_x_encode_atom(x, "beamscope_node");
	ei_x_encode_map_header(x, 7);
	ei_x_encode_atom(x, "future_key");
	ei_x_encode_tuple_header(x, 2);
	ei_x_encode_atom(x, "anything");
	ei_x_encode_list_header(x, 1);
	ei_x_encode_long(x, 1);
	ei_x_encode_empty_list(x);
	ei_x_encode_atom(x, "memory");
	ei_x_encode_list_header(x, 5);
	ei_x_encode_longlong(x, 5000000000LL);   /* past 32 bits */
	ei_x_encode_long(x, 2000000);
	ei_x_encode_long(x, 300000);
	ei_x_encode_long(x, 40000);
	ei_x_encode_long(x, 500);
	ei_x_encode_empty_list(x);
	ei_x_encode_atom(x, "processes");
	ei_x_encode_tuple_header(x, 2);
	ei_x_encode_long(x, 123);
	ei_x_encode_long(x, 262144);
	ei_x_encode_atom(x, "ports");
	ei_x_encode_tuple_header(x, 2);
	ei_x_encode_long(x, 7);
	ei_x_encode_long(x, 65536);
	ei_x_encode_atom(x, "run_queues");
	if (strings) {
		/* as the VM encodes a list of small integers */
		ei_x_encode_string_len(x, "\003\000\011", 3);
	} else {
		ei_x_encode_list_header(x, nsched);
		for (int i = 0; i < nsched; i++)
			ei_x_encode_long(x, 1000 + i);
		ei_x_encode_empty_list(x);
	}
	ei_x_encode_atom(x, "dirty_run_queue");
	ei_x_encode_long(x, 2);
	ei_x_encode_atom(x, "schedulers");
	if (strings) {
		ei_x_encode_string_len(x, "\000\144\377", 3);
	} else {
		ei_x_encode_list_header(x, nsched);
		for (int i = 0; i < nsched; i++)
			ei_x_encode_long(x, i % 2 ? 1000 : 250);
		ei_x_encode_empty_list(x);
	}
}

int main(void)
{
	static struct node_sample s;
	ei_x_buff x;
	struct msg m;
	int idx, avg, max;
	char b[16];

	plan(30);

	sample(&x, 4, false);
	is_num(decode_msg(x.buff, &m), WIRE_NODE, "beamscope_node recognised");
	idx = m.body;
	is_num(nodestat_decode(x.buff, &idx, &s), 0, "a whole sample decodes");
	is_num(idx, x.index, "and all of it is read");
	ok(s.mem[NODESTAT_MEM_TOTAL] == 5000000000LL, "memory total past 32 bits");
	ok(s.mem[NODESTAT_MEM_ATOM] == 500, "atom memory, the fifth");
	ok(s.procs == 123 && s.proc_limit == 262144, "processes and their limit");
	ok(s.ports == 7 && s.port_limit == 65536, "ports and their limit");
	ok(s.nrq == 4 && s.rq[0] == 1000 && s.rq[3] == 1003, "run queues in order");
	ok(s.dirty_rq == 2, "the dirty CPU queue");
	ok(s.nsched == 4 && s.util[0] == 250 && s.util[1] == 1000, "utilisation");
	ok(nodestat_util(&s, &avg, &max) && avg == 625 && max == 1000,
	   "average and largest");
	ei_x_free(&x);

	sample(&x, 0, true);
	decode_msg(x.buff, &m);
	idx = m.body;
	is_num(nodestat_decode(x.buff, &idx, &s), 0, "lists sent as strings decode");
	ok(s.nrq == 3 && s.rq[0] == 3 && s.rq[1] == 0 && s.rq[2] == 9,
	   "run queues from a string");
	ok(s.nsched == 3 && s.util[1] == 100 && s.util[2] == 255,
	   "utilisation from a string");
	ei_x_free(&x);

	sample(&x, NODESTAT_SCHED_MAX + 5, false);
	decode_msg(x.buff, &m);
	idx = m.body;
	is_num(nodestat_decode(x.buff, &idx, &s), 0, "more schedulers than kept");
	ok(s.nsched == NODESTAT_SCHED_MAX && s.nrq == NODESTAT_SCHED_MAX,
	   "cut at NODESTAT_SCHED_MAX, never past it");
	ei_x_free(&x);

	/* the first sample: no utilisation yet */
	ei_x_new_with_version(&x);
	ei_x_encode_map_header(&x, 2);
	ei_x_encode_atom(&x, "schedulers");
	ei_x_encode_empty_list(&x);
	ei_x_encode_atom(&x, "memory");
	ei_x_encode_empty_list(&x);
	idx = 1;
	ok(nodestat_decode(x.buff, &idx, &s) == 0 && s.nsched == 0 &&
	   s.mem[0] == -1 && s.procs == -1 && !nodestat_util(&s, &avg, &max),
	   "nothing said: unknown, not zero");
	ei_x_free(&x);

	/* a value of the wrong type fails the sample */
	ei_x_new_with_version(&x);
	ei_x_encode_map_header(&x, 1);
	ei_x_encode_atom(&x, "processes");
	ei_x_encode_atom(&x, "many");
	idx = 1;
	is_num(nodestat_decode(x.buff, &idx, &s), -1, "a bad value is refused");
	ei_x_free(&x);
	ei_x_new_with_version(&x);
	ei_x_encode_atom(&x, "not_a_map");
	idx = 1;
	is_num(nodestat_decode(x.buff, &idx, &s), -1, "not a map: refused");
	ei_x_free(&x);

	/* a node_stats line: the first sample says little; what it does not
	 * say is null, never a number */
	struct sbuf line = SBUF_INIT;
	json_node_stats(&line, "a@b", 5, &s);
	is(line.buf, "{\"type\":\"node_stats\",\"ts\":5,\"node\":\"a@b\","
	   "\"memory\":{\"total\":null,\"processes\":null,\"binary\":null,"
	   "\"ets\":null,\"atom\":null},\"processes\":null,"
	   "\"process_limit\":null,\"ports\":null,\"port_limit\":null,"
	   "\"run_queues\":[],\"dirty_run_queue\":null,\"schedulers\":[]}\n",
	   "a node_stats line with nothing known");
	sbuf_reset(&line);
	sample(&x, 2, false);
	decode_msg(x.buff, &m);
	idx = m.body;
	nodestat_decode(x.buff, &idx, &s);
	json_node_stats(&line, "a@b", 5, &s);
	ok(strstr(line.buf, "\"memory\":{\"total\":5000000000,\"processes\":2000000,"),
	   "memory in bytes, in order");
	ok(strstr(line.buf, "\"run_queues\":[1000,1001],\"dirty_run_queue\":2,"
		  "\"schedulers\":[25.0,100.0]}"), "queues, and percent per scheduler");
	sbuf_release(&line);
	ei_x_free(&x);

	nodestat_bytes(b, sizeof(b), 512);
	is(b, "512B", "bytes");
	nodestat_bytes(b, sizeof(b), 15000000);
	is(b, "14.3M", "megabytes, one decimal");
	nodestat_bytes(b, sizeof(b), 1288490188LL);
	is(b, "1.20G", "gigabytes, two decimals");
	nodestat_bytes(b, sizeof(b), -1);
	is(b, "-", "unknown");

	static struct node_stats ns;
	nodestat_tick(&ns, 100, 0, 1000);
	nodestat_tick(&ns, 350, 2, 1000);
	nodestat_tick(&ns, 400, 2, 1000);
	ok(spark_at(&ns.events, 0) == 50 && spark_at(&ns.events, 1) == 250 &&
	   ns.events.n == 2, "events a second: differences, from the second tick");
	ok(spark_at(&ns.drops, 0) == 0 && spark_at(&ns.drops, 1) == 2, "drops");
	nodestat_tick(&ns, 30, 2, 1000);
	ok(spark_at(&ns.events, 0) == 30, "totals started again: never negative");
	nodestat_tick(&ns, 330, 2, 2000);
	ok(spark_at(&ns.events, 0) == 150, "two seconds passed: the rate a second");
	return done_testing();
}
