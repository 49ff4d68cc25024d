/*
 * batch: attach, trace, write NDJSON, detach.  The same pipeline the UI
 * will use, with the JSON sink instead of views.
 */
#ifndef BS_BATCH_H
#define BS_BATCH_H

#include "opts.h"

/* Returns an EXIT_* code. */
int batch_run(const struct config *cfg);

#endif
