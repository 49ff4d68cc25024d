/*
 * status: the status line: node, session time, events/s, drops, what is
 * traced, the limits, and the last error or message.
 */
#include <curses.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "event.h"

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void status_draw(struct app *a, int y)
{
	char line[2400], kinds[128] = "", lim[96];
	long long up = (now_ms() - a->start_ms) / 1000;

	for (int bit = 1; bit <= KIND_RUNNING; bit <<= 1)
		if ((a->kinds & bit) && event_kind_name(bit)) {
			size_t n = strlen(kinds);
			snprintf(kinds + n, sizeof(kinds) - n, "%s%s", n ? "," : "",
				 event_kind_name(bit));
		}
	char tl[32], el[32];
	if (a->duration > 0)
		snprintf(tl, sizeof(tl), "%gs", a->duration);
	else
		snprintf(tl, sizeof(tl), "no time limit");
	if (a->max_events)
		snprintf(el, sizeof(el), "%lu events", a->max_events);
	else
		snprintf(el, sizeof(el), "no event limit");
	snprintf(lim, sizeof(lim), "%s, %s, %uB", tl, el, a->payload);
	if (a->cfg->rate) {
		size_t n = strlen(lim);
		snprintf(lim + n, sizeof(lim) - n, ", %lu/s (%ld shed)",
			 a->cfg->rate, a->shed);
	}

	const char *state = a->lost ? "LOST" : a->stopped_why[0] ? "stopped" :
		a->paused ? "paused" : "tracing";
	snprintf(line, sizeof(line), " %s  %s %02lld:%02lld:%02lld  %lu ev/s  "
		 "%lu dropped  %s %s  limits %s%s%s",
		 a->node[0] ? a->node : a->cfg->node, state,
		 up / 3600, (up / 60) % 60, up % 60, a->rate,
		 a->dec_ready ? stats_dropped(&a->stats) : 0, kinds, a->pids_arg,
		 lim, a->last_error[0] ? "  last error: " : "", a->last_error);
	draw_text(y, 0, COLS, line, draw_attr(a, a->lost ? ROLE_ERROR : ROLE_STATUS));
}
