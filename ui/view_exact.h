/*
 * view_exact: exact mode in the profile view (:profile calls): what it
 * asks of the session, the totals the agents send, and the columns the
 * profile's table gains from them.
 */
#ifndef BS_UI_VIEW_EXACT_H
#define BS_UI_VIEW_EXACT_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h"

/* one function's totals since exact mode began */
struct exact_row {
	char *name;             /* as the syntax in force writes it */
	long long calls, us;
	long long words;        /* -1: not counted */
};

/* :profile calls PATTERN[,PATTERN...] | off (argv after "calls");
 * ACT_* flags.  Runs on node (an index). */
int exact_command(struct app *a, int node, int argc, const char *const *argv);
/* Exact mode off, on the target too (no-op when off). */
void exact_stop(struct app *a);
/* Whether it is on, and the rows it has (sorted by time, most first). */
bool exact_on(void);
int exact_nrows(void);
const struct exact_row *exact_row_at(int i);
/* The row of the function named, or NULL. */
const struct exact_row *exact_find(const char *name);
/* The totals as they come (sink.c). */
struct prof_calls;
void exact_take(struct app *a, int node, const struct prof_calls *c);
/* The status line's part: "exact: N functions, read X us", or "". */
void exact_where(char *out, size_t outsz);
/* Everything freed. */
void exact_release(void);

#endif
