/*
 * view_procs: the process table, the home view.  One row per process seen;
 * sortable by any column, filtered by text.  The selection follows its
 * process when rows move: a->table remembers the process, a->pos the row.
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
	return store_proc_title(p);
}

static bool matches(const struct app *a, const struct proc *p, const char *f)
{
	if (a->node_filter >= 0 && (int)p->pid.node != a->node_filter)
		return false;
	if (!*f)
		return true;
	return strstr(p->pid_text, f) || (p->name && strstr(p->name, f)) ||
		(p->label && strstr(p->label, f)) ||
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

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static void unfreeze(struct procs_table *t)
{
	for (size_t i = 0; i < t->nfrozen; i++) {
		free(t->frozen[i].name);
		free(t->frozen[i].initial);
		free(t->frozen[i].label);
		free(t->frozen[i].current);
	}
	free(t->frozen);
	t->frozen = NULL;
	t->nfrozen = 0;
	t->is_frozen = false;
	t->nrows = 0;   /* the rows pointed into the copies */
}

void procs_freeze(struct app *a, bool on)
{
	struct procs_table *t = &a->table;
	struct store *st = &a->store;
	unfreeze(t);
	if (!on)
		return;
	t->frozen = xmalloc((st->nprocs ? st->nprocs : 1) * sizeof(*t->frozen));
	for (size_t i = 0; i < st->nprocs; i++) {
		struct proc *p = &t->frozen[i];
		*p = *st->procs[i];
		p->name = dup_or_null(p->name);
		p->initial = dup_or_null(p->initial);
		p->label = dup_or_null(p->label);
		p->current = dup_or_null(p->current);
		p->reason = NULL;   /* not shown here */
	}
	t->nfrozen = st->nprocs;
	t->is_frozen = true;
}

/* Rebuild the rows: filtered and sorted, the selection on its process.
 * Paused, from the processes as they were. */
static void procs_rebuild(struct app *a)
{
	struct store *st = &a->store;
	struct procs_table *t = &a->table;
	struct list *l = &a->pos[VIEW_PROCS];
	size_t n = t->is_frozen ? t->nfrozen : st->nprocs;
	if (t->cap < n) {
		t->cap = n + 64;
		t->rows = xrealloc(t->rows, t->cap * sizeof(*t->rows));
	}
	t->nrows = 0;
	for (size_t i = 0; i < n; i++) {
		struct proc *p = t->is_frozen ? &t->frozen[i] : st->procs[i];
		if (matches(a, p, a->filter))
			t->rows[t->nrows++] = p;
	}
	sort_col = a->sort_col;
	sort_asc = a->sort_asc;
	if (t->nrows > 1)
		qsort(t->rows, t->nrows, sizeof(*t->rows), cmp_rows);

	if (t->have_sel) {
		for (size_t i = 0; i < t->nrows; i++)
			if (bs_pid_eq(t->rows[i]->pid, t->sel_pid)) {
				l->sel = (int)i;
				break;
			}
	}
	list_fit(l, LIST_SELECT, (int)t->nrows, l->page);
	if (t->nrows) {
		t->have_sel = true;
		t->sel_pid = t->rows[l->sel]->pid;
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

static void procs_draw(struct app *a, int y, int h)
{
	struct procs_table *t = &a->table;
	struct list *l = &a->pos[VIEW_PROCS];
	int w[COL__COUNT], x = 0;
	widths(a, w);
	int hdr = draw_attr(a, ROLE_HEADER);
	for (int i = 0; i < COL__COUNT; i++) {
		char title[64];
		bool right = i >= COL_SENDS;
		/* the sort column is marked by its attribute, not its text */
		snprintf(title, sizeof(title), "%s", proc_cols[i].title);
		cell(y, &x, w[i], title, right, i == a->sort_col ?
		     (int)(hdr | A_UNDERLINE | A_BOLD) : hdr);
	}
	if (x < COLS)
		draw_text(y, x, COLS - x, "", hdr);
	y++;
	h--;

	procs_rebuild(a);
	list_fit(l, LIST_SELECT, (int)t->nrows, h);
	size_t room = (size_t)(h > 0 ? h : 0) + 1;   /* the rows, the selection */
	if (t->shown_cap < room) {
		t->shown_cap = room;
		t->shown = xrealloc(t->shown, t->shown_cap * sizeof(*t->shown));
	}
	t->nshown = 0;
	if (t->have_sel)
		t->shown[t->nshown++] = t->sel_pid;

	for (int r = 0; r < h; r++) {
		int i = l->top + r;
		move(y + r, 0);
		clrtoeol();
		if (i >= (int)t->nrows) {
			if (i == 0 && r == 0)
				draw_text(y, 0, COLS, *a->filter ?
					  "  no process matches the filter (/ to change it)" :
					  "  no activity yet", draw_attr(a, ROLE_DIM));
			continue;
		}
		const struct proc *p = t->rows[i];
		t->shown[t->nshown++] = p->pid;
		int attr = i == l->sel ? draw_attr(a, ROLE_SELECTED) :
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

/* P, S, R, M: a column, and its direction */
static const struct {
	enum request req;
	enum proc_col col;
	bool asc;
} sort_keys[] = {
	{ REQ_SORT_PID, COL_PID, true }, { REQ_SORT_SPS, COL_SPS, false },
	{ REQ_SORT_RPS, COL_RPS, false }, { REQ_SORT_MQ, COL_MQ, false },
};

/* < and >: the next column either way; NODE only with several nodes */
static void sort_step(struct app *a, int step)
{
	do
		a->sort_col = (a->sort_col + COL__COUNT + step) % COL__COUNT;
	while (a->sort_col == COL_NODE && !a->multi);
}

static int procs_request(struct app *a, enum request req)
{
	struct procs_table *t = &a->table;
	struct list *l = &a->pos[VIEW_PROCS];
	procs_rebuild(a);
	if (list_request(l, LIST_SELECT, req)) {
		if (t->nrows)
			t->sel_pid = t->rows[l->sel]->pid;
		return ACT_REDRAW;
	}
	for (size_t i = 0; i < sizeof(sort_keys) / sizeof(sort_keys[0]); i++)
		if (sort_keys[i].req == req) {
			a->sort_col = sort_keys[i].col;
			a->sort_asc = sort_keys[i].asc;
			return ACT_REDRAW;
		}
	switch (req) {
	case REQ_SORT_PREV:
		sort_step(a, -1);
		return ACT_REDRAW;
	case REQ_SORT_NEXT:
		sort_step(a, 1);
		return ACT_REDRAW;
	case REQ_SORT_INVERT:
		a->sort_asc = !a->sort_asc;
		return ACT_REDRAW;
	case REQ_ENTER:
		if (!t->nrows)
			return ACT_NONE;
		return app_focus(a, t->rows[l->sel]->pid, t->rows[l->sel]->pid_text);
	default:
		return ACT_NONE;
	}
}

/* "3/120  sort R/s desc  filter "x"": the rows as last drawn */
static void procs_where(struct app *a, char *out, size_t outsz)
{
	const struct list *l = &a->pos[VIEW_PROCS];
	int n = snprintf(out, outsz, "%d/%zu  sort %s %s",
			 a->table.nrows ? l->sel + 1 : 0, a->table.nrows,
			 proc_cols[a->sort_col].title, a->sort_asc ? "asc" : "desc");
	if (a->filter[0] && n > 0 && (size_t)n < outsz)
		snprintf(out + n, outsz - (size_t)n, "  filter \"%s\"", a->filter);
}

const struct view_ops procs_view_ops = {
	.draw = procs_draw,
	.request = procs_request,
	.where = procs_where,
};
