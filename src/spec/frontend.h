/*
 * frontend: the two ways beamscope runs, each a front end of the session
 * engine in a folder of its own: batch/ (JSON lines) and ui/ (the view).
 * main.c picks one; the core knows neither.
 */
#ifndef BS_FRONTEND_H
#define BS_FRONTEND_H

#include "opts.h"

/* Write NDJSON from the nodes (or a recording); an EXIT_* code. */
int batch_run(const struct config *cfg);
/* The interactive view on the nodes (or a recording) until the user
 * quits; an EXIT_* code. */
int ui_run(const struct config *cfg);

#endif
