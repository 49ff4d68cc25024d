/*
 * prompt: readline in callback mode.  Invariant: readline is installed
 * (rl_callback_handler_install) exactly while a->prompt_active.  Tab's
 * candidates are kept here and drawn above the status line, over the
 * bottom of the view, until the next key.
 */
#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "app.h"
#include "cmd.h"
#include "commands.h"
#include "draw.h"
#include "prompt.h"
#include "statedir.h"
#include "view_proc.h"
#include "view_procs.h"
#include "view_profile.h"

static struct app *app;
static int pending = EOF;
static char history_path[4200];
static char saved_filter[256];
static FILE *devnull;
static int result;

/* Tab's candidates, shown until the next key; a note instead when there
 * is nothing to show yet */
#define CANDS_MAX 512
static char *cands[CANDS_MAX];
static int ncands, cands_total, cands_width;
static char cands_note[160];

static void cands_clear(void)
{
	for (int i = 0; i < ncands; i++)
		free(cands[i]);
	if (app && (ncands || cands_note[0]))
		app->view_due = true;   /* the view under them comes back */
	ncands = cands_total = cands_width = 0;
	cands_note[0] = '\0';
}

static int getc_fn(FILE *f)
{
	(void)f;
	int c = pending;
	pending = EOF;
	return c;
}

static int input_available(void)
{
	return pending != EOF;
}

static void noop_prep(int meta)
{
	(void)meta;
}

static void noop_deprep(void)
{
}

static void redisplay(void)
{
	if (app)
		app->dirty = true;
}

static void close_prompt(void)
{
	cands_clear();
	rl_callback_handler_remove();
	app->prompt_active = false;
	curs_set(0);
}

static void on_line(char *line)
{
	char kind = app->prompt_kind;
	close_prompt();
	result |= ACT_REDRAW;
	if (!line) {
		if (kind == '/')
			procs_set_filter(app, saved_filter);
		return;
	}
	if (kind == '/') {
		procs_set_filter(app, line);
	} else if (kind == 'h') {
		profile_highlight(app, line);
	} else if (kind == 's') {
		/* an empty line searches for the last text again */
		result |= log_search(app, line, true, true);
	} else if (*line) {
		add_history(line);
		if (history_path[0])
			append_history(1, history_path);
		result |= cmd_run(app, line);
	}
	free(line);
}

static void history_init(void)
{
	char dir[4096];
	/* quietly: history is a convenience */
	if (statedir_path(dir, sizeof(dir)) < 0)
		return;
	snprintf(history_path, sizeof(history_path), "%s/history", dir);
	using_history();
	stifle_history(1000);
	if (read_history(history_path) == ENOENT) {
		FILE *f = fopen(history_path, "a");
		if (f)
			fclose(f);
	}
}

static char *gen_cmd(const char *text, int state)
{
	const char *s = cmd_complete(text, state);
	return s ? strdup(s) : NULL;
}

static const char *const kind_words[] = {
	"send", "receive", "spawn", "exit", "link", "register", "gc", "running",
	NULL };
static const char *const limit_words[] = { "duration", "events", "payload", NULL };

static const char *const *word_list;
static char *gen_words(const char *text, int state)
{
	static int i;
	if (!state)
		i = 0;
	for (; word_list[i]; i++)
		if (!strncmp(word_list[i], text, strlen(text)))
			return strdup(word_list[i++]);
	return NULL;
}

static char *gen_cols(const char *text, int state)
{
	static int i;
	if (!state)
		i = 0;
	for (; i < COL__COUNT; i++)
		if (!strncmp(proc_cols[i].key, text, strlen(text)))
			return strdup(proc_cols[i++].key);
	return NULL;
}

static char *gen_procs(const char *text, int state)
{
	const char *s = app_complete_proc(app, text, state);
	return s ? strdup(s) : NULL;
}

/* the call patterns in force, for :uncall */
static char *gen_calls(const char *text, int state)
{
	static int i;
	const struct session_spec *sp = session_spec(app->s);
	if (!state)
		i = 0;
	for (; i < sp->ncalls; i++)
		if (!strncmp(sp->calls[i], text, strlen(text)))
			return strdup(sp->calls[i++]);
	return NULL;
}

/* the modules loaded on the target, for :call */
static const char *const *modules;
static char *gen_modules(const char *text, int state)
{
	static int i;
	if (!state)
		i = 0;
	for (; modules[i]; i++)
		if (!strncmp(modules[i], text, strlen(text)))
			return strdup(modules[i++]);
	return NULL;
}

/* :call MODULE<Tab>: the target is asked once; until it answers, say so */
static char **complete_modules(const char *text)
{
	if (strchr(text, ':'))
		return NULL;   /* a function: not completed */
	if (session_is_recording(app->s))
		return NULL;
	modules = session_modules(app->s);
	if (!modules) {
		snprintf(cands_note, sizeof(cands_note), "asking the target "
			 "for its modules; Tab again in a moment");
		return NULL;
	}
	rl_completion_append_character = ':';
	return rl_completion_matches(text, gen_modules);
}

static char **complete(const char *text, int start, int end)
{
	(void)end;
	rl_attempted_completion_over = 1;
	if (app->prompt_kind != ':')
		return NULL;
	if (start == 0)
		return rl_completion_matches(text, gen_cmd);
	char first[64];
	sscanf(rl_line_buffer, "%63s", first);
	struct cmd_line cl;
	struct sbuf err = SBUF_INIT;
	int ok = cmd_parse(first, &cl, &err) == 0;
	sbuf_release(&err);
	if (!ok)
		return NULL;
	switch (cl.id) {
	case CMD_EVENTS:
		word_list = kind_words;
		return rl_completion_matches(text, gen_words);
	case CMD_LIMIT:
		word_list = limit_words;
		return rl_completion_matches(text, gen_words);
	case CMD_SORT:
		return rl_completion_matches(text, gen_cols);
	case CMD_PIDS:
	case CMD_FOCUS:
	case CMD_FOLLOW:
		return rl_completion_matches(text, gen_procs);
	case CMD_UNCALL:
		return rl_completion_matches(text, gen_calls);
	case CMD_CALL:
		return complete_modules(text);
	case CMD_EXPORT:
		rl_attempted_completion_over = 0;   /* file names */
		return NULL;
	default:
		return NULL;
	}
}

/* Keep the candidates for prompt_draw, instead of printing them. */
static void show_matches(char **matches, int n, int maxlen)
{
	cands_clear();
	cands_total = n;
	for (int i = 1; i <= n && ncands < CANDS_MAX; i++)
		cands[ncands++] = strdup(matches[i]);
	cands_width = maxlen;
	app->dirty = true;
}

/* The candidates, in columns, on the rows above row y (the status line's):
 * as many rows as they take, up to a third of the screen. */
static void cands_draw(struct app *a, int y)
{
	int colw = cands_width + 2 < COLS ? cands_width + 2 : COLS;
	int ncol = COLS / colw > 0 ? COLS / colw : 1;
	int rows = (ncands + ncol - 1) / ncol, max = LINES / 3 > 1 ? LINES / 3 : 1;
	if (cands_note[0])
		rows = 1;
	bool more = rows > max || ncands < cands_total;
	if (rows > max)
		rows = max;
	for (int r = 0; r < rows; r++) {
		int row = y - rows + r;
		move(row, 0);
		clrtoeol();
		if (cands_note[0]) {
			draw_text(row, 0, COLS, cands_note, draw_attr(a, ROLE_DIM));
			continue;
		}
		for (int c = 0; c < ncol; c++) {
			int i = r * ncol + c;
			if (i >= ncands)
				break;
			if (more && r == rows - 1 && c == ncol - 1) {
				char left[48];
				snprintf(left, sizeof(left), "(%d more)",
					 cands_total - i);
				draw_text(row, c * colw, colw, left, draw_attr(a, ROLE_DIM));
				break;
			}
			draw_text(row, c * colw, colw, cands[i], A_BOLD);
		}
	}
}

void prompt_init(struct app *a)
{
	app = a;
	devnull = fopen("/dev/null", "w");
	rl_instream = stdin;
	rl_outstream = devnull ? devnull : stderr;
	rl_catch_signals = 0;
	rl_catch_sigwinch = 0;
	rl_change_environment = 0;
	rl_prep_term_function = noop_prep;
	rl_deprep_term_function = noop_deprep;
	rl_getc_function = getc_fn;
	rl_input_available_hook = input_available;
	rl_redisplay_function = redisplay;
	rl_attempted_completion_function = complete;
	rl_completion_display_matches_hook = show_matches;
	/* "send,rec<Tab>" completes the word after the comma */
	rl_completer_word_break_characters = (char *)" \t\n,";
	rl_readline_name = "beamscope";
	rl_variable_bind("show-all-if-ambiguous", "on");
	rl_bind_key('\t', rl_complete);
	history_init();
}

void prompt_done(void)
{
	if (app && app->prompt_active)
		rl_callback_handler_remove();
	clear_history();
	if (devnull)
		fclose(devnull);
	devnull = NULL;
}

void prompt_open(struct app *a, char kind)
{
	a->prompt_active = true;
	a->prompt_kind = kind;
	if (kind == '/')
		snprintf(saved_filter, sizeof(saved_filter), "%s", procs_filter(a));
	/* the target's modules, for :call's Tab, asked for once ahead */
	if (kind == ':' && !session_is_recording(a->s))
		session_modules(a->s);
	rl_callback_handler_install(kind == ':' ? ":" : "/", on_line);
	curs_set(1);
	a->dirty = true;
}

static void feed(int c)
{
	pending = c;
	rl_callback_read_char();
}

static void feed_str(const char *s)
{
	for (; *s && app->prompt_active; s++)
		feed((unsigned char)*s);
}

int prompt_key(struct app *a, int ch)
{
	char kind = a->prompt_kind;
	result = ACT_REDRAW;
	cands_clear();
	switch (ch) {
	case 27:          /* Esc: cancel */
	case 3:           /* Ctrl-C */
		close_prompt();
		if (kind == '/')
			procs_set_filter(a, saved_filter);
		return ACT_REDRAW;
	case KEY_LEFT: feed_str("\033[D"); break;
	case KEY_RIGHT: feed_str("\033[C"); break;
	case KEY_UP: feed_str("\033[A"); break;
	case KEY_DOWN: feed_str("\033[B"); break;
	case KEY_HOME: feed(1); break;
	case KEY_END: feed(5); break;
	case KEY_DC: feed(4); break;
	case KEY_BACKSPACE: case 127: case 8:
		if (rl_end == 0) {          /* backspace on nothing: leave */
			close_prompt();
			if (kind == '/')
				procs_set_filter(a, "");
			return ACT_REDRAW;
		}
		feed(127);
		break;
	case KEY_ENTER: feed('\n'); break;
	default:
		if (ch >= 0 && ch < 256)
			feed(ch);
		break;
	}
	/* the filter follows the typing */
	if (a->prompt_active && kind == '/')
		procs_set_filter(a, rl_line_buffer);
	return result;
}

void prompt_draw(struct app *a, int y)
{
	char line[1100];
	snprintf(line, sizeof(line), "%c%s", a->prompt_kind == ':' ? ':' : '/',
		 rl_line_buffer ? rl_line_buffer : "");
	draw_text(y, 0, COLS, line, A_NORMAL);
	if (ncands || cands_note[0])
		cands_draw(a, y - 1);
	int x = 1 + rl_point;
	move(y, x < COLS ? x : COLS - 1);
}
