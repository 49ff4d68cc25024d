/*
 * view_procs: the process table, the home view.  One row per process seen;
 * sortable by any column, filtered by text.  The selection follows its
 * process when rows move.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "xalloc.h"

const struct col_info proc_cols[COL__COUNT] = {
#define X(id, key, title, width) [COL_##id] = { key, title, width },
	PROC_COLUMNS(X)
#undef X
};

static const char *label(const struct proc *p)
{
	if (p->name)
		return p->name;
	if (p->initial)
		return p->initial;
	return "";
}

static bool matches(const struct app *a, const struct proc *p, const char *f)
{
	if (a->node_filter >= 0 && (int)p->pid.node != a->node_filter)
		return false;
	if (!*f)
		return true;
	return strstr(p->pid_text, f) || (p->name && strstr(p->name, f)) ||
		(p->initial && strstr(p->initial, f)) ||
		(p->current && strstr(p->current, f));
}

static int sort_col, sort_asc;

static int cmp_ul(unsigned long x, unsigned long y)
{
	return x < y ? -1 : x > y;
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct proc *x = *(struct proc *const *)pa, *y = *(struct proc *const *)pb;
	int c = 0;
	switch ((enum proc_col)sort_col) {
	case COL_PID:
		c = cmp_ul(x->pid.num, y->pid.num);
		break;
	case COL_NODE:
		c = cmp_ul(x->pid.node, y->pid.node);
		break;
	case COL_NAME:
		c = strcmp(label(x), label(y));
		break;
	case COL_CURRENT:
		c = strcmp(x->current ? x->current : "", y->current ? y->current : "");
		break;
	case COL_SENDS: c = cmp_ul(x->sends, y->sends); break;
	case COL_SPS: c = cmp_ul(x->rsends, y->rsends); break;
	case COL_RECEIVES: c = cmp_ul(x->receives, y->receives); break;
	case COL_RPS: c = cmp_ul(x->rreceives, y->rreceives); break;
	case COL_SPAWNS: c = cmp_ul(x->spawns, y->spawns); break;
	case COL_MQ: c = x->mqlen < y->mqlen ? -1 : x->mqlen > y->mqlen; break;
	case COL__COUNT: break;
	}
	if (!sort_asc)
		c = -c;
	if (!c)   /* a stable order for equal keys: by pid */
		c = cmp_ul(x->pid.num, y->pid.num);
	return c;
}

void procs_rows(struct app *a)
{
	struct store *st = &a->store;
	if (a->rows_cap < st->nprocs) {
		a->rows_cap = st->nprocs + 64;
		a->rows = xrealloc(a->rows, a->rows_cap * sizeof(*a->rows));
	}
	a->nrows = 0;
	for (size_t i = 0; i < st->nprocs; i++)
		if (matches(a, st->procs[i], a->filter))
			a->rows[a->nrows++] = st->procs[i];
	sort_col = a->sort_col;
	sort_asc = a->sort_asc;
	if (a->nrows > 1)
		qsort(a->rows, a->nrows, sizeof(*a->rows), cmp_rows);

	/* keep the selection on the same process */
	if (a->have_sel) {
		for (size_t i = 0; i < a->nrows; i++)
			if (bs_pid_eq(a->rows[i]->pid, a->sel_pid)) {
				a->sel = (int)i;
				break;
			}
	}
	if (a->sel >= (int)a->nrows)
		a->sel = a->nrows ? (int)a->nrows - 1 : 0;
	if (a->nrows) {
		a->have_sel = true;
		a->sel_pid = a->rows[a->sel]->pid;
	}
}

static void fmt_num(char *out, size_t n, unsigned long v)
{
	if (v < 100000)
		snprintf(out, n, "%lu", v);
	else if (v < 100000000)
		snprintf(out, n, "%luk", v / 1000);
	else
		snprintf(out, n, "%luM", v / 1000000);
}

/* Column widths; a hidden column is -1 (NODE with a single node). */
static int widths(const struct app *a, int w[COL__COUNT])
{
	int fixed = 0;
	for (int i = 0; i < COL__COUNT; i++) {
		w[i] = proc_cols[i].width;
		if (i == COL_NODE && !a->multi) {
			w[i] = -1;
			continue;
		}
		fixed += w[i] + 1;
	}
	int rest = COLS - fixed;
	w[COL_CURRENT] = rest > 6 ? rest : 6;
	return 0;
}

static void cell(int y, int *x, int w, const char *s, bool right, int attr)
{
	char buf[256];
	if (w < 0)
		return;
	if (right)
		snprintf(buf, sizeof(buf), "%*s", w, s);
	else
		snprintf(buf, sizeof(buf), "%s", s);
	draw_text(y, *x, w + 1, buf, attr);
	*x += w + 1;
}

void procs_draw(struct app *a, int y, int h)
{
	int w[COL__COUNT], x = 0;
	widths(a, w);
	int hdr = draw_attr(a, ROLE_HEADER);
	for (int i = 0; i < COL__COUNT; i++) {
		char t[64];
		bool right = i >= COL_SENDS;
		/* the sort column is marked by its attribute, not its text */
		snprintf(t, sizeof(t), "%s", proc_cols[i].title);
		cell(y, &x, w[i], t, right, i == a->sort_col ?
		     (int)(hdr | A_UNDERLINE | A_BOLD) : hdr);
	}
	if (x < COLS)
		draw_text(y, x, COLS - x, "", hdr);
	y++;
	h--;

	procs_rows(a);
	if (a->sel < a->top)
		a->top = a->sel;
	if (a->sel >= a->top + h)
		a->top = a->sel - h + 1;
	if (a->top < 0)
		a->top = 0;

	for (int r = 0; r < h; r++) {
		int i = a->top + r;
		move(y + r, 0);
		clrtoeol();
		if (i >= (int)a->nrows) {
			if (i == 0 && r == 0)
				draw_text(y, 0, COLS, *a->filter ?
					  "  no process matches the filter (/ to change it)" :
					  "  no activity yet", draw_attr(a, ROLE_DIM));
			continue;
		}
		const struct proc *p = a->rows[i];
		int attr = i == a->sel ? draw_attr(a, ROLE_SELECTED) :
			p->exited ? draw_attr(a, ROLE_DIM) : (int)A_NORMAL;
		char num[32], pid[48];
		x = 0;
		if (a->multi)   /* the node has a column of its own */
			app_local_pid(p->pid, pid, sizeof(pid));
		cell(y + r, &x, w[COL_PID], a->multi ? pid : p->pid_text, false,
		     attr);
		cell(y + r, &x, w[COL_NAME], label(p), false, attr);
		cell(y + r, &x, w[COL_NODE], app_node_name(a, (int)p->pid.node),
		     false, attr);
		cell(y + r, &x, w[COL_CURRENT], p->exited ? "(exited)" :
		     p->current ? p->current : "", false, attr);
		fmt_num(num, sizeof(num), p->sends);
		cell(y + r, &x, w[COL_SENDS], num, true, attr);
		fmt_num(num, sizeof(num), p->rsends);
		cell(y + r, &x, w[COL_SPS], num, true, attr);
		fmt_num(num, sizeof(num), p->receives);
		cell(y + r, &x, w[COL_RECEIVES], num, true, attr);
		fmt_num(num, sizeof(num), p->rreceives);
		cell(y + r, &x, w[COL_RPS], num, true, attr);
		fmt_num(num, sizeof(num), p->spawns);
		cell(y + r, &x, w[COL_SPAWNS], num, true, attr);
		if (p->mqlen >= 0)
			fmt_num(num, sizeof(num), (unsigned long)p->mqlen);
		else
			strcpy(num, "-");
		cell(y + r, &x, w[COL_MQ], num, true, attr);
		if (x < COLS)
			draw_text(y + r, x, COLS - x, "", attr);
	}
}

static void select_row(struct app *a, int row)
{
	if (!a->nrows)
		return;
	if (row < 0)
		row = 0;
	if (row >= (int)a->nrows)
		row = (int)a->nrows - 1;
	a->sel = row;
	a->sel_pid = a->rows[row]->pid;
	a->have_sel = true;
}

int procs_key(struct app *a, int ch)
{
	int page = LINES - 4 > 1 ? LINES - 4 : 1;
	procs_rows(a);
	switch (ch) {
	case KEY_UP: case 'k': select_row(a, a->sel - 1); break;
	case KEY_DOWN: case 'j': select_row(a, a->sel + 1); break;
	case KEY_PPAGE: select_row(a, a->sel - page); break;
	case KEY_NPAGE: case ' ': select_row(a, a->sel + page); break;
	case KEY_HOME: case 'g': select_row(a, 0); break;
	case KEY_END: case 'G': select_row(a, (int)a->nrows - 1); break;
	case '<': case ',':
		a->sort_col = (a->sort_col + COL__COUNT - 1) % COL__COUNT;
		if (a->sort_col == COL_NODE && !a->multi)
			a->sort_col = COL_CURRENT;
		break;
	case '>': case '.': case KEY_F(6):
		a->sort_col = (a->sort_col + 1) % COL__COUNT;
		if (a->sort_col == COL_NODE && !a->multi)
			a->sort_col = COL_NAME;
		break;
	case 'I':
		a->sort_asc = !a->sort_asc;
		break;
	case 'P': a->sort_col = COL_PID; a->sort_asc = true; break;
	case 'S': a->sort_col = COL_SPS; a->sort_asc = false; break;
	case 'R': a->sort_col = COL_RPS; a->sort_asc = false; break;
	case 'M': a->sort_col = COL_MQ; a->sort_asc = false; break;
	case '\n': case '\r': case KEY_ENTER: case 'l': case KEY_RIGHT:
		if (a->nrows)
			return app_focus(a, a->rows[a->sel]->pid,
					 a->rows[a->sel]->pid_text);
		return ACT_NONE;
	default:
		return ACT_NONE;
	}
	return ACT_REDRAW;
}
