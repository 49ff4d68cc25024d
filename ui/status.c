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
	long shed = 0;
	unsigned long dropped = 0;
	for (int i = 0; i < a->nnodes; i++) {
		const struct unode *n = &a->nodes[i];
		shed += n->shed;
		dropped += n->dec_ready ? stats_dropped(&n->stats) : 0;
	}
	if (a->cfg->rate) {
		size_t n = strlen(lim);
		snprintf(lim + n, sizeof(lim) - n, ", %lu/s (%ld shed)",
			 a->cfg->rate, shed);
	}

	/* who: the node, or every node with its own state and drops */
	char who[1600] = "";
	if (!a->multi) {
		snprintf(who, sizeof(who), "%s", app_node_name(a, 0));
	} else {
		for (int i = 0; i < a->nnodes; i++) {
			const struct unode *n = &a->nodes[i];
			size_t l = strlen(who);
			if (!n->present || l + 2 >= sizeof(who))
				continue;
			snprintf(who + l, sizeof(who) - l, "%s%s%s%s",
				 l ? " " : "", app_node_name(a, i),
				 n->lost ? ":LOST" : n->attached ? "" : ":off",
				 a->node_filter == i ? "*" : "");
			if (n->dec_ready && stats_dropped(&n->stats)) {
				l = strlen(who);
				snprintf(who + l, sizeof(who) - l, "(%lu dropped)",
					 stats_dropped(&n->stats));
			}
		}
	}
	bool lost = app_lost(a);
	const char *state = lost && !app_attached(a) ? "LOST" :
		a->stopped_why[0] ? "stopped" : a->paused ? "paused" : "tracing";
	snprintf(line, sizeof(line), " %s  %s %02lld:%02lld:%02lld  %lu ev/s  "
		 "%lu dropped  %s %s  limits %s%s%s",
		 who, state, up / 3600, (up / 60) % 60, up % 60, a->rate,
		 dropped, kinds, a->pids_arg,
		 lim, a->last_error[0] ? "  last error: " : "", a->last_error);
	draw_text(y, 0, COLS, line, draw_attr(a, lost ? ROLE_ERROR : ROLE_STATUS));
}
