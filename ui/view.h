/*
 * view: the views, as one table indexed by enum view_id.  Each view lives
 * in a file of its own (view_*.c) and gives its operations; this module
 * keeps the table, opens views (app_push), draws the one on top and hands
 * it the requests that are not everyone's.  A view keeps what it needs
 * between draws in its own file, and forgets or frees it in its clear and
 * release ops; its list position is a->pos[id], and the process table's
 * rows are in struct app (the status line and :syntax read them).
 */
#ifndef BS_VIEW_H
#define BS_VIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "keys.h"
#include "list.h"

struct app;

enum view_id { VIEW_PROCS, VIEW_PROC, VIEW_TREE, VIEW_HELP, VIEW_CALLS,
	       VIEW_EVENT, VIEW_SERVERS, VIEW_SRV_CALLS, VIEW_CHART, VIEW_PROFILE,
	       VIEW_ALARMS,
	       VIEW__COUNT };

struct view_ops {
	/* Draw rows y .. y+h-1 of the screen. */
	void (*draw)(struct app *a, int y, int h);
	/* A request that is the view's own; ACT_* flags. */
	int (*request)(struct app *a, enum request req);
	/* The view was opened, or closed; either may be NULL. */
	void (*enter)(struct app *a);
	void (*leave)(struct app *a);
	/* Where the view is, for the status line ("3/120  sort ..."); NULL
	 * if it has nothing to say. */
	void (*where)(struct app *a, char *out, size_t outsz);
	/* The store was emptied (:clear): forget what pointed into it.
	 * At the end: free what the view keeps.  Either may be NULL. */
	void (*clear)(struct app *a);
	void (*release)(struct app *a);
	/* Esc (REQ_BACK) within the view, e.g. out of a zoom: true if it
	 * did something; false (or NULL) closes the view. */
	bool (*back)(struct app *a);
};

extern const struct view_ops procs_view_ops, proc_view_ops, tree_view_ops,
	help_view_ops, calls_view_ops, event_view_ops, servers_view_ops,
	srv_calls_view_ops, chart_view_ops, profile_view_ops,
	alarms_view_ops;


/* What the view on top says of where it is; "" if nothing. */
void view_where(struct app *a, char *out, size_t outsz);
/* Draw the view on top in rows y .. y+h-1. */
void view_draw(struct app *a, int y, int h);
/* What a key asked for: the requests every view shares, else the view
 * on top's; ACT_* flags. */
int view_request(struct app *a, enum request req);
/* View v has just been taken off the stack. */
void view_leave(struct app *a, enum view_id v);
/* The store was emptied: every view back to its first row. */
void views_clear(struct app *a);
/* Free what the views keep. */
void views_release(struct app *a);

#endif
