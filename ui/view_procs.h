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

/* What the table shows: its order (a COL_* column, ascending or not) and
 * its filter (text a row must match; "": every row). */
int procs_sort_col(const struct app *a);
bool procs_sort_asc(const struct app *a);
void procs_set_sort(struct app *a, int col, bool asc);
const char *procs_filter(const struct app *a);
void procs_set_filter(struct app *a, const char *text);

/* rows (n of them) in the order of column col (COL_*), ascending or
 * not; equal keys by pid (procs_sort.c) */
void procs_sort_rows(struct proc **rows, size_t n, int col, bool asc);

#endif
