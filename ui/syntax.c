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
#include "syntax.h"
#include "view_event.h"
#include "view_procs.h"

#define FIRST_SLICE_US 40000   /* before the key's redraw */
#define SLICE_US 15000         /* a turn of the loop */

/* the ring rendered again a slice a turn */
static struct {
	struct rerender_node *rn;   /* per node; NULL: nothing to do */
	int n;
	uint64_t cursor;            /* the walk's place, newest first */
	size_t done;                /* events rendered again so far */
	long long t0;               /* when it began, ms */
	char what[64];              /* "elixir syntax", for the message */
} rr;

static void step(struct app *a, long budget_us)
{
	rr.done += rerender_events(&a->store, rr.rn, rr.n, &rr.cursor,
				      budget_us);
	event_refill(a);
	procs_invalidate(a);
	if (rr.cursor)
		return;
	app_msg(a, false, "%s; %zu events shown again (%lld ms)", rr.what,
		rr.done, clock_mono_ms() - rr.t0);
	free(rr.rn);
	rr.rn = NULL;
	rr.n = 0;
}

void app_rerender(struct app *a, struct rerender_node *rn, int nn,
		  const char *what)
{
	free(rr.rn);
	rr.rn = rn;
	rr.n = nn;
	rr.cursor = a->store.next_seq;
	rr.done = 0;
	rr.t0 = clock_mono_ms();
	snprintf(rr.what, sizeof(rr.what), "%s", what);

	rerender_names(&a->store, rn, nn);
	procs_rerender(a, rn, nn);
	session_rerender(a->s, rn, nn);
	step(a, FIRST_SLICE_US);
	if (rr.rn)
		app_msg(a, false, "%s; rendering the older events again", what);
}

bool app_rerender_step(struct app *a)
{
	if (!rr.rn)
		return false;
	step(a, SLICE_US);
	return true;
}

bool app_rerender_busy(const struct app *a)
{
	(void)a;
	return rr.rn != NULL;
}

void app_rerender_release(struct app *a)
{
	(void)a;
	free(rr.rn);
	rr.rn = NULL;
	rr.n = 0;
}

void app_rerender_late(struct app *a, int node, uint64_t seq)
{
	struct rerender_node rn;
	session_rerender_node(a->s, node, &rn);
	rerender_one(&a->store, seq, &rn);
}
