/*
 * Unit tests for stats: a worker's last word (eos) settles its counts, so
 * that delivered + dropped is what the tracer produced; and the message
 * shapes that carry it.
 */
#include "decode.h"
#include "stats.h"
#include "tap.h"

static void eos_shapes(void)
{
	ei_x_buff x;
	struct msg m;

	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 5);
	ei_x_encode_atom(&x, "beamscope_eos");
	ei_x_encode_long(&x, 1);
	ei_x_encode_long(&x, 4);
	ei_x_encode_long(&x, 30);
	ei_x_encode_long(&x, 700);
	ok(decode_msg(x.buff, &m) == WIRE_EOS && m.worker == 1 && m.seq == 4 &&
	   m.dropped == 30 && m.taken == 700, "eos with the events taken");
	ei_x_free(&x);

	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 4);
	ei_x_encode_atom(&x, "beamscope_eos");
	ei_x_encode_long(&x, 0);
	ei_x_encode_long(&x, 2);
	ei_x_encode_long(&x, 0);
	ok(decode_msg(x.buff, &m) == WIRE_EOS && m.taken == -1,
	   "eos without them: taken unknown");
	ei_x_free(&x);

	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 4);
	ei_x_encode_atom(&x, "beamscope_exit");
	ei_x_encode_atom(&x, "agent_lost");
	ei_x_encode_long(&x, 30000);
	ei_x_encode_binary(&x, "killed", 6);
	ok(decode_msg(x.buff, &m) == WIRE_EXIT && !strcmp(m.limit, "agent_lost") &&
	   m.seq == 30000 && m.body > 0, "exit with a reason");
	ei_x_free(&x);

	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 3);
	ei_x_encode_atom(&x, "beamscope_exit");
	ei_x_encode_atom(&x, "owner_silent");
	ei_x_encode_long(&x, 1000);
	ok(decode_msg(x.buff, &m) == WIRE_EXIT && m.body == 0, "exit without one");
	ei_x_free(&x);
}

int main(void)
{
	struct trace_stats st;

	plan(13);
	eos_shapes();

	stats_init(&st, 2);
	stats_batch(&st, 0, 0, 10, 100);
	stats_batch(&st, 0, 1, 25, 100);
	is_num(stats_incomplete(&st), 2, "no last word yet: both incomplete");
	is_num(stats_dropped(&st), 25, "drops are cumulative");

	/* worker 0 took 300 and shipped 200 that arrived: 100 lost on the way */
	stats_eos(&st, 0, 3, 40, 300);
	is_num(st.w[0].dropped, 140, "taken but never delivered: dropped");
	is_num(st.w[0].lost_batches, 1, "the missing batch is a gap");
	is_num(st.w[0].delivered + st.w[0].dropped, 340, "delivered + dropped = taken + dropped on the target");

	/* said twice (the agent for a worker that was late): counted once */
	stats_eos(&st, 0, 3, 40, 300);
	is_num(st.w[0].lost_batches, 1, "a repeated last word adds no gap");

	/* the batch was only late: it arrives after the last word */
	stats_batch(&st, 0, 2, 40, 100);
	is_num(st.w[0].dropped, 40, "a late batch is delivered, not dropped");

	stats_eos(&st, 1, 0, 0, -1);
	is_num(stats_incomplete(&st), 0, "every last word in");
	is_num(stats_delivered(&st) + stats_dropped(&st), 340, "the totals agree");

	stats_release(&st);
	return done_testing();
}
