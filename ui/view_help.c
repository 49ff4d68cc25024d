/*
 * view_help: requests with their keys, and commands, generated from their
 * tables (keys.h, cmd.h), so help can never drift from what the program
 * does.
 */
#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "cmd.h"
#include "draw.h"
#include "keys.h"

/* What a cell of the process table may hold beside a number. */
static const struct {
	const char *mark, *help;
} marks[] = {
	{ "-", "not sampled yet" },
	{ ">160M", "MEM, HEAP: at least that much; measuring it would hold up the "
	  "target (a long message queue), so the agent did not" },
	{ "~6400k", "MEM, HEAP: measured more than 2.5 s ago (the agent asks a "
	  "dear process rarely)" },
};
enum { HELP_MARKS = sizeof(marks) / sizeof(marks[0]) };

/* the rows: a title, the keys, a blank, a title, the commands, a blank,
 * a title, the marks */
enum {
	HELP_KEYS = REQ__COUNT - 1,
	HELP_CMDS = HELP_KEYS + 3,   /* the first command's row */
	HELP_MARKS_AT = HELP_CMDS + CMD__COUNT + 2,
	HELP_ROWS = HELP_MARKS_AT + HELP_MARKS
};

/* The width of the left column: the longest key list or command with its
 * arguments, so that every help text starts in one column, after a gap. */
static int left_width(void)
{
	static int w;
	if (w)
		return w;
	for (int i = REQ_NONE + 1; i < REQ__COUNT; i++) {
		int k = (int)strlen(request_table[i].keys);
		w = k > w ? k : w;
	}
	for (int i = 0; i < CMD__COUNT; i++) {
		int k = (int)(strlen(cmd_table[i].name) + 1 + strlen(cmd_table[i].args));
		w = k > w ? k : w;
	}
	return w;
}

static void help_line(int i, char *line, size_t n, int *attr)
{
	int w = left_width();
	*attr = A_NORMAL;
	if (i == 0) {
		snprintf(line, n, "Keys");
		*attr = A_BOLD;
	} else if (i <= HELP_KEYS) {
		const struct request_info *k = &request_table[i];
		snprintf(line, n, "  %-*s  %s", w, k->keys, k->help);
	} else if (i == HELP_KEYS + 1) {
		line[0] = '\0';
	} else if (i == HELP_KEYS + 2) {
		snprintf(line, n, "Commands (type : first)");
		*attr = A_BOLD;
	} else if (i < HELP_CMDS + CMD__COUNT) {
		const struct cmd_info *c = &cmd_table[i - HELP_CMDS];
		char left[64];
		snprintf(left, sizeof(left), "%s %s", c->name, c->args);
		snprintf(line, n, "  %-*s  %s", w, left, c->help);
	} else if (i == HELP_MARKS_AT - 2) {
		line[0] = '\0';
	} else if (i == HELP_MARKS_AT - 1) {
		snprintf(line, n, "Marks in the process table");
		*attr = A_BOLD;
	} else {
		snprintf(line, n, "  %-*s  %s", w, marks[i - HELP_MARKS_AT].mark,
			 marks[i - HELP_MARKS_AT].help);
	}
}

static void help_draw(struct app *a, int y, int h)
{
	struct list *l = &a->pos[VIEW_HELP];
	char line[512];
	draw_text(y, 0, COLS, " help: q closes", draw_attr(a, ROLE_HEADER));
	y++;
	h--;
	list_fit(l, LIST_SCROLL, HELP_ROWS, h);
	for (int r = 0; r < h; r++) {
		int attr;
		move(y + r, 0);
		clrtoeol();
		if (l->top + r >= HELP_ROWS)
			continue;
		help_line(l->top + r, line, sizeof(line), &attr);
		draw_text(y + r, 0, COLS, line, attr);
	}
}

static int help_request(struct app *a, enum request req)
{
	return list_request(&a->pos[VIEW_HELP], LIST_SCROLL, req) ?
		ACT_REDRAW : ACT_NONE;
}

const struct view_ops help_view_ops = {
	.draw = help_draw,
	.request = help_request,
};
