/*
 * control: what the view asks of the engine (control.c): tracing on
 * and off, focus, recording, nodes attached and left, the display paused.
 */
#ifndef BS_UI_CONTROL_H
#define BS_UI_CONTROL_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h"

/* Pause the display (tracing goes on) or resume it; ACT_* flags. */
int app_pause(struct app *a, bool on);

int app_retrace(struct app *a);
int app_stop_tracing(struct app *a, const char *why);
/* Put a process in focus on its node (its events are shipped), or out. */
void node_focus(struct app *a, struct bs_pid pid, bool on);
/* Is any node tracing?  Is any node lost? */
bool app_attached(const struct app *a);
bool app_lost(const struct app *a);
/* A live session (true), or a recording: what needs a node says so. */
bool app_live(struct app *a, const char *what);
/* :record FILE starts writing what the view receives; NULL stops. */
int app_record(struct app *a, const char *path);
/* The name of node i, as it calls itself once attached. */
const char *app_node_name(const struct app *a, int i);
/* Several nodes: attach one more, or leave one (ACT_*). */
int app_attach_node(struct app *a, const char *name);
int app_detach_node(struct app *a, const char *name);
/* A pid text as the agent of its node wants it: "<0.N.S>". */
void app_local_pid(struct bs_pid pid, char *out, size_t outsz);

#endif
