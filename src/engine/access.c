/*
 * access: what the front ends read of the session and the few things they
 * change directly (unfollow, a node attached later), through session.h.
 */
#include "session_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "attach.h"
#include "callpat.h"
#include "clock.h"
#include "esc.h"
#include "exitcode.h"
#include "names.h"
#include "node.h"
#include "pidsel.h"
#include "pidtext.h"
#include "redact.h"
#include "recording.h"
#include "rerender.h"
#include "retext.h"
#include "sig.h"
#include "xalloc.h"
int session_unfollow(struct session *s)
{
	int sent = 0;
	for (int i = 0; i < s->nnodes; i++) {
		struct snode *n = &s->nodes[i];
		if (n->present && n->state == SN_TRACING &&
		    agent_unfollow(&n->agent) == 0)
			sent++;
	}
	snprintf(s->stopped_why, sizeof(s->stopped_why), "unfollowed");
	return sent;
}

int session_attach_node(struct session *s, const char *name)
{
	struct snode *n = node_find(s, name);
	if (n && n->present && n->state != SN_LOST)
		return SESSION_ATTACHED_ALREADY;
	if (!n && !(n = node_add(s, name, false)))
		return SESSION_NODES_FULL;
	n->present = true;
	n->required = false;
	return n->idx;
}

int session_present_nodes(const struct session *s)
{
	int present = 0;
	for (int i = 0; i < s->nnodes; i++)
		present += s->nodes[i].present;
	return present;
}

unsigned long session_events(const struct session *s)
{
	return s->events;
}

unsigned long session_events_all(const struct session *s)
{
	return s->events_all;
}

unsigned long session_over_limit(const struct session *s)
{
	return s->over_limit;
}

void session_on_call_done(struct session *s, gc_done_fn fn, void *arg)
{
	s->gcalls.done = fn;
	s->gcalls.done_arg = arg;
}

void session_calls_tick(struct session *s, int64_t now_us)
{
	gencall_tick(&s->gcalls, now_us);
}

void session_calls_settle(struct session *s)
{
	gencall_settle(&s->gcalls);
}

void session_calls_changed(struct session *s,
			   void (*fn)(void *arg, struct gc_row *r), void *arg)
{
	gencall_changed(&s->gcalls, fn, arg);
}

bool session_multi(const struct session *s)
{
	return s->multi;
}

const struct merge_stats *session_merge_stats(const struct session *s)
{
	return &s->merge.st;
}

int session_nnodes(const struct session *s)
{
	return s->nnodes;
}

const struct node_view *session_node(struct session *s, int i)
{
	struct snode *n = &s->nodes[i];
	struct node_view *v = &n->view;
	*v = (struct node_view){
		.idx = n->idx, .arg = n->arg, .present = n->present,
		.state = n->state, .state_name = node_state_name(n),
		.syn = n->dec.syn, .names = &n->agent.names,
		.st = &n->st, .stats_ready = n->stats_ready, .tr = &n->tr,
		.ever_lost = n->ever_lost, .ever_left = n->ever_left,
		.left = n->left, .tripped = n->tripped, .cleared = n->cleared,
		.sessions = n->sessions,
		.clock_offset_us = n->clock_offset_us,
		.clock_error_us = n->clock_error_us,
		.shed = n->shed, .count_overflow = n->count_overflow,
		.malformed = n->dec.malformed, .unknown = n->agent.unknown,
		.nstats = &n->nstats, .counted = n->counted,
	};
	v->top.have = n->top.have;
	v->top.scanned = n->top.scanned;
	v->top.total = n->top.total;
	v->top.pass_ms = n->top.pass_ms;
	return v;
}

void session_rerender_node(const struct session *s, int i,
			   struct rerender_node *rn)
{
	const struct decoder *d = &s->nodes[i].dec;
	*rn = (struct rerender_node){ d->syn, d->syn, d->node, d->payload_max,
				      d->dia };
}

const char *session_stopped_why(const struct session *s)
{
	return s->stopped_why;
}

bool session_wants_tracing(const struct session *s)
{
	return s->want_tracing;
}

const struct gencalls *session_gencalls(const struct session *s)
{
	return &s->gcalls;
}

void session_forget_calls(struct session *s)
{
	gencall_release(&s->gcalls);
}

void session_rerender(struct session *s, const struct rerender_node *nodes,
		      int n)
{
	rerender_gencalls(&s->gcalls, nodes, n);
}

void session_set_stuck(struct session *s, int64_t us)
{
	gencall_set_stuck(&s->gcalls, us);
}
