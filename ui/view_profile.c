/*
 * view_profile: where the sampled processes spend their time, from the
 * stacks the agent's profiler takes (nif/beamscope_prof.erl): a table of
 * functions (self and total share, samples; Enter: its callers and
 * callees) or a flame graph drawn as an icicle (the root on top, each
 * frame as wide as its samples; Enter zooms into the selected frame, Esc
 * back out; / marks the frames of a function).  Cumulative, or over the
 * last seconds (:profile window N).
 *
 * The profiler runs while the view is open: closing it stops the
 * sampling on the target; the samples stay until the next start.
 */
#include "view_profile.h"

#include <curses.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "commands.h"
#include "draw.h"
#include "outfile.h"
#include "pidsel.h"
#include "profile.h"
#include "retext.h"
#include "view_chart.h"
#include "view_exact.h"
#include "view_proc.h"
#include "view_procs.h"
#include "xalloc.h"

/* the deepest path kept for the zoom and the selection */
#define PATH_MAX_DEPTH PROFILE_DEPTH_MAX

static struct {
	struct profile *p;
	bool on;                /* the agent samples */
	int node;
	char who[200];          /* what is sampled, said on the status line */
	struct prof_stats last; /* the last second's */
	bool have_last;
	int window_s;           /* 0: every sample */
	bool flame;             /* the flame graph, else the table */
	bool by_total;          /* the table's order */
	bool edges;             /* the table: callers and callees of fn */
	const char *fn;         /* interned (the profile keeps its names) */
	/* the flame graph: the frame zoomed into and the one selected, as
	 * paths of names from the root (zoom is a prefix of sel) */
	const char *zoom[PATH_MAX_DEPTH];
	int nzoom;
	const char *sel[PATH_MAX_DEPTH];
	int nsel;
	char hl[256];           /* / : frames whose name holds it are marked */
} pf;

static const struct profile_node *tree(void)
{
	if (!pf.p)
		return NULL;
	if (pf.window_s > 0)
		return profile_window(pf.p, clock_mono_ms() -
				      (int64_t)pf.window_s * 1000);
	return profile_tree(pf.p);
}

static const struct profile_node *child_named(const struct profile_node *n,
					      const char *name)
{
	for (const struct profile_node *c = n->child; c; c = c->next)
		if (c->name == name)
			return c;
	return NULL;
}

/* The node at the end of path, or as far as it goes (*got: how far). */
static const struct profile_node *walk(const struct profile_node *root,
				       const char *const *path, int n, int *got)
{
	const struct profile_node *at = root;
	int i = 0;
	for (; at && i < n; i++) {
		const struct profile_node *c = child_named(at, path[i]);
		if (!c)
			break;
		at = c;
	}
	if (got)
		*got = i;
	return at;
}

/* ---- starting and stopping ---- */

static void reset_view(void)
{
	pf.nzoom = pf.nsel = 0;
	pf.edges = false;
	pf.fn = NULL;
	pf.have_last = false;
}

/* a start: the samples before it forgotten, the view open */
static void begin(struct app *a, int node, const char *who)
{
	if (!pf.p)
		pf.p = profile_new();
	profile_clear(pf.p);
	reset_view();
	list_reset(&a->pos[VIEW_PROFILE]);
	pf.on = true;
	pf.node = node;
	snprintf(pf.who, sizeof(pf.who), "%s", who);
	if (app_view(a) != VIEW_PROFILE)
		app_push(a, VIEW_PROFILE);
}

int profile_start_sel(struct app *a, int node, const struct pidsel *sel,
		      const char *who)
{
	if (session_is_recording(a->s)) {
		app_msg(a, true, "the profiler samples a live node; a recording "
			"has no stacks to take");
		return ACT_REDRAW;
	}
	if (sel->n <= 0)
		return ACT_NONE;
	session_profile(a->s, node, sel, a->cfg->profile_rate,
			a->cfg->profile_budget * 10000L);
	begin(a, node, who);
	app_msg(a, false, "sampling the stacks of %s, %d a second at most; "
		"F flame graph, Enter callers and callees, q stops", pf.who,
		a->cfg->profile_rate);
	return ACT_REDRAW;
}

int profile_start(struct app *a, int node, const struct bs_pid *pids, int n)
{
	if (n <= 0)
		return ACT_NONE;
	struct pidsel sel = { .mode = SEL_LIST, .n = n };
	sel.items = xcalloc((size_t)n, sizeof(*sel.items));
	for (int i = 0; i < n; i++)
		sel.items[i] = (struct pidsel_item){ .is_pid = true,
			.num = pids[i].num, .serial = pids[i].serial };
	const struct proc *pr = store_proc(&a->store, pids[0]);
	char first[120];
	if (pr && pr->name)
		snprintf(first, sizeof(first), "%s %s", pr->pid_text, pr->name);
	else if (pr)
		snprintf(first, sizeof(first), "%s", pr->pid_text);
	else
		snprintf(first, sizeof(first), "<0.%u.%u>", pids[0].num,
			 pids[0].serial);
	char who[160];
	if (n > 1)
		snprintf(who, sizeof(who), "%s and %d more", first, n - 1);
	else
		snprintf(who, sizeof(who), "%s", first);
	int r = profile_start_sel(a, node, &sel, who);
	pidsel_release(&sel);
	return r;
}

int profile_start_top(struct app *a, int n)
{
	if (session_is_recording(a->s)) {
		app_msg(a, true, "the profiler samples a live node; a recording "
			"has no stacks to take");
		return ACT_REDRAW;
	}
	int node = a->node_filter >= 0 ? a->node_filter : 0;
	session_profile_top(a->s, node, n, a->cfg->profile_rate,
			    a->cfg->profile_budget * 10000L);
	char who[64];
	snprintf(who, sizeof(who), "the top %d by reductions", n);
	begin(a, node, who);
	app_msg(a, false, "sampling the stacks of the %d processes leading by "
		"reductions a second, picked again every second (the first "
		"in 2 to 3 seconds)", n);
	return ACT_REDRAW;
}

void profile_stop(struct app *a)
{
	if (!pf.on)
		return;
	session_profile(a->s, -1, NULL, 0, 0);
	pf.on = false;
}

int profile_toggle(struct app *a)
{
	if (app_view(a) == VIEW_PROFILE)
		return app_pop(a);
	if (session_is_recording(a->s)) {
		if (!pf.p || !profile_samples(pf.p)) {
			app_msg(a, true, "the recording has no stacks: batch "
				"--profile writes them");
			return ACT_REDRAW;
		}
		app_push(a, VIEW_PROFILE);
		return ACT_REDRAW;
	}
	struct bs_pid pids[64];
	int n = 0;
	if (app_view(a) == VIEW_PROC) {
		pids[n++] = log_focus(a);
	} else if (chart_ntags(a) > 0) {
		struct bs_pid first = chart_tag(a, 0);
		for (int i = 0; i < chart_ntags(a) && n < 64; i++) {
			struct bs_pid p = chart_tag(a, i);
			if (p.node == first.node)
				pids[n++] = p;
		}
	} else if (procs_selected(a, &pids[0])) {
		n = 1;
	}
	if (!n) {
		app_msg(a, true, "no process to profile: select one in the table "
			"(or tag some with Space), then f");
		return ACT_REDRAW;
	}
	return profile_start(a, (int)pids[0].node, pids, n);
}

void profile_set_window(struct app *a, int seconds)
{
	pf.window_s = seconds > 0 ? seconds : 0;
	a->dirty = true;
}

void profile_highlight(struct app *a, const char *text)
{
	snprintf(pf.hl, sizeof(pf.hl), "%s", text);
	a->dirty = true;
}

void profile_sample(struct app *a, int node, const struct prof_sample *p)
{
	if (session_is_recording(a->s)) {
		/* a recording's stacks, every node's, for f to show */
		if (!pf.p) {
			pf.p = profile_new();
			snprintf(pf.who, sizeof(pf.who), "the recording");
		}
		profile_add_sample(pf.p, p, clock_mono_ms());
		return;
	}
	if (!pf.p || !pf.on || node != pf.node)
		return;
	profile_add_sample(pf.p, p, clock_mono_ms());
	if (app_view(a) == VIEW_PROFILE && !a->paused)
		a->dirty = true;
}

void profile_second(struct app *a, int node, const struct prof_stats *st)
{
	if (!pf.on || node != pf.node)
		return;
	pf.last = *st;
	pf.have_last = true;
	if (app_view(a) == VIEW_PROFILE)
		a->dirty = true;
}

int profile_export(struct app *a, const char *path)
{
	const struct profile_node *root = tree();
	if (!root || !root->total) {
		app_msg(a, true, "no samples to export: f on a process starts "
			"the profiler");
		return ACT_REDRAW;
	}
	size_t len = strlen(path);
	bool json = len > 5 && !strcmp(path + len - 5, ".json");
	struct sbuf text = SBUF_INIT, err = SBUF_INIT;
	if (json)
		profile_speedscope(root, pf.who, &text);
	else
		profile_collapsed(root, &text);
	struct outfile o;
	FILE *f = NULL;
	if (outfile_open(&o, path, OUTFILE_REPLACE,
			 session_recording_fd(a->s), &err) == 0) {
		f = outfile_file(&o);
		if (!f || fwrite(text.buf, 1, text.len, f) != text.len) {
			sbuf_addf(&err, "cannot write \"%s\": %s", path,
				  strerror(errno));
			outfile_abort(&o);
		} else if (outfile_commit(&o, &err) == 0) {
			app_msg(a, false, "%lu samples written to %s (%s)",
				root->total, path, json ? "speedscope" :
				"collapsed stacks");
		}
	}
	if (err.len)
		app_msg(a, true, "%s", err.buf);
	sbuf_release(&text);
	sbuf_release(&err);
	return ACT_REDRAW;
}

/* :profile a,b: processes seen (on one node), or names the agent finds
 * (registered, not seen yet) on the node shown */
static int profile_named(struct app *a, const char *arg)
{
	struct pidsel sel = { .mode = SEL_LIST };
	sel.items = xcalloc(64, sizeof(*sel.items));
	int node = -1, r = ACT_REDRAW;
	char list[1024];
	snprintf(list, sizeof(list), "%s", arg);
	for (char *save = NULL, *w = strtok_r(list, ",", &save); w && sel.n < 64;
	     w = strtok_r(NULL, ",", &save)) {
		struct pidsel_item *it = &sel.items[sel.n];
		bool refused = false;
		struct proc *p = app_find_proc(a, w, &refused);
		if (refused)
			goto out;
		int here = p ? (int)p->pid.node : a->node_filter >= 0 ?
			a->node_filter : 0;
		if (node >= 0 && here != node) {
			app_msg(a, true, ":profile samples the processes of one "
				"node; \"%s\" is on another", w);
			goto out;
		}
		node = here;
		if (p) {
			*it = (struct pidsel_item){ .is_pid = true,
				.num = p->pid.num, .serial = p->pid.serial };
		} else if (!retext_atom_parse(w, it->name, sizeof(it->name)) ||
			   w[0] == '<') {
			app_msg(a, true, "no process \"%s\" seen yet, and no name "
				"the node could have; Tab completes names and "
				"pids", w);
			goto out;
		}
		sel.n++;
	}
	r = profile_start_sel(a, node < 0 ? 0 : node, &sel, arg);
out:
	pidsel_release(&sel);
	return r;
}

int profile_command(struct app *a, int argc, const char *const *argv)
{
	if (argc == 0)
		return app_view(a) == VIEW_PROFILE ? ACT_REDRAW :
			profile_toggle(a);
	if (!strcmp(argv[0], "calls")) {
		int r = exact_command(a, a->node_filter >= 0 ? a->node_filter : 0,
				      argc - 1, argv + 1);
		if (exact_on() && app_view(a) != VIEW_PROFILE)
			app_push(a, VIEW_PROFILE);
		return r;
	}
	if (!strcmp(argv[0], "off")) {
		profile_stop(a);
		exact_stop(a);
		if (app_view(a) == VIEW_PROFILE)
			return app_pop(a);
		app_msg(a, false, "the profiler is off");
		return ACT_REDRAW;
	}
	if (!strcmp(argv[0], "top")) {
		char *end = NULL;
		long n = 10;
		if (argc == 2)
			n = strtol(argv[1], &end, 10);
		if ((end && *end) || n < 1 || n > 1000) {
			app_msg(a, true, ":profile top N: the N processes leading "
				"by reductions a second (1 to 1000; 10 without N)");
			return ACT_REDRAW;
		}
		return profile_start_top(a, (int)n);
	}
	if (!strcmp(argv[0], "window")) {
		char *end;
		long n = argc == 2 ? strtol(argv[1], &end, 10) : -1;
		if (argc != 2 || *end || n < 0 || n > 86400) {
			app_msg(a, true, ":profile window N: the last N seconds "
				"(0: every sample)");
			return ACT_REDRAW;
		}
		profile_set_window(a, (int)n);
		return ACT_REDRAW;
	}
	return profile_named(a, argv[0]);
}


/* ---- the table ---- */

static int cmp_total(const void *pa, const void *pb)
{
	const struct profile_fn *x = pa, *y = pb;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	return strcmp(x->name, y->name);
}

static double pct(unsigned long part, unsigned long all)
{
	return all ? 100.0 * (double)part / (double)all : 0.0;
}

/* exact mode's columns for a function: calls, us a call, words a call */
static void exact_cells(char *out, size_t outsz, const struct exact_row *x)
{
	if (!x) {
		snprintf(out, outsz, " %9s %9s %8s", "", "", "");
		return;
	}
	char words[24] = "-";
	if (x->words >= 0)
		snprintf(words, sizeof(words), "%.1f", x->calls ?
			 (double)x->words / (double)x->calls : 0.0);
	snprintf(out, outsz, " %9lld %9.2f %8s", x->calls, x->calls ?
		 (double)x->us / (double)x->calls : 0.0, words);
}

/* the functions sampled, then those exact mode timed and never sampled;
 * with no samples, exact mode's order (by time) */
static void table_draw(struct app *a, const struct profile_node *root,
		       int y, int h)
{
	struct list *l = &a->pos[VIEW_PROFILE];
	bool exact = exact_nrows() > 0;
	int w = COLS > 40 + (exact ? 30 : 0) ? COLS - 34 - (exact ? 30 : 0) : 6;
	char line[1200], cells[80];
	snprintf(line, sizeof(line), "%-*s %6s %8s %6s %8s%s", w, "FUNCTION",
		 "SELF%", "SELF", "TOTAL%", "TOTAL", exact ?
		 "     CALLS   US/CALL   W/CALL" : "");
	draw_text(y, 0, COLS, line, draw_attr(a, ROLE_HEADER));
	struct profile_fn *fns = NULL;
	size_t n = root ? profile_functions(root, &fns) : 0;
	if (pf.by_total && n > 1)
		qsort(fns, n, sizeof(*fns), cmp_total);
	/* exact mode's functions not sampled, after the sampled ones */
	const struct exact_row **extra = xcalloc((size_t)exact_nrows() + 1,
						 sizeof(*extra));
	size_t nextra = 0;
	for (int i = 0; i < exact_nrows(); i++) {
		const struct exact_row *x = exact_row_at(i);
		bool sampled = false;
		for (size_t k = 0; k < n && !sampled; k++)
			sampled = !strcmp(fns[k].name, x->name);
		if (!sampled)
			extra[nextra++] = x;
	}
	list_fit(l, LIST_SELECT, (int)(n + nextra), h - 1);
	for (int r = 0; r < h - 1; r++) {
		move(y + 1 + r, 0);
		clrtoeol();
		size_t i = (size_t)(l->top + r);
		const char *name;
		if (i < n && fns && root) {
			const struct profile_fn *fn = &fns[i];
			exact_cells(cells, sizeof(cells), exact ?
				    exact_find(fn->name) : NULL);
			snprintf(line, sizeof(line), "%-*.*s %5.1f%% %8lu "
				 "%5.1f%% %8lu%s", w, w, fn->name,
				 pct(fn->self, root->total), fn->self,
				 pct(fn->total, root->total), fn->total,
				 exact ? cells : "");
			name = fn->name;
		} else if (i >= n && i < n + nextra) {
			const struct exact_row *x = extra[i - n];
			exact_cells(cells, sizeof(cells), x);
			snprintf(line, sizeof(line), "%-*.*s %6s %8d %6s %8d%s",
				 w, w, x->name, "", 0, "", 0, cells);
			name = x->name;
		} else {
			if (i == 0)
				draw_text(y + 1, 0, COLS, pf.on || exact_on() ?
					  "  no samples yet" :
					  "  not sampling: f on a process starts the "
					  "profiler", draw_attr(a, ROLE_DIM));
			continue;
		}
		bool mark = pf.hl[0] && strstr(name, pf.hl);
		draw_text(y + 1 + r, 0, COLS, line, (int)i == l->sel ?
			  draw_attr(a, ROLE_SELECTED) : mark ?
			  (int)A_BOLD : (int)A_NORMAL);
	}
	/* the name stays valid: the profile interns its names; a row exact
	 * mode alone has has no callers to show */
	pf.fn = fns && l->sel >= 0 && (size_t)l->sel < n ? fns[l->sel].name :
		NULL;
	free(extra);
	free(fns);
}

static void edges_draw(struct app *a, const struct profile_node *root,
		       int y, int h)
{
	struct list *l = &a->pos[VIEW_PROFILE];
	struct profile_edge *in = NULL, *out = NULL;
	size_t nin = root ? profile_callers(root, pf.fn, &in) : 0;
	size_t nout = root ? profile_callees(root, pf.fn, &out) : 0;
	int count = (int)(nin + nout) + 3;
	list_fit(l, LIST_SCROLL, count, h);
	char line[1200];
	int w = COLS > 24 ? COLS - 20 : 4;
	for (int r = 0; r < h; r++) {
		int i = l->top + r;
		move(y + r, 0);
		clrtoeol();
		const struct profile_edge *e = NULL;
		int attr = A_NORMAL;
		if (i == 0) {
			snprintf(line, sizeof(line), "CALLERS of %s", pf.fn);
			attr = draw_attr(a, ROLE_HEADER);
		} else if (i <= (int)nin && in) {
			e = &in[i - 1];
		} else if (i == (int)nin + 1) {
			line[0] = '\0';
		} else if (i == (int)nin + 2) {
			snprintf(line, sizeof(line), "CALLEES of %s", pf.fn);
			attr = draw_attr(a, ROLE_HEADER);
		} else if (i < count && out) {
			e = &out[i - (int)nin - 3];
		} else {
			continue;
		}
		if (e && root)
			snprintf(line, sizeof(line), "  %-*.*s %8lu %5.1f%%", w, w,
				 e->name, e->samples, pct(e->samples, root->total));
		else if (e)
			continue;
		draw_text(y + r, 0, COLS, line, attr);
	}
	free(in);
	free(out);
}

/* ---- the flame graph ---- */

struct flame {
	struct app *a;
	int y, rows, off;       /* screen rows; depths hidden above */
	const struct profile_node *sel;
	bool ascii;
};

static void frame_draw(struct flame *fl, const struct profile_node *n,
		       int depth, int x0, int x1, int k)
{
	int row = depth - fl->off;
	if (row < 0 || row >= fl->rows || x1 <= x0)
		return;
	int w = x1 - x0;
	char cell[1200];
	const char *name = n->parent ? n->name : "all";
	if (!n->parent)
		snprintf(cell, sizeof(cell), "all: %lu samples", n->total);
	else
		snprintf(cell, sizeof(cell), "%s", name);
	int attr;
	if (n == fl->sel)
		attr = draw_attr(fl->a, ROLE_SELECTED);
	else if (pf.hl[0] && n->parent && strstr(n->name, pf.hl))
		attr = draw_attr(fl->a, ROLE_ERROR) | A_REVERSE | A_BOLD;
	else
		attr = draw_attr(fl->a, (depth + k) % 2 ? ROLE_SEND :
				 ROLE_RECEIVE) | A_REVERSE;
	/* a frame's first column marks where it starts */
	char text[1300];
	snprintf(text, sizeof(text), "%s%s", w > 1 ? (fl->ascii ? "|" :
		 "\xe2\x96\x8f") : "", cell);
	move(fl->y + row, x0);
	for (int x = 0; x < w; x++)
		addch(' ' | (chtype)attr);
	draw_text(fl->y + row, x0, w, text, attr);
}

static void flame_node(struct flame *fl, const struct profile_node *n,
		       int depth, double x0, double x1, int k)
{
	int ix0 = (int)(x0 + 0.5), ix1 = (int)(x1 + 0.5);
	if (ix1 <= ix0)
		return;
	frame_draw(fl, n, depth, ix0, ix1, k);
	if (depth - fl->off >= fl->rows - 1 || !n->total)
		return;
	double cx = x0;
	int i = 0;
	for (const struct profile_node *c = n->child; c; c = c->next, i++) {
		double w = (x1 - x0) * (double)c->total / (double)n->total;
		flame_node(fl, c, depth + 1, cx, cx + w, k + i);
		cx += w;
	}
}

static void flame_draw(struct app *a, const struct profile_node *root,
		       int y, int h)
{
	char line[1200];
	int got;
	const struct profile_node *z = root ?
		walk(root, pf.zoom, pf.nzoom, &got) : NULL;
	if (root && got < pf.nzoom)
		pf.nzoom = got;   /* the window no longer has it */
	const struct profile_node *s = root ?
		walk(root, pf.sel, pf.nsel, &got) : NULL;
	if (root && got < pf.nsel)
		pf.nsel = got;
	snprintf(line, sizeof(line), "flame graph%s%s: Enter zooms in, Esc "
		 "out, Down a callee, Up the caller, n/N the next frame beside",
		 pf.nzoom ? ", zoomed into " : "",
		 pf.nzoom ? pf.zoom[pf.nzoom - 1] : "");
	draw_text(y, 0, COLS, line, draw_attr(a, ROLE_HEADER));
	for (int r = 1; r < h; r++) {
		move(y + r, 0);
		clrtoeol();
	}
	if (!z || !z->total) {
		draw_text(y + 1, 0, COLS, pf.on ? "  no samples yet" :
			  "  not sampling: f on a process starts the profiler",
			  draw_attr(a, ROLE_DIM));
		return;
	}
	struct flame fl = { .a = a, .y = y + 1, .rows = h - 1, .sel = s,
			    .ascii = a->ascii };
	int sdepth = pf.nsel - pf.nzoom;
	fl.off = sdepth >= fl.rows ? sdepth - fl.rows + 1 : 0;
	flame_node(&fl, z, 0, 0.0, (double)COLS, 0);
}

static void profile_draw(struct app *a, int y, int h)
{
	const struct profile_node *root = tree();
	if (pf.flame)
		flame_draw(a, root, y, h);
	else if (pf.edges && pf.fn)
		edges_draw(a, root, y, h);
	else
		table_draw(a, root, y, h);
}

/* the flame graph's keys: the selection moves along the tree */
static int flame_request(enum request req)
{
	const struct profile_node *root = tree();
	if (!root)
		return ACT_NONE;
	const struct profile_node *s = walk(root, pf.sel, pf.nsel, NULL);
	switch (req) {
	case REQ_DOWN: {
		const struct profile_node *best = NULL;
		for (const struct profile_node *c = s->child; c; c = c->next)
			if (!best || c->total > best->total)
				best = c;
		if (best && pf.nsel < PATH_MAX_DEPTH)
			pf.sel[pf.nsel++] = best->name;
		return ACT_REDRAW;
	}
	case REQ_UP:
		if (pf.nsel > pf.nzoom)
			pf.nsel--;
		return ACT_REDRAW;
	case REQ_SEARCH_NEXT:
	case REQ_SEARCH_PREV: {
		if (pf.nsel <= pf.nzoom || !s->parent)
			return ACT_NONE;
		const struct profile_node *prev = NULL, *c = s->parent->child;
		for (; c && c != s; c = c->next)
			prev = c;
		const struct profile_node *to = req == REQ_SEARCH_NEXT ?
			s->next : prev;
		if (to)
			pf.sel[pf.nsel - 1] = to->name;
		return ACT_REDRAW;
	}
	case REQ_HOME:
		pf.nsel = pf.nzoom;
		return ACT_REDRAW;
	case REQ_ENTER:
		memcpy(pf.zoom, pf.sel, sizeof(pf.sel[0]) * (size_t)pf.nsel);
		pf.nzoom = pf.nsel;
		return ACT_REDRAW;
	default:
		return ACT_NONE;
	}
}

static int profile_request(struct app *a, enum request req)
{
	if (req == REQ_FLAME) {
		pf.flame = !pf.flame;
		return ACT_REDRAW;
	}
	if (pf.flame)
		return flame_request(req);
	if (req == REQ_SORT_NEXT || req == REQ_SORT_PREV) {
		pf.by_total = !pf.by_total;
		return ACT_REDRAW;
	}
	if (req == REQ_ENTER && !pf.edges && pf.fn) {
		pf.edges = true;
		list_reset(&a->pos[VIEW_PROFILE]);
		return ACT_REDRAW;
	}
	if (list_request(&a->pos[VIEW_PROFILE], pf.edges ? LIST_SCROLL :
			 LIST_SELECT, req))
		return ACT_REDRAW;
	return ACT_NONE;
}

/* Esc: out of a zoom, or of the callers and callees, before the view */
static bool profile_back(struct app *a)
{
	if (pf.flame && pf.nzoom > 0) {
		pf.nzoom--;
		return true;
	}
	if (!pf.flame && pf.edges) {
		pf.edges = false;
		list_reset(&a->pos[VIEW_PROFILE]);
		return true;
	}
	return false;
}

static void profile_where(struct app *a, char *out, size_t outsz)
{
	const struct profile_node *root = tree();
	char rate[160] = "";
	if (pf.on && pf.have_last) {
		double secs = pf.last.ms > 0 ? (double)pf.last.ms / 1000.0 : 1.0;
		snprintf(rate, sizeof(rate), ", %.0f/s of %d asked, costing "
			 "%.1f%% of a scheduler (budget %d%%)%s",
			 (double)pf.last.samples / secs, a->cfg->profile_rate,
			 pct((unsigned long)pf.last.used_us,
			     (unsigned long)(secs * 1e6)),
			 a->cfg->profile_budget,
			 pf.last.procs == 0 ? ", no process to sample" : "");
	}
	snprintf(out, outsz, "profile of %s: %lu samples%s%s%s", pf.who,
		 root ? root->total : 0UL,
		 pf.window_s ? " in the last " : "",
		 pf.window_s ? "seconds" : "", pf.on ? rate : ", stopped");
	if (pf.window_s) {
		char tail[40];
		snprintf(tail, sizeof(tail), " (%d s)", pf.window_s);
		size_t l = strlen(out);
		snprintf(out + l, outsz - l, "%s", tail);
	}
	char ex[200];
	exact_where(ex, sizeof(ex));
	size_t l = strlen(out);
	snprintf(out + l, outsz - l, "%s", ex);
}

static void profile_leave(struct app *a)
{
	profile_stop(a);
	exact_stop(a);
}

static void profile_release(struct app *a)
{
	(void)a;
	exact_release();
	if (pf.p)
		profile_free(pf.p);
	memset(&pf, 0, sizeof(pf));
}

const struct view_ops profile_view_ops = {
	.draw = profile_draw,
	.request = profile_request,
	.leave = profile_leave,
	.where = profile_where,
	.release = profile_release,
	.back = profile_back,
};
