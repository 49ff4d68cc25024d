/*
 * view_procs: the process table, as the other views and the loop
 * reach it.
 */
#ifndef BS_UI_VIEW_PROCS_H
#define BS_UI_VIEW_PROCS_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h"

/* The process table holds its rows still (paused), or follows the store
 * again (view_procs.c). */
void procs_freeze(struct app *a, bool on);
/* The process table's rows are built again at the next draw; its held
 * rows (paused) rendered again (:syntax); its selected process (false:
 * none). */
void procs_invalidate(struct app *a);
struct rerender_node;
void procs_rerender(struct app *a, const struct rerender_node *rn, int nn);
bool procs_selected(const struct app *a, struct bs_pid *pid);
void procs_select(struct app *a, struct bs_pid pid);

#endif
