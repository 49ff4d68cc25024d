/*
 * agent_requests: what is asked of an agent that is tracing (focus,
 * samples, descriptions, node samples, top, unfollow, stop), one message
 * each; the answers come through agent.c's handlers (see agent.h).
 */
#include "agent.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include "clock.h"
#include "esc.h"
#include "embed.h"
#include "exitcode.h"
#include "alarm.h"
#include "pidsel.h"
#include "sig.h"
#include "term.h"
#include "wire.h"
#include "xalloc.h"
#include "agent_priv.h"

int agent_ping(struct agent *a)
{
	ei_x_buff x;
	erlang_ref ref;
	request_begin(a, &x, &ref);
	ei_x_encode_atom(&x, "ping");
	int r = request_send(a, &x);
	ei_x_free(&x);
	return r;
}

int agent_focus(struct agent *a, unsigned num, unsigned serial, bool on)
{
	ei_x_buff x;
	erlang_ref ref;
	/* a pid the target cannot have would cost the connection */
	if (!pidsel_fits(atoi(a->otp), num, serial))
		return -1;
	request_begin(a, &x, &ref);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, on ? "focus" : "unfocus");
	/* node and creation of the target */
	wire_encode_pid(&x, a->pid.node, num, serial, a->pid.creation);
	int r = request_send(a, &x);
	ei_x_free(&x);
	return r;
}

/* {Tag, [Pid]}: at most max of pids, local pids of the target, without a
 * reply (answered on the stream, if at all). */
static int pid_list_request(struct agent *a, const char *tag,
			    const struct bs_pid *pids, int n, int max)
{
	ei_x_buff x;
	erlang_ref ref;
	if (n > max)
		n = max;
	request_begin(a, &x, &ref);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, tag);
	ei_x_encode_list_header(&x, n);
	for (int i = 0; i < n; i++)   /* node and creation of the target */
		wire_encode_pid(&x, a->pid.node, pids[i].num, pids[i].serial,
				a->pid.creation);
	ei_x_encode_empty_list(&x);
	int r = request_send(a, &x);
	ei_x_free(&x);
	return r;
}

int agent_sample(struct agent *a, const struct bs_pid *pids, int n)
{
	return pid_list_request(a, "sample", pids, n, AGENT_SAMPLE_MAX);
}

int agent_structs(struct agent *a, char *const *mods, int n)
{
	ei_x_buff x;
	erlang_ref ref;
	if (n > 64)
		n = 64;
	request_begin(a, &x, &ref);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "structs");
	ei_x_encode_list_header(&x, n);
	for (int i = 0; i < n; i++)
		ei_x_encode_atom_as(&x, mods[i], ERLANG_UTF8, ERLANG_UTF8);
	ei_x_encode_empty_list(&x);
	int r = request_send(a, &x);
	ei_x_free(&x);
	return r;
}

int agent_describe(struct agent *a, const struct bs_pid *pids, int n,
		   bool again)
{
	return pid_list_request(a, again ? "describe_again" : "describe",
				pids, n, AGENT_DESCRIBE_MAX);
}

int agent_node_stats(struct agent *a, bool on)
{
	ei_x_buff x;
	erlang_ref ref;
	request_begin(a, &x, &ref);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "node_stats");
	ei_x_encode_boolean(&x, on);
	int r = request_send(a, &x);
	ei_x_free(&x);
	return r;
}

int agent_top(struct agent *a, const char *metric, int n)
{
	ei_x_buff x;
	erlang_ref ref;
	request_begin(a, &x, &ref);
	if (metric) {
		ei_x_encode_tuple_header(&x, 3);
		ei_x_encode_atom(&x, "top");
		ei_x_encode_atom(&x, metric);
		ei_x_encode_long(&x, n);
	} else {
		ei_x_encode_tuple_header(&x, 2);
		ei_x_encode_atom(&x, "top");
		ei_x_encode_atom(&x, "off");
	}
	int r = request_send(a, &x);
	ei_x_free(&x);
	return r;
}

int agent_profile(struct agent *a, const struct pidsel *who, int top_n,
		  int hz, long budget_us)
{
	ei_x_buff x;
	erlang_ref ref;
	request_begin(a, &x, &ref);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "profile");
	if (who || top_n > 0) {
		ei_x_encode_tuple_header(&x, 3);
		if (who) {
			encode_pidsel(a, &x, who);
		} else {
			ei_x_encode_tuple_header(&x, 2);
			ei_x_encode_atom(&x, "top");
			ei_x_encode_long(&x, top_n);
		}
		ei_x_encode_long(&x, hz);
		ei_x_encode_long(&x, budget_us);
	} else {
		ei_x_encode_atom(&x, "off");
	}
	int r = request_send(a, &x);
	ei_x_free(&x);
	return r;
}

/* {profile, {calls, off}} or {profile, {calls, [Text]}} */
int agent_profile_calls(struct agent *a, const char *const *patterns, int n)
{
	ei_x_buff x;
	erlang_ref ref;
	request_begin(a, &x, &ref);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "profile");
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "calls");
	if (n > 0) {
		ei_x_encode_list_header(&x, n);
		for (int i = 0; i < n; i++)
			ei_x_encode_string(&x, patterns[i]);
		ei_x_encode_empty_list(&x);
	} else {
		ei_x_encode_atom(&x, "off");
	}
	int r = request_send(a, &x);
	ei_x_free(&x);
	return r;
}

/* {alarms, off} or {alarms, [Setting]}: large_heap in bytes (the agent
 * makes them words), long_message_queue {Off, On} with Off half of On */
int agent_alarms(struct agent *a, const struct alarm_spec *sp)
{
	ei_x_buff x;
	erlang_ref ref;
	request_begin(a, &x, &ref);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "alarms");
	if (sp && alarm_spec_any(sp)) {
		for (int k = 0; k < ALARM__COUNT; k++) {
			long long v = sp->v[k];
			if (v <= 0)
				continue;
			ei_x_encode_list_header(&x, 1);
			const char *name = alarm_kinds[k].name;
			switch (alarm_kinds[k].unit) {
			case ALARM_FLAG:
				ei_x_encode_atom(&x, name);
				break;
			case ALARM_COUNT:
				ei_x_encode_tuple_header(&x, 2);
				ei_x_encode_atom(&x, name);
				ei_x_encode_tuple_header(&x, 2);
				ei_x_encode_longlong(&x, v / 2);
				ei_x_encode_longlong(&x, v);
				break;
			case ALARM_MS:
			case ALARM_BYTES:
				ei_x_encode_tuple_header(&x, 2);
				ei_x_encode_atom(&x, name);
				ei_x_encode_longlong(&x, v);
				break;
			}
		}
		ei_x_encode_empty_list(&x);
	} else {
		ei_x_encode_atom(&x, "off");
	}
	int r = request_send(a, &x);
	ei_x_free(&x);
	return r;
}

int agent_unfollow(struct agent *a)
{
	ei_x_buff x;
	erlang_ref ref;
	request_begin(a, &x, &ref);
	ei_x_encode_atom(&x, "unfollow");
	int r = request_send(a, &x);
	ei_x_free(&x);
	return r;
}

int agent_stop_send(struct agent *a)
{
	ei_x_buff x;
	/* the stop's reply is awaited with req_ref, which an operation in
	 * progress may be using: that one is abandoned */
	if (a->op.kind != AOP_NONE && !a->op.done)
		agent_op_end(a);
	request_begin(a, &x, &a->req_ref);
	ei_x_encode_atom(&x, "stop");
	a->req_want = true;
	a->req_got = false;
	int r = request_send(a, &x);
	ei_x_free(&x);
	return r;
}
