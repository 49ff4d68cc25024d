/*
 * loop: the one run loop (session_run), its fds, ticks and waits; what
 * the front ends ask of the session's state; start-up and the end
 * (attach and start, waiting for them, drain).
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
		pfd[np].fd = conn_poll_fd(&n->conn);
		pfd[np].events = POLLIN;
		pfd[np].revents = 0;
		np++;
	}
	return np;
}

static struct snode *node_of_fd(struct session *s, int fd)
{
	for (int i = 0; i < s->nnodes; i++)
		if (s->nodes[i].conn.fd >= 0 && conn_poll_fd(&s->nodes[i].conn) == fd &&
		    s->nodes[i].state != SN_LOST &&
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
		if (n->nask && node_has_agent(n) && !n->agent.gone &&
		    (now >= n->next_ask_ms || n->nask >= AGENT_DESCRIBE_MAX)) {
			node_ask_labels(n);
			n->next_ask_ms = now + SESSION_ASK_MS;
		}
		if (n->nlater && node_has_agent(n) && !n->agent.gone)
			node_ask_labels_again(n, now);
		if (n->agent.structs.nask && node_has_agent(n) && !n->agent.gone)
			node_ask_structs(n);
		if (node_has_agent(n) && n->agent.gone)
			node_agent_left(n);
		else
			check_silent(n, now);
		node_stats_reconcile(n);
		node_top_reconcile(n);
		node_profile_reconcile(n);
		node_alarms_reconcile(n);
		node_exact_reconcile(n);
	}
	node_rates(s, now);
	if (now >= s->next_ping_ms) {
		for (int i = 0; i < s->nnodes; i++) {
			struct snode *n = &s->nodes[i];
			if (node_has_agent(n) && agent_ping(&n->agent) < 0)
				node_lost(n);
		}
		s->next_ping_ms = now + SESSION_PING_MS;
	}
	goal_reconcile(s);
	if (s->multi)
		merge_flush(&s->merge, watermark(s), stream_from_merge, s);
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
		if (node_busy(&s->nodes[i]) && w > 20)
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
		if (node_busy(&s->nodes[i]))
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
		if (!node_busy(n))
			continue;
		const char *what = agent_op_text(&n->agent);
		if (!*what)
			what = n->state == SN_STOPPING ? "stopping" :
				node_state_name(n);
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
		if (!n->present || !node_has_agent(n) ||
		    agent_visible_nodes(&n->agent, &names) < 0)
			continue;
		for (char **p = names; *p; p++)
			if (!node_find(s, *p))
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
	merge_flush(&s->merge, INT64_MAX, stream_from_merge, s);
}
