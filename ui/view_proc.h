/*
 * view_proc: the process log, as the commands reach it.
 */
#ifndef BS_UI_VIEW_PROC_H
#define BS_UI_VIEW_PROC_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h"

/* The process log (view_proc.c): search it for text (NULL or "": the
 * last text again) from the cursor, towards older lines (older) or newer
 * ones; the cursor's line itself counts when from_cursor.  ACT_* flags. */
int log_search(struct app *a, const char *text, bool older,
	       bool from_cursor);

/* Open the log of the process a line names (PID or NAME); ACT_* flags. */
int app_jump(struct app *a, const char *what);

/* The process in focus (its log open, or last open), its text, and the
 * store's next seq when it came into focus (its log starts there); what
 * its agent said of its relations, kept while its log is open. */
void log_set_focus(struct app *a, struct bs_pid pid, const char *text,
		   uint64_t seq);
struct bs_pid log_focus(const struct app *a);
uint64_t log_focus_seq(const struct app *a);
void log_relations(struct app *a, const struct relations *r);

#endif
