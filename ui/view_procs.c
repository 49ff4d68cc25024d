/*
 * view_procs: the process table, the home view.  One row per process seen;
 * sortable by any column, filtered by text.  The selection follows its
 * process when rows move: tbl remembers the process, a->pos the row.
 *
 * Exited processes leave the table EXITED_GRACE seconds after their exit
 * (x keeps them); the tree and the logs still have them.
 *
 * Columns are as wide as the widest text they have shown (a running
 * maximum, so that widths do not jump as rows scroll or come and go),
 * with one space between two.  When the terminal is too narrow, CURRENT
 * gives way first, then HEAP and REDS, then NAME shrinks, then MEM and
 * REDS/s go (what a busy or a big process is told by); a pid is never
 * cut, it is what tells two rows apart, and the counts and the sort
 * column stay.
 *
 * SENT 30s and RECV 30s draw a process's sends and receives a second
 * over the last 30 seconds as sparklines (src/base/spark.c), each scaled to
 * its own largest second (the counts say how much), newest on the right;
 * they sort by the sum of those seconds.  On a narrow screen they give
 * way before anything else: down to 10 seconds each, then gone.
 *
 * Top mode (O, :top) keeps the N processes that lead by one column: for
 * S/s and R/s of the processes counted (every traced one); for MEM,
 * REDS/s and MQ of the whole node, whose agents look through every
 * process a slice a second and sample the best they found with the rows
 * on screen (nif/beamscope_info.erl, Top-N).  A row whose numbers are
 * older than the newest sample by more than TOP_STALE_MS is not ranked:
 * it was sampled once (on screen, or busy) and may have changed since.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "clock.h"
#include "control.h"
#include "draw.h"
#include "rerender.h"
#include "sbuf.h"
#include "spark.h"
#include "top.h"
#include "ui.h"
#include "view_chart.h"
#include "view_proc.h"
#include "view_procs.h"
#include "xalloc.h"

/* The process table as last drawn: filtered and sorted.  The rows are
 * rebuilt only when what they come from changed (the store's generation,
 * the filter, the sort, the exited shown or not, an exited row's grace
 * running out); a redraw with none of that changed sorts nothing. */
static struct procs_table {
	struct proc **rows;     /* the store's (or frozen's); valid until the
				 * store changes */
	size_t nrows, cap;
	size_t nhidden;         /* exited rows past their grace, not shown */
	bool built;             /* rows match the key below */
	uint64_t built_gen;     /* the store's generation they were built at */
	uint64_t hide_at;       /* the store tick the next exited row hides */
	char built_filter[256];
	int built_sort, built_node;
	bool built_asc, built_exited;
	int built_top, built_top_n;
	int wmax[COL__COUNT];   /* the widest text each column has shown */
	uint64_t frozen_ticks;  /* paused: the store's ticks then */
	long long frozen_ms;    /* ... and the clock then */
	bool have_sel;
	struct bs_pid sel_pid;  /* keeps the selection on its process */
	struct bs_pid *shown;   /* the rows on screen at the last draw */
	size_t nshown, shown_cap;
	uint64_t sampled_sum;   /* the set last sent to be sampled, hashed */
	long long sampled_ms;   /* ... and when */
	/* paused: the processes as they were, which the table shows until
	 * the display resumes; their strings are copies */
	struct proc *frozen;
	size_t nfrozen;
	bool is_frozen;
	bool show_exited;       /* exited processes stay in the table */
	int sort_col;           /* COL_*, the order of the rows */
	bool sort_asc;
	char filter[256];       /* only the rows that match it (matches) */
} tbl = { .sort_col = COL_RPS };

int procs_sort_col(const struct app *a)
{
	(void)a;
	return tbl.sort_col;
}

bool procs_sort_asc(const struct app *a)
{
	(void)a;
	return tbl.sort_asc;
}

void procs_set_sort(struct app *a, int col, bool asc)
{
	(void)a;
	tbl.sort_col = col;
	tbl.sort_asc = asc;
}

const char *procs_filter(const struct app *a)
{
	(void)a;
	return tbl.filter;
}

void procs_set_filter(struct app *a, const char *text)
{
	(void)a;
	snprintf(tbl.filter, sizeof(tbl.filter), "%s", text);
}

const struct col_info proc_cols[COL__COUNT] = {
#define X(id, key, title) [COL_##id] = { key, title },
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

#define EXITED_GRACE 5   /* seconds an exited process stays in the table */
#define TOP_STALE_MS 2500
#define NAME_MIN 12       /* NAME and CURRENT give way down to this */
#define CURRENT_MIN 12
#define SPARK_MIN 10      /* seconds a sparkline shows before it goes */

/* The store's seconds as the table sees them: paused, when it froze. */
static uint64_t table_ticks(const struct app *a)
{
	return tbl.is_frozen ? tbl.frozen_ticks : a->store.ticks;
}

/* The clock as the table sees it, likewise: how old a size is. */
static long long table_ms(void)
{
	return tbl.is_frozen ? tbl.frozen_ms : clock_mono_ms();
}

static bool exited_hidden(const struct app *a, const struct proc *p)
{
	return p->exited && !tbl.show_exited &&
		table_ticks(a) - p->exit_tick >= EXITED_GRACE;
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
		free(t->frozen[i].hist);
	}
	free(t->frozen);
	t->frozen = NULL;
	t->nfrozen = 0;
	t->is_frozen = false;
	t->nrows = 0;   /* the rows pointed into the copies */
	t->built = false;
}

void procs_freeze(struct app *a, bool on)
{
	struct procs_table *t = &tbl;
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
		if (p->hist) {
			struct proc_history *h = xmalloc(sizeof(*h));
			*h = *p->hist;
			p->hist = h;
		}
	}
	t->nfrozen = st->nprocs;
	t->frozen_ticks = st->ticks;
	t->frozen_ms = clock_mono_ms();
	t->is_frozen = true;
}

/* Are the rows as they would be built now? */
static bool procs_current(const struct app *a)
{
	const struct procs_table *t = &tbl;
	return t->built && t->built_gen == a->store.generation &&
		table_ticks(a) < t->hide_at && t->built_sort == tbl.sort_col &&
		t->built_top == top_col(a) && t->built_top_n == top_n(a) &&
		t->built_asc == tbl.sort_asc && t->built_node == a->node_filter &&
		t->built_exited == tbl.show_exited &&
		!strcmp(t->built_filter, tbl.filter);
}

/* Top mode: of the rows, the top_n that lead by top_col; for a sampled
 * column only the rows sampled lately, and not exited. */
static void top_rows(struct app *a)
{
	struct procs_table *t = &tbl;
	if (top_sampled(top_col(a))) {
		int64_t newest = 0;
		for (size_t i = 0; i < t->nrows; i++)
			if (t->rows[i]->reds_ms > newest)
				newest = t->rows[i]->reds_ms;
		size_t k = 0;
		for (size_t i = 0; i < t->nrows; i++) {
			const struct proc *p = t->rows[i];
			bool fresh = p->reds >= 0 && !p->exited &&
				p->reds_ms >= newest - TOP_STALE_MS &&
				(top_col(a) != COL_REDSPS || p->rreds >= 0);
			if (fresh)
				t->rows[k++] = t->rows[i];
		}
		t->nrows = k;
	}
	procs_sort_rows(t->rows, t->nrows, top_col(a), false);
	if (t->nrows > (size_t)top_n(a))
		t->nrows = (size_t)top_n(a);
}

/* Rebuild the rows: filtered and sorted, the selection on its process.
 * Paused, from the processes as they were. */
static void procs_rebuild(struct app *a)
{
	struct store *st = &a->store;
	struct procs_table *t = &tbl;
	struct list *l = &a->pos[VIEW_PROCS];
	size_t n = t->is_frozen ? t->nfrozen : st->nprocs;
	if (procs_current(a)) {
		list_fit(l, LIST_SELECT, (int)t->nrows, l->page);
		return;
	}
	if (t->cap < n) {
		t->cap = n + 64;
		t->rows = xrealloc(t->rows, t->cap * sizeof(*t->rows));
	}
	t->nrows = 0;
	t->nhidden = 0;
	t->hide_at = UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		struct proc *p = t->is_frozen ? &t->frozen[i] : st->procs[i];
		if (!matches(a, p, tbl.filter))
			continue;
		if (exited_hidden(a, p)) {
			t->nhidden++;
			continue;
		}
		if (p->exited && !tbl.show_exited &&
		    p->exit_tick + EXITED_GRACE < t->hide_at)
			t->hide_at = p->exit_tick + EXITED_GRACE;
		t->rows[t->nrows++] = p;
	}
	t->built = true;
	t->built_gen = st->generation;
	t->built_sort = tbl.sort_col;
	t->built_asc = tbl.sort_asc;
	t->built_node = a->node_filter;
	t->built_exited = tbl.show_exited;
	t->built_top = top_col(a);
	t->built_top_n = top_n(a);
	snprintf(t->built_filter, sizeof(t->built_filter), "%s", tbl.filter);
	if (top_col(a) >= 0)
		top_rows(a);
	procs_sort_rows(t->rows, t->nrows, tbl.sort_col, tbl.sort_asc);

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

/* A size as the table writes it: "-" until sampled, ">5000k" for what
 * it is at least (the agent did not measure it: too dear for the
 * target), "~6400k" for a measured value STORE_STALE_MS old or more. */
static void size_text(const struct proc_size *z,
		      char *out, size_t n)
{
	if (z->bytes < 0) {
		snprintf(out, n, "-");
		return;
	}
	char v[16];   /* "9223372036854M" at most */
	fmt_num(v, sizeof(v), (unsigned long)z->bytes);
	snprintf(out, n, "%s%s", z->at_least ? ">" :
		 store_size_stale(z, table_ms()) ? "~" : "", v);
}

/* The texts of a row, column by column. */
static void row_texts(const struct app *a, const struct proc *p,
		      char num[COL__COUNT][24], const char *text[COL__COUNT])
{
	static const enum proc_col counts[] = { COL_SENDS, COL_SPS, COL_RECEIVES,
						COL_RPS, COL_SPAWNS };
	unsigned long v[] = { p->sends, p->rsends, p->receives, p->rreceives,
			      p->spawns };
	if (a->multi)   /* the node has a column of its own */
		app_local_pid(p->pid, num[COL_PID], sizeof(num[COL_PID]));
	text[COL_PID] = a->multi ? num[COL_PID] : p->pid_text;
	text[COL_NAME] = label(p);
	text[COL_NODE] = app_node_name(a, (int)p->pid.node);
	text[COL_CURRENT] = p->exited ? "(exited)" : p->current ? p->current : "";
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		fmt_num(num[counts[i]], sizeof(num[0]), v[i]);
		text[counts[i]] = num[counts[i]];
	}
	if (p->mqlen >= 0)
		fmt_num(num[COL_MQ], sizeof(num[0]), (unsigned long)p->mqlen);
	else
		strcpy(num[COL_MQ], "-");
	text[COL_MQ] = num[COL_MQ];
	/* the VM's alarms: marked, with how many */
	if (p->alarms)
		snprintf(num[COL_ALARMS], sizeof(num[0]), "!%lu", p->alarms);
	else
		num[COL_ALARMS][0] = '\0';
	text[COL_ALARMS] = num[COL_ALARMS];
	/* bytes in k and M like the counts; "-" until sampled */
	static const enum proc_col sampled[] = { COL_REDS, COL_REDSPS };
	long sv[] = { p->reds, p->rreds };
	for (size_t i = 0; i < sizeof(sampled) / sizeof(sampled[0]); i++) {
		if (sv[i] >= 0)
			fmt_num(num[sampled[i]], sizeof(num[0]),
				(unsigned long)sv[i]);
		else
			strcpy(num[sampled[i]], "-");
		text[sampled[i]] = num[sampled[i]];
	}
	size_text(&p->memory, num[COL_MEM], sizeof(num[0]));
	size_text(&p->heap, num[COL_HEAP], sizeof(num[0]));
	text[COL_MEM] = num[COL_MEM];
	text[COL_HEAP] = num[COL_HEAP];
	/* the sparklines are drawn to their width (spark_row) */
	text[COL_SENT30] = text[COL_RECV30] = "";
}

static bool is_spark(int col)
{
	return col == COL_SENT30 || col == COL_RECV30;
}

/* A row's sparkline of width w: its newest seconds, scaled to their
 * largest. */
static void spark_row(const struct app *a, const struct proc *p, int col,
		      int w, struct sbuf *out)
{
	struct spark sp = { .n = 0 };
	unsigned n = p->hist ? p->hist->n : 0;
	for (unsigned i = n; i-- > 0;)
		spark_push(&sp, col == COL_SENT30 ?
			   store_hist_sends(p->hist, i) :
			   store_hist_receives(p->hist, i));
	sbuf_reset(out);
	spark_text(out, &sp, (unsigned)(w > 0 ? w : 0), 0, a->ascii);
}

/* The alarms' column: while they are on, or once one came (a recording). */
static bool alarms_shown(const struct app *a)
{
	return a->store.alarms || session_alarm_spec(a->s);
}

/* Column widths from what they have shown; a hidden column is -1 (NODE
 * with a single node, ALARM while there are none, CURRENT when there is
 * no room for it). */
static void widths(const struct app *a, int w[COL__COUNT])
{
	const struct procs_table *t = &tbl;
	int total = -1;   /* no space after the last column */
	for (int i = 0; i < COL__COUNT; i++) {
		int title = (int)strlen(proc_cols[i].title);
		w[i] = t->wmax[i] > title ? t->wmax[i] : title;
		if (is_spark(i))
			w[i] = STORE_HISTORY;
		if ((i == COL_NODE && !a->multi) ||
		    (i == COL_ALARMS && !alarms_shown(a)))
			w[i] = -1;
		else
			total += w[i] + 1;
	}
	/* too wide: CURRENT gives way, then HEAP, REDS, NAME, MEM, REDS/s,
	 * NODE; sorted by CURRENT, the others give way before it */
	static const struct give {
		enum proc_col col;
		int min;
	} by_default[] = { { COL_RECV30, SPARK_MIN }, { COL_SENT30, SPARK_MIN },
			   { COL_RECV30, 0 }, { COL_SENT30, 0 },
			   { COL_CURRENT, CURRENT_MIN }, { COL_CURRENT, 0 },
			   { COL_HEAP, 0 }, { COL_REDS, 0 },
			   { COL_NAME, NAME_MIN }, { COL_MEM, 0 },
			   { COL_REDSPS, 0 }, { COL_NODE, NAME_MIN } },
	  by_current[] = { { COL_RECV30, SPARK_MIN }, { COL_SENT30, SPARK_MIN },
			   { COL_RECV30, 0 }, { COL_SENT30, 0 },
			   { COL_HEAP, 0 }, { COL_REDS, 0 },
			   { COL_NAME, NAME_MIN }, { COL_MEM, 0 },
			   { COL_REDSPS, 0 }, { COL_CURRENT, CURRENT_MIN },
			   { COL_NODE, NAME_MIN } };
	const struct give *give = tbl.sort_col == COL_CURRENT ? by_current :
		by_default;
	size_t ngive = tbl.sort_col == COL_CURRENT ?
		sizeof(by_current) / sizeof(by_current[0]) :
		sizeof(by_default) / sizeof(by_default[0]);
	for (size_t g = 0; g < ngive; g++) {
		int c = give[g].col, over = total - COLS;
		if (over <= 0)
			break;
		if (w[c] < 0)
			continue;
		if (!give[g].min && c != tbl.sort_col) {
			total -= w[c] + 1;
			w[c] = -1;
			continue;
		}
		int cut = w[c] - give[g].min;
		if (cut > over)
			cut = over;
		if (cut > 0) {
			w[c] -= cut;
			total -= cut;
		}
	}
}

/* A cell of width w and the space after it; -1: not shown. */
static void cell(int y, int *x, int w, const char *s, bool right, int attr)
{
	char buf[256];
	if (w < 0)
		return;
	if (right)
		snprintf(buf, sizeof(buf), "%*s", w, s);
	else
		snprintf(buf, sizeof(buf), "%s", s);
	draw_text(y, *x, w, buf, attr);
	*x += w;
	if (*x < COLS)
		draw_text(y, (*x)++, 1, "", attr);
}

static void procs_draw(struct app *a, int y, int h)
{
	struct procs_table *t = &tbl;
	struct list *l = &a->pos[VIEW_PROCS];
	int w[COL__COUNT], x = 0;
	char num[COL__COUNT][24];
	const char *text[COL__COUNT];
	static struct sbuf spark;   /* one cell's sparkline */

	procs_rebuild(a);
	list_fit(l, LIST_SELECT, (int)t->nrows, h - 1);
	/* the widths: what the rows on screen hold, and what was shown */
	for (int r = 0; r < h - 1 && l->top + r < (int)t->nrows; r++) {
		row_texts(a, t->rows[l->top + r], num, text);
		for (int i = 0; i < COL__COUNT; i++) {
			int n = draw_width(text[i]);
			if (n > t->wmax[i])
				t->wmax[i] = n;
		}
	}
	widths(a, w);

	int hdr = draw_attr(a, ROLE_HEADER);
	for (int i = 0; i < COL__COUNT; i++) {
		bool right = i >= COL_SENDS && !is_spark(i);
		/* the sort column is marked by its attribute, not its text */
		cell(y, &x, w[i], proc_cols[i].title, right, i == tbl.sort_col ?
		     (int)(hdr | A_UNDERLINE | A_BOLD) : hdr);
	}
	if (x < COLS)
		draw_text(y, x, COLS - x, "", hdr);
	y++;
	h--;

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
				draw_text(y, 0, COLS, *tbl.filter ?
					  "  no process matches the filter (/ to change it)" :
					  t->nhidden ? "  every process seen has exited (x shows them)" :
					  "  no activity yet", draw_attr(a, ROLE_DIM));
			continue;
		}
		const struct proc *p = t->rows[i];
		t->shown[t->nshown++] = p->pid;
		int attr = i == l->sel ? draw_attr(a, ROLE_SELECTED) :
			p->exited ? draw_attr(a, ROLE_DIM) : (int)A_NORMAL;
		if (app_tagged(a, p->pid) >= 0)   /* tagged for the chart */
			attr |= A_BOLD | A_UNDERLINE;
		row_texts(a, p, num, text);
		x = 0;
		for (int c = 0; c < COL__COUNT; c++) {
			if (is_spark(c) && w[c] > 0) {
				spark_row(a, p, c, w[c], &spark);
				text[c] = sbuf_str(&spark);
			}
			cell(y + r, &x, w[c], text[c], c >= COL_SENDS &&
			     !is_spark(c), attr);
		}
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
		tbl.sort_col = (tbl.sort_col + COL__COUNT + step) % COL__COUNT;
	while (tbl.sort_col == COL_NODE && !a->multi);
}

static int procs_request(struct app *a, enum request req)
{
	struct procs_table *t = &tbl;
	struct list *l = &a->pos[VIEW_PROCS];
	procs_rebuild(a);
	if (list_request(l, LIST_SELECT, req)) {
		if (t->nrows)
			t->sel_pid = t->rows[l->sel]->pid;
		return ACT_REDRAW;
	}
	for (size_t i = 0; i < sizeof(sort_keys) / sizeof(sort_keys[0]); i++)
		if (sort_keys[i].req == req) {
			tbl.sort_col = sort_keys[i].col;
			tbl.sort_asc = sort_keys[i].asc;
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
		tbl.sort_asc = !tbl.sort_asc;
		return ACT_REDRAW;
	case REQ_TOP:
		return app_top(a, top_col(a) >= 0 ? -1 : tbl.sort_col, top_n(a));
	case REQ_EXITED:
		tbl.show_exited = !tbl.show_exited;
		app_msg(a, false, tbl.show_exited ? "exited processes stay in the "
			"table; x hides them" : "exited processes leave the table "
			"%d seconds after they exit; x shows them", EXITED_GRACE);
		return ACT_REDRAW;
	case REQ_TAG:   /* then the next row, as htop does */
		if (!t->nrows)
			return ACT_NONE;
		app_tag(a, t->rows[l->sel]->pid, t->rows[l->sel]->pid_text);
		list_request(l, LIST_SELECT, REQ_DOWN);
		t->sel_pid = t->rows[l->sel]->pid;
		return ACT_REDRAW;
	case REQ_ENTER:
		if (!t->nrows)
			return ACT_NONE;
		return app_focus(a, t->rows[l->sel]->pid, t->rows[l->sel]->pid_text);
	default:
		return ACT_NONE;
	}
}

/* "3/120  16224 exited hidden (x)  sort R/s desc  filter "x"": the rows
 * as last drawn; what is hidden comes early, where narrow lines still
 * show it */
static void procs_where(struct app *a, char *out, size_t outsz)
{
	const struct list *l = &a->pos[VIEW_PROCS];
	const struct procs_table *t = &tbl;
	struct sbuf sb = SBUF_INIT;
	sbuf_addf(&sb, "%d/%zu", t->nrows ? l->sel + 1 : 0, t->nrows);
	if (chart_ntags(a))
		sbuf_addf(&sb, "  %d tagged", chart_ntags(a));
	if (t->nhidden)
		sbuf_addf(&sb, "  %zu exited hidden (x)", t->nhidden);
	if (top_col(a) >= 0)
		top_where(a, &sb);
	else
		sbuf_addf(&sb, "  sort %s %s", proc_cols[tbl.sort_col].title,
			  tbl.sort_asc ? "asc" : "desc");
	if (tbl.filter[0])
		sbuf_addf(&sb, "  filter \"%s\"", tbl.filter);
	snprintf(out, outsz, "%s", sbuf_str(&sb));
	sbuf_release(&sb);
}

void procs_invalidate(struct app *a)
{
	(void)a;
	tbl.built = false;
}

void procs_rerender(struct app *a, const struct rerender_node *rn, int nn)
{
	(void)a;
	for (size_t i = 0; tbl.is_frozen && i < tbl.nfrozen; i++) {
		struct proc *p = &tbl.frozen[i];
		if ((int)p->pid.node < nn)
			rerender_proc(p, rn[p->pid.node].from,
				      rn[p->pid.node].to);
	}
}

/* Leaving a process's log: the table comes back with that process
 * selected, so the store keeps it as it keeps the selection. */
void procs_select(struct app *a, struct bs_pid pid)
{
	(void)a;
	tbl.sel_pid = pid;
	tbl.have_sel = true;
	tbl.built = false;
}

bool procs_selected(const struct app *a, struct bs_pid *pid)
{
	(void)a;
	if (tbl.have_sel)
		*pid = tbl.sel_pid;
	return tbl.have_sel;
}

/* the store's processes are gone (:clear) */
static void procs_clear(struct app *a)
{
	(void)a;
	tbl.nrows = 0;
	tbl.built = false;
	tbl.have_sel = false;
	memset(tbl.wmax, 0, sizeof(tbl.wmax));
}

static void procs_release(struct app *a)
{
	procs_freeze(a, false);
	free(tbl.rows);
	free(tbl.shown);
	memset(&tbl, 0, sizeof(tbl));
}

const struct view_ops procs_view_ops = {
	.draw = procs_draw,
	.request = procs_request,
	.where = procs_where,
	.clear = procs_clear,
	.release = procs_release,
};

/* Have the agents sample what is on screen: when the set changes (rows
 * scrolled, sorted, filtered), and every few seconds anyway, since an
 * agent started again knows nothing of it.  The set is hashed without
 * its order, which moves as rows are sorted. */
#define SAMPLE_AGAIN_MS 5000
static void sample_shown(struct app *a, const struct bs_pid *pids, size_t n)
{
	struct procs_table *t = &tbl;
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
void app_keep_shown(struct app *a)
{
	struct procs_table *t = &tbl;
	size_t n = t->nshown;
	int ntags = chart_ntags(a);
	if (t->shown_cap < n + 1 + (size_t)ntags) {
		t->shown_cap = n + 1 + (size_t)ntags;
		t->shown = xrealloc(t->shown, t->shown_cap * sizeof(*t->shown));
	}
	if (app_focus_open(a))   /* after the rows, outside nshown */
		t->shown[n++] = log_focus(a);
	for (int i = 0; i < ntags; i++)   /* the chart's lifelines */
		t->shown[n++] = chart_tag(a, i);
	store_keep(&a->store, t->shown, n);
	sample_shown(a, t->shown, n);
}
