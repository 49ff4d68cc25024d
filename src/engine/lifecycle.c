/*
 * lifecycle: a node from its name to tracing, and on to lost, stopped and
 * gone: connecting, attaching the agent, the clock, starting, stopping,
 * leaving; node_step() moves a node on when its agent answers.
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
/* ---- node life ---- */

bool node_has_agent(const struct snode *n)
{
	return n->state == SN_READY || n->state == SN_STARTING ||
		n->state == SN_TRACING || n->state == SN_CLOCK;
}

void node_lost(struct snode *n)
{
	struct session *s = n->s;
	bool was = n->state == SN_LOST;
	agent_op_end(&n->agent);
	conn_close(&n->conn);
	n->ever_lost = true;
	n->next_retry_ms = clock_mono_ms() + SESSION_RETRY_MS;
	node_set_state(n, SN_LOST);
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
void node_agent_left(struct snode *n)
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
		node_set_state(n, SN_LOST);
		return;
	}
	conn_close(&n->conn);
	node_set_state(n, SN_IDLE);
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
	node_set_state(n, SN_CONNECTING);
}

/* The connector is done (or, when wait, wait until it is): its result. */
bool node_connect_done(struct snode *n, bool wait)
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
void node_open(struct snode *n)
{
	n->error[0] = '\0';
	agent_release(&n->agent);
	node_agent_fresh(n);   /* the old agent's names and requests are gone */
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
	node_set_state(n, SN_ATTACHING);
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
void node_trace(struct snode *n)
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
	node_set_state(n, SN_STARTING);
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
	node_set_state(n, SN_TRACING);
}

/* Ask the agent to stop; its reply and the last batches follow. */
void node_stop(struct snode *n)
{
	n->stop_ms = clock_mono_ms();
	n->deadline_ms = n->stop_ms + SESSION_STOP_TMO_MS;
	if (agent_stop_send(&n->agent) < 0) {
		node_lost(n);
		return;
	}
	node_set_state(n, SN_STOPPING);
}


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
	n->prof_asked = 0;
	n->alarm_asked = 0;
	n->exact_asked = 0;
	n->last_rx_ms = clock_mono_ms();
	n->last_ts = clock_wall_us();
	if (s->multi) {
		agent_clock_begin(ag, SESSION_CLOCK_SAMPLES);
		node_set_state(n, SN_CLOCK);
	} else {
		node_set_state(n, SN_READY);
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
		node_set_state(n, SN_IDLE);
		return;
	}
	/* a new session may follow at once: let this one leave */
	agent_gone_begin(ag, SESSION_STOP_TMO_MS);
	node_set_state(n, SN_LEAVING);
}

void node_step(struct snode *n)
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
		node_set_state(n, SN_READY);
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
			goal_start_failed(s, rc, why);
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
		node_set_state(n, SN_IDLE);
		return;
	default:
		return;
	}
}
