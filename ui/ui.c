/*
 * ui: the interactive mode's one loop.
 *
 * One thread, one poll(): the terminal, the connection, the signal pipe and
 * a timer.  Input handlers only change state and mark the screen dirty; the
 * screen is redrawn at most REDRAW_HZ times a second.  The network is read
 * in bounded slices (agent_read), so a key always gets its turn.
 *
 * The terminal is restored on every way out: normal exit, the signals we
 * handle, and fatal signals (restore_terminal is async-signal-safe).
 */
#include "ui.h"

#include <curses.h>
#include <errno.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "app.h"
#include "attach.h"
#include "exitcode.h"
#include "keys.h"
#include "prompt.h"
#include "sig.h"
#include "xalloc.h"

#define REDRAW_MS 100
/* messages (batches of up to 500 events) per turn: a key waits at most for
 * this much decoding */
#define READ_SLICE 4
#define PING_MS 1000
#define TICK_MS 1000
#define STOP_TMO_MS 2000
#define UI_DEFAULT_DURATION 600   /* without --duration: ten minutes */
#define UI_RING_DEFAULT 200000

static struct termios saved_tio;
static bool have_tio;

static void restore_terminal(void)
{
	static const char seq[] = "\033[?1049l\033[?25h\033[0m\r\n";
	if (have_tio)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	ssize_t r = write(STDOUT_FILENO, seq, sizeof(seq) - 1);
	(void)r;
}

static void on_fatal(int sig)
{
	restore_terminal();
	signal(sig, SIG_DFL);
	raise(sig);
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void app_msg(struct app *a, bool error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->message, sizeof(a->message), fmt, ap);
	va_end(ap);
	a->message_is_error = error;
	if (error)
		snprintf(a->last_error, sizeof(a->last_error), "%s", a->message);
	a->dirty = true;
}

/* ---- nodes ---- */

bool app_attached(const struct app *a)
{
	for (int i = 0; i < a->nnodes; i++)
		if (a->nodes[i].present && a->nodes[i].attached)
			return true;
	return false;
}

bool app_lost(const struct app *a)
{
	for (int i = 0; i < a->nnodes; i++)
		if (a->nodes[i].present && a->nodes[i].lost)
			return true;
	return false;
}

struct unode *app_node_of(struct app *a, struct bs_pid pid)
{
	return (int)pid.node < a->nnodes ? &a->nodes[pid.node] : &a->nodes[0];
}

const char *app_node_name(const struct app *a, int i)
{
	if (i < 0 || i >= a->nnodes)
		return "?";
	const struct unode *n = &a->nodes[i];
	return n->node[0] ? n->node : n->agent.node[0] ? n->agent.node : n->arg;
}

void app_local_pid(struct bs_pid pid, char *out, size_t outsz)
{
	snprintf(out, outsz, "<0.%u.%u>", pid.num, pid.serial);
}

void node_focus(struct app *a, struct bs_pid pid, bool on)
{
	struct unode *n = app_node_of(a, pid);
	char text[48];
	app_local_pid(pid, text, sizeof(text));
	if (n->present && n->attached)
		agent_focus(&n->agent, text, on);
}

int app_pop(struct app *a)
{
	if (a->depth > 1)
		view_leave(a, a->stack[--a->depth]);
	return ACT_REDRAW;
}

void app_home(struct app *a)
{
	while (a->depth > 1)
		app_pop(a);
}

enum view_id app_view(const struct app *a)
{
	return a->stack[a->depth - 1];
}

int app_focus(struct app *a, struct bs_pid pid, const char *text)
{
	if (app_view(a) == VIEW_PROC)
		app_pop(a);
	node_focus(a, pid, true);
	a->focus = pid;
	snprintf(a->focus_text, sizeof(a->focus_text), "%s", text);
	if (app_view(a) != VIEW_PROC)
		app_push(a, VIEW_PROC);
	return ACT_REDRAW;
}

/* ---- the stream ---- */

static void keep_event(struct app *a, struct event *e)
{
	store_add_event(&a->store, e);
	if (!a->paused)
		a->dirty = true;
}

static void on_event(void *arg, const struct event *ev)
{
	struct unode *n = arg;
	struct app *a = n->app;
	struct event e = *ev;
	e.pid.node = (uint32_t)n->idx;
	if (a->multi) {
		e.ts -= n->clock_offset_us;
		if (e.ts > n->last_ts)
			n->last_ts = e.ts;
	}
	if (!(event_types[e.type].kind & a->kinds)) {
		n->stats.filtered++;
		/* registrations still name processes */
		if (e.type != EV_REGISTER && e.type != EV_UNREGISTER)
			return;
		if (e.type == EV_REGISTER)
			store_set_info(&a->store, e.pid, e.pid_text, e.name,
				       NULL, store_proc(&a->store, e.pid) ?
				       store_proc(&a->store, e.pid)->mqlen : -1);
		return;
	}
	if (a->max_events && a->trace_events >= a->max_events) {
		n->stats.over_limit++;
		return;
	}
	callstacks_event(&a->callstacks, &e);
	if (EVENT_IS_GC_START(e.type))
		return;   /* shown with its end */
	n->stats.counts[e.type]++;
	a->trace_events++;
	if (a->multi)
		merge_add(&a->merge, n->idx, &e);   /* out in time order */
	else
		keep_event(a, &e);
}

static void from_merge(void *arg, const struct mitem *it)
{
	struct event e = it->ev;
	keep_event(arg, &e);
}

/* Several nodes: how far every node's stream has got (see batch.c). */
#define MERGE_SLACK_US 100000
#define MERGE_QUIET_MS 250
static void release_merged(struct app *a, bool all)
{
	if (!a->multi)
		return;
	long long now = now_ms();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t quiet = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 -
		MERGE_QUIET_MS * 1000LL, wm = INT64_MAX;
	for (int i = 0; i < a->nnodes && !all; i++) {
		struct unode *n = &a->nodes[i];
		if (!n->present || !n->attached || n->lost)
			continue;
		int64_t w = now - n->last_rx_ms > MERGE_QUIET_MS ? quiet :
			n->last_ts - MERGE_SLACK_US;
		if (w < wm)
			wm = w;
	}
	if (!all && wm == INT64_MAX)
		wm = quiet;
	merge_flush(&a->merge, wm, from_merge, a);
}

static void on_batch(void *arg, const char *buf, const struct msg *m)
{
	struct unode *n = arg;
	if (!n->dec_ready)
		return;
	int idx = m->body;
	long k = decode_events(&n->dec, buf, &idx, (int)m->worker, on_event, n);
	n->last_rx_ms = now_ms();
	stats_batch(&n->stats, m->worker, m->seq, m->dropped, k < 0 ? 0 : k);
}

static void on_eos(void *arg, const struct msg *m)
{
	struct unode *n = arg;
	if (n->dec_ready)
		stats_eos(&n->stats, m->worker, m->seq, m->dropped);
}

static void count_one(void *arg, struct bs_pid pid, const char *pid_text,
		      unsigned long sends, unsigned long receives)
{
	struct unode *n = arg;
	pid.node = (uint32_t)n->idx;
	store_add_counts(&n->app->store, pid, pid_text, sends, receives, 0);
	n->app->counted += sends + receives;
}

static void on_counts(void *arg, const char *buf, const struct msg *m)
{
	struct unode *n = arg;
	if (!n->dec_ready)
		return;
	int idx = m->body;
	n->count_overflow = m->dropped;
	decode_counts(&n->dec, buf, &idx, count_one, n);
	if (!n->app->paused)
		n->app->dirty = true;
}

static void info_one(void *arg, struct bs_pid pid, const char *pid_text,
		     const char *name, const char *current, long mqlen)
{
	struct unode *n = arg;
	pid.node = (uint32_t)n->idx;
	store_set_info(&n->app->store, pid, pid_text, name, current, mqlen);
}

static void on_info(void *arg, const char *buf, const struct msg *m)
{
	struct unode *n = arg;
	if (!n->dec_ready)
		return;
	int idx = m->body;
	decode_info(&n->dec, buf, &idx, info_one, n);
}

static void on_limit(void *arg, const struct msg *m)
{
	struct unode *n = arg;
	n->shed = m->dropped;
	if (strcmp(m->limit, "none") && !n->limit_tripped[0])
		snprintf(n->limit_tripped, sizeof(n->limit_tripped), "%s", m->limit);
	n->app->dirty = true;
}

static void node_agent_init(struct unode *n)
{
	struct agent_stream stream = { on_batch, on_eos, on_counts, on_info,
				       on_limit, n };
	agent_init(&n->agent, &n->conn, &stream);
	n->agent.rpc_tmo_ms = n->rpc_tmo_ms;
}

/* ---- tracing control ---- */

static void node_lost(struct app *a, struct unode *n)
{
	n->lost = true;
	n->opened = false;
	conn_close(&n->conn);
	if (n->attached) {
		n->attached = false;
		if (!app_attached(a))
			snprintf(a->stopped_why, sizeof(a->stopped_why),
				 "target lost");
	}
	app_msg(a, true, "lost the connection to %s; what was captured stays; "
		":reconnect tries again", app_node_name(a, n->idx));
}

/* The agent left by itself (it heard nothing from us for too long, or
 * failed): the target is clean; the connection stays for :on. */
static void agent_left(struct app *a, struct unode *n)
{
	struct sbuf why = SBUF_INIT;
	agent_gone_text(&n->agent, &why);
	n->attached = false;
	n->opened = false;
	if (!app_attached(a))
		snprintf(a->stopped_why, sizeof(a->stopped_why), "agent left");
	app_msg(a, true, "%s; what was captured stays; :on traces again",
		sbuf_str(&why));
	sbuf_release(&why);
}

/* After the view itself was stopped for longer than --dependency-timeout:
 * an agent that left meanwhile may not have been able to say so. */
static void check_agents(struct app *a)
{
	for (int i = 0; i < a->nnodes; i++) {
		struct unode *n = &a->nodes[i];
		if (n->present && n->attached && !n->lost)
			agent_check_gone(&n->agent,
					 (long)(a->cfg->dep_timeout * 1000));
	}
}

/* Read what has arrived on any node until all of them are done or the
 * deadline passes; done(n) says whether node n is. */
static void pump_until(struct app *a, bool (*done)(struct unode *), int ms)
{
	long long deadline = now_ms() + ms;
	for (;;) {
		struct pollfd pfd[BS_MAX_NODES];
		int who[BS_MAX_NODES], np = 0;
		for (int i = 0; i < a->nnodes; i++) {
			struct unode *n = &a->nodes[i];
			if (n->conn.fd >= 0 && !n->lost && !done(n)) {
				pfd[np].fd = n->conn.fd;
				pfd[np].events = POLLIN;
				who[np++] = i;
			}
		}
		long long left = deadline - now_ms();
		if (!np || left <= 0)
			return;
		int r = poll(pfd, (nfds_t)np, (int)left);
		if (r < 0 && errno != EINTR)
			return;
		for (int k = 0; k < np && r > 0; k++)
			if (pfd[k].revents & (POLLIN | POLLHUP | POLLERR)) {
				struct unode *n = &a->nodes[who[k]];
				if (agent_read(&n->agent, 256) == PUMP_LOST)
					n->lost = true;
			}
	}
}

static bool stop_done(struct unode *n)
{
	return agent_reply_arrived(&n->agent) && stats_all_eos(&n->stats);
}

/* Stop one node's session, if it has one; its agent cleans up. */
static void node_stop(struct app *a, struct unode *n)
{
	if (!n->attached)
		return;
	n->attached = false;
	n->opened = false;   /* the agent leaves */
	if (n->lost || agent_stop_send(&n->agent) < 0)
		return;
	pump_until(a, stop_done, STOP_TMO_MS);
	/* a new session may follow at once: let the old one finish leaving */
	if (!n->lost && agent_reply_arrived(&n->agent))
		agent_wait_gone(&n->agent, STOP_TMO_MS);
}

int app_stop_tracing(struct app *a, const char *why)
{
	if (!app_attached(a))
		return ACT_NONE;
	snprintf(a->stopped_why, sizeof(a->stopped_why), "%s", why);
	bool asked = false;
	for (int i = 0; i < a->nnodes; i++) {
		struct unode *n = &a->nodes[i];
		if (!n->present || !n->attached)
			continue;
		n->attached = false;
		n->opened = false;   /* the agent leaves */
		n->stopped_ask = !n->lost && agent_stop_send(&n->agent) == 0;
		asked |= n->stopped_ask;
	}
	if (asked)
		pump_until(a, stop_done, STOP_TMO_MS);
	for (int i = 0; i < a->nnodes; i++) {
		struct unode *n = &a->nodes[i];
		if (n->stopped_ask && !n->lost && agent_reply_arrived(&n->agent))
			agent_wait_gone(&n->agent, STOP_TMO_MS);
		n->stopped_ask = false;
	}
	release_merged(a, true);
	return ACT_REDRAW;
}

static void release_session(struct unode *n)
{
	if (n->dec_ready) {
		decoder_release(&n->dec);
		stats_release(&n->stats);
		n->dec_ready = false;
	}
}

/* The agent is up: set the flags, in the count tier, and refocus. */
static int start_trace(struct app *a, struct unode *n, const struct pidsel *sel,
		       struct sbuf *err, unsigned long *traced, bool *skipped)
{
	struct trace_result tr = { 0 };
	snprintf(n->node, sizeof(n->node), "%s", n->agent.node);
	stats_init(&n->stats, n->agent.workers);
	decoder_init(&n->dec, a->multi ? NULL : n->node, a->payload,
		     &n->agent.names);
	n->dec_ready = true;
	if (a->multi &&
	    agent_clock(&n->agent, 8, &n->clock_offset_us, &n->clock_error_us) < 0) {
		sbuf_addf(err, "node \"%s\" did not answer the clock requests",
			  n->node);
		return EXIT_CONNECT;
	}
	n->last_rx_ms = now_ms();
	n->last_ts = 0;
	/* several nodes: each traces the names registered there */
	struct pidsel here;
	pidsel_on_node(sel, &n->agent.names, &here);
	struct trace_spec spec = {
		.kinds = a->kinds, .sel = a->multi ? &here : sel,
		.payload_bytes = a->payload,
		/* processes named one by one ship every event; the rest are
		 * counted */
		.count_tier = sel->mode != SEL_LIST || a->follow,
		.interval_ms = 250,
		.max_events = a->max_events,
		.duration_ms = (unsigned long)(a->duration * 1000),
		.rate = a->cfg->rate, .shed = a->cfg->shed,
		.calls = (const char *const *)a->calls, .ncalls = a->ncalls,
		.follow = a->follow,
	};
	int rc = agent_trace(&n->agent, &spec, &tr, err);
	pidsel_release(&here);
	if (rc != EXIT_OK) {
		trace_result_release(&tr);
		return rc;
	}
	n->attached = true;
	n->opened = false;
	n->limit_tripped[0] = '\0';
	n->shed = 0;
	for (int i = 0; i < a->depth; i++)
		if (a->stack[i] == VIEW_PROC && (int)a->focus.node == n->idx)
			node_focus(a, a->focus, true);
	*traced += tr.traced;
	*skipped |= tr.nskipped > 0;
	trace_result_release(&tr);
	return EXIT_OK;
}

static int node_open_fresh(struct app *a, struct unode *n, struct sbuf *err);

/* Connect and bootstrap node n (again, if need be).  EXIT_* code. */
static int node_open(struct app *a, struct unode *n, struct sbuf *err)
{
	if (n->opened && !n->lost && n->conn.fd >= 0)
		return EXIT_OK;
	int rc = node_open_fresh(a, n, err);
	n->opened = rc == EXIT_OK;
	return rc;
}

static int node_open_fresh(struct app *a, struct unode *n, struct sbuf *err)
{
	release_session(n);
	agent_release(&n->agent);
	if (n->lost || n->conn.fd < 0) {
		conn_release(&n->conn);
		conn_init(&n->conn);
		node_agent_init(n);
		int rc = attach_open_node(a->cfg, n->arg, &n->conn, &n->agent, err);
		if (rc == EXIT_OK)
			n->lost = false;
		if (rc == EXIT_OK && n->agent.notice[0])
			app_msg(a, false, "%s", n->agent.notice);
		return rc;
	}
	node_agent_init(n);
	struct agent_opts ao = {
		.workers = a->cfg->workers,
		.dep_timeout_ms = (unsigned)(a->cfg->dep_timeout * 1000),
		.high_water = a->cfg->high_water,
		.batch_max = 500, .batch_ms = 5,
	};
	int rc = agent_attach(&n->agent, &ao, err);
	if (rc == EXIT_OK && n->agent.notice[0])
		app_msg(a, false, "%s", n->agent.notice);
	return rc;
}

/* Attach every node that is in the session and trace with the current
 * settings.  EXIT_* of the first failure; err says which node. */
static int trace_all(struct app *a, struct sbuf *err)
{
	struct pidsel sel;
	unsigned long traced = 0;
	bool skipped = false;
	int rc = EXIT_USAGE, nodes = 0;

	if (pidsel_parse(a->pids_arg, &sel, err) < 0)
		return EXIT_USAGE;
	if (a->multi && sel.mode == SEL_LIST)
		for (int i = 0; i < sel.n; i++)
			if (sel.items[i].is_pid) {
				sbuf_addstr(err, "with several nodes, name processes by "
					    "their registered name; a pid <0.N.S> means "
					    "a different process on each node");
				goto out;
			}
	for (int i = 0; i < a->nnodes; i++) {
		struct unode *n = &a->nodes[i];
		if (!n->present || n->attached)
			continue;
		if ((rc = node_open(a, n, err)) != EXIT_OK) {
			if (rc == EXIT_LOST || rc == EXIT_CONNECT)
				n->lost = true;
			goto out;
		}
	}
	if (a->multi) {
		const struct names *tables[BS_MAX_NODES];
		for (int i = 0; i < a->nnodes; i++)
			tables[i] = a->nodes[i].present && !a->nodes[i].lost ?
				&a->nodes[i].agent.names : NULL;
		const char *missing = pidsel_missing(&sel, tables, a->nnodes);
		if (missing) {
			sbuf_addf(err, "no process is registered as %s on any of the "
				  "nodes; list names with erlang:registered() there",
				  missing);
			rc = EXIT_REFUSED;
			goto out;
		}
	}
	for (int i = 0; i < a->nnodes; i++) {
		struct unode *n = &a->nodes[i];
		if (!n->present || n->attached)
			continue;
		if ((rc = start_trace(a, n, &sel, err, &traced, &skipped)) != EXIT_OK) {
			/* the agent is up but refused the trace: send it away,
			 * so that the next attempt finds the node free */
			n->attached = true;
			node_stop(a, n);
			goto out;
		}
		nodes++;
	}
	rc = EXIT_OK;
	a->stopped_why[0] = '\0';
	a->trace_start_ms = now_ms();
	a->trace_events = 0;
	if (a->multi)
		app_msg(a, false, "tracing %lu processes on %d nodes%s; ? for help",
			traced, nodes, skipped ?
			" (some skipped: traced by another tracer)" : "");
	else
		app_msg(a, false, "tracing %lu processes on %s%s; ? for help",
			traced, app_node_name(a, 0), skipped ?
			" (some skipped: traced by another tracer)" : "");
out:
	pidsel_release(&sel);
	return rc;
}

/* --reconnect: try the lost nodes again, briefly, while the others trace. */
static void reconnect_lost(struct app *a)
{
	struct pidsel sel;
	struct sbuf err = SBUF_INIT;
	if (pidsel_parse(a->pids_arg, &sel, &err) < 0)
		goto out;
	for (int i = 0; i < a->nnodes; i++) {
		struct unode *n = &a->nodes[i];
		unsigned long traced = 0;
		bool skipped = false;
		if (!n->present || !n->lost)
			continue;
		/* a node still booting does not answer: next second, then */
		n->rpc_tmo_ms = PING_MS;
		if (node_open(a, n, &err) == EXIT_OK) {
			if (start_trace(a, n, &sel, &err, &traced, &skipped) == EXIT_OK)
				app_msg(a, false, "attached to %s again",
					app_node_name(a, i));
			else
				node_stop(a, n);
		}
		n->rpc_tmo_ms = n->agent.rpc_tmo_ms = 0;
		if (!n->attached) {
			n->lost = true;
			n->opened = false;
			conn_close(&n->conn);
		}
		sbuf_reset(&err);
	}
	pidsel_release(&sel);
out:
	sbuf_release(&err);
}

/* Attach (again, if need be) and trace with the current settings. */
int app_retrace(struct app *a)
{
	struct sbuf err = SBUF_INIT;
	if (trace_all(a, &err) != EXIT_OK) {
		app_msg(a, true, "%s", err.len ? err.buf : "cannot trace");
		/* what did start is not left half-traced */
		app_stop_tracing(a, "refused");
	}
	sbuf_release(&err);
	return ACT_REDRAW;
}

static struct unode *node_add(struct app *a, const char *name)
{
	struct unode *n = &a->nodes[a->nnodes];
	memset(n, 0, sizeof(*n));
	n->app = a;
	n->idx = a->nnodes++;
	n->present = true;
	snprintf(n->arg, sizeof(n->arg), "%s", name);
	n->clock_error_us = -1;
	conn_init(&n->conn);
	node_agent_init(n);
	return n;
}

static struct unode *node_find(struct app *a, const char *name)
{
	for (int i = 0; i < a->nnodes; i++) {
		struct unode *n = &a->nodes[i];
		const char *at = strchr(n->node, '@');
		if (!strcmp(n->arg, name) || !strcmp(n->node, name) ||
		    (at && !strchr(name, '@') &&
		     strlen(name) == (size_t)(at - n->node) &&
		     !strncmp(n->node, name, strlen(name))))
			return n;
	}
	return NULL;
}

int app_attach_node(struct app *a, const char *name)
{
	if (!a->multi) {
		app_msg(a, true, "this view was opened on one node; open it on "
			"several (beamscope A B, or --cluster) to add nodes");
		return ACT_REDRAW;
	}
	struct unode *n = node_find(a, name);
	if (n && n->present && (n->attached || !n->lost)) {
		app_msg(a, true, "%s is already in this session", name);
		return ACT_REDRAW;
	}
	if (!n) {
		if (a->nnodes == BS_MAX_NODES) {
			app_msg(a, true, "at most %d nodes at once", BS_MAX_NODES);
			return ACT_REDRAW;
		}
		n = node_add(a, name);
	}
	n->present = true;
	n->lost = true;   /* connect afresh */
	struct sbuf err = SBUF_INIT;
	int rc = trace_all(a, &err);
	if (rc != EXIT_OK) {
		app_msg(a, true, "%s", err.len ? err.buf : "cannot trace");
		node_stop(a, n);
		conn_close(&n->conn);
		n->present = false;
	} else {
		app_msg(a, false, "attached to %s (clock %+lld us +-%lld)",
			app_node_name(a, n->idx), n->clock_offset_us,
			n->clock_error_us);
	}
	sbuf_release(&err);
	return ACT_REDRAW;
}

int app_detach_node(struct app *a, const char *name)
{
	struct unode *n = node_find(a, name);
	if (!n || !n->present) {
		app_msg(a, true, "%s is not in this session", name);
		return ACT_REDRAW;
	}
	int present = 0;
	for (int i = 0; i < a->nnodes; i++)
		present += a->nodes[i].present;
	if (present == 1) {
		app_msg(a, true, "%s is the last node; q quits", name);
		return ACT_REDRAW;
	}
	if (a->node_filter == n->idx)
		a->node_filter = -1;
	node_stop(a, n);
	conn_close(&n->conn);
	n->present = false;
	release_merged(a, false);
	app_msg(a, false, "detached from %s; it is clean; what was captured "
		"stays", app_node_name(a, n->idx));
	return ACT_REDRAW;
}

/* ---- drawing ---- */

static void draw(struct app *a)
{
	int h = LINES - 2;   /* the view; then status, then message/prompt */
	if (h < 1 || COLS < 20) {
		erase();
		mvaddstr(0, 0, "window too small");
		refresh();
		return;
	}
	view_draw(a, 0, h);
	status_draw(a, LINES - 2);
	if (a->prompt_active) {
		prompt_draw(a, LINES - 1);
	} else {
		char hint[256];
		keys_hint(hint, sizeof(hint));
		draw_text(LINES - 1, 0, COLS, a->message[0] ? a->message : hint,
			  a->message_is_error ? draw_attr(a, ROLE_ERROR) :
			  draw_attr(a, ROLE_DIM));
	}
	refresh();
	a->dirty = false;
}

/* ---- keys ---- */

/* A key: the prompt's while it is open, else what the key table maps it
 * to, for the view on top. */
static int on_key(struct app *a, int ch)
{
	if (a->prompt_active)
		return prompt_key(a, ch);
	if (ch == KEY_RESIZE)
		return ACT_REDRAW;
	if (a->message[0]) {
		a->message[0] = '\0';
		a->message_is_error = false;
	}
	int act = view_request(a, keys_request(ch));
	if (act & ACT_CLEAR)
		clearok(curscr, TRUE);
	return act;
}

/* ---- the loop ---- */

static void check_limits(struct app *a, long long now)
{
	char why[96];
	const char *tripped = NULL;
	if (!app_attached(a))
		return;
	for (int i = 0; i < a->nnodes; i++)
		if (a->nodes[i].present && a->nodes[i].limit_tripped[0])
			tripped = a->nodes[i].limit_tripped;
	if (tripped) {
		snprintf(why, sizeof(why), "%s limit reached on the target",
			 tripped);
	} else if (a->duration > 0 && now - a->trace_start_ms >= (long long)(a->duration * 1000)) {
		snprintf(why, sizeof(why), "duration limit (%gs) reached", a->duration);
	} else if (a->max_events && a->trace_events >= a->max_events) {
		snprintf(why, sizeof(why), "event limit (%lu) reached", a->max_events);
	} else {
		return;
	}
	app_stop_tracing(a, why);
	app_msg(a, false, "tracing stopped: %s; the target is clean; :on traces "
		"again, :limit changes limits", why);
}

static int loop(struct app *a)
{
	long long next_ping = now_ms() + PING_MS, next_tick = now_ms() + TICK_MS;
	long long last_draw = 0;
	long long last_turn = now_ms(), recheck_at = 0;

	for (;;) {
		long long now = now_ms();
		long long wait = next_tick - now;
		if (next_ping - now < wait)
			wait = next_ping - now;
		if (a->dirty) {
			long long d = last_draw + REDRAW_MS - now;
			if (d < wait)
				wait = d;
		}
		if (wait < 0)
			wait = 0;

		struct pollfd pfd[2 + BS_MAX_NODES] = {
			{ .fd = STDIN_FILENO, .events = POLLIN },
			{ .fd = sig_fd(), .events = POLLIN },
		};
		int who[2 + BS_MAX_NODES], np = 2;
		for (int i = 0; i < a->nnodes; i++)
			if (a->nodes[i].present && a->nodes[i].conn.fd >= 0) {
				pfd[np].fd = a->nodes[i].conn.fd;
				pfd[np].events = POLLIN;
				who[np++] = i;
			}
		if (a->multi && wait > 50)
			wait = 50;   /* the merged timeline moves on */
		int r = poll(pfd, (nfds_t)np, (int)wait);
		if (r < 0 && errno != EINTR)
			return EXIT_FAIL;

		if (r > 0 && (pfd[1].revents & POLLIN)) {
			int s = sig_take();
			if (s == SIGINT || s == SIGTERM || s == SIGHUP)
				return s == SIGHUP ? EXIT_OK : EXIT_OK;
		}
		for (int k = 2; r > 0 && k < np; k++) {
			struct unode *n = &a->nodes[who[k]];
			if ((pfd[k].revents & (POLLIN | POLLHUP | POLLERR)) &&
			    agent_read(&n->agent, READ_SLICE) == PUMP_LOST)
				node_lost(a, n);
		}
		now = now_ms();
		if (now - last_turn > (long long)(a->cfg->dep_timeout * 1000)) {
			check_agents(a);
			recheck_at = now + 3000;
		} else if (recheck_at && now >= recheck_at) {
			check_agents(a);
			recheck_at = 0;
		}
		last_turn = now;
		for (int i = 0; i < a->nnodes; i++) {
			struct unode *n = &a->nodes[i];
			if (n->present && n->attached && !n->lost && n->agent.gone)
				agent_left(a, n);
		}
		release_merged(a, false);
		/* keys: everything waiting, so typing never lags behind */
		if (r < 0 || (r > 0 && (pfd[0].revents & POLLIN))) {
			int ch;
			while ((ch = getch()) != ERR) {
				int act = on_key(a, ch);
				if (act & ACT_QUIT)
					return EXIT_OK;
				if (act & ACT_REDRAW)
					a->dirty = true;
				/* a key is shown at once, not at the next slot */
				draw(a);
				last_draw = now_ms();
			}
		}

		now = now_ms();
		check_limits(a, now);
		if (now >= next_tick) {
			store_tick(&a->store);
			/* what the targets traced: shipped events and counted ones */
			unsigned long d = a->counted;
			for (int i = 0; i < a->nnodes; i++)
				if (a->nodes[i].dec_ready)
					d += stats_delivered(&a->nodes[i].stats);
			a->rate = d >= a->rate_base ? d - a->rate_base : d;
			a->rate_base = d;
			next_tick = now + TICK_MS;
			if (!a->paused)
				a->dirty = true;
		}
		if (now >= next_ping) {
			for (int i = 0; i < a->nnodes; i++) {
				struct unode *n = &a->nodes[i];
				if (n->present && n->attached && agent_ping(&n->agent) < 0)
					node_lost(a, n);
			}
			if (a->cfg->reconnect && a->multi && !a->stopped_why[0])
				reconnect_lost(a);
			next_ping = now + PING_MS;
			a->dirty = true;   /* the clock in the status line */
		}
		if (a->dirty && now - last_draw >= REDRAW_MS) {
			draw(a);
			last_draw = now;
		}
	}
}

/* merge's lookup: the node a "<name@host.N.S>" pid lives on */
static int merge_node_of(void *arg, const char *pid_text)
{
	struct app *a = arg;
	const char *dot = strrchr(pid_text, '.');
	if (pid_text[0] != '<' || !dot)
		return -1;
	while (dot > pid_text && dot[-1] != '.')
		dot--;
	if (dot <= pid_text + 1)
		return -1;
	size_t len = (size_t)(dot - 1 - (pid_text + 1));
	for (int i = 0; i < a->nnodes; i++) {
		const char *nm = a->nodes[i].agent.node;
		if (a->nodes[i].present && strlen(nm) == len &&
		    !memcmp(nm, pid_text + 1, len))
			return i;
	}
	return -1;
}

/* --cluster: the visible nodes of the ones opened, opened too. */
static void discover(struct app *a)
{
	int known = a->nnodes;
	for (int i = 0; i < known; i++) {
		char **names = NULL;
		if (agent_visible_nodes(&a->nodes[i].agent, &names) < 0)
			continue;
		for (char **p = names; *p && a->nnodes < BS_MAX_NODES; p++) {
			if (node_find(a, *p))
				continue;
			struct unode *n = node_add(a, *p);
			struct sbuf err = SBUF_INIT;
			if (node_open(a, n, &err) != EXIT_OK) {
				fprintf(stderr, "beamscope: warning: leaving out "
					"\"%s\": %s\n", *p, err.buf);
				conn_close(&n->conn);
				n->present = false;
			}
			sbuf_release(&err);
		}
		node_names_free(names);
	}
}

int ui_run(const struct config *cfg)
{
	struct app *a = xcalloc(1, sizeof(*a));
	struct sbuf err = SBUF_INIT;
	int rc;

	a->cfg = cfg;
	a->kinds = cfg->kinds;
	a->follow = cfg->follow;
	snprintf(a->pids_arg, sizeof(a->pids_arg), "%s", cfg->pids_arg ?
		 cfg->pids_arg : "all");
	a->duration = cfg->duration_set ? cfg->duration : UI_DEFAULT_DURATION;
	a->max_events = cfg->max_events_set ? cfg->max_events : 0;
	a->payload = cfg->payload_bytes;
	a->sort_col = COL_RPS;
	a->stack[0] = VIEW_PROCS;
	a->depth = 1;
	a->start_ms = now_ms();
	store_init(&a->store, cfg->ring ? cfg->ring : UI_RING_DEFAULT);
	callstacks_init(&a->callstacks);
	for (int i = 0; i < cfg->ncalls; i++)
		a->calls[a->ncalls++] = xstrdup(cfg->calls[i]);
	a->nodes = xcalloc(BS_MAX_NODES, sizeof(*a->nodes));
	a->multi = cfg->nnodes > 1 || cfg->cluster;
	a->node_filter = -1;
	merge_init(&a->merge, 500000, merge_node_of, a);
	for (int i = 0; i < cfg->nnodes; i++)
		node_add(a, cfg->nodes[i]);

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "beamscope: the interactive view needs a terminal; "
			"use --batch to write JSON lines\n");
		rc = EXIT_USAGE;
		goto out;
	}

	/* attach before the screen is taken, so errors read like batch mode's */
	for (int i = 0; i < a->nnodes; i++)
		if ((rc = node_open(a, &a->nodes[i], &err)) != EXIT_OK) {
			fprintf(stderr, "beamscope: %s\n", err.buf);
			goto out;
		}
	if (cfg->cluster)
		discover(a);
	rc = trace_all(a, &err);
	if (rc != EXIT_OK) {
		fprintf(stderr, "beamscope: %s\n", err.buf);
		goto out;
	}

	if (tcgetattr(STDIN_FILENO, &saved_tio) == 0)
		have_tio = true;
	signal(SIGSEGV, on_fatal);
	signal(SIGBUS, on_fatal);
	signal(SIGFPE, on_fatal);
	signal(SIGABRT, on_fatal);
	setlocale(LC_ALL, "");
	if (!getenv("ESCDELAY"))
		set_escdelay(25);
	initscr();
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	curs_set(0);
	draw_init_colors(a);
	prompt_init(a);
	a->dirty = true;
	draw(a);

	rc = loop(a);

	prompt_done();
	endwin();
	restore_terminal();
	app_stop_tracing(a, "quit");
out:
	for (int i = 0; i < a->nnodes; i++) {
		release_session(&a->nodes[i]);
		conn_release(&a->nodes[i].conn);
		agent_release(&a->nodes[i].agent);
	}
	free(a->nodes);
	merge_release(&a->merge);
	store_release(&a->store);
	callstacks_release(&a->callstacks);
	for (int i = 0; i < a->ncalls; i++)
		free(a->calls[i]);
	views_release(a);
	sbuf_release(&err);
	free(a);
	return rc;
}
