/*
 * syntax: :syntax, what is shown rendered again.
 */
#ifndef BS_UI_SYNTAX_H
#define BS_UI_SYNTAX_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h"

/* Everything shown rendered again (:syntax, ui/syntax.c): the store, a
 * paused table, the open event, the servers' calls; rn (nn nodes, taken)
 * says from which syntax to which, what ("elixir syntax") is said when it
 * is done.  The ring goes a slice a turn: app_rerender_step, while it is
 * true. */
struct rerender_node;
void app_rerender(struct app *a, struct rerender_node *rn, int nn,
		  const char *what);
bool app_rerender_step(struct app *a);
/* :syntax is not done: the loop should not sleep */
bool app_rerender_busy(const struct app *a);
/* What :syntax holds, freed (the view closes). */
void app_rerender_release(struct app *a);
/* An event of node stored in the syntax it had before. */
void app_rerender_late(struct app *a, int node, uint64_t seq);

#endif
