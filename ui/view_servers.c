/*
 * view_servers: gen_server and gen_statem calls, per server and request
 * kind (the session's gen call pairing, src/analyse/gencall.c), and the calls of
 * one row.
 *
 *  - the servers view: one row per server and kind: calls, calls/s,
 *    latency p50/p90/p99/max, calls in flight and the age of the oldest;
 *    a row with a stuck call is marked.  Sorted by any column; the default
 *    puts first the row whose p99 or oldest call in flight is the worst.
 *    Enter lists the row's slowest calls, i its calls in flight;
 *  - the calls view of a row: caller (name, current function), request,
 *    reply, latency or age.  Enter opens the caller's log, o the server's.
 *
 * A server is named as the process table names it: its registered name,
 * else what the agent said it is (a proc_lib initial call, a label), else
 * its initial call.  SERVER and KIND are as wide as the widest text they
 * have shown, as far as the screen allows; a text cut ends in "...".
 *
 * There may be thousands of rows (GC_ROWS_MAX): a draw costs the rows on
 * screen, and the whole list is sorted again only when its rows, their
 * order or the sort changed, at most once a second otherwise.
 *
 * Its state is its own (below): the rows as last sorted, the sort, the
 * widths shown, and which row's calls are shown.  Rows of the pairing
 * never move, so the selection is kept as a row pointer.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "clock.h"
#include "control.h"
#include "draw.h"
#include "pidtext.h"
#include "retext.h"
#include "xalloc.h"

/* columns of the servers view; "worst" is the default order */
#define SRV_COLUMNS(X) \
	X(WORST,  "worst",  "") \
	X(SERVER, "server", "SERVER") \
	X(KIND,   "kind",   "KIND") \
	X(CALLS,  "calls",  "CALLS") \
	X(RATE,   "rate",   "/s") \
	X(P50,    "p50",    "p50") \
	X(P90,    "p90",    "p90") \
	X(P99,    "p99",    "p99") \
	X(MAX,    "max",    "MAX") \
	X(FLIGHT, "flight", "FLIGHT") \
	X(OLDEST, "oldest", "OLDEST")

enum srv_col {
#define X(id, key, title) SC_##id,
	SRV_COLUMNS(X)
#undef X
	SC__COUNT
};

static const char *const srv_titles[SC__COUNT] = {
#define X(id, key, title) [SC_##id] = (title),
	SRV_COLUMNS(X)
#undef X
};

#define CALLS_MAX 200      /* calls in flight listed */
#define RESORT_MS 1000     /* ages and rates move: sorted again so often */
/* SERVER and KIND: at least so wide while the screen is too narrow */
#define SERVER_MIN 16
#define KIND_MIN 12
#define CUT_MARK "..."

static struct {
	size_t nrows;                /* rows as last sorted: ents */
	const struct gc_row *sel;    /* the selected row */
	int sort;                    /* enum srv_col */
	bool asc;
	/* what the last sort was of */
	unsigned long sorted_gen;
	int sorted_sort;
	bool sorted_asc;
	long long sorted_ms;
	int wserver, wkind;          /* the widest texts shown */
	const struct gc_row *open;   /* the calls view: its row */
	bool inflight;               /* ... its calls in flight, not slowest */
	const struct gc_call *shown[CALLS_MAX]; /* ... as last drawn */
	size_t nshown;
} sv;

/* a row and what it is compared by */
struct ent {
	struct gc_row *r;
	int64_t p50, p90, p99, oldest;
	double rate;
};

static struct ent *ents;
static size_t nents_cap;

static int64_t now_us(struct app *a)
{
	return session_is_recording(a->s) ? session_gencalls(a->s)->now : clock_wall_us();
}

/* The server of a row as a pid of a node of the session; false if not. */
static bool server_pid(struct app *a, const struct gc_row *r, struct bs_pid *pid)
{
	struct pidtext pt;
	if (pidtext_parse(r->server, &pt) < 0)
		return false;
	pid->num = pt.num;
	pid->serial = pt.serial;
	pid->node = (uint32_t)r->node;
	for (int i = 0; pt.node_len && i < session_nnodes(a->s); i++) {
		const char *nm = app_node_name(a, i);
		if (strlen(nm) == pt.node_len && !memcmp(nm, pt.node, pt.node_len))
			pid->node = (uint32_t)i;
	}
	return true;
}

static const char *server_label(struct app *a, const struct gc_row *r)
{
	/* the agent's table holds the atom: shown as the node's syntax
	 * writes it (valid until the next call) */
	static struct sbuf shown;
	if (r->server[0] != '<')
		return r->server;
	const char *n = session_text_name(a->s, r->node, r->server);
	if (n && r->node >= 0 && r->node < session_nnodes(a->s)) {
		sbuf_reset(&shown);
		retext_name(&shown, TERM_ERLANG, session_node(a->s, r->node)->syn, n);
		return sbuf_str(&shown);
	}
	if (n || r->server_name)
		return n ? n : r->server_name;
	/* no name: what it is, as the process table's NAME says */
	const char *l = session_text_label(a->s, r->node, r->server);
	struct bs_pid pid;
	const struct proc *p = !l && server_pid(a, r, &pid) ?
		store_proc(&a->store, pid) : NULL;
	if (p && *store_proc_title(p))
		l = store_proc_title(p);
	if (!l)
		return r->server;
	sbuf_reset(&shown);
	sbuf_addf(&shown, "%s %s", r->server, l);
	return sbuf_str(&shown);
}

static int cmp64(int64_t x, int64_t y)
{
	return x < y ? -1 : x > y;
}

static int cmp_ents(const void *pa, const void *pb)
{
	const struct ent *kx = pa, *ky = pb;
	const struct gc_row *x = kx->r, *y = ky->r;
	int c = 0;
	switch ((enum srv_col)sv.sort) {
	case SC_WORST:
		c = cmp64(kx->p99 > kx->oldest ? kx->p99 : kx->oldest,
			  ky->p99 > ky->oldest ? ky->p99 : ky->oldest);
		break;
	case SC_SERVER: c = strcmp(y->server, x->server); break;
	case SC_KIND: c = strcmp(y->kind, x->kind); break;
	case SC_CALLS: c = cmp64((int64_t)x->calls, (int64_t)y->calls); break;
	case SC_RATE: c = kx->rate < ky->rate ? -1 : kx->rate > ky->rate; break;
	case SC_P50: c = cmp64(kx->p50, ky->p50); break;
	case SC_P90: c = cmp64(kx->p90, ky->p90); break;
	case SC_P99: c = cmp64(kx->p99, ky->p99); break;
	case SC_MAX: c = cmp64(x->hist.max, y->hist.max); break;
	case SC_FLIGHT: c = cmp64((int64_t)x->in_flight, (int64_t)y->in_flight); break;
	case SC_OLDEST: c = cmp64(kx->oldest, ky->oldest); break;
	default: break;
	}
	if (!c)
		c = strcmp(y->server, x->server) ? strcmp(y->server, x->server) :
			strcmp(y->kind, x->kind);
	/* largest first unless inverted */
	return sv.asc ? c : -c;
}

/* What a row is compared by and shows, now. */
static void ent_fill(struct ent *e, int64_t now)
{
	struct gc_row *r = e->r;
	const int64_t *q = gc_row_quantiles(r);
	const struct gc_call *old = gc_row_oldest(r);
	e->p50 = q[0];
	e->p90 = q[1];
	e->p99 = q[2];
	e->oldest = old ? now - old->ts : -1;
	e->rate = gc_row_rate(r, now);
}

/* The rows sorted again, when they or the sort changed (or a while
 * passed: ages and rates move by themselves), or now if force. */
static void build(struct app *a, bool force)
{
	const struct gencalls *g = session_gencalls(a->s);
	int64_t now = now_us(a);
	long long ms = clock_mono_ms();
	if (!force && sv.nrows == g->nrows && sv.sort == sv.sorted_sort &&
	    sv.asc == sv.sorted_asc && (sv.sorted_gen == g->generation ||
					ms - sv.sorted_ms < RESORT_MS))
		return;
	if (nents_cap < g->nrows) {
		nents_cap = g->nrows * 2;
		ents = xrealloc(ents, nents_cap * sizeof(*ents));
	}
	for (size_t i = 0; i < g->nrows; i++) {
		ents[i].r = g->rows[i];
		ent_fill(&ents[i], now);
	}
	sv.nrows = g->nrows;
	if (sv.nrows > 1)   /* none yet: ents may still be NULL */
		qsort(ents, sv.nrows, sizeof(*ents), cmp_ents);
	sv.sorted_gen = g->generation;
	sv.sorted_sort = sv.sort;
	sv.sorted_asc = sv.asc;
	sv.sorted_ms = ms;
}

/* the selection stays on its row, wherever the sort put it */
static void select_row(struct list *l)
{
	for (size_t i = 0; sv.sel && i < sv.nrows; i++)
		if (ents[i].r == sv.sel)
			l->sel = (int)i;
}

static void dur(char *out, size_t n, int64_t us)
{
	if (us < 0)
		snprintf(out, n, "-");
	else if (us < 10000)
		snprintf(out, n, "%.2fms", (double)us / 1000);
	else if (us < 10000000)
		snprintf(out, n, "%ldms", (long)(us / 1000));
	else
		snprintf(out, n, "%lds", (long)(us / 1000000));
}

/* s in w columns at x; a text cut ends in CUT_MARK. */
static void cut_cell(int y, int x, int w, const char *s, int attr)
{
	int mark = (int)strlen(CUT_MARK);
	if (draw_width(s) <= w || w <= mark) {
		draw_text(y, x, w, s, attr);
		return;
	}
	draw_text(y, x, w - mark, s, attr);
	draw_text(y, x + w - mark, mark, CUT_MARK, attr);
}

/* the numbers after KIND: "%8s %7s %8s %8s %8s %8s %6s %7s" and a space
 * before */
#define NUMS_WIDTH (1 + 8 + 1 + 7 + 1 + 8 + 1 + 8 + 1 + 8 + 1 + 8 + 1 + 6 + 1 + 7)

/* SERVER and KIND: as wide as what they showed, within the screen, and
 * not narrower than their minimum (the numbers go past the edge then) */
static void col_widths(int *ws, int *wk)
{
	int want_s = sv.wserver, want_k = sv.wkind;
	int room = COLS - 2 - 1 - NUMS_WIDTH;
	int min_s = want_s < SERVER_MIN ? want_s : SERVER_MIN;
	int min_k = want_k < KIND_MIN ? want_k : KIND_MIN;
	if (want_s + want_k <= room) {
		*ws = want_s;
		*wk = want_k;
		return;
	}
	/* SERVER tells rows apart: it gives way last */
	*wk = room - want_s;
	if (*wk < min_k)
		*wk = min_k;
	*ws = room - *wk;
	if (*ws > want_s)
		*ws = want_s;
	if (*ws < min_s)
		*ws = min_s;
}

/* What the pairing's bounds folded or gave up, in a line (false: none). */
static bool bounds_note(struct app *a, char *out, size_t outsz)
{
	const struct gencalls *g = session_gencalls(a->s);
	struct sbuf sb = SBUF_INIT;
	if (g->nfolded)
		sbuf_addf(&sb, "; kinds past %d a server: " GC_OTHER, GC_KINDS_MAX);
	if (g->other_servers)
		sbuf_addf(&sb, "; servers past %d rows: " GC_OTHER, GC_ROWS_MAX);
	if (g->given_up)
		sbuf_addf(&sb, "; %lu given up in flight (the oldest, past %d)",
			  g->given_up, GC_INFLIGHT_MAX);
	if (g->out_of_order)
		sbuf_addf(&sb, "; %lu replies stamped before their call",
			  g->out_of_order);
	bool any = sb.len > 0;
	if (any)
		snprintf(out, outsz, "  %s", sb.buf + 2);
	sbuf_release(&sb);
	return any;
}

static void servers_draw(struct app *a, int y, int h)
{
	struct list *l = &a->pos[VIEW_SERVERS];
	char line[512], hdr[SC__COUNT][16];
	int64_t now = now_us(a);

	build(a, false);
	/* the rows: under the titles, and the bounds' note if any */
	char note[256];
	bool has_note = h > 2 && bounds_note(a, note, sizeof(note));
	int lh = h - 1 - (has_note ? 1 : 0);
	select_row(l);
	list_fit(l, LIST_SELECT, (int)sv.nrows, lh);
	sv.sel = l->sel < (int)sv.nrows ? ents[l->sel].r : NULL;
	/* the widths: what the rows on screen hold, and what was shown */
	if (sv.wserver < (int)strlen(srv_titles[SC_SERVER]) + 1)
		sv.wserver = (int)strlen(srv_titles[SC_SERVER]) + 1;
	if (sv.wkind < (int)strlen(srv_titles[SC_KIND]) + 1)
		sv.wkind = (int)strlen(srv_titles[SC_KIND]) + 1;
	for (int r = 0; r < lh && l->top + r < (int)sv.nrows; r++) {
		const struct gc_row *row = ents[l->top + r].r;
		int n = draw_width(server_label(a, row));
		if (n > sv.wserver)
			sv.wserver = n;
		n = draw_width(row->kind[0] ? row->kind : "-");
		if (n > sv.wkind)
			sv.wkind = n;
	}
	int ws, wk;
	col_widths(&ws, &wk);

	for (int c = 0; c < SC__COUNT; c++)
		snprintf(hdr[c], sizeof(hdr[c]), "%s%s", srv_titles[c],
			 c == sv.sort ? (sv.asc ? "^" : "v") : "");
	int ha = draw_attr(a, ROLE_HEADER);
	draw_text(y, 0, COLS, "", ha);
	draw_text(y, 2, ws, hdr[SC_SERVER], ha);
	draw_text(y, 2 + ws + 1, wk, hdr[SC_KIND], ha);
	snprintf(line, sizeof(line), " %8s %7s %8s %8s %8s %8s %6s %7s",
		 hdr[SC_CALLS], hdr[SC_RATE], hdr[SC_P50], hdr[SC_P90],
		 hdr[SC_P99], hdr[SC_MAX], hdr[SC_FLIGHT], hdr[SC_OLDEST]);
	draw_text(y, 2 + ws + 1 + wk, COLS - (2 + ws + 1 + wk), line, ha);
	y++;
	h--;
	if (has_note) {
		draw_text(y, 0, COLS, note, draw_attr(a, ROLE_DIM));
		y++;
		h--;
	}
	for (int r = 0; r < h; r++) {
		move(y + r, 0);
		clrtoeol();
		size_t i = (size_t)(l->top + r);
		if (i >= sv.nrows) {
			if (i == 0)
				draw_text(y, 0, COLS, "  no gen_server or gen_statem "
					  "calls seen yet", draw_attr(a, ROLE_DIM));
			continue;
		}
		struct ent *k = &ents[i];
		const struct gc_row *row = k->r;
		ent_fill(k, now);   /* on screen: as of now */
		char p50[16], p90[16], p99[16], mx[16], old[16];
		dur(p50, sizeof(p50), row->calls ? k->p50 : -1);
		dur(p90, sizeof(p90), row->calls ? k->p90 : -1);
		dur(p99, sizeof(p99), row->calls ? k->p99 : -1);
		dur(mx, sizeof(mx), row->calls ? row->hist.max : -1);
		dur(old, sizeof(old), k->oldest);
		int attr = (int)i == l->sel ? draw_attr(a, ROLE_SELECTED) :
			row->stuck ? draw_attr(a, ROLE_ERROR) : (int)A_NORMAL;
		draw_text(y + r, 0, COLS, row->stuck ? "!" : " ", attr);
		cut_cell(y + r, 2, ws, server_label(a, row), attr);
		cut_cell(y + r, 2 + ws + 1, wk, row->kind[0] ? row->kind : "-",
			 attr);
		snprintf(line, sizeof(line), " %8lu %7.1f %8s %8s %8s %8s %6lu %7s%s",
			 row->calls, k->rate, p50, p90, p99, mx, row->in_flight,
			 old, row->stuck ? " stuck" : "");
		draw_text(y + r, 2 + ws + 1 + wk, COLS - (2 + ws + 1 + wk), line,
			  attr);
	}
}

static void open_calls(struct app *a, bool inflight)
{
	sv.open = sv.sel;
	sv.inflight = inflight;
	list_reset(&a->pos[VIEW_SRV_CALLS]);
	app_push(a, VIEW_SRV_CALLS);
}

static int servers_request(struct app *a, enum request req)
{
	struct list *l = &a->pos[VIEW_SERVERS];
	/* a move picks a row of the order as it is now: of one up to a
	 * second old, Home could pick a row that the next sort puts far
	 * down, and the selection, which stays on its row, would go with it */
	bool move = req == REQ_UP || req == REQ_DOWN || req == REQ_PAGE_UP ||
		req == REQ_PAGE_DOWN || req == REQ_HOME || req == REQ_END;
	if (move) {
		build(a, true);
		select_row(l);
	}
	if (list_request(l, LIST_SELECT, req)) {
		sv.sel = l->sel < (int)sv.nrows ? ents[l->sel].r : NULL;
		return ACT_REDRAW;
	}
	switch (req) {
	case REQ_SORT_NEXT:
		sv.sort = (sv.sort + 1) % SC__COUNT;
		return ACT_REDRAW;
	case REQ_SORT_PREV:
		sv.sort = (sv.sort + SC__COUNT - 1) % SC__COUNT;
		return ACT_REDRAW;
	case REQ_SORT_INVERT:
		sv.asc = !sv.asc;
		return ACT_REDRAW;
	case REQ_ENTER:
	case REQ_INFLIGHT:
		if (!sv.sel)
			return ACT_NONE;
		open_calls(a, req == REQ_INFLIGHT);
		return ACT_REDRAW;
	default:
		return ACT_NONE;
	}
}

static void servers_where(struct app *a, char *out, size_t outsz)
{
	const struct gencalls *g = session_gencalls(a->s);
	snprintf(out, outsz, "%d/%zu  sort %s%s  stuck after %gs",
		 sv.nrows ? a->pos[VIEW_SERVERS].sel + 1 : 0, sv.nrows,
		 sv.sort == SC_WORST ? "worst" : srv_titles[sv.sort],
		 sv.asc ? " (inverted)" : "", (double)g->stuck_us / 1e6);
}

/* the rows are gone (:clear): forget what pointed at them */
static void servers_forget(struct app *a)
{
	(void)a;
	sv.nrows = sv.nshown = 0;
	sv.sel = sv.open = NULL;
	sv.wserver = sv.wkind = 0;
}

static void servers_leave(struct app *a)
{
	(void)a;
	free(ents);
	ents = NULL;
	sv.nrows = nents_cap = 0;
	sv.wserver = sv.wkind = 0;
}

const struct view_ops servers_view_ops = {
	.draw = servers_draw,
	.request = servers_request,
	.leave = servers_leave,
	.where = servers_where,
	.clear = servers_forget,
	.release = servers_leave,
};

/* ---------------------------------------------------------------------------
 * The calls of one row: its slowest, or its calls in flight.
 */

static bool row_alive(struct app *a, const struct gc_row *r)
{
	const struct gencalls *g = session_gencalls(a->s);
	for (size_t i = 0; r && i < g->nrows; i++)
		if (g->rows[i] == r)
			return true;
	return false;
}

static void calls_draw(struct app *a, int y, int h)
{
	struct list *l = &a->pos[VIEW_SRV_CALLS];
	const struct gc_row *r = sv.open;
	char line[768], t[16];
	int64_t now = now_us(a);

	if (!row_alive(a, r)) {
		sv.open = NULL;
		sv.nshown = 0;
		draw_text(y, 0, COLS, "  the row is gone (:clear)", draw_attr(a, ROLE_DIM));
		return;
	}
	snprintf(line, sizeof(line), "%s %s (%s): %s", sv.inflight ?
		 "calls in flight to" : "slowest calls to", server_label(a, r),
		 r->kind[0] ? r->kind : "-", sv.inflight ? "age, caller, request" :
		 "latency, caller, request -> reply");
	draw_text(y, 0, COLS, line, draw_attr(a, ROLE_HEADER));
	y++;
	h--;
	if (sv.inflight) {
		size_t n = gc_row_inflight(r, sv.shown, CALLS_MAX);
		sv.nshown = n < CALLS_MAX ? n : CALLS_MAX;
	} else {
		sv.nshown = (size_t)r->nslow;
		for (int i = 0; i < r->nslow; i++)
			sv.shown[i] = r->slow[i];
	}
	list_fit(l, LIST_SELECT, (int)sv.nshown, h);
	for (int k = 0; k < h; k++) {
		move(y + k, 0);
		clrtoeol();
		size_t i = (size_t)(l->top + k);
		if (i >= sv.nshown) {
			if (i == 0)
				draw_text(y, 0, COLS, sv.inflight ? "  none in flight" :
					  "  no call replied yet", draw_attr(a, ROLE_DIM));
			continue;
		}
		const struct gc_call *c = sv.shown[i];
		const struct proc *p = store_proc(&a->store, c->caller);
		const char *name = p && p->name ? p->name :
			session_text_name(a->s, c->node, c->caller_text);
		dur(t, sizeof(t), sv.inflight ? now - c->ts : gc_latency(c));
		snprintf(line, sizeof(line), "%s %8s  %s%s%s  %s  %s%s%s",
			 c->stuck ? "!" : " ", t, c->caller_text, name ? " " : "",
			 name ? name : "", p && p->current ? p->current : "",
			 c->request ? c->request : "", c->reply ? " -> " : "",
			 c->reply ? c->reply : "");
		draw_text(y + k, 0, COLS, line, (int)i == l->sel ?
			  draw_attr(a, ROLE_SELECTED) : c->stuck ?
			  draw_attr(a, ROLE_ERROR) : (int)A_NORMAL);
	}
}

static int srv_calls_request(struct app *a, enum request req)
{
	struct list *l = &a->pos[VIEW_SRV_CALLS];
	if (list_request(l, LIST_SELECT, req))
		return ACT_REDRAW;
	if (!sv.open || !row_alive(a, sv.open))
		return ACT_NONE;
	if (req == REQ_ENTER && l->sel < (int)sv.nshown) {
		const struct gc_call *c = sv.shown[l->sel];
		return app_focus(a, c->caller, c->caller_text);
	}
	if (req == REQ_SERVER_LOG) {
		struct bs_pid pid;
		if (!server_pid(a, sv.open, &pid)) {
			app_msg(a, true, "the server \"%s\" is a name, not a pid; "
				":focus it by name", sv.open->server);
			return ACT_REDRAW;
		}
		return app_focus(a, pid, sv.open->server);
	}
	if (req == REQ_INFLIGHT) {
		sv.inflight = !sv.inflight;
		list_reset(l);
		return ACT_REDRAW;
	}
	return ACT_NONE;
}

static void srv_calls_where(struct app *a, char *out, size_t outsz)
{
	snprintf(out, outsz, "%d/%zu", sv.nshown ? a->pos[VIEW_SRV_CALLS].sel + 1 : 0,
		 sv.nshown);
}

const struct view_ops srv_calls_view_ops = {
	.draw = calls_draw,
	.request = srv_calls_request,
	.where = srv_calls_where,
};
