/* Unit tests: the alarms' thresholds (--alarm, :alarms) read and written
 * back, and an alarm's line for people. */
#include <string.h>

#include "alarm.h"
#include "tap.h"

/* text parsed, then written back as --alarm takes it; or the error */
static const char *spec_round(const char *text)
{
	static struct sbuf out;
	struct alarm_spec sp;
	struct sbuf err = SBUF_INIT;
	sbuf_reset(&out);
	if (alarm_spec_parse(&sp, text, &err) < 0)
		sbuf_addf(&out, "error: %s", sbuf_str(&err));
	else
		alarm_spec_text(&sp, &out);
	sbuf_release(&err);
	return sbuf_str(&out);
}

static const char *line(const char *kind, long long us, long bytes, long q,
			const char *port, const char *node, const char *info)
{
	static struct sbuf out;
	sbuf_reset(&out);
	alarm_text(&out, kind, us, bytes, q, port, node, info);
	return sbuf_str(&out);
}

int main(void)
{
	plan(21);
	const char *all = "long_gc=100ms,long_schedule=100ms,large_heap=256MB,"
		"long_message_queue=10000,busy_port=on,busy_dist_port=on";
	is(spec_round("on"), all, "on: every alarm at its default");
	is(spec_round(NULL), all, "no text: the defaults");
	is(spec_round("long_gc=2s,large_heap=1GB"),
	   "long_gc=2s,long_schedule=100ms,large_heap=1GB,"
	   "long_message_queue=10000,busy_port=on,busy_dist_port=on",
	   "a time in seconds, a size in GB; the rest at their defaults");
	is(spec_round("long_gc=250,large_heap=512KB,long_message_queue=5"),
	   "long_gc=250ms,long_schedule=100ms,large_heap=512KB,"
	   "long_message_queue=5,busy_port=on,busy_dist_port=on",
	   "a bare time is ms; KB");
	is(spec_round("busy_port=off,busy_dist_port=off,long_gc=off,long_schedule=off,"
		 "large_heap=off,long_message_queue=off"), "",
	   "every one off: nothing");
	struct alarm_spec sp;
	struct sbuf err = SBUF_INIT;
	alarm_spec_parse(&sp, "busy_port=off,busy_dist_port=off,long_gc=off,"
			 "long_schedule=off,large_heap=off,long_message_queue=off",
			 &err);
	ok(!alarm_spec_any(&sp), "every one off: none on");
	alarm_spec_parse(&sp, "off", &err);
	ok(!alarm_spec_any(&sp), "off: none on");
	alarm_spec_parse(&sp, "long_gc=off", &err);
	ok(alarm_spec_any(&sp) && sp.v[ALARM_LONG_GC] == 0 &&
	   sp.v[ALARM_LONG_SCHEDULE] == 100, "one off, the others on");
	sbuf_release(&err);
	is(spec_round("long_gc=1h"), "error: --alarm: long_gc=1h: give a time such "
	   "as 100ms or 2s, or off", "a unit it does not know");
	is(spec_round("large_heap=-5"), "error: --alarm: large_heap=-5: give a size "
	   "such as 256MB or 1GB, or off", "a negative size");
	is(spec_round("long_message_queue=10k"), "error: --alarm: long_message_queue"
	   "=10k: give a number of messages, or off", "a count with a unit");
	is(spec_round("busy_port=3"), "error: --alarm: busy_port=3: give on, or off",
	   "a flag with a number");
	ok(!strncmp(spec_round("long_gcc=1"), "error: --alarm: unknown alarm "
		    "\"long_gcc\"", 37), "an unknown name");
	ok(!strncmp(spec_round("long_gc=99999999999999999999"), "error:", 6),
	   "a number too large");
	ok(!strncmp(spec_round(",,,"), "long_gc=100ms", 13), "empty items: the defaults");

	is(line("long_gc", 812000, 64L << 20, -1, NULL, NULL, NULL),
	   "long_gc: a garbage collection took 812 ms (heap 64.0 MB)", "long_gc");
	is(line("large_heap", -1, 300L << 20, -1, NULL, NULL, NULL),
	   "large_heap: its heap is 300.0 MB", "large_heap");
	is(line("long_schedule", 300000, -1, -1, "#Port<0.7>", NULL,
		"in m:f/1, out ?"),
	   "long_schedule: 300 ms on a scheduler without a break (its port "
	   "#Port<0.7>), in m:f/1, out ?", "long_schedule of a port");
	is(line("long_message_queue", -1, -1, 12000, NULL, NULL, "long"),
	   "long_message_queue: its queue is long (12000 messages)",
	   "long_message_queue");
	is(line("busy_dist_port", -1, -1, -1, "#Port<0.8>", "b@h", NULL),
	   "busy_dist_port: suspended, sending to b@h, whose distribution "
	   "port is busy", "busy_dist_port");
	is(line("busy_port", -1, -1, -1, "#Port<0.9>", NULL, "tcp_inet"),
	   "busy_port: suspended, sending to the busy port #Port<0.9> "
	   "(tcp_inet)", "busy_port");
	return done_testing();
}
