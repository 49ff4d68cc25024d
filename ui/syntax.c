/*
 * syntax: the view in another syntax.  :syntax renders again what is
 * already captured, not only what comes next: the store's processes and
 * events (rerender.c), the copies a paused table and the event view keep,
 * and the servers' calls.  The log, the chart and the calls view draw
 * from the store, so they follow.
 *
 * Names and the servers' calls change at once.  The ring changes newest
 * first, a slice of SLICE_US a turn of the loop: the screen, which shows
 * the newest events, is right after the first slice, and keys are
 * answered while an older part of a big ring is still being done.
 */
#include <stdio.h>
#include <stdlib.h>

#include "app.h"
#include "clock.h"
#include "rerender.h"

#define FIRST_SLICE_US 40000   /* before the key's redraw */
#define SLICE_US 15000         /* a turn of the loop */

static void step(struct app *a, long budget_us)
{
	a->rr_done += rerender_events(&a->store, a->rr, a->rr_n, &a->rr_cursor,
				      budget_us);
	event_refill(a);
	procs_invalidate(a);
	if (a->rr_cursor)
		return;
	app_msg(a, false, "%s; %zu events shown again (%lld ms)", a->rr_what,
		a->rr_done, clock_mono_ms() - a->rr_t0);
	free(a->rr);
	a->rr = NULL;
	a->rr_n = 0;
}

void app_rerender(struct app *a, struct rerender_node *rn, int nn,
		  const char *what)
{
	free(a->rr);
	a->rr = rn;
	a->rr_n = nn;
	a->rr_cursor = a->store.next_seq;
	a->rr_done = 0;
	a->rr_t0 = clock_mono_ms();
	snprintf(a->rr_what, sizeof(a->rr_what), "%s", what);

	rerender_names(&a->store, rn, nn);
	procs_rerender(a, rn, nn);
	session_rerender(a->s, rn, nn);
	step(a, FIRST_SLICE_US);
	if (a->rr)
		app_msg(a, false, "%s; rendering the older events again", what);
}

bool app_rerender_step(struct app *a)
{
	if (!a->rr)
		return false;
	step(a, SLICE_US);
	return true;
}

void app_rerender_late(struct app *a, int node, uint64_t seq)
{
	struct rerender_node rn;
	session_rerender_node(a->s, node, &rn);
	rerender_one(&a->store, seq, &rn);
}
