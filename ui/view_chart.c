/*
 * view_chart: the live sequence chart of the tagged processes.  One
 * column per lifeline (at most CHART_LINES), one more for "others" at the
 * right edge; one row per message, spawn, exit or link (src/model/chart.c makes
 * the rows).  A message is an arrow from its sender's column to its
 * receiver's, with its time and its text; a message not (yet) received
 * is dashed and says so, one to a dead process ends in x.
 *
 * The rows are counted from the newest, like the process log: on the
 * newest row the chart follows new messages; moved back (or paused), it
 * stays on its row's event (chart.anchor) however many rows come after.
 * When the terminal is narrow, the text of a row goes to a line of its
 * own under its arrow.  Lines are ncurses' ACS characters, which ncurses
 * draws as plain ASCII on a terminal that has none.
 *
 * Tagging (Space in the process table) puts a process in focus on its
 * node so that its events are shipped; untagging takes it out, unless its
 * log is open.
 */
#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "chart.h"
#include "clock.h"
#include "control.h"
#include "draw.h"
#include "outfile.h"
#include "sbuf.h"
#include "view_chart.h"
#include "view_event.h"
#include "view_proc.h"
#include "view_procs.h"
#include "xalloc.h"

#define TIME_W 13         /* "HH:MM:SS.mmm " */
#define TEXT_MIN 24       /* less room than this: text on a line of its own */
#define COL_MIN 5
#define COL_MAX 18
#define PEERS 3           /* busiest peers charted with an untagged process */
/* ... found in what it sends in a moment, when none are stored */
#define PEER_LOOK_MS 1000
#define PEER_LOOK_SENDS 32

static struct chart_view {
	struct chart chart;
	uint64_t anchor;  /* the seq of the cursor's row when moved back */
	uint64_t cursor;  /* the seq of the cursor's row at the last draw */
	bool deltas;      /* times as deltas between rows, not wall clock */
	/* looking for the peers of the one process charted (tag_selected) */
	bool look;
	struct bs_pid look_pid;
	char look_text[48];
	uint64_t look_from;       /* its events from this seq on */
	long long look_until;     /* ms, clock_mono_ms */
} cv;

/* the processes tagged for the chart (Space): in focus on their nodes
 * while tagged; kept whatever the view does */
static struct {
	struct bs_pid pid[CHART_LINES];
	char text[CHART_LINES][48];
	uint64_t seq[CHART_LINES];  /* the store's next seq when tagged */
	int n;
} tg;

int chart_ntags(const struct app *a)
{
	(void)a;
	return tg.n;
}

struct bs_pid chart_tag(const struct app *a, int i)
{
	(void)a;
	return tg.pid[i];
}

uint64_t chart_tag_seq(const struct app *a, int i)
{
	(void)a;
	return tg.seq[i];
}

int app_tagged(const struct app *a, struct bs_pid pid)
{
	(void)a;
	for (int i = 0; i < tg.n; i++)
		if (bs_pid_eq(tg.pid[i], pid))
			return i;
	return -1;
}

/* From when the events of pid are shipped, as far as the view knows: a
 * recording holds everything it shipped, a node tracing in the event tier
 * ships everything it traces, a process whose log is open is in focus
 * since the log opened; else from now on, once its node hears of it. */
static uint64_t shipped_since(const struct app *a, struct bs_pid pid,
			      bool log_open)
{
	if (session_is_recording(a->s))
		return 0;
	if ((int)pid.node < session_nnodes(a->s) && session_node(a->s, pid.node)->present &&
	    !session_node(a->s, pid.node)->counted)
		return 0;
	if (log_open && bs_pid_eq(log_focus(a), pid))
		return log_focus_seq(a);
	return a->store.next_seq;
}

int app_tag(struct app *a, struct bs_pid pid, const char *text)
{
	int i = app_tagged(a, pid);
	bool log_open = false;
	for (int v = 0; v < a->depth; v++)
		log_open |= a->stack[v] == VIEW_PROC;
	if (i >= 0) {
		memmove(&tg.pid[i], &tg.pid[i + 1],
			(size_t)(tg.n - i - 1) * sizeof(tg.pid[0]));
		memmove(&tg.text[i], &tg.text[i + 1],
			(size_t)(tg.n - i - 1) * sizeof(tg.text[0]));
		memmove(&tg.seq[i], &tg.seq[i + 1],
			(size_t)(tg.n - i - 1) * sizeof(tg.seq[0]));
		tg.n--;
		if (!(log_open && bs_pid_eq(log_focus(a), pid)))
			node_focus(a, pid, false);
		return ACT_REDRAW;
	}
	if (tg.n == CHART_LINES) {
		app_msg(a, true, "%d processes are tagged already, the most a "
			"chart shows; Space on a tagged one untags it", CHART_LINES);
		return ACT_REDRAW;
	}
	tg.pid[tg.n] = pid;
	snprintf(tg.text[tg.n], sizeof(tg.text[0]), "%s", text);
	tg.seq[tg.n] = shipped_since(a, pid, log_open);
	tg.n++;
	node_focus(a, pid, true);
	return ACT_REDRAW;
}

void chart_lines(struct app *a, struct chart *c)
{
	chart_init(c);
	for (int i = 0; i < tg.n; i++)
		chart_add_line(c, tg.pid[i], tg.text[i], NULL,
			       tg.seq[i]);
	chart_label(c, &a->store);
}

/* The processes pid exchanged messages with in the store's events from
 * seq from on, busiest first, into peers (at most n); how many sends of
 * its own were seen in *sends.  Its receives do not name their senders:
 * a sender counts when its own send to pid is stored. */
struct peer {
	struct proc *p;
	unsigned long n;
};

static int find_peers(struct app *a, struct bs_pid self, const char *self_text,
		      uint64_t from, struct peer *peers, int n,
		      unsigned long *sends)
{
	struct peer seen[64];
	int nseen = 0;
	*sends = 0;
	if (from < store_oldest_seq(&a->store))
		from = store_oldest_seq(&a->store);
	for (uint64_t s = from; s < a->store.next_seq; s++) {
		const struct sevent *e = store_event(&a->store, s);
		if (!e || e->type != EV_SEND || !e->peer)
			continue;
		struct proc *q = NULL;
		if (bs_pid_eq(e->pid, self)) {
			++*sends;
			for (size_t i = 0; i < a->store.nprocs && !q; i++)
				if (!strcmp(a->store.procs[i]->pid_text, e->peer) ||
				    (a->store.procs[i]->name &&
				     !strcmp(a->store.procs[i]->name, e->peer)))
					q = a->store.procs[i];
		} else if (!strcmp(e->peer, self_text)) {
			q = store_proc(&a->store, e->pid);
		}
		if (!q || bs_pid_eq(q->pid, self))
			continue;
		int j;
		for (j = 0; j < nseen && seen[j].p != q; j++)
			;
		if (j == nseen) {
			if (nseen == 64)
				continue;
			seen[nseen].p = q;
			seen[nseen++].n = 0;
		}
		seen[j].n++;
	}
	int got = 0;
	for (; got < n && nseen; got++) {
		int best = 0;
		for (int j = 1; j < nseen; j++)
			if (seen[j].n > seen[best].n)
				best = j;
		peers[got] = seen[best];
		seen[best] = seen[--nseen];
	}
	return got;
}

static void tag_peers(struct app *a, const struct peer *peers, int n)
{
	for (int k = 0; k < n; k++)
		app_tag(a, peers[k].p->pid, peers[k].p->pid_text);
}

/* Nothing tagged: tag the selected process and its busiest peers, as the
 * events still in the ring tell them.  A process out of focus has none
 * stored: its events are then shipped (it is charted) and its peers are
 * the processes it sends to in the next moment (cv.look), tagged when
 * it has sent enough to rank them, or after PEER_LOOK_MS. */
static void tag_selected(struct app *a)
{
	struct bs_pid sel;
	if (!procs_selected(a, &sel))
		return;
	struct proc *p = store_proc(&a->store, sel);
	if (!p)
		return;
	struct bs_pid self = p->pid;
	char self_text[48];
	snprintf(self_text, sizeof(self_text), "%s", p->pid_text);
	struct peer peers[PEERS];
	unsigned long sends;
	int n = find_peers(a, self, self_text, 0, peers, PEERS, &sends);
	app_tag(a, self, self_text);
	tag_peers(a, peers, n);
	if (!n && app_tagged(a, self) >= 0 && !session_is_recording(a->s)) {
		cv.look = true;
		cv.look_pid = self;
		snprintf(cv.look_text, sizeof(cv.look_text), "%s", self_text);
		cv.look_from = a->store.next_seq;
		cv.look_until = clock_mono_ms() + PEER_LOOK_MS;
		app_msg(a, false, "charting %s; its peers are the processes it "
			"sends to in the next second", self_text);
		return;
	}
	app_msg(a, false, "charting %s and %d of its peers; Space in the "
		"process table tags the processes to chart", self_text,
		tg.n - 1);
}

/* The look for the peers of the process charted alone: over once it has
 * sent PEER_LOOK_SENDS messages, or after PEER_LOOK_MS. */
static void look_step(struct app *a)
{
	if (!cv.look)
		return;
	if (app_tagged(a, cv.look_pid) < 0 || tg.n != 1) {
		cv.look = false;   /* tagged or untagged by hand meanwhile */
		return;
	}
	struct peer peers[PEERS];
	unsigned long sends;
	int n = find_peers(a, cv.look_pid, cv.look_text, cv.look_from, peers,
			   PEERS, &sends);
	if (sends < PEER_LOOK_SENDS && clock_mono_ms() < cv.look_until)
		return;
	cv.look = false;
	tag_peers(a, peers, n);
	if (n)
		app_msg(a, false, "charting %s and %d of its peers; Space in "
			"the process table tags the processes to chart",
			cv.look_text, n);
	else
		app_msg(a, false, "charting %s and 0 of its peers: it sent "
			"nothing in a second; Space in the process table tags "
			"the processes to chart", cv.look_text);
}

static void chart_enter(struct app *a)
{
	list_reset(&a->pos[VIEW_CHART]);
	cv.anchor = cv.cursor = 0;
	cv.look = false;
	if (!tg.n)
		tag_selected(a);
}

/* ---- drawing ---- */

struct layout {
	int ncols;        /* lifelines and "others" */
	int cw;           /* a column's width */
	int x0;           /* the first column */
	int text_x;       /* where a row's text starts */
	bool narrow;      /* text on a line of its own */
};

static void lay_out(struct layout *L, int ncols)
{
	L->ncols = ncols;
	L->x0 = TIME_W;
	int room = COLS - TIME_W;
	L->cw = room / ncols;
	if (L->cw > COL_MAX)
		L->cw = COL_MAX;
	L->narrow = room - L->cw * ncols < TEXT_MIN;
	if (L->narrow) {
		/* widen the columns a little while there is room */
		int cw = (room - TEXT_MIN) / ncols;
		if (cw >= 8) {
			L->cw = cw;
			L->narrow = false;
		} else {
			L->cw = room / ncols;
			if (L->cw > COL_MAX)
				L->cw = COL_MAX;
		}
	}
	if (L->cw < COL_MIN)
		L->cw = COL_MIN;
	L->text_x = L->narrow ? TIME_W : L->x0 + L->cw * ncols + 1;
}

static int center(const struct layout *L, int col)
{
	return L->x0 + col * L->cw + L->cw / 2;
}

static void put(int y, int x, chtype ch, int attr)
{
	if (x >= 0 && x < COLS)
		mvaddch(y, x, ch | (chtype)attr);
}

static void lifelines(const struct layout *L, int y, int attr)
{
	for (int c = 0; c < L->ncols; c++)
		put(y, center(L, c), ACS_VLINE, attr);
}

/* a column's head, centred and cut to its width */
static void head(const struct layout *L, int y, int col, const char *s,
		 int attr)
{
	int w = draw_width(s);
	if (w > L->cw - 1)
		w = L->cw - 1;
	int x = center(L, col) - w / 2;
	if (x < L->x0 + col * L->cw)
		x = L->x0 + col * L->cw;
	if (x + w > COLS)   /* never past the edge: it would wrap */
		w = COLS - x;
	draw_text(y, x, w, s, attr);
}

/* The arrow of a row, or its mark on one lifeline. */
static void draw_arrow(struct app *a, const struct layout *L, int y,
		       const struct chart_row *r)
{
	int f = center(L, r->from), line = draw_attr(a, r->kind == CHART_EXIT ||
		r->kind == CHART_ALARM ||
		r->state == CHART_DEAD ? ROLE_ERROR : ROLE_SEND);
	if (r->kind != CHART_MSG && r->kind != CHART_LINK &&
	    r->kind != CHART_UNLINK && !(r->kind == CHART_SPAWN && r->to >= 0)) {
		static const char mark[] = { [CHART_SPAWN] = '+',
			[CHART_EXIT] = 'X', [CHART_TIMEOUT] = 'T',
			[CHART_ALARM] = '!' };
		put(y, f, (chtype)(unsigned char)mark[r->kind], line);
		return;
	}
	if (r->to == r->from) {   /* to itself */
		put(y, f, '@', line);
		return;
	}
	int t = center(L, r->to), step = t > f ? 1 : -1;
	for (int x = f + step; x != t; x += step) {
		chtype ch = ACS_HLINE;
		if (r->state == CHART_WAITING || r->kind == CHART_SPAWN)
			ch = (x - f) % 2 ? '-' : ' ';
		else if (r->kind == CHART_LINK || r->kind == CHART_UNLINK)
			ch = r->kind == CHART_LINK ? '=' : '~';
		put(y, x, ch, line);
	}
	chtype tip = r->state == CHART_DEAD ? 'x' : step > 0 ? '>' : '<';
	if (r->kind == CHART_LINK || r->kind == CHART_UNLINK)
		tip = '=';
	put(y, t - step, tip, line);
	if (r->kind == CHART_SPAWN)
		put(y, f, '+', line);
}

static void row_text(const struct chart_row *r, struct sbuf *sb)
{
	const struct chart *c = &cv.chart;
	switch (r->kind) {
	case CHART_MSG:
		sbuf_addstr(sb, r->text);
		if (r->truncated)
			sbuf_addstr(sb, " ...");
		if (r->state == CHART_DEAD)
			sbuf_addstr(sb, "  (no such process)");
		else if (r->state == CHART_WAITING)
			sbuf_addstr(sb, "  (not received)");
		if (r->latency_us >= 0)
			sbuf_addf(sb, "  (%lld us)", (long long)r->latency_us);
		break;
	case CHART_SPAWN:
		sbuf_addf(sb, "spawn %s %s", r->text, r->mfa ? r->mfa : "");
		break;
	case CHART_EXIT:
		sbuf_addf(sb, "exit %s", r->text);
		break;
	case CHART_LINK:
	case CHART_UNLINK:
		sbuf_addf(sb, "%s %s", r->kind == CHART_LINK ? "link" : "unlink",
			  r->to < c->nlines && r->to >= 0 ?
			  c->lines[r->to].pid_text : "");
		break;
	case CHART_TIMEOUT:
		sbuf_addf(sb, "timeout %s", r->text);
		break;
	case CHART_ALARM:
		sbuf_addf(sb, "ALARM %s", r->text);
		if (r->latency_us >= 0)
			sbuf_addf(sb, " (%lld ms)", (long long)r->latency_us / 1000);
		break;
	}
}

static uint64_t chart_end(const struct app *a)
{
	return a->paused ? a->pause_seq : a->store.next_seq;
}

static void chart_draw(struct app *a, int y, int h)
{
	struct chart *c = &cv.chart;
	struct list *l = &a->pos[VIEW_CHART];
	look_step(a);
	chart_release(c);
	chart_lines(a, c);
	for (int r = 0; r < h; r++) {
		move(y + r, 0);
		clrtoeol();
	}
	if (!c->nlines) {
		draw_text(y, 0, COLS, "  nothing to chart: Space in the process "
			  "table tags processes, s charts them", draw_attr(a, ROLE_DIM));
		return;
	}
	chart_build(c, &a->store, chart_end(a));

	struct layout L;
	lay_out(&L, c->nlines + 1);
	if (L.x0 + L.cw * L.ncols > COLS) {
		char msg[96];
		snprintf(msg, sizeof(msg), "  chart needs %d columns; untag "
			 "some of its %d processes", L.x0 + L.cw * L.ncols,
			 c->nlines);
		draw_text(y, 0, COLS, msg, draw_attr(a, ROLE_DIM));
		return;
	}
	/* heads: name (or pid), pid, and with several nodes the node */
	int hdr = draw_attr(a, ROLE_HEADER), dim = draw_attr(a, ROLE_DIM);
	int nhead = a->multi ? 3 : 2;
	for (int i = 0; i < nhead; i++)
		draw_text(y + i, 0, COLS, "", hdr);
	draw_text(y, 0, TIME_W, cv.deltas ? " delta" : " time", hdr);
	for (int i = 0; i <= c->nlines; i++) {
		const struct chart_line *ln = i < c->nlines ? &c->lines[i] : NULL;
		char pid[48];
		if (ln && a->multi)
			app_local_pid(ln->pid, pid, sizeof(pid));
		else
			snprintf(pid, sizeof(pid), "%s", ln ? ln->pid_text : "");
		head(&L, y, i, ln ? ln->label[0] ? ln->label : pid : "others", hdr);
		if (ln && ln->label[0])
			head(&L, y + 1, i, pid, hdr);
		if (ln && a->multi)
			head(&L, y + 2, i, app_node_name(a, (int)ln->pid.node), hdr);
	}
	y += nhead;
	h -= nhead;
	if (h <= 0)
		return;

	int per = L.narrow ? 2 : 1;   /* screen lines a row takes */
	int page = h / per;
	int total = (int)c->nrows;
	if (l->sel && cv.anchor) {
		int idx = -1;
		for (int i = total; i-- > 0;)
			if (c->rows[i].seq == cv.anchor) {
				idx = i;
				break;
			}
		if (idx >= 0) {
			int newer = total - 1 - idx;
			l->top += newer - l->sel;
			l->sel = newer;
		}
	}
	list_fit(l, LIST_LOG, total, page);
	int got = total - l->top < page ? total - l->top : page;
	cv.cursor = l->sel < total ? c->rows[total - 1 - l->sel].seq : 0;
	cv.anchor = l->sel ? cv.cursor : 0;
	if (!total) {
		lifelines(&L, y, dim);
		draw_text(y, L.narrow ? TIME_W : L.text_x, COLS - L.text_x,
			  "no messages between these processes yet", dim);
		return;
	}
	struct sbuf text = SBUF_INIT;
	int first = total - l->top - got;   /* the oldest row shown */
	for (int i = 0; i < got; i++) {
		const struct chart_row *r = &c->rows[first + i];
		int sy = y + i * per;
		bool at = first + i == total - 1 - l->sel;
		char t[32];
		if (cv.deltas) {
			int64_t d = first + i > 0 ? r->ts - c->rows[first + i - 1].ts : 0;
			snprintf(t, sizeof(t), "+%lld.%06lld", (long long)(d / 1000000),
				 (long long)(d % 1000000 < 0 ? -(d % 1000000) : d % 1000000));
		} else {
			draw_time(t, sizeof(t), r->ts);
		}
		draw_text(sy, 0, TIME_W - 1, t, draw_attr(a, at ? ROLE_SELECTED :
							   ROLE_DIM));
		lifelines(&L, sy, dim);
		if (per == 2)
			lifelines(&L, sy + 1, dim);
		draw_arrow(a, &L, sy, r);
		sbuf_reset(&text);
		row_text(r, &text);
		int role = at ? ROLE_SELECTED : r->state == CHART_WAITING ?
			ROLE_DIM : r->kind == CHART_EXIT || r->state == CHART_DEAD ?
			ROLE_ERROR : ROLE_PROC;
		int ty = L.narrow ? sy + 1 : sy;
		if (L.narrow)
			move(ty, 0), clrtoeol();
		draw_text(ty, L.text_x, COLS - L.text_x, sbuf_str(&text),
			  draw_attr(a, role));
	}
	sbuf_release(&text);
}

static int chart_request(struct app *a, enum request req)
{
	const struct sevent *e;
	switch (req) {
	case REQ_ENTER:
		e = cv.cursor ? store_event(&a->store, cv.cursor) : NULL;
		if (!e) {
			app_msg(a, true, "no row under the cursor");
			return ACT_REDRAW;
		}
		event_open(a, e);
		return ACT_REDRAW;
	case REQ_TIMES:
		cv.deltas = !cv.deltas;
		return ACT_REDRAW;
	default:
		break;
	}
	if (!list_request(&a->pos[VIEW_CHART], LIST_LOG, req))
		return ACT_NONE;
	cv.anchor = 0;   /* the next draw anchors where the move went */
	return ACT_REDRAW;
}

static void chart_leave(struct app *a)
{
	(void)a;
	cv.look = false;
	chart_release(&cv.chart);
}

static void chart_view_release(struct app *a)
{
	(void)a;
	chart_release(&cv.chart);
}

static void chart_where(struct app *a, char *out, size_t outsz)
{
	const struct list *l = &a->pos[VIEW_CHART];
	snprintf(out, outsz, "%zu messages%s", cv.chart.nmsgs,
		 l->sel ? "  held (End follows)" : "");
}

int app_chart_export(struct app *a, const char *path)
{
	int fmt = chart_format_of_path(path);
	if (fmt < 0) {
		app_msg(a, true, "cannot tell the format of \"%s\"; name it "
			"FILE.puml (PlantUML) or FILE.mmd (Mermaid)", path);
		return ACT_REDRAW;
	}
	struct chart c;
	chart_lines(a, &c);
	if (!c.nlines) {
		app_msg(a, true, "nothing to chart; Space in the process table "
			"tags processes");
		return ACT_REDRAW;
	}
	chart_build(&c, &a->store, chart_end(a));
	/* a temporary beside it, renamed once whole; never through a link */
	struct outfile of;
	struct sbuf err = SBUF_INIT;
	int bad = outfile_open(&of, path, OUTFILE_REPLACE,
			       session_recording_fd(a->s), &err) < 0;
	FILE *f = bad ? NULL : outfile_file(&of);
	if (!bad && (!f || chart_write(&c, fmt, f) < 0)) {
		sbuf_addf(&err, "cannot write \"%s\": %s", path,
			  strerror(errno));
		outfile_abort(&of);
		bad = 1;
	} else if (!bad && outfile_commit(&of, &err) < 0) {
		bad = 1;
	}
	if (bad) {
		app_msg(a, true, "%s; try another file", err.buf);
		sbuf_release(&err);
		chart_release(&c);
		return ACT_REDRAW;
	}
	app_msg(a, false, "wrote %zu messages between %d processes to %s",
		c.nmsgs, c.nlines, path);
	chart_release(&c);
	return ACT_REDRAW;
}

const struct view_ops chart_view_ops = {
	.draw = chart_draw,
	.request = chart_request,
	.enter = chart_enter,
	.leave = chart_leave,
	.where = chart_where,
	.release = chart_view_release,
};
