/*
 * stream: what a node sends, from its messages to the analysers and the
 * sinks: batches of events through take_event (kinds, limits, redaction,
 * the analysers' chain, the merge), count-tier deltas, samples, labels,
 * limits and clears (see session.h).
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
/* ---- the stream ---- */

/* merge's lookup: the node a "<name@host.N.S>" pid lives on */
/* The labels known, rendered in another syntax. */
static void labels_again(struct names *labels, enum term_syntax from,
			 enum term_syntax to)
{
	struct sbuf sb = SBUF_INIT;
	for (size_t i = 0; i < names_slots(labels); i++) {
		struct bs_pid pid;
		const char *l = names_slot(labels, i, &pid);
		sbuf_reset(&sb);
		if (l && *l && retext_mfa(&sb, from, to, l))
			names_set(labels, pid, sbuf_str(&sb));
	}
	sbuf_release(&sb);
}

int session_set_syntax(struct session *s, int syn)
{
	int first = syn < 0 ? TERM_ERLANG : syn;
	bool seen = false;
	s->spec.syntax = syn;
	for (int i = 0; i < s->nnodes; i++) {
		struct snode *n = &s->nodes[i];
		if (!n->stats_ready)
			continue;
		enum term_syntax was = n->dec.syn;
		n->dec.syn = syn >= 0 ? (enum term_syntax)syn :
			     n->agent.elixir[0] ? TERM_ELIXIR : TERM_ERLANG;
		if (was != n->dec.syn)
			labels_again(&n->labels, was, n->dec.syn);
		if (!seen)
			first = (int)n->dec.syn;
		seen = true;
	}
	return first;
}

int node_of_text(void *arg, const char *pid_text)
{
	struct session *s = arg;
	struct pidtext pt;
	if (pidtext_parse(pid_text, &pt) < 0 || !pt.node_len)
		return -1;
	for (int i = 0; i < s->nnodes; i++) {
		const char *nm = session_node_name(s, i);
		if (s->nodes[i].present && strlen(nm) == pt.node_len &&
		    !memcmp(nm, pt.node, pt.node_len))
			return i;
	}
	return -1;
}

/* The process a pid text names ("<0.85.0>" on node, or "<name@host.85.0>"
 * of an attached node), as a pid of its node's index; false if none. */
static bool text_pid(struct session *s, int node, const char *pid_text,
		     struct bs_pid *pid)
{
	struct pidtext pt;
	if (!pid_text || pidtext_parse(pid_text, &pt) < 0)
		return false;
	if (pt.node_len)
		node = node_of_text(s, pid_text);
	if (node < 0 || node >= s->nnodes)
		return false;
	*pid = (struct bs_pid){ pt.num, pt.serial, (uint32_t)node };
	return true;
}

const char *session_text_name(struct session *s, int node,
			      const char *pid_text)
{
	struct bs_pid pid;
	return text_pid(s, node, pid_text, &pid) ? session_proc_name(s, pid) :
		NULL;
}

const char *session_text_label(struct session *s, int node,
			       const char *pid_text)
{
	struct bs_pid pid;
	return text_pid(s, node, pid_text, &pid) ? session_proc_label(s, pid) :
		NULL;
}

/* A process named by a pid text, met by node's events: asked about by
 * the node it lives on. */
static void meet_text(struct session *s, int node, const char *pid_text)
{
	struct bs_pid pid;
	if (!text_pid(s, node, pid_text, &pid))
		return;
	(void)node_meet(&s->nodes[pid.node],
			(struct bs_pid){ pid.num, pid.serial, 0 });
}

/* An event leaves the engine: to the analysers and the sinks. */
static void deliver(struct session *s, int node, const struct event *ev)
{
	CHAIN(s, event, node, ev);
	SINKS(s, event, node, ev);
}

/* An event the user did not ask for, to the analysers that need it. */
static void deliver_needed(struct session *s, int node,
			   const struct event *ev)
{
	for (int i = 0; i < s->nchain; i++) {
		const struct analyser_slot *a = &s->chain[i];
		if (a->ops->event && a->ops->needs && (!a->on || *a->on) &&
		    a->ops->needs(ev->type))
			a->ops->event(a->st, node, ev);
	}
}

void stream_from_merge(void *arg, const struct mitem *it)
{
	struct session *s = arg;
	deliver(s, it->node, &it->ev);
}

/*
 * Every event of a node (or of a recording) passes here: the kinds asked
 * for, the event limit, call pairing, then the merge or the sink.
 */
static void take_event(struct session *s, struct snode *n, struct event *e,
		       bool live)
{
	struct trace_stats *st = n->stats_ready ? &n->st : NULL;
	if (live) {
		/* the child, and a server called (the servers view and the
		 * gen call lines say what it is) */
		if (e->type == EV_SPAWN || e->type == EV_GEN_CALL)
			meet_text(s, n->idx, e->peer);
		/* after: meeting another may empty the table of labels */
		e->label = node_meet(n, e->pid);
	}
	e->pid.node = (uint32_t)n->idx;
	if (live && s->multi) {
		e->ts -= n->clock_offset_us;
		if (e->ts > n->last_ts)
			n->last_ts = e->ts;
	}
	if (e->type == EV_ALARM) {
		/* the VM's, not traced: whatever the kinds, past any limit;
		 * a port's name may be a command line that holds the cookie */
		(void)redact_event(e);
		n->alarms++;
		deliver(s, n->idx, e);
		return;
	}
	if (!(event_types[e->type].kind & s->spec.kinds)) {
		if (st)
			st->filtered++;
		/* asked for by an analyser, not by the user */
		deliver_needed(s, n->idx, e);
		/* registrations still name processes */
		if (e->type == EV_REGISTER)
			SINKS(s, info, n->idx, e->pid, e->pid_text, e->name,
			      NULL, -1);
		return;
	}
	if (s->spec.max_events && s->events >= s->spec.max_events) {
		if (st)
			st->over_limit++;
		s->over_limit++;
		s->limit_hit = true;
		return;
	}
	/* before anything keeps it: no sink ever sees a cookie, nor keeps
	 * the bytes that held one */
	if (redact_event(e)) {
		e->raw = NULL;
		e->raw_len = 0;
	}
	if (live)   /* a recording has its calls paired already */
		CHAIN(s, take, e);
	if (EVENT_IS_GC_START(e->type))
		return;   /* told with its end */
	if (st) {
		st->counts[e->type]++;
		if (!s->spec.counts_only)
			st->written++;   /* counts mode writes no events */
	}
	s->events++;
	n->events++;
	if (!s->spec.counts_only)
		s->events_all++;
	if (s->spec.max_events && s->events >= s->spec.max_events)
		s->limit_hit = true;
	if (live && s->multi && !s->spec.counts_only) {
		if (e->peer && !e->peer_name)
			e->peer_name = session_text_name(s, -1, e->peer);
		merge_add(&s->merge, n->idx, e);   /* out in time order */
	} else {
		deliver(s, n->idx, e);
	}
}

static void on_event(void *arg, const struct event *ev)
{
	struct snode *n = arg;
	struct event e = *ev;
	take_event(n->s, n, &e, true);
}

void session_feed(struct session *s, int node, struct event *ev)
{
	if (node >= 0 && node < s->nnodes)
		take_event(s, &s->nodes[node], ev, false);
}

static void on_batch(void *arg, const char *buf, const struct msg *m)
{
	struct snode *n = arg;
	if (!n->stats_ready)
		return;
	int idx = m->body;
	long k = decode_events(&n->dec, buf, &idx, (int)m->worker, on_event, n);
	n->last_rx_ms = clock_mono_ms();
	if (!stats_batch(&n->st, m->worker, m->seq, m->dropped, k < 0 ? 0 : k))
		return;
	if (k < 0)
		n->dec.malformed++;
}

static void on_eos(void *arg, const struct msg *m)
{
	struct snode *n = arg;
	if (n->stats_ready)
		stats_eos(&n->st, m->worker, m->seq, m->dropped, m->taken);
}

static void count_one(void *arg, struct bs_pid pid, const char *pid_text,
		      unsigned long sends, unsigned long receives)
{
	struct snode *n = arg;
	struct session *s = n->s;
	(void)node_meet(n, pid);
	pid.node = (uint32_t)n->idx;
	s->counted += sends + receives;
	/* counted events are events: they count towards the limit (the
	 * tracer stops counting at it) */
	s->events += sends + receives;
	n->events += sends + receives;
	if (s->spec.max_events && s->events >= s->spec.max_events)
		s->limit_hit = true;
	SINKS(s, counts, n->idx, pid, pid_text, sends,
			       receives, 0);
}

static void on_counts(void *arg, const char *buf, const struct msg *m)
{
	struct snode *n = arg;
	if (!n->stats_ready)
		return;
	int idx = m->body;
	n->count_overflow = m->dropped;
	decode_counts(&n->dec, buf, &idx, count_one, n);
}

static void info_one(void *arg, struct bs_pid pid, const char *pid_text,
		     const char *name, const char *current, long mqlen)
{
	struct snode *n = arg;
	(void)node_meet(n, pid);
	pid.node = (uint32_t)n->idx;
	SINKS(n->s, info, n->idx, pid, pid_text, name,
				current, mqlen);
}

static void sizes_one(void *arg, struct bs_pid pid, struct psize memory,
		      long reductions, struct psize heap)
{
	struct snode *n = arg;
	pid.node = (uint32_t)n->idx;
	SINKS(n->s, sizes, n->idx, pid, memory,
				 reductions, heap);
}

static void on_info(void *arg, const char *buf, const struct msg *m)
{
	struct snode *n = arg;
	if (!n->stats_ready)
		return;
	int idx = m->body;
	decode_info_sizes(&n->dec, buf, &idx, info_one, sizes_one, n);
}

static void on_limit(void *arg, const struct msg *m)
{
	struct snode *n = arg;
	if (strcmp(m->limit, "none") && !n->tripped[0])
		snprintf(n->tripped, sizeof(n->tripped), "%s", m->limit);
	if (m->dropped > n->shed)
		n->shed = m->dropped;
	SINKS(n->s, node_state, n->idx);
}

/*
 * Someone else cleared what we set ({beamscope_cleared, [What]}): said
 * once per thing, and the run's counts are no longer complete.
 */
static void on_cleared(void *arg, const char *buf, const struct msg *m)
{
	static const struct { const char *what, *text; } known[] = {
		{ "flags", "trace flags of processes" },
		{ "new_processes", "the trace flags of new processes" },
		{ "session", "the trace session" },
		{ "call_patterns", "call trace patterns" },
		{ "send", "the send trace pattern" },
		{ "receive", "the receive trace pattern" },
	};
	enum { NKNOWN = sizeof(known) / sizeof(known[0]) };
	struct snode *n = arg;
	int idx = m->body, len;
	if (ei_decode_list_header(buf, &idx, &len) < 0) {
		n->agent.unknown++;
		return;
	}
	for (int i = 0; i < len && i < 16; i++) {
		char what[MAXATOMLEN_UTF8];
		if (ei_decode_atom_as(buf, &idx, what, sizeof(what), ERLANG_UTF8,
				      NULL, NULL) < 0)
			return;
		int k = 0;
		while (k < NKNOWN && strcmp(known[k].what, what))
			k++;
		if (k == NKNOWN || strstr(n->cleared, what))
			continue;
		size_t l = strlen(n->cleared);
		snprintf(n->cleared + l, sizeof(n->cleared) - l, "%s%s",
			 l ? "," : "", what);
		session_notice(n->s, SESSION_WARN, "%s beamscope set on \"%s\" "
			       "%s cleared by someone else (erlang:trace/3, "
			       "recon_trace:clear/0 ...): what they traced is no "
			       "longer seen, and the counts are not complete",
			       known[k].text, n->agent.node,
			       k == 0 || k == 3 ? "were" : "was");
	}
	SINKS(n->s, node_state, n->idx);
}

static void on_node(void *arg, const char *buf, const struct msg *m)
{
	struct snode *n = arg;
	struct session *s = n->s;
	int idx = m->body;
	if (nodestat_decode(buf, &idx, &n->nstats.last) < 0) {
		n->nstats.have = false;
		n->agent.unknown++;
		return;
	}
	n->nstats.have = true;
	n->nstats.at_ms = clock_mono_ms();
	n->nstats.samples++;
	SINKS(s, node_sample, n->idx);
}

static void on_top(void *arg, const struct msg *m)
{
	struct snode *n = arg;
	if (strcmp(m->limit, n->top_asked))
		return;   /* what was asked before */
	n->top.have = true;
	n->top.scanned = m->seq;
	n->top.total = m->dropped;
	n->top.pass_ms = m->taken;
}

static void prof_one(void *arg, const struct prof_sample *p)
{
	struct snode *n = arg;
	SINKS(n->s, profile_sample, n->idx, p);
}

static void on_profile(void *arg, const char *buf, const struct msg *m)
{
	struct snode *n = arg;
	struct prof_stats st;
	int idx = m->body;
	if (!n->s->prof_on) {
		return;    /* what was asked before it was turned off */
	}
	if (decode_profile(&n->dec, buf, &idx, &st, prof_one, n) < 0) {
		n->agent.unknown++;
		return;
	}
	SINKS(n->s, profile_second, n->idx, &st);
}

static void on_alarm(void *arg, const struct event *ev)
{
	struct snode *n = arg;
	struct event e = *ev;
	take_event(n->s, n, &e, true);
}

static void on_alarms(void *arg, const char *buf, const struct msg *m)
{
	struct snode *n = arg;
	int idx = m->body;
	if (!n->stats_ready)
		return;
	if (m->dropped > 0)
		n->alarms_suppressed += (unsigned long)m->dropped;
	if (decode_alarms(&n->dec, buf, &idx, on_alarm, n) < 0)
		n->agent.unknown++;
}

static void on_alarm_state(void *arg, const char *buf, const struct msg *m)
{
	struct snode *n = arg;
	struct alarm_state st;
	int idx = m->body;
	if (decode_alarm_state(&n->dec, buf, &idx, &st) < 0) {
		n->agent.unknown++;
		return;
	}
	struct sbuf set = SBUF_INIT;
	switch (st.kind) {
	case ALARM_STATE_ON:
		alarm_spec_text(&n->s->alarms, &set);
		session_notice(n->s, SESSION_INFO, "alarms on \"%s\" (%s): %s%s%s%s",
			       n->agent.node, !strcmp(st.how, "session") ?
			       "in a trace session of beamscope's" :
			       "erlang:system_monitor/2, given back at the end",
			       set.buf ? set.buf : "",
			       st.unsupported[0] ? "; not on this release: " : "",
			       st.unsupported, "");
		break;
	case ALARM_STATE_HELD:
		session_notice(n->s, SESSION_WARN, "alarms are off on \"%s\": "
			       "its system monitor is held by %s%s%s%s "
			       "(erlang:system_monitor/2); beamscope leaves it "
			       "as it is", n->agent.node, st.holder,
			       st.holder_name[0] ? " (" : "", st.holder_name,
			       st.holder_name[0] ? ")" : "");
		break;
	case ALARM_STATE_FAILED:
		session_notice(n->s, SESSION_WARN, "alarms: \"%s\" refused the "
			       "settings", n->agent.node);
		break;
	case ALARM_STATE_OFF:
		break;
	}
	sbuf_release(&set);
}

/* exact mode's totals: those of a node it is still wanted on */
static void on_calls(void *arg, const char *buf, const struct msg *m)
{
	struct snode *n = arg;
	struct session *s = n->s;
	int idx = m->body;
	if (s->exact_n == 0 || (s->exact_node >= 0 && s->exact_node != n->idx))
		return;
	struct prof_calls *c = xmalloc(sizeof(*c));
	if (decode_calls(&n->dec, buf, &idx, c) < 0)
		n->agent.unknown++;
	else
		SINKS(s, profile_calls, n->idx, c);
	free(c);
}

static void on_calls_state(void *arg, const char *buf, const struct msg *m)
{
	struct snode *n = arg;
	struct calls_state st;
	int idx = m->body;
	if (decode_calls_state(buf, &idx, &st) < 0) {
		n->agent.unknown++;
		return;
	}
	if (st.kind == CALLS_STATE_ON)
		session_notice(n->s, SESSION_INFO, "exact mode on \"%s\": %ld "
			       "functions timed in a trace session of "
			       "beamscope's, read once a second", n->agent.node,
			       st.functions);
	else if (st.kind == CALLS_STATE_ERROR)
		session_notice(n->s, SESSION_WARN, "exact mode on \"%s\": %s",
			       n->agent.node, st.why);
}

void node_agent_fresh(struct snode *n)
{
	struct agent_stream stream = {
		.batch = on_batch, .eos = on_eos, .counts = on_counts,
		.relations = node_on_relations,
		.info = on_info, .labels = node_on_labels, .limit = on_limit,
		.node = on_node, .top = on_top, .cleared = on_cleared,
		.profile = on_profile, .alarms = on_alarms,
		.alarm_state = on_alarm_state, .calls = on_calls,
		.calls_state = on_calls_state, .arg = n,
	};
	agent_init(&n->agent, &n->conn, &stream);
}
