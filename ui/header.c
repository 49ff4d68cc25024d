/*
 * header: the node at a glance, above the process table, as htop's meters
 * are above its process list.  Scheduler utilisation as bars, memory,
 * processes and ports with their limits, run queue lengths, and events and
 * drops a second over the last minute as sparklines.
 *
 * What it shows comes from the node's agent once a second while the header
 * is on (session_node_stats; the agent raises scheduler_wall_time for it
 * and lowers it again, PROTOCOL.md), and from the rates the session keeps
 * per node.  With several nodes it shows one: the one the table shows
 * (:node), else the first in the session; its name leads the counts line.
 *
 * The header takes at most a fifth of the view's rows (the table keeps
 * the rest), and gives way by parts: at a few rows, many schedulers fold
 * into one bar of their average and the largest; with fewer still, memory
 * goes, then the bars; below two rows it is not drawn.  No line is wider
 * than the screen (draw_text cuts); only ASCII is drawn but the
 * sparklines, which follow a->ascii.
 */
#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "clock.h"
#include "control.h"
#include "draw.h"
#include "header.h"
#include "nodestat.h"
#include "sbuf.h"
#include "spark.h"

#define HEADER_MAX 10       /* rows at most, however tall the screen */
#define BAR_MIN 16          /* a scheduler's bar: "12[|||    45.2%]" */
#define BAR_WIDE 40         /* ... and the widest worth drawing */
#define STALE_MS 3500       /* no sample for this long: say so */

/* The node the header shows: the table's, else the first present. */
static int header_node(const struct app *a)
{
	if (a->node_filter >= 0 && a->node_filter < session_nnodes(a->s))
		return a->node_filter;
	for (int i = 0; i < session_nnodes(a->s); i++)
		if (session_node(a->s, i)->present)
			return i;
	return 0;
}

/* The layout for a view of h rows and COLS columns: how many rows of
 * bars (0: none; with fold, one bar for all), memory or not, counts and
 * rates always.  The total is what it returns. */
struct layout {
	int bar_rows, per_row, bar_w;
	bool fold, mem, counts, rates;
};

static int layout(const struct app *a, int h, struct layout *lo)
{
	memset(lo, 0, sizeof(*lo));
	int budget = h / 5;
	if (budget > HEADER_MAX)
		budget = HEADER_MAX;
	if (!a->header || budget < 2 || session_nnodes(a->s) < 1)
		return 0;
	const struct node_view *n = session_node(a->s, header_node(a));
	int nsched = n->nstats->have ? n->nstats->last.nsched : 0;

	lo->counts = lo->rates = true;
	int left = budget - 2;
	if (left >= 2) {
		lo->mem = true;
		left--;
	}
	if (left < 1)
		return budget - left;
	/* the bars: as many to a row as fit at BAR_MIN, as wide as room
	 * allows up to BAR_WIDE */
	int per_row = COLS / (BAR_MIN + 1);
	if (per_row < 1)
		per_row = 1;
	if (nsched > 0 && per_row > nsched)
		per_row = nsched;
	int rows = nsched > 0 ? (nsched + per_row - 1) / per_row : 1;
	if (nsched <= 0 || rows > left) {
		lo->fold = true;
		rows = 1;
		per_row = 1;
	} else {
		/* as many to each row, so that they are as wide as can be */
		per_row = (nsched + rows - 1) / rows;
	}
	lo->bar_rows = rows;
	lo->per_row = per_row;
	lo->bar_w = COLS / per_row - 1;
	if (!lo->fold && lo->bar_w > BAR_WIDE * 2)
		lo->bar_w = BAR_WIDE * 2;
	return budget - left + rows;
}

int header_lines(struct app *a, int h)
{
	struct layout lo;
	return layout(a, h, &lo);
}

/* "12[|||||||     45.2%]" in width w at x: label, then the bar */
static void bar(struct app *a, int y, int x, int w, const char *label,
		int permille, const char *extra)
{
	char pct[32], inner[256];
	int lw = (int)strlen(label);
	int iw = w - lw - 2;   /* inside the brackets */
	if (iw < 1)
		return;
	if (iw > (int)sizeof(inner) - 1)
		iw = (int)sizeof(inner) - 1;
	if (permille < 0)
		snprintf(pct, sizeof(pct), "-%s", extra);
	else
		snprintf(pct, sizeof(pct), "%d.%d%%%s", permille / 10,
			 permille % 10, extra);
	int fill = permille > 0 ? (permille * iw + 500) / 1000 : 0;
	if (permille > 0 && fill < 1)
		fill = 1;
	int pl = (int)strlen(pct);
	/* the bars, then the number over their right end, as htop */
	for (int i = 0; i < iw; i++)
		inner[i] = i < fill ? '|' : ' ';
	inner[iw] = '\0';
	if (pl <= iw)
		memcpy(inner + iw - pl, pct, (size_t)pl);
	draw_text(y, x, lw + 1, label, A_BOLD);
	draw_text(y, x + lw, 1, "[", A_BOLD);
	int cut = fill < iw - pl ? fill : iw - pl;
	if (cut < 0)
		cut = 0;
	char part[256];
	snprintf(part, sizeof(part), "%.*s", cut, inner);
	draw_text(y, x + lw + 1, cut, part, draw_attr(a, ROLE_RECEIVE) | A_BOLD);
	draw_text(y, x + lw + 1 + cut, iw - cut, inner + cut, A_NORMAL);
	draw_text(y, x + lw + 1 + iw, 1, "]", A_BOLD);
}

static void bars(struct app *a, const struct node_sample *s, bool have,
		 const struct layout *lo, int y)
{
	if (lo->fold) {
		/* one bar of the average; the busiest beside it */
		int avg = -1, max = -1;
		char extra[48] = "";
		if (have && nodestat_util(s, &avg, &max))
			snprintf(extra, sizeof(extra), " max %d.%d%% of %d",
				 max / 10, max % 10, s->nsched);
		bar(a, y, 0, COLS, "Sched", avg, extra);
		return;
	}
	int digits = s->nsched >= 100 ? 3 : s->nsched >= 10 ? 2 : 1;
	for (int i = 0; i < s->nsched; i++) {
		int row = i / lo->per_row, col = i % lo->per_row;
		char label[16];
		if (row >= lo->bar_rows)
			break;
		snprintf(label, sizeof(label), "%*d", digits, i + 1);
		bar(a, y + row, col * (lo->bar_w + 1), lo->bar_w, label,
		    s->util[i], "");
	}
}

static void mem_line(const struct node_sample *s, bool have, int y)
{
	static const char *const names[NODESTAT_MEM__COUNT] = {
		"total", "processes", "binary", "ets", "atom",
	};
	struct sbuf sb = SBUF_INIT;
	sbuf_addstr(&sb, "Mem");
	for (int i = 0; i < NODESTAT_MEM__COUNT; i++) {
		char v[24];
		nodestat_bytes(v, sizeof(v), have ? s->mem[i] : -1);
		sbuf_addf(&sb, " %s %s%s", names[i], v,
			  i + 1 < NODESTAT_MEM__COUNT ? " " : "");
	}
	draw_text(y, 0, COLS, sbuf_str(&sb), A_NORMAL);
	sbuf_release(&sb);
}

static void count_pair(struct sbuf *sb, const char *what, long long n,
		       long long limit)
{
	if (n < 0)
		sbuf_addf(sb, "%s -", what);
	else
		sbuf_addf(sb, "%s %lld/%lld", what, n, limit);
}

static void counts_line(struct app *a, const struct node_view *n, int y)
{
	const struct node_sample *s = &n->nstats->last;
	bool have = n->nstats->have;
	struct sbuf sb = SBUF_INIT;
	long long now = clock_mono_ms();
	if (a->multi)
		sbuf_addf(&sb, "%s: ", app_node_name(a, n->idx));
	count_pair(&sb, "Procs", have ? s->procs : -1, s->proc_limit);
	sbuf_addstr(&sb, "  ");
	count_pair(&sb, "Ports", have ? s->ports : -1, s->port_limit);
	if (have && s->nrq) {
		unsigned long long total = 0;
		for (int i = 0; i < s->nrq; i++)
			total += s->rq[i];
		sbuf_addf(&sb, "  RunQ %llu [", total);
		/* the queues one by one while they fit */
		for (int i = 0; i < s->nrq; i++) {
			if ((int)sb.len + 12 > COLS) {
				sbuf_addstr(&sb, " ...");
				break;
			}
			sbuf_addf(&sb, "%s%u", i ? " " : "", s->rq[i]);
		}
		sbuf_addch(&sb, ']');
		if (s->dirty_rq >= 0)
			sbuf_addf(&sb, " dirty %lld", s->dirty_rq);
	} else {
		sbuf_addstr(&sb, "  RunQ -");
	}
	if (a->store.alarms || session_alarm_spec(a->s))
		sbuf_addf(&sb, "  Alarms %llu",
			  (unsigned long long)a->store.alarms);
	if (!session_is_recording(a->s) && n->state != SN_TRACING &&
	    n->state != SN_READY && n->state != SN_STARTING)
		sbuf_addf(&sb, "  (%s)", n->state_name);
	else if (!have)
		sbuf_addstr(&sb, "  (waiting for the node's first sample)");
	else if (now - n->nstats->at_ms > STALE_MS)
		sbuf_addf(&sb, "  (no sample for %llds)",
			  (now - n->nstats->at_ms) / 1000);
	draw_text(y, 0, COLS, sbuf_str(&sb), A_NORMAL);
	sbuf_release(&sb);
}

/* "Events 1234/s <spark>  Drops 0/s <spark>": the sparklines share what
 * the numbers leave, two parts to one, and a minute at most each */
static void rates_line(struct app *a, const struct node_view *n, int y)
{
	const struct node_stats *ns = n->nstats;
	char ev[48], dr[48];
	snprintf(ev, sizeof(ev), "Events %lu/s ",
		 (unsigned long)spark_at(&ns->events, 0));
	snprintf(dr, sizeof(dr), "  Drops %lu/s ",
		 (unsigned long)spark_at(&ns->drops, 0));
	int room = COLS - (int)strlen(ev) - (int)strlen(dr);
	if (room < 0)
		room = 0;
	int ew = room * 2 / 3, dw = room - ew;
	if (ew > SPARK_MAX)
		ew = SPARK_MAX;
	if (dw > SPARK_MAX)
		dw = SPARK_MAX;
	struct sbuf es = SBUF_INIT, ds = SBUF_INIT;
	spark_text(&es, &ns->events, (unsigned)ew, 0, a->ascii);
	spark_text(&ds, &ns->drops, (unsigned)dw, 0, a->ascii);
	int x = 0;
	draw_text(y, x, COLS - x, ev, A_NORMAL);
	x += (int)strlen(ev);
	draw_text(y, x, ew, sbuf_str(&es), draw_attr(a, ROLE_RECEIVE));
	x += ew;
	draw_text(y, x, COLS - x, dr, A_NORMAL);
	x += (int)strlen(dr);
	if (x < COLS)
		draw_text(y, x, COLS - x, sbuf_str(&ds),
			  spark_at(&ns->drops, 0) ? draw_attr(a, ROLE_ERROR) :
			  draw_attr(a, ROLE_DIM));
	sbuf_release(&es);
	sbuf_release(&ds);
}

void header_draw(struct app *a, int y, int h)
{
	struct layout lo;
	int rows = layout(a, h, &lo);
	if (!rows)
		return;
	const struct node_view *n = session_node(a->s, header_node(a));
	const struct node_sample *s = &n->nstats->last;
	bool have = n->nstats->have;
	for (int r = 0; r < rows; r++) {
		move(y + r, 0);
		clrtoeol();
	}
	if (lo.bar_rows) {
		bars(a, s, have, &lo, y);
		y += lo.bar_rows;
	}
	if (lo.mem)
		mem_line(s, have, y++);
	counts_line(a, n, y++);
	rates_line(a, n, y);
}

int app_header(struct app *a, bool on)
{
	if (on && !app_live(a, "the header"))
		return ACT_REDRAW;
	a->header = on;
	session_node_stats(a->s, on);
	app_msg(a, false, on ? "header on: the node at a glance, sampled once "
		"a second; m hides it" : "header off; m shows it");
	return ACT_REDRAW;
}
