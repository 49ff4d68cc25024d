/*
 * prompt: readline in callback mode.  Invariant: readline is installed
 * (rl_callback_handler_install) exactly while a->prompt_active.
 */
#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "app.h"
#include "cmd.h"
#include "prompt.h"

static struct app *app;
static int pending = EOF;
static char history_path[4200];
static char saved_filter[256];
static FILE *devnull;
static int result;

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
			snprintf(app->filter, sizeof(app->filter), "%s", saved_filter);
		return;
	}
	if (kind == '/') {
		snprintf(app->filter, sizeof(app->filter), "%s", line);
	} else if (kind == 's') {
		/* an empty line searches for the last text again */
		if (*line)
			snprintf(app->search, sizeof(app->search), "%s", line);
		result |= log_search(app, true, true);
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
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	char dir[4096];
	if (state && *state)
		snprintf(dir, sizeof(dir), "%s/beamscope", state);
	else if (home && *home)
		snprintf(dir, sizeof(dir), "%s/.local/state/beamscope", home);
	else
		return;
	/* mkdir -p, quietly: history is a convenience */
	for (char *p = dir + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(dir, 0700);
			*p = '/';
		}
	mkdir(dir, 0700);
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
		return rl_completion_matches(text, gen_procs);
	case CMD_EXPORT:
		rl_attempted_completion_over = 0;   /* file names */
		return NULL;
	default:
		return NULL;
	}
}

/* Show the candidates in the message line instead of on the terminal. */
static void show_matches(char **matches, int n, int maxlen)
{
	(void)maxlen;
	char line[512] = "";
	size_t len = 0;
	for (int i = 1; i <= n && len < sizeof(line) - 64; i++)
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%.60s ",
					matches[i]);
	app_msg(app, false, "%s", line);
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
	rl_readline_name = "beamscope";
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
		snprintf(saved_filter, sizeof(saved_filter), "%s", a->filter);
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
	switch (ch) {
	case 27:          /* Esc: cancel */
	case 3:           /* Ctrl-C */
		close_prompt();
		if (kind == '/')
			snprintf(a->filter, sizeof(a->filter), "%s", saved_filter);
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
				a->filter[0] = '\0';
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
		snprintf(a->filter, sizeof(a->filter), "%s", rl_line_buffer);
	return result;
}

void prompt_draw(struct app *a, int y)
{
	char line[1100];
	snprintf(line, sizeof(line), "%c%s", a->prompt_kind == ':' ? ':' : '/',
		 rl_line_buffer ? rl_line_buffer : "");
	draw_text(y, 0, COLS, line, A_NORMAL);
	int x = 1 + rl_point;
	move(y, x < COLS ? x : COLS - 1);
}
