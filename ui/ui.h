/*
 * ui: how the view's own files meet: ui.c (the terminal, start and end),
 * control.c (what the view asks), sink.c (what the session reports) and
 * loop.c (the turn, keys and drawing).  Views use app.h.
 */
#ifndef BS_UI_H
#define BS_UI_H

#include <stdbool.h>

#include "app.h"

struct session_sink;

/* The view's sink for session_new: events into a->store, notices as
 * messages. */
void ui_sink(struct app *a, struct session_sink *sink);
/* Say what the start that happened before the screen was up traced. */
void ui_say_started(struct app *a);
/* The run loop until the view quits or a signal ends it: EXIT_*. */
int ui_loop(struct app *a);
void ui_draw(struct app *a);
/* Sample the processes on screen, and the one in focus, every second. */
void app_keep_shown(struct app *a);

#endif
