/* ui: the interactive, full-screen mode. */
#ifndef BS_UI_H
#define BS_UI_H

#include "opts.h"

/* Attach, run the UI until the user quits; returns an EXIT_* code. */
int ui_run(const struct config *cfg);

#endif
