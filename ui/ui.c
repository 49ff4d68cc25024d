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
#include "draw.h"
#include "esc.h"
#include "exitcode.h"
#include "keys.h"
#include "prompt.h"
#include "sig.h"
#include "spark.h"
#include "syntax.h"
#include "top.h"
#include "ui.h"
#include "xalloc.h"

#define UI_RING_DEFAULT 200000
#define UI_PROCS_MIN 10000        /* processes kept, whatever the ring */

static struct termios saved_tio;
static bool have_tio;

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

/* The view's state and its session, not yet on a screen. */
static struct app *app_new(const struct config *cfg)
{
	struct app *a = xcalloc(1, sizeof(*a));
	a->cfg = cfg;
	struct session_spec spec;
	session_spec_from_config(&spec, cfg, SESSION_VIEW);
	struct session_sink sink;
	ui_sink(a, &sink);
	a->s = session_new(cfg, &spec, &sink);
	json_sink_init(&a->rec, a->s, false, SESSION_INTERVAL_MS * 4);
	/* :record and --record: written while open, silent while closed */
	json_sink_hooks(&a->rec, &sink);
	session_add_sink(a->s, &sink);
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
	if (cfg->alarm && !cfg->open)
		session_alarms(a->s, &cfg->alarms);
	if (cfg->node_stats && !cfg->open) {
		a->header = true;
		session_node_stats(a->s, true);
	}
	a->node_filter = -1;
	a->attaching = -1;
	a->detaching = -1;
	return a;
}

/* The recording or the nodes opened, and --record: true to go on; else
 * said, with the exit status in *rc. */
static bool open_source(struct app *a, struct sbuf *err, int *rc)
{
	const struct config *cfg = a->cfg;
	if (cfg->open) {
		if (session_open_recording(a->s, cfg->open, err) < 0) {
			esc_print(stderr, "beamscope: %s", err->buf);
			*rc = sig_count() ? EXIT_OK : EXIT_USAGE;
			return false;
		}
		/* the recording says how many nodes it has */
		a->multi = session_multi(a->s);
	} else if ((*rc = open_live(a, err)) != EXIT_OK) {
		if (err->len)
			esc_print(stderr, "beamscope: %s", err->buf);
		session_drain(a->s);
		return false;
	}
	if (cfg->record && json_sink_open(&a->rec, cfg->record, OUTFILE_STREAM,
					  session_recording_fd(a->s), err) < 0) {
		esc_print(stderr, "beamscope: %s; choose another --record FILE",
			err->buf);
		session_drain(a->s);
		*rc = EXIT_FAIL;
		return false;
	}
	return true;
}

/* curses up, in raw mode, keys as many terminals send them. */
static void screen_up(struct app *a)
{
	if (tcgetattr(STDIN_FILENO, &saved_tio) == 0)
		have_tio = true;
	sig_fatal(restore_terminal);   /* a crash gives the terminal back */
	setlocale(LC_ALL, "");
	a->ascii = a->cfg->ascii || !spark_utf8_terminal();
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
	a->screen_up = true;
}

static void screen_down(struct app *a)
{
	prompt_done();
	endwin();
	a->screen_up = false;
	restore_terminal();
	sig_fatal(NULL);
}

static void app_free(struct app *a)
{
	if (json_sink_is_open(&a->rec))
		json_sink_tick(&a->rec, true);
	json_sink_release(&a->rec);
	session_free(a->s);
	store_release(&a->store);
	views_release(a);
	app_rerender_release(a);
	free(a);
}

int ui_run(const struct config *cfg)
{
	struct app *a = app_new(cfg);
	struct sbuf err = SBUF_INIT;
	int rc = EXIT_OK;

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
	if (!open_source(a, &err, &rc))
		goto out;

	screen_up(a);
	if (cfg->open)
		app_msg(a, false, "loading %s", cfg->open);
	else
		ui_say_started(a);
	if (cfg->record)
		app_msg(a, false, "recording to %s; :record alone stops",
			cfg->record);
	a->dirty = true;
	ui_draw(a);
	rc = ui_loop(a);
	screen_down(a);
	session_drain(a->s);
out:
	app_free(a);
	sbuf_release(&err);
	return rc;
}

