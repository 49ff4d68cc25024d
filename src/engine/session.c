/*
 * session: the engine (see session.h).
 *
 * Each node has a state and moves towards the session's goal one answer at
 * a time: reconcile() looks at every node on every turn and starts what is
 * due (an attach, a clock measurement, a trace request, a stop), and
 * node_step() takes the answers as they arrive.  Nothing here waits for an
 * answer, but session_drain() and the start-up helpers that front ends call
 * before they have a loop of their own, and those only run the same loop.
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

void session_notice(struct session *s, enum session_level level,
		    const char *fmt, ...)
{
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* names, reasons and patterns in it came from outside */
	struct sbuf safe = SBUF_INIT;
	esc_addstr(&safe, text);
	SINKS(s, notice, level, safe.buf);
	sbuf_release(&safe);
}

static void set_state(struct snode *n, enum snode_state st)
{
	if (n->state == st)
		return;
	n->state = st;
	SINKS(n->s, node_state, n->idx);
}

const char *session_proc_name(const struct session *s, struct bs_pid pid)
{
	if ((int)pid.node >= s->nnodes)
		return NULL;
	struct bs_pid local = { pid.num, pid.serial, 0 };
	return names_get(&s->nodes[pid.node].agent.names, local);
}

enum term_syntax session_node_syntax(const struct session *s, int node)
{
	return node >= 0 && node < s->nnodes ? s->nodes[node].dec.syn :
		TERM_ERLANG;
}

const char *session_proc_label(const struct session *s, struct bs_pid pid)
{
	if ((int)pid.node >= s->nnodes)
		return NULL;
	struct bs_pid local = { pid.num, pid.serial, 0 };
	const char *l = names_get(&s->nodes[pid.node].labels, local);
	return l && *l ? l : NULL;
}

/* A live process of node n was met: the agent is asked what it is, once
 * (the tick sends the questions).  pid is local (node 0). */
static void meet(struct snode *n, struct bs_pid pid)
{
	/* a registered name wins: nothing to ask (asking costs the process
	 * a turn on a scheduler, process_info being a signal it handles) */
	if (names_get(&n->labels, pid) || names_get(&n->agent.names, pid))
		return;
	if (n->nask == SESSION_ASK_MAX)
		return;   /* met again later, asked then */
	if (n->labels.used >= SESSION_LABELS_MAX) {
		names_release(&n->labels);
		n->nask = 0;
	}
	if (!n->ask)
		n->ask = xmalloc(SESSION_ASK_MAX * sizeof(*n->ask));
	names_set(&n->labels, pid, "");
	n->ask[n->nask++] = pid;
}

/* The questions gathered since the last tick, a request at a time. */
static void ask_labels(struct snode *n)
{
	int sent = 0;
	while (sent < n->nask) {
		int k = n->nask - sent;
		if (k > AGENT_DESCRIBE_MAX)
			k = AGENT_DESCRIBE_MAX;
		if (agent_describe(&n->agent, n->ask + sent, k, false) < 0)
			break;
		sent += k;
	}
	n->nask = 0;
}

/* The Elixir struct modules met in terms that the target was not asked
 * about yet (structs.h): what they are comes on the stream. */
static void ask_structs(struct snode *n)
{
	char *mods[64];
	int k = structs_take_asks(&n->agent.structs, mods, 64);
	(void)agent_structs(&n->agent, mods, k);
	for (int i = 0; i < k; i++)
		free(mods[i]);
}

/* A process whose first answer had no label: asked again later. */
struct relabel {
	struct bs_pid pid;   /* local */
	long long due_ms;
};

static void ask_later(struct snode *n, struct bs_pid pid)
{
	if (n->nlater == SESSION_ASK_MAX)
		return;
	if (!n->later)
		n->later = xmalloc(SESSION_ASK_MAX * sizeof(*n->later));
	int i = (n->later_head + n->nlater++) % SESSION_ASK_MAX;
	n->later[i].pid = pid;
	n->later[i].due_ms = clock_mono_ms() + SESSION_RELABEL_MS;
}

/* The second questions that are due, a request at a time; the ring is in
 * the order of the answers, so the due ones are its first. */
static void ask_labels_again(struct snode *n, long long now)
{
	struct bs_pid due[AGENT_DESCRIBE_MAX];
	while (n->nlater && n->later[n->later_head].due_ms <= now) {
		int k = 0;
		while (k < AGENT_DESCRIBE_MAX && n->nlater &&
		       n->later[n->later_head].due_ms <= now) {
			due[k++] = n->later[n->later_head].pid;
			n->later_head = (n->later_head + 1) % SESSION_ASK_MAX;
			n->nlater--;
		}
		if (agent_describe(&n->agent, due, k, true) < 0)
			break;
	}
}

static void label_one(void *arg, struct bs_pid pid, const char *pid_text,
		      const char *label, bool again)
{
	struct snode *n = arg;
	if (again)
		ask_later(n, pid);
	if (!label)
		return;   /* "" stays: asked, nothing to say */
	/* an initial call reads like the other functions shown */
	struct sbuf shown = SBUF_INIT;
	if (retext_label(&shown, n->dec.syn, label))
		label = sbuf_str(&shown);
	names_set(&n->labels, pid, label);
	sbuf_release(&shown);
	label = names_get(&n->labels, pid);
	pid.node = (uint32_t)n->idx;
	SINKS(n->s, label, n->idx, pid, pid_text, label);
}

static void on_labels(void *arg, const char *buf, const struct msg *m)
{
	struct snode *n = arg;
	int idx = m->body;
	decode_labels(&n->dec, buf, &idx, label_one, n);
}

static void relations_one(void *arg, const struct relations *r)
{
	struct snode *n = arg;
	struct relations mine = *r;
	mine.pid.node = (uint32_t)n->idx;
	SINKS(n->s, relations, n->idx, &mine);
}

static void on_relations(void *arg, const char *buf, const struct msg *m)
{
	struct snode *n = arg;
	int idx = m->body;
	bool wanted;
	SINKS_ANY(n->s, relations, &wanted);
	if (!n->stats_ready || !wanted)
		return;
	decode_relations(&n->dec, buf, &idx, relations_one, n);
}

const char *session_node_name(const struct session *s, int i)
{
	if (i < 0 || i >= s->nnodes)
		return "?";
	const struct snode *n = &s->nodes[i];
	return n->name[0] ? n->name : n->agent.node[0] ? n->agent.node : n->arg;
}

const char *session_state_name(const struct snode *n)
{
	if (!n->present)
		return "detached";
	switch (n->state) {
	case SN_IDLE: return n->left[0] ? "agent left" : "stopped";
	case SN_CONNECTING: return "connecting";
	case SN_ATTACHING: return "attaching";
	case SN_CLOCK: return "measuring clock";
	case SN_READY: return "attached";
	case SN_STARTING: return "starting";
	case SN_TRACING: return "tracing";
	case SN_STOPPING: return "stopping";
	case SN_LEAVING: return "leaving";
	case SN_LOST: return n->left[0] ? "agent left" : "lost";
	case SN_RECORDED: return "recorded";
	}
	return "?";
}

/* ---- the stream ---- */

/* merge's lookup: the node a "<name@host.N.S>" pid lives on */
/* The labels known, rendered in another syntax. */
static void labels_again(struct names *labels, enum term_syntax from,
			 enum term_syntax to)
{
	struct sbuf sb = SBUF_INIT;
	for (size_t i = 0; i < labels->cap; i++) {
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

static int node_of(void *arg, const char *pid_text)
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
		node = node_of(s, pid_text);
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
	meet(&s->nodes[pid.node], (struct bs_pid){ pid.num, pid.serial, 0 });
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

static void from_merge(void *arg, const struct mitem *it)
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
		meet(n, e->pid);
		/* the child, and a server called (the servers view and the
		 * gen call lines say what it is) */
		if (e->type == EV_SPAWN || e->type == EV_GEN_CALL)
			meet_text(s, n->idx, e->peer);
		e->label = names_get(&n->labels, e->pid);
		if (e->label && !*e->label)
			e->label = NULL;
	}
	e->pid.node = (uint32_t)n->idx;
	if (live && s->multi) {
		e->ts -= n->clock_offset_us;
		if (e->ts > n->last_ts)
			n->last_ts = e->ts;
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
	meet(n, pid);
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
	meet(n, pid);
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

static void agent_fresh(struct snode *n)
{
	struct agent_stream stream = {
		.batch = on_batch, .eos = on_eos, .counts = on_counts,
		.relations = on_relations,
		.info = on_info, .labels = on_labels, .limit = on_limit,
		.node = on_node, .top = on_top, .cleared = on_cleared, .arg = n,
	};
	agent_init(&n->agent, &n->conn, &stream);
}

/* ---- setting up ---- */

void session_spec_copy(struct session_spec *dst, const struct session_spec *src)
{
	*dst = *src;
	dst->pids = xstrdup(src->pids ? src->pids : "all");
	for (int i = 0; i < src->ncalls; i++)
		dst->calls[i] = xstrdup(src->calls[i]);
}

void session_spec_release(struct session_spec *sp)
{
	for (int i = 0; i < sp->ncalls; i++)
		free(sp->calls[i]);
	sp->ncalls = 0;
	free(sp->pids);
	sp->pids = NULL;
}

void session_set_pids(struct session *s, const char *pids, bool follow)
{
	free(s->spec.pids);
	s->spec.pids = xstrdup(pids);
	s->spec.follow = follow;
}

struct session *session_new(const struct config *cfg,
			    const struct session_spec *spec,
			    const struct session_sink *sink)
{
	struct session *s = xcalloc(1, sizeof(*s));
	session_init(s, cfg, spec, sink);
	return s;
}

void session_free(struct session *s)
{
	if (!s)
		return;
	session_release(s);
	free(s);
}

bool session_add_sink(struct session *s, const struct session_sink *sink)
{
	if (s->nsinks > SESSION_SINKS_MAX)
		return false;
	s->sinks[s->nsinks++] = *sink;
	return true;
}

void session_init(struct session *s, const struct config *cfg,
		  const struct session_spec *spec, const struct session_sink *sink)
{
	memset(s, 0, sizeof(*s));
	s->cfg = cfg;
	s->sinks[0] = *sink;
	s->nsinks = 1;
	session_spec_copy(&s->spec, spec);
	s->multi = cfg->nnodes > 1 || cfg->cluster;
	/* allocated once: agents, decoders and streams point into it */
	s->nodes = xcalloc(BS_MAX_NODES, sizeof(*s->nodes));
	s->nodes_max = BS_MAX_NODES;
	merge_init(&s->merge, SESSION_MERGE_MAX, node_of, s);
	callstacks_init(&s->calls);
	gencall_init(&s->gcalls);
	s->chain[s->nchain++] = (struct analyser_slot){
		&callstack_analyser, &s->calls, NULL };
	s->chain[s->nchain++] = (struct analyser_slot){
		&gencall_analyser, &s->gcalls, &s->spec.gen_calls };
	s->gcalls.stuck_us = (int64_t)(cfg->stuck * 1e6);
	s->start_rc = EXIT_OK;
	s->last_turn_ms = clock_mono_ms();
	s->next_ping_ms = s->last_turn_ms + SESSION_PING_MS;
}

static bool node_connect_done(struct snode *n, bool wait);

static void node_release_session(struct snode *n)
{
	if (n->stats_ready) {
		decoder_release(&n->dec);
		stats_release(&n->st);
		n->stats_ready = false;
	}
}

void session_release(struct session *s)
{
	for (int i = 0; i < s->nnodes; i++) {
		struct snode *n = &s->nodes[i];
		if (n->state == SN_CONNECTING)
			node_connect_done(n, true);   /* bounded by its timeouts */
		conn_release(&n->conn);
		trace_result_release(&n->tr);
		node_release_session(n);
		agent_release(&n->agent);
		names_release(&n->labels);
		free(n->ask);
		free(n->later);
	}
	free(s->nodes);
	node_names_free(s->modules);
	merge_release(&s->merge);
	gencall_release(&s->gcalls);
	callstacks_release(&s->calls);
	session_spec_release(&s->spec);
	session_replay_release(s);
	memset(s, 0, sizeof(*s));
}

struct snode *session_add_node(struct session *s, const char *name,
			       bool required)
{
	if (s->nnodes == s->nodes_max)
		return NULL;
	struct snode *n = &s->nodes[s->nnodes];
	memset(n, 0, sizeof(*n));
	n->s = s;
	n->idx = s->nnodes++;
	n->present = true;
	n->required = required;
	snprintf(n->arg, sizeof(n->arg), "%s", name);
	n->count_overflow = -1;
	n->clock_error_us = -1;
	conn_init(&n->conn);
	agent_fresh(n);
	return n;
}

struct snode *session_find_node(struct session *s, const char *name)
{
	for (int i = 0; i < s->nnodes; i++) {
		struct snode *n = &s->nodes[i];
		const char *at = strchr(n->name, '@');
		if (!strcmp(n->arg, name) || !strcmp(n->name, name) ||
		    (at && !strchr(name, '@') &&
		     strlen(name) == (size_t)(at - n->name) &&
		     !strncmp(n->name, name, strlen(name))))
			return n;
	}
	return NULL;
}

/* ---- node life ---- */

static bool has_agent(const struct snode *n)
{
	return n->state == SN_READY || n->state == SN_STARTING ||
		n->state == SN_TRACING || n->state == SN_CLOCK;
}

static void node_lost(struct snode *n)
{
	struct session *s = n->s;
	bool was = n->state == SN_LOST;
	agent_op_end(&n->agent);
	conn_close(&n->conn);
	n->ever_lost = true;
	n->next_retry_ms = clock_mono_ms() + SESSION_RETRY_MS;
	set_state(n, SN_LOST);
	if (was || n->left[0])
		return;
	if (s->multi)
		session_notice(s, SESSION_WARN, "lost node \"%s\"; the others go on%s",
		       session_node_name(s, n->idx), s->cfg->reconnect ?
		       ", attaching again when it is back" : "");
	else
		session_notice(s, SESSION_WARN, "lost the connection to \"%s\"%s",
		       session_node_name(s, n->idx), s->cfg->reconnect ?
		       "; attaching again when it is back" : "");
}

/* The agent left by itself and said why: the target is clean, what it
 * sent is in, and the node counts as lost. */
static void node_agent_left(struct snode *n)
{
	struct session *s = n->s;
	struct sbuf why = SBUF_INIT;
	agent_gone_text(&n->agent, &why);
	snprintf(n->left, sizeof(n->left), "%s",
		 !strcmp(n->agent.gone_why, "owner_silent") ?
		 "agent_timeout" : "agent_lost");
	n->ever_left = true;
	session_notice(s, SESSION_ERROR, "%s; %s", sbuf_str(&why),
	       s->multi ? (s->cfg->reconnect ? "the others go on; attaching "
			   "again" : "the others go on") :
	       s->cfg->reconnect ? "attaching again" :
	       "the events received up to then are kept");
	sbuf_release(&why);
	node_lost(n);
}

/* An attempt failed: say so once it matters, and leave the node alone. */
static void node_failed(struct snode *n, int rc, const char *why)
{
	struct session *s = n->s;
	agent_op_end(&n->agent);
	n->error_rc = rc ? rc : EXIT_FAIL;
	snprintf(n->error, sizeof(n->error), "%s", why && *why ? why :
		 "cannot attach");
	if (n->ever_lost && s->cfg->reconnect && !s->start_pending) {
		/* --reconnect: not back yet */
		if (!n->retry_said)
			session_notice(s, SESSION_NOTE, "\"%s\" is not back yet: %s",
			       session_node_name(s, n->idx), n->error);
		n->retry_said = true;
		conn_close(&n->conn);
		n->next_retry_ms = clock_mono_ms() + SESSION_RETRY_MS;
		n->error[0] = '\0';
		set_state(n, SN_LOST);
		return;
	}
	conn_close(&n->conn);
	set_state(n, SN_IDLE);
}

/* The connector thread: epmd, the cookie, the handshake.  It touches
 * nothing but the node's conn and connect_* fields, and says it is done
 * with one byte on the pipe. */
static void *connector(void *arg)
{
	struct snode *n = arg;
	n->connect_rc = attach_connect(n->s->cfg, n->arg, &n->conn,
				       &n->connect_err, &n->connect_warn);
	char done = 1;
	while (write(n->connect_pipe[1], &done, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static void start_attach(struct snode *n);

/*
 * A connection can take seconds (a node that does not answer its
 * handshake): it is made on a thread of its own, so that the loop goes on.
 * Signals stay with the loop's thread.
 */
static void node_connect(struct snode *n)
{
	conn_release(&n->conn);
	conn_init(&n->conn);
	sbuf_init(&n->connect_err);
	sbuf_init(&n->connect_warn);
	if (pipe2(n->connect_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		node_failed(n, EXIT_FAIL, "cannot make a pipe for the connection");
		return;
	}
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int e = pthread_create(&n->connector, NULL, connector, n);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (e) {
		close(n->connect_pipe[0]);
		close(n->connect_pipe[1]);
		node_failed(n, EXIT_FAIL, "cannot start a thread for the connection");
		return;
	}
	set_state(n, SN_CONNECTING);
}

/* The connector is done (or, when wait, wait until it is): its result. */
static bool node_connect_done(struct snode *n, bool wait)
{
	char b;
	if (!wait && read(n->connect_pipe[0], &b, 1) != 1)
		return false;
	pthread_join(n->connector, NULL);
	close(n->connect_pipe[0]);
	close(n->connect_pipe[1]);
	struct session *s = n->s;
	if (n->connect_warn.len)
		session_notice(s, SESSION_WARN, "warning: %s", n->connect_warn.buf);
	int rc = n->connect_rc;
	if (rc != EXIT_OK)
		node_failed(n, rc, sbuf_str(&n->connect_err));
	sbuf_release(&n->connect_err);
	sbuf_release(&n->connect_warn);
	if (rc == EXIT_OK && !wait)
		start_attach(n);
	return true;
}

/* Connect if need be and start the agent's bootstrap. */
static void node_open(struct snode *n)
{
	n->error[0] = '\0';
	agent_release(&n->agent);
	agent_fresh(n);   /* the old agent's names and requests are gone */
	names_release(&n->labels);   /* questions to it went with it */
	n->nask = 0;
	n->nlater = 0;
	if (n->conn.fd < 0)
		node_connect(n);
	else
		start_attach(n);
}

static void start_attach(struct snode *n)
{
	struct session *s = n->s;
	/* a node still booting does not answer: a retry gives up soon, so
	 * as not to hold up the others */
	n->agent.rpc_tmo_ms = n->ever_lost ? SESSION_RETRY_MS : 0;
	struct agent_opts ao = {
		.workers = s->cfg->workers,
		.dep_timeout_ms = (unsigned)(s->cfg->dep_timeout * 1000),
		.high_water = s->cfg->high_water,
		.batch_max = SESSION_BATCH_MAX,
		.batch_ms = SESSION_BATCH_MS,
	};
	agent_attach_begin(&n->agent, &ao);
	set_state(n, SN_ATTACHING);
}

static const char *pids_text(const struct session *s)
{
	const char *p = s->spec.pids;
	if (!*p || !strcmp(p, "all"))
		return "all processes";
	if (!strcmp(p, "new"))
		return "new processes";
	if (!strcmp(p, "existing"))
		return "existing processes";
	return "the chosen processes";
}

static void kinds_text(int kinds, char *out, size_t outsz)
{
	out[0] = '\0';
	for (int bit = 1; bit <= KIND_LAST; bit <<= 1)
		if ((kinds & bit) && event_kind_name(bit)) {
			size_t len = strlen(out);
			snprintf(out + len, outsz - len, "%s%s", len ? "," : "",
				 event_kind_name(bit));
		}
}

/* Send the trace request with the session's spec. */
static void node_trace(struct snode *n)
{
	struct session *s = n->s;
	struct pidsel sel, here;
	struct sbuf err = SBUF_INIT;
	if (pidsel_parse(s->spec.pids[0] ? s->spec.pids : "all", &sel, &err) < 0 ||
	    pidsel_check_otp(&sel, atoi(n->agent.otp), "--pids", &err) < 0) {
		/* a pid the target cannot decode would cost the connection */
		pidsel_release(&sel);
		node_failed(n, EXIT_USAGE, sbuf_str(&err));
		sbuf_release(&err);
		return;
	}
	/* patterns in Elixir form go out in Erlang form, heads as they are */
	struct sbuf erl[32];
	const char *calls[32];
	unsigned long elixir_calls = 0;
	int ncalls = s->spec.ncalls < 32 ? s->spec.ncalls : 32;
	for (int i = 0; i < ncalls; i++) {
		sbuf_init(&erl[i]);
		int form = callpat_erlang(s->spec.calls[i], &erl[i], &err);
		if (form == CALLPAT_ELIXIR_HEAD)
			elixir_calls |= 1UL << i;
		if (form < 0) {
			for (int k = 0; k <= i; k++)
				sbuf_release(&erl[k]);
			pidsel_release(&sel);
			node_failed(n, EXIT_USAGE, sbuf_str(&err));
			sbuf_release(&err);
			return;
		}
		calls[i] = sbuf_str(&erl[i]);
	}
	sbuf_release(&err);
	/* several nodes: each traces the names registered there */
	pidsel_on_node(&sel, &n->agent.names, &here);
	struct trace_spec spec = {
		/* pairing gen calls takes their records and the exits */
		.kinds = s->spec.kinds | (s->spec.gen_calls ?
					  KIND_GENCALL | KIND_EXIT : 0),
		.sel = s->multi ? &here : &sel,
		.payload_bytes = s->spec.payload,
		/* processes named one by one ship every event; the rest
		 * are counted */
		.count_tier = s->spec.counts_only || (!s->spec.ship_all &&
			(sel.mode != SEL_LIST || s->spec.follow)),
		.interval_ms = SESSION_INTERVAL_MS,
		.calls = calls,
		.ncalls = ncalls,
		.elixir_calls = elixir_calls,
		.match = s->spec.match[0] ? s->spec.match : NULL,
		.follow = s->spec.follow,
		.max_events = s->spec.max_events,
		.duration_ms = (unsigned long)(s->spec.duration * 1000),
		.rate = s->cfg->rate, .shed = s->cfg->shed,
		.legacy = s->cfg->legacy, .take_over = s->cfg->take_over,
	};
	trace_result_release(&n->tr);
	n->cleared[0] = '\0';
	n->counted = spec.count_tier;
	agent_trace_begin(&n->agent, &spec, &n->tr);
	for (int i = 0; i < ncalls; i++)
		sbuf_release(&erl[i]);
	pidsel_release(&here);
	pidsel_release(&sel);
	set_state(n, SN_STARTING);
}

/* One line for a list: its first items, then how many in all. */
static void list_line(struct session *s, char *const *items, int n,
		      const char *what, const char *one, const char *many)
{
	struct sbuf t = SBUF_INIT;
	for (int i = 0; i < n && i < 5; i++)
		sbuf_addf(&t, "%s%s", i ? ", " : "", items[i]);
	if (n == 1)
		session_notice(s, SESSION_INFO, "%s %s", sbuf_str(&t), one);
	else
		session_notice(s, SESSION_INFO, "%s%s (%d %s) %s", sbuf_str(&t),
			       n > 5 ? ", ..." : "", n, what, many);
	sbuf_release(&t);
}

/*
 * What the target's other tracers keep, and what beamscope took: in the
 * legacy session, processes, new processes and the send and receive
 * patterns another tracer holds are left to it unless --take-over; on
 * OTP 27+, garbage collections another session traces are not traced.
 */
static void node_left_alone(struct snode *n)
{
	struct session *s = n->s;
	const char *node = n->agent.node;
	if (n->tr.nskipped)
		list_line(s, n->tr.skipped, n->tr.nskipped, "processes",
			  "is already traced by another tracer; skipped "
			  "(--take-over takes it)", "are already traced by "
			  "another tracer; skipped (--take-over takes them)");
	if (n->tr.new_skipped)
		session_notice(s, SESSION_NOTE, "new processes on \"%s\" are "
		       "traced by another tracer (%s); left to it, so processes "
		       "spawned from now on are not traced (--take-over takes "
		       "them)", node, n->tr.new_skipped);
	if (n->tr.taken)
		session_notice(s, SESSION_NOTE, "took %ld process%s from another "
		       "tracer (--take-over); given back at the end",
		       n->tr.taken, n->tr.taken == 1 ? "" : "es");
	if (n->tr.gc_skipped || n->tr.gc_new_skipped)
		session_notice(s, SESSION_NOTE, "garbage collections not traced "
		       "on %ld process%s%s of \"%s\": another trace session "
		       "traces them, and two sessions tracing one process's are "
		       "reported to crash OTP 27-29 (OTP issue 11624)",
		       n->tr.gc_skipped, n->tr.gc_skipped == 1 ? "" : "es",
		       n->tr.gc_new_skipped ? " nor on new processes" : "",
		       node);
	if (!strcmp(n->tr.send_pattern, "off"))
		session_notice(s, SESSION_NOTE, "the send trace pattern on \"%s\" "
		       "is off, set by another tool; left alone, so no send is "
		       "seen (--take-over takes it)", node);
	else if (n->tr.send_pattern[0])
		session_notice(s, SESSION_NOTE, "the send trace pattern on \"%s\" "
		       "is set by another tool; left alone, so only the sends it "
		       "passes are seen (--take-over takes it)", node);
}

/* The trace is on: say what, as batch mode's progress lines. */
static void node_traced(struct snode *n)
{
	struct session *s = n->s;
	char kt[128], clk[96] = "";
	kinds_text(s->spec.kinds, kt, sizeof(kt));
	if (s->multi)
		snprintf(clk, sizeof(clk), ", clock %+lld us +-%lld",
			 n->clock_offset_us, n->clock_error_us);
	n->gen = s->gen;
	n->left[0] = '\0';
	n->tripped[0] = '\0';
	n->last_rx_ms = clock_mono_ms();
	if (n->ever_lost && n->retry_said)
		n->retry_said = false;
	if (n->sessions > 1 && n->ever_lost)
		session_notice(s, SESSION_NOTE, "attached to \"%s\" again",
		       session_node_name(s, n->idx));
	session_notice(s, SESSION_INFO, "attached to %s (OTP %s%s%s, %d workers%s%s%s); "
	       "tracing %s of %s (%lu); %s syntax", n->agent.node, n->agent.otp,
	       n->agent.elixir[0] ? ", Elixir " : "", n->agent.elixir,
	       n->agent.workers, clk, n->tr.tracing[0] ? ", " : "",
	       n->tr.tracing, kt, pids_text(s), n->tr.traced,
	       term_syntax_name(n->dec.syn));
	node_left_alone(n);
	if (s->spec.match[0])
		session_notice(s, SESSION_INFO, "--match \"%s\": only the "
		       "messages it matches are shipped; counts are of all",
		       s->spec.match);
	if (!strcmp(n->tr.receive_pattern, "off"))
		session_notice(s, SESSION_NOTE, "the receive trace pattern on "
		       "\"%s\" is off, set by another tool; left alone, so no "
		       "receive is seen", n->agent.node);
	else if (n->tr.receive_pattern[0])
		session_notice(s, SESSION_NOTE, "the receive trace pattern on "
		       "\"%s\" is set by another tool; left alone, so receive "
		       "timeouts count as received messages", n->agent.node);
	for (int i = 0; i < n->tr.npatterns && i < s->spec.ncalls; i++)
		session_notice(s, SESSION_INFO, "--call \"%s\": %ld function%s",
		       s->spec.calls[i], n->tr.pattern_functions[i],
		       n->tr.pattern_functions[i] == 1 ? "" : "s");
	if (n->tr.nskipped_functions)
		list_line(s, n->tr.skipped_functions, n->tr.nskipped_functions,
			  "function", "already has a trace pattern set by someone "
			  "else; skipped", "already have a trace pattern set by "
			  "someone else; skipped");
	set_state(n, SN_TRACING);
}

/* Ask the agent to stop; its reply and the last batches follow. */
static void node_stop(struct snode *n)
{
	n->stop_ms = clock_mono_ms();
	n->deadline_ms = n->stop_ms + SESSION_STOP_TMO_MS;
	if (agent_stop_send(&n->agent) < 0) {
		node_lost(n);
		return;
	}
	set_state(n, SN_STOPPING);
}

static void start_failed(struct session *s, int rc, const char *why);

/*
 * A stop waits for the agent's reply and every worker's last word, up to
 * SESSION_STOP_TMO_MS; longer while batches still come (the last words are
 * behind them, on a link beamscope reads slowly), up to SESSION_STOP_MAX_MS.
 */
static bool stop_pending(const struct snode *n)
{
	long long now = clock_mono_ms();
	bool flowing = now - n->last_rx_ms < SESSION_STOP_QUIET_MS &&
		now - n->stop_ms < SESSION_STOP_MAX_MS;
	if (agent_reply_arrived(&n->agent) && n->stats_ready &&
	    stats_all_eos(&n->st))
		return false;
	return now < n->deadline_ms || flowing;
}

/* Take the answer to the node's request in progress, if it is in. */
/* The agent is up: the node's decoder and counters for a new session,
 * then the clock (several nodes) or ready. */
static void node_attached(struct snode *n)
{
	struct session *s = n->s;
	struct agent *ag = &n->agent;
	agent_op_end(ag);
	if (ag->notice[0])
		session_notice(s, SESSION_NOTE, "%s", ag->notice);
	snprintf(n->name, sizeof(n->name), "%s", ag->node);
	if (!n->stats_ready) {
		stats_init(&n->st, ag->workers);
		decoder_init(&n->dec, s->multi ? NULL : n->name,
			     s->spec.payload, &ag->names);
		n->stats_ready = true;
	} else {
		stats_new_session(&n->st, ag->workers);
		n->dec.names = &ag->names;
	}
	n->dec.syn = s->spec.syntax >= 0 ? (enum term_syntax)s->spec.syntax :
		     ag->elixir[0] ? TERM_ELIXIR : TERM_ERLANG;
	n->dec.dia = (struct term_dialect){ ag->printer, &ag->structs };
	n->sessions++;
	n->nstats_on = false;   /* a new agent knows nothing of it */
	n->top_asked[0] = '\0';
	n->top.have = false;
	n->last_rx_ms = clock_mono_ms();
	n->last_ts = clock_wall_us();
	if (s->multi) {
		agent_clock_begin(ag, SESSION_CLOCK_SAMPLES);
		set_state(n, SN_CLOCK);
	} else {
		set_state(n, SN_READY);
	}
}

/* While tracing: the answers to the stall re-check's or the silence
 * check's question, and to the modules asked for. */
static void node_tracing_step(struct snode *n)
{
	struct session *s = n->s;
	struct agent *ag = &n->agent;
	if (ag->op.kind == AOP_ALIVE && agent_op_step(ag)) {
		if (ag->op.alive == 0 && n->silence_check) {
			agent_set_lost(ag, "");
		} else if (ag->op.alive == 0 && !ag->gone) {
			ag->gone = true;
			snprintf(ag->gone_why, sizeof(ag->gone_why),
				 "owner_silent");
			ag->gone_dep_ms = (long)(s->cfg->dep_timeout * 1000);
		}
		n->silence_check = false;
		agent_op_end(ag);
	}
	if (ag->op.kind == AOP_MODULES && agent_op_step(ag)) {
		if (ag->op.rc == EXIT_OK && !s->modules) {
			s->modules = ag->op.nodes;
			ag->op.nodes = NULL;
		}
		agent_op_end(ag);
	}
}

/* Stopped: gone idle, or waiting for the agent to leave. */
static void node_stopped_step(struct snode *n)
{
	struct session *s = n->s;
	struct agent *ag = &n->agent;
	if (stop_pending(n))
		return;
	if (!agent_reply_arrived(ag))
		session_notice(s, SESSION_INFO, "the agent on \"%s\" did not confirm "
		       "the stop; it cleans up by itself once beamscope "
		       "is gone", session_node_name(s, n->idx));
	if (s->closing || !agent_reply_arrived(ag)) {
		set_state(n, SN_IDLE);
		return;
	}
	/* a new session may follow at once: let this one leave */
	agent_gone_begin(ag, SESSION_STOP_TMO_MS);
	set_state(n, SN_LEAVING);
}

static void node_step(struct snode *n)
{
	struct session *s = n->s;
	struct agent *ag = &n->agent;
	switch (n->state) {
	case SN_CONNECTING:
		node_connect_done(n, false);
		return;
	case SN_ATTACHING:
		if (!agent_op_step(ag))
			return;
		if (ag->op.rc != EXIT_OK) {
			struct sbuf why = SBUF_INIT;
			sbuf_addstr(&why, sbuf_str(&ag->op.err));
			int rc = ag->op.rc;
			node_failed(n, rc, sbuf_str(&why));
			sbuf_release(&why);
			return;
		}
		node_attached(n);
		return;
	case SN_CLOCK:
		if (!agent_op_step(ag))
			return;
		if (ag->op.rc != EXIT_OK) {
			char why[sizeof(n->name) + 64];
			snprintf(why, sizeof(why), "node \"%s\" did not answer "
				 "the clock requests", n->name);
			node_failed(n, EXIT_CONNECT, why);
			return;
		}
		n->clock_offset_us = ag->op.offset_us;
		n->clock_error_us = ag->op.error_us;
		agent_op_end(ag);
		n->last_rx_ms = clock_mono_ms();
		n->last_ts = clock_wall_us();
		set_state(n, SN_READY);
		return;
	case SN_STARTING:
		if (!agent_op_step(ag))
			return;
		if (ag->op.rc != EXIT_OK) {
			char why[1400];
			int rc = ag->op.rc;
			snprintf(why, sizeof(why), "%s", sbuf_str(&ag->op.err));
			agent_op_end(ag);
			/* the agent is up but refused: send it away, so that
			 * the next attempt finds the node free */
			node_stop(n);
			start_failed(s, rc, why);
			return;
		}
		agent_op_end(ag);
		node_traced(n);
		return;
	case SN_TRACING:
		node_tracing_step(n);
		return;
	case SN_STOPPING:
		node_stopped_step(n);
		return;
	case SN_LEAVING:
		if (!agent_op_step(ag))
			return;
		agent_op_end(ag);
		set_state(n, SN_IDLE);
		return;
	default:
		return;
	}
}

/* ---- the goal ---- */

static void start_done(struct session *s)
{
	unsigned long traced = 0, skipped = 0;
	int nodes = 0;
	s->start_pending = false;
	s->start_rc = EXIT_OK;
	s->start_error[0] = '\0';
	s->stopped_why[0] = '\0';
	s->trial = SESSION_TRIAL_NONE;   /* the change holds */
	for (int i = 0; i < s->nnodes; i++) {
		struct snode *n = &s->nodes[i];
		if (!n->present || n->state != SN_TRACING)
			continue;
		traced += n->tr.traced;
		skipped += (unsigned long)n->tr.nskipped;
		nodes++;
	}
	SINKS(s, started, traced, nodes, skipped);
}

static void start_failed(struct session *s, int rc, const char *why)
{
	if (!s->start_pending)
		return;
	s->start_pending = false;
	s->start_rc = rc ? rc : EXIT_FAIL;
	snprintf(s->start_error, sizeof(s->start_error), "%s", why);
	/* what did start is not left half-traced */
	s->want_tracing = false;
	snprintf(s->stopped_why, sizeof(s->stopped_why), "refused");
	if (session_take_back(s)) {
		/* a new call pattern or match refused: trace without it */
		session_notice(s, SESSION_REFUSED, "%s", why);
		session_start(s);
		return;
	}
	if (!s->waiting)   /* else the one waiting reports it */
		session_notice(s, SESSION_ERROR, "%s", why);
}

/* Several nodes: every name of --pids must be registered somewhere. */
static bool names_check(struct session *s)
{
	struct pidsel sel;
	struct sbuf err = SBUF_INIT;
	if (pidsel_parse(s->spec.pids[0] ? s->spec.pids : "all", &sel, &err) < 0) {
		start_failed(s, EXIT_USAGE, sbuf_str(&err));
		sbuf_release(&err);
		return false;
	}
	sbuf_release(&err);
	const struct names *tables[BS_MAX_NODES];
	int k = 0;
	for (int i = 0; i < s->nnodes; i++) {
		struct snode *n = &s->nodes[i];
		tables[k++] = n->present && has_agent(n) ? &n->agent.names : NULL;
	}
	const char *missing = pidsel_missing(&sel, tables, k);
	if (missing) {
		char why[1400];
		snprintf(why, sizeof(why), "no process is registered as %s on any "
			 "of the nodes; list names with erlang:registered() there",
			 missing);
		pidsel_release(&sel);
		start_failed(s, EXIT_REFUSED, why);
		return false;
	}
	pidsel_release(&sel);
	return true;
}

int session_check_pids(const struct session *s, const char *pids,
		       const char *what, struct sbuf *err)
{
	struct pidsel sel;
	bool ok = pidsel_parse(pids[0] ? pids : "all", &sel, err) == 0;
	for (int i = 0; ok && i < s->nnodes; i++) {
		const struct snode *n = &s->nodes[i];
		if (n->present && has_agent(n))
			ok = pidsel_check_otp(&sel, atoi(n->agent.otp), what, err) == 0;
	}
	pidsel_release(&sel);
	return ok ? 0 : -1;
}

int session_check_pid(const struct session *s, struct bs_pid pid,
		      const char *what, struct sbuf *err)
{
	if ((int)pid.node >= s->nnodes)
		return 0;
	const struct snode *n = &s->nodes[pid.node];
	int otp = atoi(n->agent.otp);
	if (!n->present || !has_agent(n) || pidsel_fits(otp, pid.num, pid.serial))
		return 0;
	pidsel_why_not(err, what, otp, pid.num, pid.serial);
	return -1;
}

/* Pids a node's release cannot have: refused before they are sent, as
 * the target would drop the connection over them. */
static bool pids_check(struct session *s)
{
	struct sbuf err = SBUF_INIT;
	bool ok = session_check_pids(s, s->spec.pids, "--pids", &err) == 0;
	if (!ok)
		start_failed(s, EXIT_USAGE, sbuf_str(&err));
	sbuf_release(&err);
	return ok;
}

static bool busy(const struct snode *n)
{
	return n->state == SN_CONNECTING || n->state == SN_ATTACHING || n->state == SN_CLOCK ||
		n->state == SN_STARTING || n->state == SN_STOPPING ||
		n->state == SN_LEAVING;
}

/* Move every node one step towards the goal. */
static void reconcile(struct session *s)
{
	long long now = clock_mono_ms();
	if (s->rec)
		return;
	for (int i = 0; i < s->nnodes; i++) {
		struct snode *n = &s->nodes[i];
		bool stale = n->state == SN_TRACING && n->gen != s->gen;
		if ((n->state == SN_TRACING || n->state == SN_READY) &&
		    (!n->present || (!s->want_tracing && !s->hold) || stale))
			node_stop(n);
	}
	for (int i = 0; i < s->nnodes; i++) {
		struct snode *n = &s->nodes[i];
		/* a node taken out, clean again: nothing more to say to it */
		if (!n->present && n->state == SN_IDLE && n->conn.fd >= 0)
			conn_close(&n->conn);
	}
	if (!s->want_tracing)
		return;
	bool waiting = false;
	for (int i = 0; i < s->nnodes; i++) {
		struct snode *n = &s->nodes[i];
		if (!n->present)
			continue;
		if (n->state == SN_IDLE && !n->error[0]) {
			node_open(n);
		} else if (n->state == SN_LOST && s->cfg->reconnect &&
			   now >= n->next_retry_ms && s->start_checked) {
			node_open(n);
		} else if (n->state == SN_IDLE && n->error[0] && s->start_pending) {
			if (n->required) {
				start_failed(s, n->error_rc, n->error);
				return;
			}
			/* found by --cluster, or added later: go on without it */
			session_notice(s, SESSION_WARN, "warning: leaving out \"%s\": %s",
			       n->arg, n->error);
			n->present = false;
			SINKS(s, node_state, n->idx);
		}
		waiting |= busy(n) || (n->state == SN_IDLE && !n->error[0]);
	}
	if (waiting && !s->start_checked)
		return;   /* the names are checked over every node at once */
	if (!s->start_checked) {
		s->start_checked = true;
		if (s->multi && !names_check(s))
			return;
		if (!pids_check(s))
			return;
	}
	for (int i = 0; i < s->nnodes; i++) {
		struct snode *n = &s->nodes[i];
		if (n->present && n->state == SN_READY)
			node_trace(n);
	}
	if (!s->start_pending)
		return;
	int tracing = 0;
	for (int i = 0; i < s->nnodes; i++) {
		struct snode *n = &s->nodes[i];
		if (!n->present)
			continue;
		if (busy(n) || n->state == SN_READY)
			return;
		tracing += n->state == SN_TRACING;
	}
	if (tracing)
		start_done(s);
	else
		start_failed(s, EXIT_LOST, "no node could be traced");
}

void session_start(struct session *s)
{
	s->hold = false;
	s->want_tracing = true;
	s->gen++;
	s->start_pending = true;
	s->start_checked = false;
	s->start_rc = EXIT_OK;
	s->start_error[0] = '\0';
	s->events = 0;
	s->limit_hit = false;
	s->over_limit = 0;
	s->trace_start_ms = clock_mono_ms();
	for (int i = 0; i < s->nnodes; i++) {
		struct snode *n = &s->nodes[i];
		n->error[0] = '\0';
		n->tripped[0] = '\0';
		if (n->state == SN_LOST && n->present) {
			/* a new start tries a lost node again */
			conn_close(&n->conn);
			set_state(n, SN_IDLE);
		}
	}
	reconcile(s);
}

void session_stop(struct session *s, const char *why)
{
	if (s->want_tracing || session_tracing(s))
		snprintf(s->stopped_why, sizeof(s->stopped_why), "%s", why);
	s->want_tracing = false;
	s->hold = false;
	s->start_pending = false;
	reconcile(s);
}

void session_drop_node(struct session *s, int idx)
{
	struct snode *n = &s->nodes[idx];
	n->present = false;
	n->error[0] = '\0';
	if (n->state == SN_LOST)
		set_state(n, SN_IDLE);
	reconcile(s);
	SINKS(s, node_state, n->idx);
}

void session_focus(struct session *s, struct bs_pid pid, bool on)
{
	if ((int)pid.node >= s->nnodes)
		return;
	struct snode *n = &s->nodes[pid.node];
	if (n->present && (n->state == SN_TRACING || n->state == SN_STARTING))
		agent_focus(&n->agent, pid.num, pid.serial, on);
}

void session_sample(struct session *s, const struct bs_pid *pids, size_t n)
{
	struct bs_pid *mine = xmalloc((n ? n : 1) * sizeof(*mine));
	for (int i = 0; i < s->nnodes; i++) {
		struct snode *nd = &s->nodes[i];
		if (!nd->present || nd->state != SN_TRACING)
			continue;
		int k = 0;
		for (size_t j = 0; j < n && k < AGENT_SAMPLE_MAX; j++)
			if ((int)pids[j].node == i)
				mine[k++] = pids[j];
		agent_sample(&nd->agent, mine, k);
	}
	free(mine);
}

void session_node_stats(struct session *s, bool on)
{
	s->node_stats = on;
	/* what was said before is not shown again as if it were news */
	for (int i = 0; !on && i < s->nnodes; i++)
		s->nodes[i].nstats.have = false;
}

void session_top(struct session *s, const char *metric, int n)
{
	snprintf(s->top_metric, sizeof(s->top_metric), "%s", metric ? metric : "");
	s->top_n = n;
}

/* Top mode as the session wants it, asked of each agent once it traces
 * (the agent scans from its samples, which a trace starts). */
static void top_reconcile(struct snode *n)
{
	struct session *s = n->s;
	const char *want = n->present && n->state == SN_TRACING ?
		s->top_metric : "";
	if (!has_agent(n) || n->agent.gone ||
	    (!strcmp(want, n->top_asked) && (!*want || s->top_n == n->top_asked_n)))
		return;
	if (agent_top(&n->agent, *want ? want : NULL, s->top_n) == 0) {
		snprintf(n->top_asked, sizeof(n->top_asked), "%s", want);
		n->top_asked_n = s->top_n;
		n->top.have = false;
	}
}

/* Each agent asked as the session wants, once: a node attached later,
 * or again, is asked when its agent is up. */
static void node_stats_reconcile(struct snode *n)
{
	struct session *s = n->s;
	bool want = s->node_stats && n->present;
	if (!has_agent(n) || n->agent.gone || want == n->nstats_on)
		return;
	if (agent_node_stats(&n->agent, want) == 0)
		n->nstats_on = want;
}

/* About once a second: every node's events and drops a second since
 * the last time.  The loop wakes about once a second when nothing else
 * wakes it: a little early counts, or every other second would be
 * skipped; the rate is scaled to the time that really passed. */
static void node_rates(struct session *s, long long now)
{
	long long ms = now - s->rates_ms;
	if (ms < 950)
		return;
	for (int i = 0; i < s->nnodes; i++) {
		struct snode *n = &s->nodes[i];
		nodestat_tick(&n->nstats, n->events,
			      n->stats_ready ? stats_dropped(&n->st) : 0, ms);
	}
	s->rates_ms = now;
}

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
	struct snode *n = session_find_node(s, name);
	if (n && n->present && n->state != SN_LOST)
		return SESSION_ATTACHED_ALREADY;
	if (!n && !(n = session_add_node(s, name, false)))
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

const struct snode *session_node(const struct session *s, int i)
{
	return &s->nodes[i];
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

/* ---- the loop ---- */

int session_pollfds(struct session *s, struct pollfd *pfd, int max)
{
	int np = 0;
	if (s->rec && !s->rec_done && s->rec->starved && max > 0) {
		pfd[np].fd = s->rec->fd;
		pfd[np].events = POLLIN;
		pfd[np].revents = 0;
		np++;
	}
	for (int i = 0; i < s->nnodes && np < max; i++) {
		struct snode *n = &s->nodes[i];
		if (n->state == SN_CONNECTING) {
			pfd[np].fd = n->connect_pipe[0];
			pfd[np].events = POLLIN;
			pfd[np].revents = 0;
			np++;
			continue;
		}
		if (n->conn.fd < 0 || n->state == SN_LOST)
			continue;
		pfd[np].fd = n->conn.fd;
		pfd[np].events = POLLIN;
		pfd[np].revents = 0;
		np++;
	}
	return np;
}

static struct snode *node_of_fd(struct session *s, int fd)
{
	for (int i = 0; i < s->nnodes; i++)
		if (s->nodes[i].conn.fd == fd && s->nodes[i].state != SN_LOST &&
		    s->nodes[i].state != SN_CONNECTING)
			return &s->nodes[i];
	return NULL;
}

void session_poll_done(struct session *s, const struct pollfd *pfd, int n,
		       int budget)
{
	for (int k = 0; k < n; k++) {
		if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		if (s->rec && pfd[k].fd == s->rec->fd) {
			s->rec->starved = false;   /* session_replay reads it */
			continue;
		}
		struct snode *nd = node_of_fd(s, pfd[k].fd);
		if (nd && agent_read(&nd->agent, budget) == PUMP_LOST)
			node_lost(nd);
	}
	session_tick(s);
}

/*
 * Several nodes: how far the merged timeline may go.  No node is expected
 * to deliver anything older: a node that sent a batch recently is trusted
 * up to its newest event (less a slack, since its workers are separate
 * streams); a quiet one up to a little before now.
 */
static int64_t watermark(const struct session *s)
{
	long long now = clock_mono_ms();
	int64_t wm = INT64_MAX, quiet = clock_wall_us() -
		SESSION_MERGE_QUIET_MS * 1000LL;
	bool moving = false;
	for (int i = 0; i < s->nnodes; i++) {
		const struct snode *n = &s->nodes[i];
		if (n->state != SN_TRACING && n->state != SN_STOPPING)
			continue;
		moving = true;
		int64_t w = now - n->last_rx_ms > SESSION_MERGE_QUIET_MS ?
			quiet : n->last_ts - SESSION_MERGE_SLACK_US;
		if (w < wm)
			wm = w;
	}
	if (!moving)
		return INT64_MAX;   /* nothing more is coming */
	return wm == INT64_MAX ? quiet : wm;
}

const char *const *session_modules(struct session *s)
{
	if (s->modules)
		return (const char *const *)s->modules;
	/* one node is asked, when it has no other question in progress */
	for (int i = 0; i < s->nnodes; i++)
		if (s->nodes[i].agent.op.kind == AOP_MODULES)
			return NULL;
	for (int i = 0; i < s->nnodes; i++) {
		struct snode *n = &s->nodes[i];
		if (n->state == SN_TRACING && !n->agent.gone &&
		    n->agent.op.kind == AOP_NONE) {
			agent_modules_begin(&n->agent);
			break;
		}
	}
	return NULL;
}

/*
 * After beamscope itself was stopped (SIGSTOP, a suspended machine) for
 * longer than --dependency-timeout: an agent that cleaned up meanwhile may
 * not have been able to say so (its last words wait on a busy link), so ask
 * whether it is still there.
 */
static void recheck_agents(struct session *s)
{
	for (int i = 0; i < s->nnodes; i++) {
		struct snode *n = &s->nodes[i];
		if (n->state == SN_TRACING && !n->agent.gone &&
		    n->agent.op.kind == AOP_NONE) {
			n->silence_check = false;
			agent_alive_begin(&n->agent);
		}
	}
}

/*
 * An agent that has not answered a ping for a while may be gone without a
 * word (killed with all its workers): ask the target.  A target that does
 * not answer either (paused, overloaded) is given no verdict.
 */
static void check_silent(struct snode *n, long long now)
{
	struct agent *ag = &n->agent;
	if (n->state != SN_TRACING || ag->gone || ag->op.kind != AOP_NONE ||
	    now - ag->heard_ms < SESSION_SILENT_MS)
		return;
	ag->heard_ms = now;   /* ask again after as long */
	n->silence_check = true;
	agent_alive_begin(ag);
}

void session_tick(struct session *s)
{
	long long now = clock_mono_ms();
	if (!s->rec)   /* a recording's clock is its own */
		CHAIN(s, tick, clock_wall_us());
	if (s->rec) {
		s->last_turn_ms = now;
		return;
	}
	if (now - s->last_turn_ms > (long long)(s->cfg->dep_timeout * 1000)) {
		/* we were stopped: ask now, and once more when the agents
		 * have had time to finish cleaning up */
		recheck_agents(s);
		s->recheck_at_ms = now + SESSION_RECHECK_MS;
	} else if (s->recheck_at_ms && now >= s->recheck_at_ms) {
		recheck_agents(s);
		s->recheck_at_ms = 0;
	}
	s->last_turn_ms = now;
	for (int i = 0; i < s->nnodes; i++) {
		struct snode *n = &s->nodes[i];
		if (n->state != SN_LOST && n->state != SN_IDLE &&
		    n->state != SN_CONNECTING && n->conn.fd < 0 &&
		    n->state != SN_RECORDED) {
			node_lost(n);
			continue;
		}
		node_step(n);
		if (n->nask && has_agent(n) && !n->agent.gone &&
		    (now >= n->next_ask_ms || n->nask >= AGENT_DESCRIBE_MAX)) {
			ask_labels(n);
			n->next_ask_ms = now + SESSION_ASK_MS;
		}
		if (n->nlater && has_agent(n) && !n->agent.gone)
			ask_labels_again(n, now);
		if (n->agent.structs.nask && has_agent(n) && !n->agent.gone)
			ask_structs(n);
		if (has_agent(n) && n->agent.gone)
			node_agent_left(n);
		else
			check_silent(n, now);
		node_stats_reconcile(n);
		top_reconcile(n);
	}
	node_rates(s, now);
	if (now >= s->next_ping_ms) {
		for (int i = 0; i < s->nnodes; i++) {
			struct snode *n = &s->nodes[i];
			if (has_agent(n) && agent_ping(&n->agent) < 0)
				node_lost(n);
		}
		s->next_ping_ms = now + SESSION_PING_MS;
	}
	reconcile(s);
	if (s->multi)
		merge_flush(&s->merge, watermark(s), from_merge, s);
}

int session_wait_ms(const struct session *s, int wanted)
{
	long long now = clock_mono_ms();
	long long w = wanted;
	/* a recording has no node to ping nor timeline to merge: only more
	 * of the file (its pipe is polled while it has nothing) */
	if (s->rec)
		return s->rec_done || s->rec->starved ? (wanted < 0 ? 0 : wanted) : 0;
	if (s->next_ping_ms - now < w)
		w = s->next_ping_ms - now;
	if (s->multi && w > 50)
		w = 50;   /* the merged timeline moves on */
	for (int i = 0; i < s->nnodes; i++)
		if (busy(&s->nodes[i]) && w > 20)
			w = 20;   /* deadlines and pauses of requests */
	return w < 0 ? 0 : (int)w;
}

/* ---- what the front ends ask ---- */

bool session_settled(const struct session *s)
{
	if (s->rec)
		return s->rec_done;
	if (s->start_pending)
		return false;
	for (int i = 0; i < s->nnodes; i++)
		if (busy(&s->nodes[i]))
			return false;
	return true;
}

bool session_tracing(const struct session *s)
{
	for (int i = 0; i < s->nnodes; i++)
		if (s->nodes[i].present && s->nodes[i].state == SN_TRACING)
			return true;
	return false;
}

bool session_any_lost(const struct session *s)
{
	for (int i = 0; i < s->nnodes; i++)
		if (s->nodes[i].present && s->nodes[i].state == SN_LOST)
			return true;
	return false;
}

bool session_all_lost(const struct session *s)
{
	for (int i = 0; i < s->nnodes; i++)
		if (s->nodes[i].present && s->nodes[i].state != SN_LOST)
			return false;
	return true;
}

void session_pending_text(const struct session *s, struct sbuf *out)
{
	int n_said = 0;
	for (int i = 0; i < s->nnodes; i++) {
		const struct snode *n = &s->nodes[i];
		if (!busy(n))
			continue;
		const char *what = agent_op_text(&n->agent);
		if (!*what)
			what = n->state == SN_STOPPING ? "stopping" :
				session_state_name(n);
		sbuf_addf(out, "%s%s: %s", n_said++ ? "; " : "",
			  session_node_name(s, i), what);
	}
}

const char *session_tripped(const struct session *s)
{
	for (int i = 0; i < s->nnodes; i++)
		if (s->nodes[i].present && s->nodes[i].tripped[0] &&
		    s->nodes[i].state == SN_TRACING)
			return s->nodes[i].tripped;
	if (s->limit_hit)
		return "max_events";
	if (session_tracing(s) && s->spec.duration > 0 &&
	    clock_mono_ms() - s->trace_start_ms >= (long long)(s->spec.duration * 1000))
		return "duration";
	return NULL;
}

unsigned long session_delivered(const struct session *s)
{
	unsigned long d = 0;
	for (int i = 0; i < s->nnodes; i++)
		if (s->nodes[i].stats_ready)
			d += stats_delivered(&s->nodes[i].st);
	return d;
}

unsigned long session_dropped(const struct session *s)
{
	unsigned long d = 0;
	for (int i = 0; i < s->nnodes; i++)
		if (s->nodes[i].stats_ready)
			d += stats_dropped(&s->nodes[i].st);
	return d;
}

/* ---- start-up and the end ---- */

int session_run(struct session *s, struct session_loop *l)
{
	int signals = sig_count();
	for (;;) {
		struct pollfd pfd[1 + SESSION_LOOP_FDS + BS_MAX_NODES];
		pfd[0] = (struct pollfd){ .fd = sig_fd(), .events = POLLIN };
		for (int i = 0; i < l->nfds; i++) {
			pfd[1 + i] = l->fds[i];
			pfd[1 + i].revents = 0;
		}
		int own = 1 + l->nfds;
		int np = own + session_pollfds(s, pfd + own, BS_MAX_NODES);
		long long w = l->wait_ms ? l->wait_ms(l->arg) : 1000;
		w = w < 0 ? 0 : w > 1000 ? 1000 : w;
		int r = poll(pfd, (nfds_t)np, session_wait_ms(s, (int)w));
		if (r < 0 && errno != EINTR)
			return SESSION_POLL_FAILED;
		int sig = 0;
		if ((r > 0 && (pfd[0].revents & POLLIN)) || sig_count() != signals) {
			sig = sig_take();
			signals = sig_count();
		}
		/* interrupted: a signal may have left input behind (curses
		 * turns SIGWINCH into a key), so the front end looks */
		for (int i = 0; i < l->nfds; i++)
			l->fds[i].revents = r > 0 ? pfd[1 + i].revents :
				r < 0 ? POLLIN : 0;
		session_poll_done(s, pfd + own, r > 0 ? np - own : 0, l->budget);
		if (s->rec && !s->rec_done)
			session_replay(s, SESSION_REPLAY_SLICE);
		int rc = l->step(l->arg, sig, l->fds);
		if (rc != SESSION_GO_ON)
			return rc;
	}
}

/* until settled, a signal, or the deadline (0: none) */
struct settle {
	struct session *s;
	long long deadline;
};

static long long settle_wait(void *arg)
{
	struct settle *st = arg;
	return st->deadline ? st->deadline - clock_mono_ms() : 1000;
}

static int settle_step(void *arg, int sig, const struct pollfd *fds)
{
	struct settle *st = arg;
	(void)fds;
	if (sig || (st->deadline && clock_mono_ms() >= st->deadline))
		return 0;
	return session_settled(st->s) ? 1 : SESSION_GO_ON;
}

/* Run the loop until settled (true), a signal, or the deadline (0:
 * none). */
static bool run_until_settled(struct session *s, long long deadline)
{
	if (session_settled(s))
		return true;
	struct settle st = { s, deadline };
	struct session_loop l = {
		.budget = SESSION_READ_BATCH, .wait_ms = settle_wait,
		.step = settle_step, .arg = &st,
	};
	return session_run(s, &l) == 1;
}

int session_start_wait(struct session *s, struct sbuf *err)
{
	s->waiting = true;
	session_start(s);
	bool done = run_until_settled(s, 0);
	s->waiting = false;
	if (!done) {
		sbuf_addstr(err, "interrupted while attaching");
		return EXIT_OK;
	}
	if (s->start_rc != EXIT_OK)
		sbuf_addstr(err, s->start_error);
	return s->start_rc;
}

int session_attach_wait(struct session *s, struct sbuf *err)
{
	/* the agents come up, but trace nothing yet: --cluster asks them
	 * for their peers first */
	s->hold = true;
	for (int i = 0; i < s->nnodes; i++) {
		struct snode *n = &s->nodes[i];
		if (n->present && n->state == SN_IDLE)
			node_open(n);
	}
	if (!run_until_settled(s, 0)) {
		sbuf_addstr(err, "interrupted while attaching");
		return EXIT_OK;
	}
	for (int i = 0; i < s->nnodes; i++) {
		struct snode *n = &s->nodes[i];
		if (!n->present || !n->error[0])
			continue;
		if (n->required) {
			sbuf_addstr(err, n->error);
			return n->error_rc;
		}
		session_notice(s, SESSION_WARN, "warning: leaving out \"%s\": %s",
		       n->arg, n->error);
		n->present = false;
	}
	return EXIT_OK;
}

void session_discover(struct session *s)
{
	int known = s->nnodes;
	for (int i = 0; i < known; i++) {
		char **names = NULL;
		struct snode *n = &s->nodes[i];
		if (!n->present || !has_agent(n) ||
		    agent_visible_nodes(&n->agent, &names) < 0)
			continue;
		for (char **p = names; *p; p++)
			if (!session_find_node(s, *p))
				session_add_node(s, *p, false);
		node_names_free(names);
	}
}

void session_drain(struct session *s)
{
	if (s->rec)   /* nothing attached: nothing to stop or wait for */
		return;
	s->closing = true;
	session_stop(s, "quit");
	/* each stopping node gives up by itself (node_step) */
	long long deadline = clock_mono_ms() + SESSION_STOP_MAX_MS + 100;
	run_until_settled(s, deadline);
	/* a second signal or the deadline: what is still stopping is left
	 * to clean up by itself once we are gone */
	for (int i = 0; i < s->nnodes; i++)
		if (s->nodes[i].state != SN_CONNECTING)   /* the thread's */
			conn_close(&s->nodes[i].conn);
	merge_flush(&s->merge, INT64_MAX, from_merge, s);
}
