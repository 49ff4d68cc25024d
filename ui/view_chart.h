/*
 * view_chart: the sequence chart and the processes tagged for it.
 */
#ifndef BS_UI_VIEW_CHART_H
#define BS_UI_VIEW_CHART_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h"

/* the chart (view_chart.c): tag or untag a process (ACT_*); is it
 * tagged (its index, or -1); the tagged processes as a chart's
 * lifelines; :chart-export FILE */
int app_tag(struct app *a, struct bs_pid pid, const char *text);
int app_tagged(const struct app *a, struct bs_pid pid);
void chart_lines(struct app *a, struct chart *c);
int app_chart_export(struct app *a, const char *path);
/* The tagged processes: how many, the i-th, and the store's next seq
 * when it was tagged (its lifeline starts there). */
int chart_ntags(const struct app *a);
struct bs_pid chart_tag(const struct app *a, int i);
uint64_t chart_tag_seq(const struct app *a, int i);

#endif
