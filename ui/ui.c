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
#include "frontend.h"

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
#include "clock.h"
#include "esc.h"
#include "exitcode.h"
#include "keys.h"
#include "prompt.h"
#include "sig.h"
#include "spark.h"
#include "xalloc.h"

#define REDRAW_MS 100
#define TICK_MS 1000
#define UI_RING_DEFAULT 200000
#define UI_PROCS_MIN 10000        /* processes kept, whatever the ring */

static struct termios saved_tio;
static bool have_tio;
static bool screen_up;

/* Async-signal-safe: the modes as they were, the main screen, the keypad
 * out of application mode, the cursor shown, plain colours. */
static void restore_terminal(void)
{
	static const char seq[] =
		"\033[?1049l\033[?1l\033>\033[?25h\033[0m\r\n";
	if (have_tio)
		tcsetattr(STDIN_FILENO, TCSANOW, &saved_tio);
	ssize_t r = write(STDOUT_FILENO, seq, sizeof(seq) - 1);
	(void)r;
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

int app_pause(struct app *a, bool on)
{
	if (on && !a->paused)
		a->pause_seq = a->store.next_seq;
	if (on != a->paused)
		procs_freeze(a, on);
	a->paused = on;
	a->view_due = true;
	app_msg(a, false, on ? "display paused (tracing goes on); p or :resume "
		"resumes" : "display resumed");
	return ACT_REDRAW;
}

/* ---- nodes ---- */

bool app_attached(const struct app *a)
{
	return session_tracing(a->s);
}

bool app_lost(const struct app *a)
{
	return session_any_lost(a->s);
}

const char *app_node_name(const struct app *a, int i)
{
	return session_node_name(a->s, i);
}

void app_local_pid(struct bs_pid pid, char *out, size_t outsz)
{
	snprintf(out, outsz, "<0.%u.%u>", pid.num, pid.serial);
}

bool app_live(struct app *a, const char *what)
{
	if (!session_is_recording(a->s))
		return true;
	app_msg(a, true, "%s needs a live node; this is a recording (%s); "
		"run beamscope NODE to trace one", what, session_recording_path(a->s));
	return false;
}

void node_focus(struct app *a, struct bs_pid pid, bool on)
{
	session_focus(a->s, pid, on);
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

static bool focus_open(const struct app *a)
{
	for (int i = 0; i < a->depth; i++)
		if (a->stack[i] == VIEW_PROC)
			return true;
	return false;
}

/* Have the agents sample what is on screen: when the set changes (rows
 * scrolled, sorted, filtered), and every few seconds anyway, since an
 * agent started again knows nothing of it.  The set is hashed without
 * its order, which moves as rows are sorted. */
#define SAMPLE_AGAIN_MS 5000
static void sample_shown(struct app *a, const struct bs_pid *pids, size_t n)
{
	struct procs_table *t = &a->table;
	uint64_t sum = n;
	for (size_t i = 0; i < n; i++) {
		uint64_t h = ((uint64_t)pids[i].node << 60) ^
			((uint64_t)pids[i].serial << 32) ^ pids[i].num;
		h *= 0x9e3779b97f4a7c15ULL;
		sum += h ^ (h >> 29);
	}
	long long now = clock_mono_ms();
	if (sum == t->sampled_sum && now - t->sampled_ms < SAMPLE_AGAIN_MS)
		return;
	t->sampled_sum = sum;
	t->sampled_ms = now;
	session_sample(a->s, pids, n);
}

/* Tell the store what it must not forget: the rows on screen and the
 * process in focus. */
static void keep_shown(struct app *a)
{
	struct procs_table *t = &a->table;
	size_t n = t->nshown;
	if (t->shown_cap < n + 1 + (size_t)a->ntags) {
		t->shown_cap = n + 1 + (size_t)a->ntags;
		t->shown = xrealloc(t->shown, t->shown_cap * sizeof(*t->shown));
	}
	if (focus_open(a))   /* after the rows, outside nshown */
		t->shown[n++] = a->focus;
	for (int i = 0; i < a->ntags; i++)   /* the chart's lifelines */
		t->shown[n++] = a->tags[i];
	store_keep(&a->store, t->shown, n);
	sample_shown(a, t->shown, n);
}

int app_focus(struct app *a, struct bs_pid pid, const char *text)
{
	if (app_view(a) == VIEW_PROC)
		app_pop(a);
	node_focus(a, pid, true);
	/* tagged, it is in focus since it was tagged */
	int tag = app_tagged(a, pid);
	a->focus_seq = tag >= 0 ? a->tag_seq[tag] : a->store.next_seq;
	a->focus = pid;
	a->have_rel = false;
	snprintf(a->focus_text, sizeof(a->focus_text), "%s", text);
	if (app_view(a) != VIEW_PROC)
		app_push(a, VIEW_PROC);
	keep_shown(a);
	return ACT_REDRAW;
}

/* ---- the store sink: what the session reports ---- */

static void on_event(void *arg, int node, const struct event *ev)
{
	struct app *a = arg;
	uint64_t seq = store_add_event(&a->store, ev);
	/* decoded before a :syntax, merged after it */
	if (node >= 0 && node < session_nnodes(a->s) &&
	    ev->syn != (uint8_t)session_node(a->s, node)->dec.syn && ev->raw)
		app_rerender_late(a, node, seq);
	if (json_sink_is_open(&a->rec))
		json_sink_event(&a->rec, node, ev);
	if (!a->paused)
		a->dirty = true;
}

static void on_counts(void *arg, int node, struct bs_pid pid,
		      const char *pid_text, unsigned long sends,
		      unsigned long receives, unsigned long spawns)
{
	struct app *a = arg;
	store_add_counts(&a->store, pid, pid_text, sends, receives, spawns);
	/* a process forgotten and back again: what it is was said once */
	const struct proc *p = store_proc(&a->store, pid);
	if (p && !p->label && !p->name)
		store_set_label(&a->store, pid, session_proc_label(a->s, pid));
	if (json_sink_is_open(&a->rec))
		json_sink_counts(&a->rec, node, pid, pid_text, sends, receives,
				 spawns);
	if (!a->paused)
		a->dirty = true;
}

/* :record of a recording: its counts lines keep their times */
static void on_counts_at(void *arg, int64_t ts)
{
	struct app *a = arg;
	if (json_sink_is_open(&a->rec))
		json_sink_counts_at(&a->rec, ts);
}

static void on_info(void *arg, int node, struct bs_pid pid,
		    const char *pid_text, const char *name, const char *current,
		    long mqlen)
{
	struct app *a = arg;
	(void)node;
	/* a name alone (a registration) keeps what was sampled */
	const struct proc *p = store_proc(&a->store, pid);
	if (!current && mqlen < 0 && p)
		mqlen = p->mqlen;
	store_set_info(&a->store, pid, pid_text, name, current, mqlen);
	if (json_sink_is_open(&a->rec))
		json_sink_name(&a->rec, pid, pid_text, name);
}

static void on_sizes(void *arg, int node, struct bs_pid pid,
		     struct psize memory, long reductions, struct psize heap)
{
	struct app *a = arg;
	(void)node;
	store_set_sizes(&a->store, pid, memory.bytes, memory.at_least,
			reductions, heap.bytes, heap.at_least, clock_mono_ms());
	if (!a->paused)
		a->dirty = true;
}

static void on_label(void *arg, int node, struct bs_pid pid,
		     const char *pid_text, const char *label)
{
	struct app *a = arg;
	(void)node;
	(void)pid_text;
	store_set_label(&a->store, pid, label);
	if (!a->paused)
		a->dirty = true;
}

/* An export reopened: the process as it was, totals included. */
static void on_proc(void *arg, int node, const struct recording_proc *rp)
{
	struct app *a = arg;
	(void)node;
	store_set_info(&a->store, rp->pid, rp->pid_text, rp->name,
		       rp->current_function, rp->mqlen);
	store_set_label(&a->store, rp->pid, rp->label);
	struct proc *p = store_proc(&a->store, rp->pid);
	if (!p)
		return;
	/* the events kept counted some of it already */
	unsigned long s = rp->sends > p->sends ? rp->sends - p->sends : 0,
		r = rp->receives > p->receives ? rp->receives - p->receives : 0,
		sp = rp->spawns > p->spawns ? rp->spawns - p->spawns : 0;
	store_recorded_proc(&a->store, p, rp->initial_call, rp->has_parent,
			    rp->parent, rp->exited, rp->reason);
	/* last: p is the store's until it adds anything */
	if (s || r || sp)
		store_add_counts(&a->store, rp->pid, rp->pid_text, s, r, sp);
}

/* Kept for the log in focus only; the others (tagged processes, a log
 * just left) are not shown anywhere. */
static void on_relations(void *arg, int node, const struct relations *r)
{
	struct app *a = arg;
	(void)node;
	if (!focus_open(a) || !bs_pid_eq(r->pid, a->focus))
		return;
	a->rel = *r;
	a->have_rel = true;
	a->rel_ms = clock_mono_ms();
	if (!a->paused)
		a->dirty = true;
}

static void on_node_sample(void *arg, int node)
{
	struct app *a = arg;
	(void)node;
	if (!a->paused && a->header)
		a->dirty = true;
}

static void on_node_state(void *arg, int node)
{
	struct app *a = arg;
	const struct snode *n = session_node(a->s, node);
	a->multi = session_multi(a->s);   /* a recording finds its nodes as it loads */
	if (n->state == SN_RECORDED) {   /* never traced */
		a->dirty = true;
		return;
	}
	/* a node traced afresh (again, or attached later): the process in
	 * focus there is in focus again */
	if (n->state == SN_TRACING && !a->refocused[node]) {
		a->refocused[node] = true;
		if (focus_open(a) && (int)a->focus.node == node)
			node_focus(a, a->focus, true);
		for (int i = 0; i < a->ntags; i++)
			if ((int)a->tags[i].node == node)
				node_focus(a, a->tags[i], true);
	} else if (n->state != SN_TRACING) {
		a->refocused[node] = false;
	}
	a->dirty = true;
}

static void on_notice(void *arg, enum session_level level, const char *text)
{
	struct app *a = arg;
	if (level == SESSION_INFO)
		return;
	if (!screen_up) {
		esc_print(stderr, "beamscope: %s", text);
		return;
	}
	if (level == SESSION_REFUSED)
		/* a new call pattern or :match refused and taken back: the
		 * message stays when tracing starts again without it */
		a->refused_stays = true;
	app_msg(a, level >= SESSION_WARN, "%s", text);
}

static void on_started(void *arg, unsigned long traced, int nodes,
		       unsigned long skipped)
{
	struct app *a = arg;
	char also[96] = "";
	if (skipped)
		snprintf(also, sizeof(also), " (%lu skipped: traced by another "
			 "tracer)", skipped);
	a->started_traced = traced;
	a->started_nodes = nodes;
	a->started_skipped = skipped;
	if (!screen_up || a->refused_stays) {
		a->refused_stays = false;
		return;
	}
	if (a->attaching >= 0) {
		const struct snode *n = session_node(a->s, a->attaching);
		a->attaching = -1;
		a->detaching = -1;
		if (n->state == SN_TRACING) {
			app_msg(a, false, "attached to %s (%s%sclock %+lld us "
				"+-%lld)", app_node_name(a, n->idx),
				n->tr.tracing, n->tr.tracing[0] ? ", " : "",
				n->clock_offset_us, n->clock_error_us);
			return;
		}
	}
	const char *procs = traced == 1 ? "process" : "processes";
	const char *paired = session_spec(a->s)->gen_calls && !session_is_recording(a->s) ?
		", gen calls paired" : "";
	if (a->multi)
		app_msg(a, false, "tracing %lu %s on %d nodes%s%s; ? for help",
			traced, procs, nodes, paired, also);
	else if (session_node(a->s, 0)->tr.tracing[0])
		app_msg(a, false, "tracing %lu %s on %s (%s)%s%s; ? for help",
			traced, procs, app_node_name(a, 0),
			session_node(a->s, 0)->tr.tracing, paired, also);
	else
		app_msg(a, false, "tracing %lu %s on %s%s%s; ? for help",
			traced, procs, app_node_name(a, 0), paired, also);
}

/* ---- tracing control ---- */

int app_stop_tracing(struct app *a, const char *why)
{
	session_stop(a->s, why);
	return ACT_REDRAW;
}

int app_retrace(struct app *a)
{
	if (!app_live(a, "tracing"))
		return ACT_REDRAW;
	session_start(a->s);
	app_msg(a, false, "starting: %s", "waiting for the target");
	return ACT_REDRAW;
}

int app_attach_node(struct app *a, const char *name)
{
	if (!app_live(a, ":attach"))
		return ACT_REDRAW;
	if (!a->multi) {
		app_msg(a, true, "this view was opened on one node; open it on "
			"several (beamscope A B, or --cluster) to add nodes");
		return ACT_REDRAW;
	}
	int idx = session_attach_node(a->s, name);
	if (idx == SESSION_ATTACHED_ALREADY) {
		app_msg(a, true, "%s is already in this session", name);
		return ACT_REDRAW;
	}
	if (idx < 0) {
		app_msg(a, true, "at most %d nodes at once", BS_MAX_NODES);
		return ACT_REDRAW;
	}
	a->attaching = idx;
	session_start(a->s);
	app_msg(a, false, "attaching to %s", name);
	return ACT_REDRAW;
}

int app_detach_node(struct app *a, const char *name)
{
	if (!app_live(a, ":detach"))
		return ACT_REDRAW;
	const struct snode *n = session_find_node(a->s, name);
	if (!n || !n->present) {
		app_msg(a, true, "%s is not in this session", name);
		return ACT_REDRAW;
	}
	if (session_present_nodes(a->s) == 1) {
		app_msg(a, true, "%s is the last node; q quits", name);
		return ACT_REDRAW;
	}
	if (a->node_filter == n->idx)
		a->node_filter = -1;
	session_drop_node(a->s, n->idx);
	a->detaching = n->idx;   /* told once it is clean */
	app_msg(a, false, "detaching from %s", app_node_name(a, n->idx));
	return ACT_REDRAW;
}

int app_record(struct app *a, const char *path)
{
	struct sbuf err = SBUF_INIT;
	if (!path) {
		if (!json_sink_is_open(&a->rec)) {
			app_msg(a, true, "not recording; :record FILE starts");
			return ACT_REDRAW;
		}
		json_sink_tick(&a->rec, true);
		json_sink_close(&a->rec);
		if (a->rec.write_errno)
			app_msg(a, true, "recording to %s stopped: %s; the %llu "
				"bytes written are whole lines", a->rec.name,
				json_sink_error(&a->rec), a->rec.good);
		else
			app_msg(a, false, "recorded %lu events to %s; beamscope "
				"--open %s reopens it", a->rec.events,
				a->rec.name, a->rec.name);
		return ACT_REDRAW;
	}
	if (!app_live(a, ":record"))
		return ACT_REDRAW;
	if (json_sink_open(&a->rec, path, OUTFILE_STREAM,
			   session_recording_fd(a->s), &err) < 0)
		app_msg(a, true, "%s; choose another file", err.buf);
	else
		app_msg(a, false, "recording to %s; :record alone stops", path);
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
	/* the header is the process table's; the table keeps the rest */
	int top = app_view(a) == VIEW_PROCS ? header_lines(a, h) : 0;
	/* paused, the view holds still unless a key asks for it */
	if (!a->paused || a->view_due) {
		if (top)
			header_draw(a, 0, h);
		view_draw(a, top, h - top);
	}
	a->view_due = false;
	keep_shown(a);
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
	if (ch == KEY_RESIZE) {
		a->view_due = true;
		return ACT_REDRAW;
	}
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

static void check_limits(struct app *a)
{
	char why[96];
	const char *tripped = session_tripped(a->s);
	if (!tripped || !app_attached(a))
		return;
	if (!strcmp(tripped, "duration") && !session_node(a->s, 0)->tripped[0])
		snprintf(why, sizeof(why), "duration limit (%gs) reached",
			 session_spec(a->s)->duration);
	else if (!strcmp(tripped, "max_events"))   /* here or on the target */
		snprintf(why, sizeof(why), "event limit (%lu) reached",
			 session_spec(a->s)->max_events);
	else
		snprintf(why, sizeof(why), "%s limit reached on the target",
			 tripped);
	app_stop_tracing(a, why);
	app_msg(a, false, "tracing stopped: %s; the target is clean; :on traces "
		"again, :limit changes limits", why);
}

/* What the record sink could not write is said once. */
static void check_record(struct app *a)
{
	if (!json_sink_is_open(&a->rec))
		return;
	json_sink_tick(&a->rec, false);
	if (a->rec.write_errno && !a->rec_failed_said) {
		a->rec_failed_said = true;
		app_msg(a, true, "cannot write to \"%s\": %s; recording stopped, "
			"the %llu bytes written are whole lines; make room and "
			":record FILE again", a->rec.name,
			json_sink_error(&a->rec), a->rec.good);
		json_sink_close(&a->rec);
	}
}

/* the view's turn: its timers, and where a recording's reading was */
struct turn {
	struct app *a;
	long long next_tick, last_draw;
	uint64_t replay_bytes;
	bool replay_told;
};

static long long turn_wait(void *arg)
{
	struct turn *t = arg;
	struct app *a = t->a;
	long long now = clock_mono_ms();
	long long wait = t->next_tick - now;
	if (a->dirty) {
		long long d = t->last_draw + REDRAW_MS - now;
		if (d < wait)
			wait = d;
	}
	if (wait < 0 || a->rr)   /* :syntax has more to do */
		wait = 0;
	return wait;
}

/* After the session's turn (session_run): the recording, the keys, the
 * timers and the screen.  SESSION_GO_ON, or the exit status. */
static int turn_step(void *arg, int sig, const struct pollfd *fds)
{
	struct turn *t = arg;
	struct app *a = t->a;
	if (sig == SIGINT || sig == SIGTERM || sig == SIGHUP)
		return EXIT_OK;
	if (session_is_recording(a->s) && !t->replay_told) {
		/* a quiet pipe is not read until poll says so: the view
		 * stays idle meanwhile */
		bool done = session_replay_done(a->s), bad;
		uint64_t bytes = session_replay_bytes(a->s);
		if (bytes != t->replay_bytes || done)
			a->dirty = true;
		t->replay_bytes = bytes;
		if (done) {
			const char *sum = session_replay_summary(a->s, &bad);
			app_msg(a, bad, "%s", sum);
			t->replay_told = true;
		}
	}
	check_record(a);
	/* a paused view too: :syntax asked for it */
	if (app_rerender_step(a))
		a->dirty = a->view_due = true;
	if (a->detaching >= 0 &&
	    session_node(a->s, a->detaching)->state == SN_IDLE) {
		app_msg(a, false, "detached from %s; it is clean; what "
			"was captured stays", app_node_name(a, a->detaching));
		a->detaching = -1;
	}
	if (a->stop_pending && session_settled(a->s)) {
		a->stop_pending = false;
		app_msg(a, false, "tracing stopped, the target is clean; "
			":on starts again");
	}
	/* keys: everything waiting, so typing never lags behind */
	if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
		int ch;
		while ((ch = getch()) != ERR) {
			bool typing = a->prompt_active && a->prompt_kind == ':';
			int act = on_key(a, ch);
			if (act & ACT_QUIT)
				return EXIT_OK;
			/* typing a command leaves the view as it is */
			if (act & ACT_REDRAW)
				a->dirty = true;
			if ((act & ACT_REDRAW) && !(typing && a->prompt_active))
				a->view_due = true;
			/* a key is shown at once, not at the next slot */
			draw(a);
			t->last_draw = clock_mono_ms();
		}
	}

	long long now = clock_mono_ms();
	check_limits(a);
	if (now >= t->next_tick) {
		if (!session_is_recording(a->s))
			store_tick(&a->store);
		/* events as the limit counts them: of the kinds asked for,
		 * shipped or counted on the target */
		unsigned long d = session_events(a->s);
		a->rate = d >= a->rate_base ? d - a->rate_base : d;
		a->rate_base = d;
		t->next_tick = now + TICK_MS;
		a->dirty = true;   /* the clock and what is pending */
	}
	if (a->dirty && now - t->last_draw >= REDRAW_MS) {
		draw(a);
		t->last_draw = now;
	}
	return SESSION_GO_ON;
}

static int loop(struct app *a)
{
	struct turn t = { .a = a, .next_tick = clock_mono_ms() + TICK_MS };
	struct session_loop l = {
		.fds = { { .fd = STDIN_FILENO, .events = POLLIN } }, .nfds = 1,
		.budget = SESSION_READ_VIEW, .wait_ms = turn_wait,
		.step = turn_step, .arg = &t,
	};
	int rc = session_run(a->s, &l);
	return rc == SESSION_POLL_FAILED ? EXIT_FAIL : rc;
}

/* Attach every node and start tracing, before the screen is taken, so
 * that errors read like batch mode's.  EXIT_* code. */
static int open_live(struct app *a, struct sbuf *err)
{
	const struct config *cfg = a->cfg;
	for (int i = 0; i < cfg->nnodes; i++)
		session_add_node(a->s, cfg->nodes[i], true);
	int rc = session_attach_wait(a->s, err);
	if (rc == EXIT_OK && !sig_count() && cfg->cluster) {
		session_discover(a->s);
		rc = session_attach_wait(a->s, err);
	}
	if (rc == EXIT_OK && !sig_count())
		rc = session_start_wait(a->s, err);
	if (rc == EXIT_OK && sig_count())
		return EXIT_USAGE;   /* interrupted: nothing to show */
	return rc;
}

int ui_run(const struct config *cfg)
{
	struct app *a = xcalloc(1, sizeof(*a));
	struct sbuf err = SBUF_INIT;
	int rc;

	a->cfg = cfg;
	struct session_spec spec;
	session_spec_from_config(&spec, cfg, SESSION_VIEW);
	struct session_sink sink = {
		.event = on_event, .counts = on_counts,
		.counts_at = on_counts_at, .info = on_info, .sizes = on_sizes,
		.label = on_label, .proc = on_proc, .node_state = on_node_state,
		.notice = on_notice, .started = on_started,
		.node_sample = on_node_sample, .relations = on_relations,
		.arg = a,
	};
	a->s = session_new(cfg, &spec, &sink);
	json_sink_init(&a->rec, a->s, false, SESSION_INTERVAL_MS * 4);
	a->sort_col = COL_RPS;
	a->top_col = -1;
	a->top_n = TOP_DEFAULT;
	a->stack[0] = VIEW_PROCS;
	a->depth = 1;
	a->start_ms = clock_mono_ms();
	store_init(&a->store, cfg->ring ? cfg->ring : UI_RING_DEFAULT);
	a->store.history = true;   /* the table's sparklines */
	/* the process table is bounded by the ring too */
	a->store.max_procs = a->store.cap > UI_PROCS_MIN ? a->store.cap :
		UI_PROCS_MIN;
	a->multi = session_multi(a->s);
	/* --node-stats: the header from the start, asked of each agent as
	 * it comes up */
	if (cfg->node_stats && !cfg->open) {
		a->header = true;
		session_node_stats(a->s, true);
	}
	a->node_filter = -1;
	a->attaching = -1;
	a->detaching = -1;

	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		/* a node that is not there is the first thing to fix */
		for (int i = 0; !cfg->open && i < cfg->nnodes; i++)
			if ((rc = attach_known(cfg, cfg->nodes[i], &err)) != EXIT_OK) {
				esc_print(stderr, "beamscope: %s", err.buf);
				goto out;
			}
		esc_print(stderr, "beamscope: the interactive view needs a terminal; "
			"use --batch to write JSON lines");
		rc = EXIT_USAGE;
		goto out;
	}

	if (cfg->open) {
		if (session_open_recording(a->s, cfg->open, &err) < 0) {
			esc_print(stderr, "beamscope: %s", err.buf);
			rc = sig_count() ? EXIT_OK : EXIT_USAGE;
			goto out;
		}
		/* the recording says how many nodes it has */
		a->multi = session_multi(a->s);
	} else if ((rc = open_live(a, &err)) != EXIT_OK) {
		if (err.len)
			esc_print(stderr, "beamscope: %s", err.buf);
		session_drain(a->s);
		goto out;
	}
	if (cfg->record && json_sink_open(&a->rec, cfg->record, OUTFILE_STREAM,
					  session_recording_fd(a->s),
					  &err) < 0) {
		esc_print(stderr, "beamscope: %s; choose another --record FILE",
			err.buf);
		session_drain(a->s);
		rc = EXIT_FAIL;
		goto out;
	}

	if (tcgetattr(STDIN_FILENO, &saved_tio) == 0)
		have_tio = true;
	sig_fatal(restore_terminal);   /* a crash gives the terminal back */
	setlocale(LC_ALL, "");
	a->ascii = cfg->ascii || !spark_utf8_terminal();
	if (!getenv("ESCDELAY"))
		set_escdelay(25);
	initscr();
	raw();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	/* Home and End as many terminals send them, whatever their terminfo
	 * entry says (xterm-256color has ESC O H and ESC O F only) */
	define_key("\033[1~", KEY_HOME);
	define_key("\033[4~", KEY_END);
	define_key("\033[7~", KEY_HOME);
	define_key("\033[8~", KEY_END);
	define_key("\033[H", KEY_HOME);
	define_key("\033[F", KEY_END);
	nodelay(stdscr, TRUE);
	curs_set(0);
	draw_init_colors(a);
	prompt_init(a);
	screen_up = true;
	if (cfg->open)
		app_msg(a, false, "loading %s", cfg->open);
	else
		on_started(a, a->started_traced, a->started_nodes,
			   a->started_skipped);
	if (cfg->record)
		app_msg(a, false, "recording to %s; :record alone stops",
			cfg->record);
	a->dirty = true;
	draw(a);

	rc = loop(a);

	prompt_done();
	endwin();
	screen_up = false;
	restore_terminal();
	sig_fatal(NULL);
	session_drain(a->s);
out:
	if (json_sink_is_open(&a->rec))
		json_sink_tick(&a->rec, true);
	json_sink_release(&a->rec);
	session_free(a->s);
	store_release(&a->store);
	views_release(a);
	free(a->rr);
	sbuf_release(&err);
	free(a);
	return rc;
}
