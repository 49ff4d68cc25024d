/*
 * view_event: one event in detail.
 */
#ifndef BS_UI_VIEW_EVENT_H
#define BS_UI_VIEW_EVENT_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h"

/* The event detail (view_event.c): open it on an event of the store. */
void event_open(struct app *a, const struct sevent *e);
/* The same without opening the view: the open event's text anew. */
void event_fill(struct app *a, const struct sevent *e);
/* The open event's text anew from the store, if it is still there and
 * the view is on top (after :syntax). */
void event_refill(struct app *a);

#endif
