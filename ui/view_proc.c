/*
 * view_proc: the live log of one process: what it sent (to whom), what it
 * received, what it spawned, links, registrations and its exit.  Its list
 * counts lines from the newest, at the bottom: it follows the newest line
 * unless scrolled back, and a scrolled-back log keeps its distance from
 * the newest line.  Leaving it takes the process out of focus.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "xalloc.h"

static void line_text(const struct sevent *e, char *out, size_t n)
{
	const char *peer = e->peer ? e->peer : "";
	const char *pn = e->peer_name ? e->peer_name : "";
	const char *pl = e->payload ? e->payload : "";
	const char *cut = e->truncated ? " ..." : "";
	switch (e->type) {
	case EV_SEND:
		snprintf(out, n, "sent     -> %s%s%s  %s%s", peer, *pn ? " " : "",
			 pn, pl, cut);
		break;
	case EV_SEND_DEAD:
		snprintf(out, n, "sent     -> %s (no such process)  %s%s", peer,
			 pl, cut);
		break;
	case EV_RECEIVE:
		if (e->from)   /* paired with its send on another node */
			snprintf(out, n, "received <- %s (%lld us)  %s%s", e->from,
				 (long long)e->latency_us, pl, cut);
		else
			snprintf(out, n, "received <-  %s%s", pl, cut);
		break;
	case EV_SPAWN:
		snprintf(out, n, "spawned  %s %s %s%s", peer, e->mfa ? e->mfa : "",
			 pl, cut);
		break;
	case EV_SPAWNED:
		snprintf(out, n, "started  by %s%s%s as %s", peer, *pn ? " " : "",
			 pn, e->mfa ? e->mfa : "");
		break;
	case EV_EXIT:
		snprintf(out, n, "exited   %s%s", pl, cut);
		break;
	case EV_REGISTER:
		snprintf(out, n, "registered as %s", e->name ? e->name : "");
		break;
	case EV_CALL:
		snprintf(out, n, "call     %s %s%s%s%s", e->mfa ? e->mfa : "", pl, cut,
			 e->extra ? "  from " : "", e->extra ? e->extra : "");
		break;
	case EV_RETURN:
	case EV_EXCEPTION: {
		char took[32] = "";
		if (e->elapsed_us >= 0)
			snprintf(took, sizeof(took), "  (%lld us)", (long long)e->elapsed_us);
		snprintf(out, n, "%s %s -> %s%s%s%s%s", e->type == EV_RETURN ?
			 "returned" : "raised  ", e->mfa ? e->mfa : "",
			 e->extra ? e->extra : "", e->extra ? ":" : "", pl, cut, took);
		break;
	}
	case EV_UNREGISTER:
		snprintf(out, n, "unregistered %s", e->name ? e->name : "");
		break;
	case EV_GC_MINOR_END:
	case EV_GC_MAJOR_END:
		snprintf(out, n, "gc %s heap %ld -> %ld words, old heap %ld -> %ld%s",
			 e->type == EV_GC_MINOR_END ? "minor" : "major",
			 e->heap[0], e->heap[1], e->heap[2], e->heap[3], "");
		break;
	case EV_IN:
	case EV_IN_EXITING:
		snprintf(out, n, "scheduled in  %s", e->mfa ? e->mfa : "");
		break;
	case EV_OUT:
	case EV_OUT_EXITING:
	case EV_OUT_EXITED:
		snprintf(out, n, "scheduled out %s", e->mfa ? e->mfa : "");
		break;
	default:
		snprintf(out, n, "%-8s %s%s%s", event_types[e->type].json, peer,
			 *pn ? " " : "", pn);
		break;
	}
}

static int role_of(const struct sevent *e)
{
	switch (e->type) {
	case EV_SEND: case EV_SEND_DEAD: return ROLE_SEND;
	case EV_RECEIVE: return ROLE_RECEIVE;
	case EV_CALL: case EV_RETURN: case EV_EXCEPTION: return ROLE_DIM;
	default: return ROLE_PROC;
	}
}

/* The lines of process pid, newest first: how many there are, and the
 * seqs of at most n of them after skipping the newest skip. */
static int log_lines(const struct store *st, struct bs_pid pid, int skip,
		     uint64_t *seqs, int n, int *got)
{
	int total = 0;
	*got = 0;
	uint64_t oldest = store_oldest_seq(st);
	for (uint64_t s = st->next_seq; s-- > oldest;) {
		const struct sevent *e = store_event(st, s);
		if (!e || !bs_pid_eq(e->pid, pid))
			continue;
		if (total++ >= skip && *got < n)
			seqs[(*got)++] = s;
	}
	return total;
}

static void proc_draw(struct app *a, int y, int h)
{
	struct store *st = &a->store;
	struct list *l = &a->pos[VIEW_PROC];
	struct proc *p = store_proc(st, a->focus);
	char title[512];

	char extra[96] = "";
	if (p && (p->run_us || p->gcs))
		snprintf(extra, sizeof(extra), "  on a scheduler %.1f ms  gcs %lu",
			 (double)p->run_us / 1000.0, p->gcs);
	snprintf(title, sizeof(title), " %s %s%s  sent %lu  received %lu  spawned %lu%s%s",
		 a->focus_text, p && p->name ? p->name : "",
		 p && !p->name && p->initial ? p->initial : "",
		 p ? p->sends : 0, p ? p->receives : 0, p ? p->spawns : 0,
		 extra, p && p->exited ? "  (exited)" : "");
	draw_text(y, 0, COLS, title, draw_attr(a, ROLE_HEADER));
	y++;
	h--;
	if (h <= 0)
		return;

	/* the lines shown, newest first; then printed oldest on top */
	uint64_t *seqs = xmalloc(sizeof(*seqs) * (size_t)h);
	int got, top = l->top;
	int total = log_lines(st, a->focus, top, seqs, h, &got);
	list_fit(l, LIST_LOG, total, h);
	if (l->top != top)   /* fewer lines than before: fit, then fetch */
		log_lines(st, a->focus, l->top, seqs, h, &got);
	for (int r = 0; r < h; r++) {
		move(y + r, 0);
		clrtoeol();
	}
	if (!got)
		draw_text(y, 0, COLS, "  nothing captured for this process yet",
			  draw_attr(a, ROLE_DIM));
	for (int i = 0; i < got; i++) {
		const struct sevent *e = store_event(st, seqs[got - 1 - i]);
		char t[32], text[2048];
		draw_time(t, sizeof(t), e->ts);
		draw_text(y + i, 0, 13, t, draw_attr(a, ROLE_DIM));
		line_text(e, text, sizeof(text));
		draw_text(y + i, 13, COLS - 13, text, draw_attr(a, role_of(e)));
	}
	free(seqs);
}

static int proc_request(struct app *a, enum request req)
{
	return list_request(&a->pos[VIEW_PROC], LIST_LOG, req) ?
		ACT_REDRAW : ACT_NONE;
}

/* a newly opened log follows its newest line */
static void proc_enter(struct app *a)
{
	list_reset(&a->pos[VIEW_PROC]);
}

static void proc_leave(struct app *a)
{
	node_focus(a, a->focus, false);
}

const struct view_ops proc_view_ops = {
	.draw = proc_draw,
	.request = proc_request,
	.enter = proc_enter,
	.leave = proc_leave,
};
