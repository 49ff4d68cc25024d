/* list: moving in a view's rows, the same way in every view. */
#include "list.h"

#include <limits.h>

static int clamp(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

bool list_request(struct list *l, enum list_kind kind, enum request req)
{
	/* a log's first row is at the bottom: every move goes the other way */
	static const enum request flip[REQ__COUNT] = {
		[REQ_UP] = REQ_DOWN, [REQ_DOWN] = REQ_UP,
		[REQ_PAGE_UP] = REQ_PAGE_DOWN, [REQ_PAGE_DOWN] = REQ_PAGE_UP,
		[REQ_HOME] = REQ_END, [REQ_END] = REQ_HOME,
	};
	if (kind == LIST_LOG && flip[req])
		req = flip[req];
	int *at = kind == LIST_SCROLL ? &l->top : &l->sel;
	int page = l->page > 1 ? l->page : 1;
	/* *at is within the rows (the last fit), so no step overflows */
	switch (req) {
	case REQ_UP: (*at)--; break;
	case REQ_DOWN: (*at)++; break;
	case REQ_PAGE_UP:
		*at -= page;
		if (kind == LIST_LOG)
			l->top -= page < l->top ? page : l->top;
		break;
	case REQ_PAGE_DOWN:
		*at += page;
		if (kind == LIST_LOG)
			l->top += page;
		break;
	case REQ_HOME: *at = 0; break;
	case REQ_END: *at = INT_MAX; break;
	default: return false;
	}
	list_fit(l, kind, l->count, l->page);
	return true;
}

void list_fit(struct list *l, enum list_kind kind, int count, int page)
{
	l->count = count > 0 ? count : 0;
	l->page = page > 1 ? page : 1;
	int last_top = l->count > l->page ? l->count - l->page : 0;
	l->top = clamp(l->top, 0, last_top);
	if (kind == LIST_SCROLL)
		return;
	l->sel = clamp(l->sel, 0, l->count ? l->count - 1 : 0);
	if (l->sel < l->top)
		l->top = l->sel;
	if (l->sel >= l->top + l->page)
		l->top = l->sel - l->page + 1;
}

void list_reset(struct list *l)
{
	l->top = l->sel = 0;
}
