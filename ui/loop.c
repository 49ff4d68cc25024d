/*
 * loop: the view's turn in the session's run loop: the recording's
 * progress, the keys, the timers and the screen, drawn at most every
 * REDRAW_MS.  Input handlers only change state and mark the screen dirty;
 * the network is read in bounded slices, so a key always gets its turn.
 */
#include <curses.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "clock.h"
#include "control.h"
#include "draw.h"
#include "esc.h"
#include "exitcode.h"
#include "header.h"
#include "keys.h"
#include "prompt.h"
#include "sig.h"
#include "spark.h"
#include "syntax.h"
#include "ui.h"
#include "xalloc.h"

#define REDRAW_MS 100
#define TICK_MS 1000

/* ---- drawing ---- */

void ui_draw(struct app *a)
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
	app_keep_shown(a);
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
	if (wait < 0 || app_rerender_busy(a))   /* :syntax has more to do */
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
			ui_draw(a);
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
		ui_draw(a);
		t->last_draw = now;
	}
	return SESSION_GO_ON;
}

int ui_loop(struct app *a)
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
