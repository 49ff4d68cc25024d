/*
 * commands: the : prompt's commands, and what they share with keys.
 */
#ifndef BS_UI_COMMANDS_H
#define BS_UI_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h"

int cmd_run(struct app *a, const char *line);
/* Open the log of PID or NAME, as :focus does; ACT_* flags. */
int app_focus_text(struct app *a, const char *what);
/* The process a name or pid (as shown, or typed in either syntax) stands
 * for; NULL, with *refused set when a message already says why. */
struct proc *app_find_proc(struct app *a, const char *what, bool *refused);
/* Names and pids for completion; state as readline's. */
const char *app_complete_proc(struct app *a, const char *prefix, int state);

/* Start or stop pairing gen calls for the servers view. */
int app_gen_calls(struct app *a, bool on);

#endif
