/*
 * view_alarms: the VM's recent alarms (long_gc, long_schedule, ...), the
 * newest first, whatever process they are of; Enter opens the log of the
 * selected alarm's process.  The view keeps its own copies of the last
 * ALARMS_KEPT: the store's ring may let them go under a flood of events.
 */
#ifndef BS_VIEW_ALARMS_H
#define BS_VIEW_ALARMS_H

#include "event.h"

struct app;

#define ALARMS_KEPT 500

/* An alarm has come (the sink's event hook). */
void alarms_add(struct app *a, const struct event *ev);
/* The a key: open the view, turning the alarms on (at --alarm's
 * thresholds, else the defaults) if they are off; close it if on top. */
int alarms_toggle(struct app *a);
/* :alarms [on|off|NAME=VALUE,...]: 0 arguments: as the key, but never
 * closes. */
int alarms_command(struct app *a, int argc, const char *const *argv);

#endif
