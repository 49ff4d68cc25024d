/*
 * view_calls: one row per traced function: calls in all and in the last
 * second, returns and exceptions, and call-to-return latency percentiles
 * over its most recent calls.  Enter jumps to the process that made the
 * selected function's latest call.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "draw.h"

static int cmp_funcs(const void *pa, const void *pb)
{
	const struct fstat *x = *(struct fstat *const *)pa;
	const struct fstat *y = *(struct fstat *const *)pb;
	if (x->rcalls != y->rcalls)
		return x->rcalls < y->rcalls ? 1 : -1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return strcmp(x->mfa, y->mfa);
}

static void lat(char *out, size_t n, long us)
{
	if (us < 0)
		snprintf(out, n, "-");
	else if (us < 10000)
		snprintf(out, n, "%ldus", us);
	else if (us < 10000000)
		snprintf(out, n, "%ldms", us / 1000);
	else
		snprintf(out, n, "%lds", us / 1000000);
}

static void calls_draw(struct app *a, int y, int h)
{
	struct store *st = &a->store;
	struct list *l = &a->pos[VIEW_CALLS];
	char line[512];
	snprintf(line, sizeof(line), "%-*s %8s %7s %8s %6s %8s %8s %8s  %s",
		 COLS > 110 ? 40 : 28, "FUNCTION", "CALLS", "/s", "RETURNS",
		 "EXC", "p50", "p90", "p99", "LAST CALLER");
	draw_text(y, 0, COLS, line, draw_attr(a, ROLE_HEADER));
	y++;
	h--;
	if (st->nfuncs > 1)
		qsort(st->funcs, st->nfuncs, sizeof(*st->funcs), cmp_funcs);
	list_fit(l, LIST_SELECT, (int)st->nfuncs, h);
	for (int r = 0; r < h; r++) {
		move(y + r, 0);
		clrtoeol();
		size_t i = (size_t)(l->top + r);
		if (i >= st->nfuncs) {
			if (i == 0)
				draw_text(y, 0, COLS, "  no calls traced: :call mod:fun/arity "
					  "(or --call) adds a pattern", draw_attr(a, ROLE_DIM));
			continue;
		}
		const struct fstat *f = st->funcs[i];
		char p50[16], p90[16], p99[16];
		lat(p50, sizeof(p50), store_latency(f, 50));
		lat(p90, sizeof(p90), store_latency(f, 90));
		lat(p99, sizeof(p99), store_latency(f, 99));
		snprintf(line, sizeof(line), "%-*.*s %8lu %7lu %8lu %6lu %8s %8s %8s  %s",
			 COLS > 110 ? 40 : 28, COLS > 110 ? 40 : 28, f->mfa, f->calls,
			 f->rcalls, f->returns, f->exceptions, p50, p90, p99,
			 f->last_pid_text);
		draw_text(y + r, 0, COLS, line, (int)i == l->sel ?
			  draw_attr(a, ROLE_SELECTED) : (int)A_NORMAL);
	}
}

static int calls_request(struct app *a, enum request req)
{
	struct store *st = &a->store;
	struct list *l = &a->pos[VIEW_CALLS];
	if (list_request(l, LIST_SELECT, req))
		return ACT_REDRAW;
	if (req != REQ_ENTER || l->sel >= (int)st->nfuncs)
		return ACT_NONE;
	/* from a function to the process of its latest call */
	const struct fstat *f = st->funcs[l->sel];
	if (!f->last_pid_text[0])
		return ACT_NONE;
	return app_focus(a, f->last_pid, f->last_pid_text);
}

const struct view_ops calls_view_ops = {
	.draw = calls_draw,
	.request = calls_request,
};
