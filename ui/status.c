/*
 * status: the status line: node, session time, events/s, drops, what is
 * traced, the limits, and the last error or message.
 */
#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "app.h"
#include "clock.h"
#include "control.h"
#include "draw.h"
#include "event.h"

/* A recording: its file, time span and nodes. */
static void recording_status(struct app *a, int y)
{
	const struct session *s = a->s;
	char line[2400], span[64] = "";
	struct sbuf nodes = SBUF_INIT;
	for (int i = 0; i < session_nnodes(s); i++)
		sbuf_addf(&nodes, "%s%s%s", i ? " " : "", app_node_name(a, i),
			  a->node_filter == i ? "*" : "");
	const struct recording_stats *st = session_is_recording(s) ?
		session_recording_stats(s) : NULL;
	if (st && st->has_ts) {
		char t0[32], t1[32];
		draw_time(t0, sizeof(t0), st->first_ts);
		draw_time(t1, sizeof(t1), st->last_ts);
		snprintf(span, sizeof(span), "%s-%s", t0, t1);
	}
	int pc = session_replay_percent(s);
	bool done = session_replay_done(s);
	const char *path = session_recording_path(s);
	if (!done && pc >= 0)
		snprintf(line, sizeof(line), " recording %s  loading %d%%  %s",
			 path, pc, sbuf_str(&nodes));
	else if (!done && st)   /* a stream: how much, not how far */
		snprintf(line, sizeof(line), " recording %s  reading: %lu "
			 "events so far%s  %s", path, st->events,
			 session_replay_starved(s) ? ", waiting for more" : "",
			 sbuf_str(&nodes));
	else
		snprintf(line, sizeof(line), " recording %s  %s  %s  %zu "
			 "processes%s%s", path, span, sbuf_str(&nodes),
			 a->store.nprocs, a->last_error[0] ? "  last error: " : "",
			 a->last_error);
	sbuf_release(&nodes);
	draw_text(y, 0, COLS, line, draw_attr(a, ROLE_STATUS));
}

/* The kinds traced, as --events writes them. */
static void status_kinds(const struct session_spec *sp, char *out, size_t sz)
{
	out[0] = '\0';
	for (int bit = 1; bit <= KIND_LAST; bit <<= 1)
		if ((sp->kinds & bit) && event_kind_name(bit)) {
			size_t n = strlen(out);
			snprintf(out + n, sz - n, "%s%s", n ? "," : "",
				 event_kind_name(bit));
		}
}

/* The limits: time, events, payload bytes, and the rate with what it
 * shed. */
static void status_limits(struct app *a, char *out, size_t sz)
{
	const struct session_spec *sp = session_spec(a->s);
	char tl[32], el[32];
	if (sp->duration > 0)
		snprintf(tl, sizeof(tl), "%gs", sp->duration);
	else
		snprintf(tl, sizeof(tl), "no time limit");
	if (sp->max_events)
		snprintf(el, sizeof(el), "%lu events", sp->max_events);
	else
		snprintf(el, sizeof(el), "no event limit");
	snprintf(out, sz, "limits %s, %s, %uB", tl, el, sp->payload);
	if (a->cfg->rate) {
		long shed = 0;
		for (int i = 0; i < session_nnodes(a->s); i++)
			shed += session_node(a->s, i)->shed;
		size_t n = strlen(out);
		snprintf(out + n, sz - n, ", %lu/s (%ld shed)", a->cfg->rate,
			 shed);
	}
}

/* Who: the node, or every node with its own state and drops. */
static void status_who(struct app *a, char *who, size_t sz)
{
	who[0] = '\0';
	if (!a->multi) {
		snprintf(who, sz, "%s", app_node_name(a, 0));
		return;
	}
	for (int i = 0; i < session_nnodes(a->s); i++) {
		const struct node_view *n = session_node(a->s, i);
		size_t l = strlen(who);
		if (!n->present || l + 2 >= sz)
			continue;
		snprintf(who + l, sz - l, "%s%s%s%s",
			 l ? " " : "", app_node_name(a, i),
			 n->state == SN_LOST ? ":LOST" :
			 n->state == SN_TRACING ? "" :
			 n->state == SN_IDLE ? ":off" : ":...",
			 a->node_filter == i ? "*" : "");
		if (n->stats_ready && stats_dropped(n->st)) {
			l = strlen(who);
			snprintf(who + l, sz - l, "(%lu dropped)",
				 stats_dropped(n->st));
		}
	}
}

/* What another tracer kept; what someone else cleared (the counts are
 * then not complete). */
static void status_others(struct app *a, char *skipped, size_t skipped_sz,
			  char *cleared, size_t cleared_sz)
{
	unsigned long nskipped = 0;
	skipped[0] = cleared[0] = '\0';
	for (int i = 0; i < session_nnodes(a->s); i++) {
		const struct node_view *n = session_node(a->s, i);
		if (!n->present)
			continue;
		nskipped += (unsigned long)n->tr->nskipped;
		if (n->cleared[0] && !cleared[0])
			snprintf(cleared, cleared_sz, "CLEARED by another "
				 "tool: %s", n->cleared);
	}
	if (nskipped)
		snprintf(skipped, skipped_sz, "%lu skipped", nskipped);
}

/* "calls: ..." and "match: ...", cut to a length the line can hold. */
static void status_patterns(const struct session_spec *sp, char *calls,
			    size_t calls_sz, char *match, size_t match_sz)
{
	calls[0] = match[0] = '\0';
	if (sp->ncalls) {
		char more[16] = "";
		if (sp->ncalls > 1)
			snprintf(more, sizeof(more), " +%d", sp->ncalls - 1);
		size_t len = strlen(sp->calls[0]);
		snprintf(calls, calls_sz, "calls: %.*s%s%s", len > 32 ? 29 : 32,
			 sp->calls[0], len > 32 ? "..." : "", more);
	}
	if (sp->match[0]) {
		/* what is shipped is filtered: say so while it is */
		size_t len = strlen(sp->match);
		snprintf(match, match_sz, "match: %.*s%s", len > 32 ? 29 : 32,
			 sp->match, len > 32 ? "..." : "");
	}
}

struct status_part {
	char *text;
	int prio;
};

/* The parts in their order on one line; what does not fit in the
 * screen's width goes, the least wanted (lowest prio) first.  Part
 * place_at, where the selection is, is cut at one of its own parts' ends
 * rather than lost whole. */
static void status_fit(struct status_part *part, int nparts, int place_at,
		       char *line, size_t sz)
{
	bool shown[16];
	int width = 1;   /* the leading space */
	if (nparts > (int)(sizeof(shown) / sizeof(shown[0])))
		nparts = (int)(sizeof(shown) / sizeof(shown[0]));
	for (int i = 0; i < nparts; i++) {
		shown[i] = part[i].text[0] != '\0';
		width += shown[i] ? (int)strlen(part[i].text) + 2 : 0;
	}
	for (int prio = 0; prio < 10 && width - 2 > COLS; prio++)
		for (int i = nparts - 1; i >= 0 && width - 2 > COLS; i--)
			if (shown[i] && part[i].prio == prio) {
				shown[i] = false;
				width -= (int)strlen(part[i].text) + 2;
			}
	char *where = part[place_at].text;
	if (!shown[place_at] && where[0]) {
		int room = COLS - (width - 2) - 2;
		char *cut = NULL;
		for (char *p = strstr(where, "  "); p && p - where <= room;
		     p = strstr(p + 2, "  "))
			cut = p;
		if (cut) {
			*cut = '\0';
			shown[place_at] = true;
		}
	}
	size_t n = 0;
	line[0] = '\0';
	for (int i = 0; i < nparts && n < sz; i++)
		if (shown[i])
			n += (size_t)snprintf(line + n, sz - n, "%s%s",
					      n ? "  " : " ", part[i].text);
}

void status_draw(struct app *a, int y)
{
	char line[2400], kinds[128], limits[128];
	long long up = (clock_mono_ms() - a->start_ms) / 1000;
	const struct session_spec *sp = session_spec(a->s);

	if (session_is_recording(a->s)) {
		recording_status(a, y);
		return;
	}
	status_kinds(sp, kinds, sizeof(kinds));
	status_limits(a, limits, sizeof(limits));
	unsigned long dropped = session_dropped(a->s);
	char who[1600];
	status_who(a, who, sizeof(who));
	bool lost = app_lost(a);
	struct sbuf pending = SBUF_INIT;
	/* a request waiting for its answer comes first: it says why the
	 * rest may not change yet */
	sbuf_addstr(&pending, "pending: ");
	session_pending_text(a->s, &pending);
	if (pending.len == strlen("pending: "))
		sbuf_reset(&pending);
	const char *state = pending.len ? pending.buf :
		lost && !app_attached(a) ? "LOST" :
		session_stopped_why(a->s)[0] ? "stopped" : a->paused ? "paused" : "tracing";
	char where[400];
	view_where(a, where, sizeof(where));

	char tm[64], rate[32], procs[32], drops[48], what[400], calls[128],
		match[64], err[320] = "", skipped[48], cleared[128];
	snprintf(tm, sizeof(tm), "%s %02lld:%02lld:%02lld", state, up / 3600,
		 (up / 60) % 60, up % 60);
	snprintf(rate, sizeof(rate), "%lu ev/s", a->rate);
	snprintf(procs, sizeof(procs), "%zu procs", a->store.nprocs);
	snprintf(drops, sizeof(drops), "%lu dropped", dropped);
	snprintf(what, sizeof(what), "%s %s", kinds, sp->pids[0] ? sp->pids : "all");
	status_patterns(sp, calls, sizeof(calls), match, sizeof(match));
	if (a->last_error[0])
		snprintf(err, sizeof(err), "last error: %s", a->last_error);
	status_others(a, skipped, sizeof(skipped), cleared, sizeof(cleared));
	/* the VM's alarms, while they are on or once one came */
	char alarms[64] = "";
	unsigned long sup, nal = session_alarm_count(a->s, &sup);
	if (nal || session_alarm_spec(a->s))
		snprintf(alarms, sizeof(alarms), "%lu alarm%s%s", nal,
			 nal == 1 ? "" : "s", sup ? " (more not shipped)" : "");
	struct status_part part[] = {
		{ who, 10 }, { tm, 10 }, { where, 7 }, { rate, 4 }, { procs, 3 },
		{ drops, dropped ? 9 : 5 }, { alarms, nal ? 9 : 4 },
		{ cleared, 9 }, { skipped, 6 },
		{ what, 2 }, { calls, 8 }, { match, 8 },
		{ limits, 1 }, { err, 0 },
	};
	status_fit(part, (int)(sizeof(part) / sizeof(part[0])), 2, line,
		   sizeof(line));
	sbuf_release(&pending);
	draw_text(y, 0, COLS, line, draw_attr(a, lost ? ROLE_ERROR : ROLE_STATUS));
}
