/*
 * session: the engine (see session.h).
 *
 * Each node has a state and moves towards the session's goal one answer at
 * a time: goal_reconcile() looks at every node on every turn and starts what is
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

void node_set_state(struct snode *n, enum snode_state st)
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
 * (the tick sends the questions).  pid is local (node 0).  Its label as
 * known, or NULL: none yet, or none to show (""). */
const char *node_meet(struct snode *n, struct bs_pid pid)
{
	/* a registered name wins: nothing to ask (asking costs the process
	 * a turn on a scheduler, process_info being a signal it handles) */
	const char *label = names_get(&n->labels, pid);
	if (label)
		return *label ? label : NULL;
	if (names_get(&n->agent.names, pid))
		return NULL;
	if (n->nask == SESSION_ASK_MAX)
		return NULL;   /* met again later, asked then */
	if (names_count(&n->labels) >= SESSION_LABELS_MAX) {
		names_release(&n->labels);
		n->nask = 0;
	}
	if (!n->ask)
		n->ask = xmalloc(SESSION_ASK_MAX * sizeof(*n->ask));
	names_set(&n->labels, pid, "");
	n->ask[n->nask++] = pid;
	return NULL;
}

/* The questions gathered since the last tick, a request at a time. */
void node_ask_labels(struct snode *n)
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
void node_ask_structs(struct snode *n)
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
void node_ask_labels_again(struct snode *n, long long now)
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

void node_on_labels(void *arg, const char *buf, const struct msg *m)
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

void node_on_relations(void *arg, const char *buf, const struct msg *m)
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

const char *node_state_name(const struct snode *n)
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
	merge_init(&s->merge, SESSION_MERGE_MAX, node_of_text, s);
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
	pidsel_release(&s->prof_sel);
	memset(s, 0, sizeof(*s));
}

struct snode *node_add(struct session *s, const char *name, bool required)
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
	node_agent_fresh(n);
	return n;
}

struct snode *node_find(struct session *s, const char *name)
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

void goal_start_failed(struct session *s, int rc, const char *why)
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
		goal_start_failed(s, EXIT_USAGE, sbuf_str(&err));
		sbuf_release(&err);
		return false;
	}
	sbuf_release(&err);
	const struct names *tables[BS_MAX_NODES];
	int k = 0;
	for (int i = 0; i < s->nnodes; i++) {
		struct snode *n = &s->nodes[i];
		tables[k++] = n->present && node_has_agent(n) ? &n->agent.names : NULL;
	}
	const char *missing = pidsel_missing(&sel, tables, k);
	if (missing) {
		char why[1400];
		snprintf(why, sizeof(why), "no process is registered as %s on any "
			 "of the nodes; list names with erlang:registered() there",
			 missing);
		pidsel_release(&sel);
		goal_start_failed(s, EXIT_REFUSED, why);
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
		if (n->present && node_has_agent(n))
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
	if (!n->present || !node_has_agent(n) || pidsel_fits(otp, pid.num, pid.serial))
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
		goal_start_failed(s, EXIT_USAGE, sbuf_str(&err));
	sbuf_release(&err);
	return ok;
}

bool node_busy(const struct snode *n)
{
	return n->state == SN_CONNECTING || n->state == SN_ATTACHING || n->state == SN_CLOCK ||
		n->state == SN_STARTING || n->state == SN_STOPPING ||
		n->state == SN_LEAVING;
}

/* Move every node one step towards the goal. */
void goal_reconcile(struct session *s)
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
				goal_start_failed(s, n->error_rc, n->error);
				return;
			}
			/* found by --cluster, or added later: go on without it */
			session_notice(s, SESSION_WARN, "warning: leaving out \"%s\": %s",
			       n->arg, n->error);
			n->present = false;
			SINKS(s, node_state, n->idx);
		}
		waiting |= node_busy(n) || (n->state == SN_IDLE && !n->error[0]);
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
		if (node_busy(n) || n->state == SN_READY)
			return;
		tracing += n->state == SN_TRACING;
	}
	if (tracing)
		start_done(s);
	else
		goal_start_failed(s, EXIT_LOST, "no node could be traced");
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
			node_set_state(n, SN_IDLE);
		}
	}
	goal_reconcile(s);
}

void session_stop(struct session *s, const char *why)
{
	if (s->want_tracing || session_tracing(s))
		snprintf(s->stopped_why, sizeof(s->stopped_why), "%s", why);
	s->want_tracing = false;
	s->hold = false;
	s->start_pending = false;
	goal_reconcile(s);
}

void session_drop_node(struct session *s, int idx)
{
	struct snode *n = &s->nodes[idx];
	n->present = false;
	n->error[0] = '\0';
	if (n->state == SN_LOST)
		node_set_state(n, SN_IDLE);
	goal_reconcile(s);
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
void node_top_reconcile(struct snode *n)
{
	struct session *s = n->s;
	const char *want = n->present && n->state == SN_TRACING ?
		s->top_metric : "";
	if (!node_has_agent(n) || n->agent.gone ||
	    (!strcmp(want, n->top_asked) && (!*want || s->top_n == n->top_asked_n)))
		return;
	if (agent_top(&n->agent, *want ? want : NULL, s->top_n) == 0) {
		snprintf(n->top_asked, sizeof(n->top_asked), "%s", want);
		n->top_asked_n = s->top_n;
		n->top.have = false;
	}
}

void session_profile(struct session *s, int node, const struct pidsel *who,
		     int hz, long budget_us)
{
	pidsel_release(&s->prof_sel);
	s->prof_on = who != NULL;
	s->prof_top = 0;
	if (who)
		pidsel_copy(&s->prof_sel, who);
	s->prof_node = node;
	s->prof_hz = hz;
	s->prof_budget_us = budget_us;
	s->prof_gen++;
}

void session_profile_top(struct session *s, int node, int n, int hz,
			 long budget_us)
{
	session_profile(s, node, NULL, hz, budget_us);
	s->prof_on = n > 0;
	s->prof_top = n;
}

/* The profiler as the session wants it, asked of each agent once it is up
 * (a new agent knows nothing of it: prof_asked 0); a node it is not
 * wanted on is told off once it was asked. */
void node_profile_reconcile(struct snode *n)
{
	struct session *s = n->s;
	if (!node_has_agent(n) || n->agent.gone || !n->present ||
	    n->prof_asked == s->prof_gen)
		return;
	bool here = s->prof_on && (s->prof_node < 0 || s->prof_node == n->idx);
	if (!here && n->prof_asked == 0) {
		n->prof_asked = s->prof_gen;
		return;
	}
	if (agent_profile(&n->agent, here && !s->prof_top ? &s->prof_sel : NULL,
			  here ? s->prof_top : 0, s->prof_hz,
			  s->prof_budget_us) == 0)
		n->prof_asked = s->prof_gen;
}

/* Each agent asked as the session wants, once: a node attached later,
 * or again, is asked when its agent is up. */
void node_stats_reconcile(struct snode *n)
{
	struct session *s = n->s;
	bool want = s->node_stats && n->present;
	if (!node_has_agent(n) || n->agent.gone || want == n->nstats_on)
		return;
	if (agent_node_stats(&n->agent, want) == 0)
		n->nstats_on = want;
}

/* About once a second: every node's events and drops a second since
 * the last time.  The loop wakes about once a second when nothing else
 * wakes it: a little early counts, or every other second would be
 * skipped; the rate is scaled to the time that really passed. */
void node_rates(struct session *s, long long now)
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

int session_add_node(struct session *s, const char *name, bool required)
{
	struct snode *n = node_add(s, name, required);
	return n ? n->idx : -1;
}

int session_find_node(const struct session *s, const char *name)
{
	struct snode *n = node_find((struct session *)s, name);
	return n ? n->idx : -1;
}
