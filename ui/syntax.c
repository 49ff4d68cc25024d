/*
 * syntax: the view in another syntax.  :syntax renders again what is
 * already captured, not only what comes next: the store's events and
 * processes (rerender.c), the copies a paused table and the event view
 * keep, and the servers' calls.  The log, the chart and the calls view
 * draw from the store, so they follow.
 */
#include "app.h"
#include "rerender.h"

size_t app_rerender(struct app *a, const struct rerender_node *rn, int nn)
{
	size_t n = rerender_store(&a->store, rn, nn);
	struct procs_table *t = &a->table;
	for (size_t i = 0; t->is_frozen && i < t->nfrozen; i++) {
		struct proc *p = &t->frozen[i];
		if ((int)p->pid.node < nn)
			rerender_proc(p, rn[p->pid.node].from,
				      rn[p->pid.node].to);
	}
	t->built = false;
	rerender_gencalls(&a->s.gcalls, rn, nn);
	const struct sevent *e = a->detail.seq ?
		store_event(&a->store, a->detail.seq) : NULL;
	if (e)
		event_fill(a, e);
	return n;
}
