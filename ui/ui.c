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

void app_push(struct app *a, enum view_id v)
{
	if (a->depth < (int)(sizeof(a->stack) / sizeof(a->stack[0])))
		a->stack[a->depth++] = v;
	a->dirty = true;
}

/* Leaving the process log takes its process out of focus. */
static void leaving(struct app *a, enum view_id v)
{
	if (v == VIEW_PROC && a->attached)
		agent_focus(&a->agent, a->focus_text, false);
}

int app_pop(struct app *a)
{
	if (a->depth > 1)
		leaving(a, a->stack[--a->depth]);
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
	if (a->attached)
		agent_focus(&a->agent, text, true);
	a->focus = pid;
	snprintf(a->focus_text, sizeof(a->focus_text), "%s", text);
	a->back = 0;
	if (app_view(a) != VIEW_PROC)
		app_push(a, VIEW_PROC);
	return ACT_REDRAW;
}

/* ---- the stream ---- */

static void on_event(void *arg, const struct event *ev)
{
	struct app *a = arg;
	if (!(event_types[ev->type].kind & a->kinds)) {
		a->stats.filtered++;
		/* registrations still name processes */
		if (ev->type != EV_REGISTER && ev->type != EV_UNREGISTER)
			return;
		if (ev->type == EV_REGISTER)
			store_set_info(&a->store, ev->pid, ev->pid_text, ev->name,
				       NULL, store_proc(&a->store, ev->pid) ?
				       store_proc(&a->store, ev->pid)->mqlen : -1);
		return;
	}
	if (a->max_events && a->trace_events >= a->max_events) {
		a->stats.over_limit++;
		return;
	}
	struct event e = *ev;
	callstacks_event(&a->callstacks, &e);
	if (EVENT_IS_GC_START(e.type))
		return;   /* shown with its end */
	store_add_event(&a->store, &e);
	a->stats.counts[ev->type]++;
	a->trace_events++;
	if (!a->paused)
		a->dirty = true;
}

static void on_batch(void *arg, const char *buf, const struct msg *m)
{
	struct app *a = arg;
	if (!a->dec_ready)
		return;
	int idx = m->body;
	long n = decode_events(&a->dec, buf, &idx, (int)m->worker, on_event, a);
	stats_batch(&a->stats, m->worker, m->seq, m->dropped, n < 0 ? 0 : n);
}

static void on_eos(void *arg, const struct msg *m)
{
	struct app *a = arg;
	if (a->dec_ready)
		stats_eos(&a->stats, m->worker, m->seq, m->dropped);
}

static void count_one(void *arg, struct bs_pid pid, const char *pid_text,
		      unsigned long sends, unsigned long receives)
{
	struct app *a = arg;
	store_add_counts(&a->store, pid, pid_text, sends, receives, 0);
	a->counted += sends + receives;
}

static void on_counts(void *arg, const char *buf, const struct msg *m)
{
	struct app *a = arg;
	if (!a->dec_ready)
		return;
	int idx = m->body;
	a->count_overflow = m->dropped;
	decode_counts(&a->dec, buf, &idx, count_one, a);
	if (!a->paused)
		a->dirty = true;
}

static void info_one(void *arg, struct bs_pid pid, const char *pid_text,
		     const char *name, const char *current, long mqlen)
{
	struct app *a = arg;
	store_set_info(&a->store, pid, pid_text, name, current, mqlen);
}

static void on_info(void *arg, const char *buf, const struct msg *m)
{
	struct app *a = arg;
	if (!a->dec_ready)
		return;
	int idx = m->body;
	decode_info(&a->dec, buf, &idx, info_one, a);
}

static void on_limit(void *arg, const struct msg *m)
{
	struct app *a = arg;
	a->shed = m->dropped;
	if (strcmp(m->limit, "none") && !a->limit_tripped[0])
		snprintf(a->limit_tripped, sizeof(a->limit_tripped), "%s", m->limit);
	a->dirty = true;
}

/* ---- tracing control ---- */

int app_stop_tracing(struct app *a, const char *why)
{
	if (!a->attached)
		return ACT_NONE;
	a->attached = false;
	snprintf(a->stopped_why, sizeof(a->stopped_why), "%s", why);
	if (a->lost || agent_stop_send(&a->agent) < 0)
		return ACT_REDRAW;
	long long deadline = now_ms() + STOP_TMO_MS;
	while (!(agent_reply_arrived(&a->agent) && stats_all_eos(&a->stats))) {
		long long left = deadline - now_ms();
		if (left <= 0)
			break;
		enum pump_result pr = agent_pump(&a->agent, (int)left);
		if (pr == PUMP_LOST) {
			a->lost = true;
			break;
		}
		if (pr == PUMP_SIGNAL)
			break;
	}
	/* a new session may follow at once: let the old one finish leaving */
	if (!a->lost && agent_reply_arrived(&a->agent))
		agent_wait_gone(&a->agent, STOP_TMO_MS);
	return ACT_REDRAW;
}

static void release_session(struct app *a)
{
	if (a->dec_ready) {
		decoder_release(&a->dec);
		stats_release(&a->stats);
		a->dec_ready = false;
	}
}

/* The agent is up: set the flags, in the count tier, and refocus. */
static int start_trace(struct app *a, const struct pidsel *sel, struct sbuf *err)
{
	struct trace_result tr = { 0 };
	snprintf(a->node, sizeof(a->node), "%s", a->agent.node);
	stats_init(&a->stats, a->agent.workers);
	decoder_init(&a->dec, a->node, a->payload, &a->agent.names);
	a->dec_ready = true;
	struct trace_spec spec = {
		.kinds = a->kinds, .sel = sel, .payload_bytes = a->payload,
		.count_tier = true, .interval_ms = 250,
		.max_events = a->max_events,
		.duration_ms = (unsigned long)(a->duration * 1000),
		.rate = a->cfg->rate, .shed = a->cfg->shed,
		.calls = (const char *const *)a->calls, .ncalls = a->ncalls,
		.follow = a->follow,
	};
	int rc = agent_trace(&a->agent, &spec, &tr, err);
	if (rc != EXIT_OK) {
		trace_result_release(&tr);
		return rc;
	}
	a->attached = true;
	a->stopped_why[0] = '\0';
	a->limit_tripped[0] = '\0';
	a->shed = 0;
	a->trace_start_ms = now_ms();
	a->trace_events = 0;
	if (app_view(a) == VIEW_PROC || a->depth > 1)
		for (int i = 0; i < a->depth; i++)
			if (a->stack[i] == VIEW_PROC)
				agent_focus(&a->agent, a->focus_text, true);
	app_msg(a, false, "tracing %lu processes on %s%s; ? for help", tr.traced,
		a->node, tr.nskipped ? " (some skipped: traced by another tracer)" : "");
	trace_result_release(&tr);
	return EXIT_OK;
}

/* Attach (again, if need be) and trace with the current settings. */
int app_retrace(struct app *a)
{
	struct sbuf err = SBUF_INIT;
	struct pidsel sel;
	int rc;

	if (pidsel_parse(a->pids_arg, &sel, &err) < 0)
		goto fail;
	release_session(a);
	agent_release(&a->agent);
	struct agent_stream stream = { on_batch, on_eos, on_counts, on_info,
				       on_limit, a };
	if (a->lost || a->conn.fd < 0) {
		conn_release(&a->conn);
		conn_init(&a->conn);
		agent_init(&a->agent, &a->conn, &stream);
		rc = attach_open(a->cfg, &a->conn, &a->agent, &err);
	} else {
		agent_init(&a->agent, &a->conn, &stream);
		struct agent_opts ao = {
			.workers = a->cfg->workers,
			.dep_timeout_ms = (unsigned)(a->cfg->dep_timeout * 1000),
			.high_water = a->cfg->high_water,
			.batch_max = 500, .batch_ms = 5,
		};
		rc = agent_attach(&a->agent, &ao, &err);
	}
	if (rc != EXIT_OK) {
		if (rc == EXIT_LOST || rc == EXIT_CONNECT)
			a->lost = true;
		pidsel_release(&sel);
		goto fail;
	}
	a->lost = false;
	rc = start_trace(a, &sel, &err);
	pidsel_release(&sel);
	if (rc != EXIT_OK) {
		/* the agent is up but refused the trace: send it away, so
		 * that the next attempt finds the node free */
		a->attached = true;
		app_stop_tracing(a, "refused");
		goto fail;
	}
	sbuf_release(&err);
	return ACT_REDRAW;
fail:
	app_msg(a, true, "%s", err.len ? err.buf : "cannot trace");
	sbuf_release(&err);
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
	switch (app_view(a)) {
	case VIEW_PROCS: procs_draw(a, 0, h); break;
	case VIEW_PROC: proc_draw(a, 0, h); break;
	case VIEW_TREE: tree_draw(a, 0, h); break;
	case VIEW_HELP: help_draw(a, 0, h); break;
	case VIEW_CALLS: calls_draw(a, 0, h); break;
	}
	status_draw(a, LINES - 2);
	if (a->prompt_active) {
		prompt_draw(a, LINES - 1);
	} else {
		const char *hint = "q quit  ? help  / filter  : command  Enter open  t tree  c calls  p pause";
		draw_text(LINES - 1, 0, COLS, a->message[0] ? a->message : hint,
			  a->message_is_error ? draw_attr(a, ROLE_ERROR) :
			  draw_attr(a, ROLE_DIM));
	}
	refresh();
	a->dirty = false;
}

/* ---- keys ---- */

static int on_key(struct app *a, int ch)
{
	if (a->prompt_active)
		return prompt_key(a, ch);
	if (a->message[0] && ch != KEY_RESIZE) {
		a->message[0] = '\0';
		a->message_is_error = false;
	}
	switch (ch) {
	case 'q':
		if (a->depth > 1)
			return app_pop(a);
		return ACT_QUIT;
	case 'Q': case KEY_F(10):
		return ACT_QUIT;
	case '?': case KEY_F(1): case 'h':
		if (app_view(a) == VIEW_HELP)
			return app_pop(a);
		if (ch == 'h' && app_view(a) == VIEW_PROC)
			return proc_key(a, ch);
		app_push(a, VIEW_HELP);
		return ACT_REDRAW;
	case '/': case KEY_F(3):
		app_home(a);
		prompt_open(a, '/');
		return ACT_REDRAW;
	case ':':
		prompt_open(a, ':');
		return ACT_REDRAW;
	case 't': case KEY_F(5):
		if (app_view(a) == VIEW_TREE)
			return app_pop(a);
		app_push(a, VIEW_TREE);
		return ACT_REDRAW;
	case 'c': case KEY_F(7):
		if (app_view(a) == VIEW_CALLS)
			return app_pop(a);
		app_push(a, VIEW_CALLS);
		return ACT_REDRAW;
	case 'p':
		a->paused = !a->paused;
		app_msg(a, false, a->paused ? "display paused (tracing goes on); p resumes" :
			"display resumed");
		return ACT_REDRAW;
	case 27:
		return app_pop(a);
	case 12:   /* Ctrl-L */
		clearok(curscr, TRUE);
		return ACT_REDRAW;
	case KEY_RESIZE:
		return ACT_REDRAW;
	}
	switch (app_view(a)) {
	case VIEW_PROCS: return procs_key(a, ch);
	case VIEW_PROC: return proc_key(a, ch);
	case VIEW_TREE: return tree_key(a, ch);
	case VIEW_HELP: return help_key(a, ch);
	case VIEW_CALLS: return calls_key(a, ch);
	}
	return ACT_NONE;
}

/* ---- the loop ---- */

static void check_limits(struct app *a, long long now)
{
	char why[96];
	if (!a->attached)
		return;
	if (a->limit_tripped[0]) {
		snprintf(why, sizeof(why), "%s limit reached on the target",
			 a->limit_tripped);
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

		struct pollfd pfd[3] = {
			{ .fd = STDIN_FILENO, .events = POLLIN },
			{ .fd = sig_fd(), .events = POLLIN },
			{ .fd = a->conn.fd, .events = POLLIN },
		};
		int r = poll(pfd, a->conn.fd >= 0 ? 3 : 2, (int)wait);
		if (r < 0 && errno != EINTR)
			return EXIT_FAIL;

		if (r > 0 && (pfd[1].revents & POLLIN)) {
			int s = sig_take();
			if (s == SIGINT || s == SIGTERM || s == SIGHUP)
				return s == SIGHUP ? EXIT_OK : EXIT_OK;
		}
		if (r > 0 && a->conn.fd >= 0 && (pfd[2].revents & (POLLIN | POLLHUP | POLLERR))) {
			if (agent_read(&a->agent, READ_SLICE) == PUMP_LOST) {
				a->lost = true;
				if (a->attached) {
					a->attached = false;
					snprintf(a->stopped_why, sizeof(a->stopped_why),
						 "target lost");
				}
				app_msg(a, true, "lost the connection to %s; what was "
					"captured stays; :reconnect tries again", a->node);
			}
		}
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
			/* what the target traced: shipped events and counted ones */
			unsigned long d = a->counted +
				(a->dec_ready ? stats_delivered(&a->stats) : 0);
			a->rate = d >= a->rate_base ? d - a->rate_base : d;
			a->rate_base = d;
			next_tick = now + TICK_MS;
			if (!a->paused)
				a->dirty = true;
		}
		if (now >= next_ping) {
			if (a->attached && agent_ping(&a->agent) < 0)
				a->lost = true;
			next_ping = now + PING_MS;
			a->dirty = true;   /* the clock in the status line */
		}
		if (a->dirty && now - last_draw >= REDRAW_MS) {
			draw(a);
			last_draw = now;
		}
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
	conn_init(&a->conn);
	struct agent_stream stream = { on_batch, on_eos, on_counts, on_info,
				       on_limit, a };
	agent_init(&a->agent, &a->conn, &stream);

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "beamscope: the interactive view needs a terminal; "
			"use --batch to write JSON lines\n");
		rc = EXIT_USAGE;
		goto out;
	}

	/* attach before the screen is taken, so errors read like batch mode's */
	rc = attach_open(cfg, &a->conn, &a->agent, &err);
	if (rc != EXIT_OK) {
		fprintf(stderr, "beamscope: %s\n", err.buf);
		goto out;
	}
	/* the agent is up: trace (app_retrace does both steps later on) */
	{
		struct pidsel sel;
		rc = EXIT_USAGE;
		if (pidsel_parse(a->pids_arg, &sel, &err) == 0) {
			rc = start_trace(a, &sel, &err);
			pidsel_release(&sel);
		}
		if (rc != EXIT_OK) {
			fprintf(stderr, "beamscope: %s\n", err.buf);
			goto out;
		}
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
	release_session(a);
	conn_release(&a->conn);
	agent_release(&a->agent);
	store_release(&a->store);
	callstacks_release(&a->callstacks);
	for (int i = 0; i < a->ncalls; i++)
		free(a->calls[i]);
	free(a->rows);
	sbuf_release(&err);
	free(a);
	return rc;
}
