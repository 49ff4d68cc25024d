/*
 * view_help: keys and commands, generated from their tables (keys.h,
 * cmd.h), so help can never drift from what the program does.
 */
#include <curses.h>
#include <stdio.h>

#include "app.h"
#include "cmd.h"
#include "keys.h"

const struct key_info key_table[] = {
#define X(k, h) { k, h },
	GLOBAL_KEYS(X)
#undef X
};
const int key_count = sizeof(key_table) / sizeof(key_table[0]);

void help_draw(struct app *a, int y, int h)
{
	char line[512];
	int n = 0, total = 3 + key_count + CMD__COUNT;
	draw_text(y, 0, COLS, " help: q closes", draw_attr(a, ROLE_HEADER));
	y++;
	h--;
	if (a->help_top > total - 1)
		a->help_top = total - 1;
	for (int r = 0; r < h; r++) {
		move(y + r, 0);
		clrtoeol();
	}
	for (int i = 0; i < total && n < h; i++) {
		if (i < a->help_top)
			continue;
		int attr = A_NORMAL;
		if (i == 0) {
			snprintf(line, sizeof(line), "Keys");
			attr = A_BOLD;
		} else if (i <= key_count) {
			const struct key_info *k = &key_table[i - 1];
			snprintf(line, sizeof(line), "  %-24s %s", k->keys, k->help);
		} else if (i == key_count + 1) {
			line[0] = '\0';
		} else if (i == key_count + 2) {
			snprintf(line, sizeof(line), "Commands (type : first)");
			attr = A_BOLD;
		} else {
			const struct cmd_info *c = &cmd_table[i - key_count - 3];
			char left[64];
			snprintf(left, sizeof(left), "%s %s", c->name, c->args);
			snprintf(line, sizeof(line), "  %-24s %s", left, c->help);
		}
		draw_text(y + n, 0, COLS, line, attr);
		n++;
	}
}

int help_key(struct app *a, int ch)
{
	switch (ch) {
	case KEY_UP: case 'k': if (a->help_top > 0) a->help_top--; break;
	case KEY_DOWN: case 'j': case ' ': case KEY_NPAGE: a->help_top++; break;
	case KEY_PPAGE: case KEY_HOME: a->help_top = 0; break;
	default: return ACT_NONE;
	}
	return ACT_REDRAW;
}
