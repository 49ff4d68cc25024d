/*
 * view_profile: the sampling profiler's view (a table of functions, a
 * flame graph) and what starts and stops the profiler.
 */
#ifndef BS_UI_VIEW_PROFILE_H
#define BS_UI_VIEW_PROFILE_H

#include <stdbool.h>

#include "app.h"

/* Sample the n processes of pids (all of node `node`) and open the view;
 * ACT_* flags. */
int profile_start(struct app *a, int node, const struct bs_pid *pids, int n);
/* The same for a list of pids and registered names (the agent finds the
 * names); who says what it is. */
struct pidsel;
int profile_start_sel(struct app *a, int node, const struct pidsel *sel,
		      const char *who);
/* f: the selected process's (the tagged ones', when any; in a process
 * log, its process) profile, or the view closed if it is on top. */
int profile_toggle(struct app *a);
/* :profile top N: the N processes of the node leading by reductions a
 * second, picked again each second. */
int profile_start_top(struct app *a, int n);
/* Stop sampling (the view closes too when it is on top); the samples
 * stay until the next start. */
void profile_stop(struct app *a);
/* :profile [WHO|top [N]|off|window N], argc words after the command;
 * ACT_* flags. */
int profile_command(struct app *a, int argc, const char *const *argv);
/* :profile window N: the view shows the last N seconds; 0: all of it. */
void profile_set_window(struct app *a, int seconds);
/* :profile-export FILE: collapsed stacks, or speedscope's JSON for a
 * FILE ending in .json; ACT_* flags (the message says what happened). */
int profile_export(struct app *a, const char *path);
/* The stacks as they come (sink.c), and their seconds' stats. */
void profile_sample(struct app *a, int node, const struct prof_sample *p);
void profile_second(struct app *a, int node, const struct prof_stats *st);
/* / in the profile: the frames whose function holds text are marked ("":
 * none). */
void profile_highlight(struct app *a, const char *text);

#endif
