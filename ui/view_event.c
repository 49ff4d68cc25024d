/*
 * view_event: one event of a process log, whole: what it is, the processes
 * it names, and its payload (message, arguments, reason, return value)
 * laid out by pretty.c, as much as was captured.  It keeps its own copy of
 * the text, so it stays while the event leaves the ring, and lays it out
 * again when the width changes.  It scrolls; J opens the log of the
 * process the event names.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "draw.h"
#include "pretty.h"
#include "view_event.h"
#include "view_proc.h"
#include "xalloc.h"

/* the event opened from the log: its text, kept when the event leaves
 * the ring, and laid out for a width */
static struct event_detail {
	struct sbuf head;       /* lines about the event */
	char *payload;          /* NULL: none */
	char *peer;             /* the process the event names, or NULL */
	int width;              /* the layout's; 0: none yet */
	struct sbuf lines;      /* head and payload, laid out */
	int nlines;
	uint64_t seq;           /* the event's, while in the ring */
} detail;

static void detail_release(struct event_detail *d)
{
	sbuf_release(&d->head);
	sbuf_release(&d->lines);
	free(d->payload);
	free(d->peer);
	memset(d, 0, sizeof(*d));
}

/* The detail of e, laid out anew at the next draw. */
void event_fill(struct app *a, const struct sevent *e)
{
	struct event_detail *d = &detail;
	(void)a;
	char t[32];
	detail_release(d);
	d->seq = e->seq;
	draw_time(t, sizeof(t), e->ts);
	sbuf_addf(&d->head, "%s  %s%s%s  %s\n", t, e->pid_text,
		  e->name ? " " : "", e->name ? e->name : "",
		  event_types[e->type].json);
	const char *peer = e->type == EV_RECEIVE ? e->from : e->peer;
	if (peer && e->type != EV_REGISTER && e->type != EV_UNREGISTER) {
		/* the word JSON uses: to, child, parent, peer */
		const char *key = event_fields[e->type].peer.name;
		const char *word = e->type == EV_RECEIVE ? "from" :
			key[0] ? key : "peer";
		sbuf_addf(&d->head, "%-9s %s%s%s%s\n", word, peer,
			  e->peer_name ? " " : "", e->peer_name ? e->peer_name : "",
			  e->type == EV_SEND_DEAD ? " (no such process)" : "");
		if (peer[0] != '#')
			d->peer = xstrdup(peer);
	}
	if (e->name && (e->type == EV_REGISTER || e->type == EV_UNREGISTER))
		sbuf_addf(&d->head, "%-9s %s\n", "name", e->name);
	if (e->mfa)
		sbuf_addf(&d->head, "%-9s %s\n", "function", e->mfa);
	if (e->extra)
		sbuf_addf(&d->head, "%-9s %s\n", e->type == EV_CALL ? "caller" :
			  "class", e->extra);
	if (e->type == EV_RECEIVE && e->from)
		sbuf_addf(&d->head, "%-9s %lld us\n", "latency",
			  (long long)e->latency_us);
	if (e->elapsed_us >= 0 && (e->type == EV_RETURN || e->type == EV_EXCEPTION))
		sbuf_addf(&d->head, "%-9s %lld us\n", "took",
			  (long long)e->elapsed_us);
	if (e->payload) {
		sbuf_addf(&d->head, "%s (%zu bytes%s):\n", event_fields[e->type].payload_is,
			  strlen(e->payload), e->truncated ? ", cut: :limit "
			  "payload N captures more of the next ones" : "");
		d->payload = xstrdup(e->payload);
	}
}

void event_open(struct app *a, const struct sevent *e)
{
	event_fill(a, e);
	list_reset(&a->pos[VIEW_EVENT]);
	app_push(a, VIEW_EVENT);
}

/* Head and payload on lines of the screen's width. */
static void layout(struct event_detail *d, int width)
{
	if (d->width == width)
		return;
	d->width = width;
	sbuf_reset(&d->lines);
	sbuf_addstr(&d->lines, sbuf_str(&d->head));
	if (d->payload && pretty_term(d->payload, width - 2, &d->lines))
		sbuf_addf(&d->lines, "(cut: groups nested deeper than %d "
			  "levels show as ...)\n", PRETTY_MAX_DEPTH);
	d->nlines = 0;
	for (const char *p = sbuf_str(&d->lines); *p; p++)
		d->nlines += *p == '\n';
}

static void event_draw(struct app *a, int y, int h)
{
	struct event_detail *d = &detail;
	struct list *l = &a->pos[VIEW_EVENT];
	draw_text(y, 0, COLS, d->peer ? " event: q closes, J opens the log of "
		  "the process it names" : " event: q closes",
		  draw_attr(a, ROLE_HEADER));
	y++;
	h--;
	layout(d, COLS);
	list_fit(l, LIST_SCROLL, d->nlines, h);
	const char *p = sbuf_str(&d->lines);
	for (int i = 0; i < l->top && *p; i++)
		p = strchr(p, '\n') + 1;
	int head = 0;
	for (const char *q = sbuf_str(&d->head); *q; q++)
		head += *q == '\n';
	for (int r = 0; r < h; r++) {
		move(y + r, 0);
		clrtoeol();
		if (!*p)
			continue;
		const char *nl = strchr(p, '\n');
		char line[1024];
		snprintf(line, sizeof(line), "%s%.*s", l->top + r < head ? "" : "  ",
			 (int)(nl - p), p);
		draw_text(y + r, 0, COLS, line, A_NORMAL);
		p = nl + 1;
	}
}

static int event_request(struct app *a, enum request req)
{
	if (req == REQ_JUMP) {
		char *peer = detail.peer ? xstrdup(detail.peer) : NULL;
		app_pop(a);
		int act = app_jump(a, peer);
		free(peer);
		return act;
	}
	return list_request(&a->pos[VIEW_EVENT], LIST_SCROLL, req) ?
		ACT_REDRAW : ACT_NONE;
}

static void event_leave(struct app *a)
{
	(void)a;
	detail_release(&detail);
}

void event_refill(struct app *a)
{
	const struct sevent *e = detail.seq ?
		store_event(&a->store, detail.seq) : NULL;
	if (e && app_view(a) == VIEW_EVENT)
		event_fill(a, e);
}

static void event_where(struct app *a, char *out, size_t outsz)
{
	const struct list *l = &a->pos[VIEW_EVENT];
	int last = l->top + l->page < l->count ? l->top + l->page : l->count;
	snprintf(out, outsz, "lines %d-%d of %d", l->count ? l->top + 1 : 0,
		 last, l->count);
}

const struct view_ops event_view_ops = {
	.draw = event_draw,
	.request = event_request,
	.leave = event_leave,
	.where = event_where,
	.release = event_leave,
};
