/*
 * list: where a view is in its rows.  Every view that shows rows keeps a
 * struct list, and moving (REQ_UP to REQ_END) is done here, once, for all
 * of them.  count and page are what the view had when it last drew; a move
 * between draws is kept within them, and the next draw fits the list to
 * the rows there are by then.
 */
#ifndef BS_LIST_H
#define BS_LIST_H

#include <stdbool.h>

#include "keys.h"

enum list_kind {
	LIST_SELECT,    /* a selected row; the view scrolls to keep it in sight */
	LIST_SCROLL,    /* no selection: the keys scroll */
	LIST_LOG,       /* a cursor, counted from the newest row at the
			 * bottom: sel 0 (and so top 0) follows it, Up goes
			 * back in time; a page moves the cursor and the
			 * rows together */
};

struct list {
	int count;      /* rows, at the last draw */
	int page;       /* rows on the screen, at the last draw */
	int top;        /* first row shown (LIST_LOG: rows hidden below) */
	int sel;        /* the selected row (LIST_LOG: rows below it) */
};

/* Apply a moving request; false if req is not one. */
bool list_request(struct list *l, enum list_kind kind, enum request req);
/* The view counted its rows: keep sel and top within them. */
void list_fit(struct list *l, enum list_kind kind, int count, int page);
/* Back to the first row. */
void list_reset(struct list *l);

#endif
