/*
 * view_proc: the live log of one process: what it sent (to whom), what it
 * received, what it spawned, links, registrations and its exit.  Its list
 * counts lines from the newest, at the bottom, and has a cursor: on the
 * newest line it follows the newest line; moved back, it stays on the
 * event of its line (lg.anchor), and the lines on screen stay where
 * they are, however many lines come after them.  Enter opens the event
 * under the cursor whole, J the log of the process its line names, and /
 * searches the lines.  Leaving it takes the process out of focus.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alarm.h"
#include "app.h"
#include "clock.h"
#include "commands.h"
#include "control.h"
#include "draw.h"
#include "pidtext.h"
#include "term.h"
#include "view_chart.h"
#include "view_event.h"
#include "view_proc.h"
#include "view_procs.h"
#include "xalloc.h"

/* where the log's cursor is, and what was searched for */
static struct {
	uint64_t anchor;   /* the cursor off the newest line: the seq of its
			    * line; 0: counted by the list's sel */
	uint64_t cursor;   /* the seq of the cursor's line at the last
			    * draw; 0: none */
	char search[256];  /* the last text searched for in a log */
	bool hide_timeouts; /* the log leaves out receive timeouts */
	/* the process in focus, whose log is open (or was last) */
	struct bs_pid focus;
	char focus_text[48];
	uint64_t focus_seq; /* the store's next seq when it was focused */
	/* its links, monitors and ancestors as its agent said them last;
	 * have_rel: said since the log opened */
	struct relations rel;
	bool have_rel;
	long long rel_ms;   /* when rel was said */
} lg;

void log_set_focus(struct app *a, struct bs_pid pid, const char *text,
		   uint64_t seq)
{
	(void)a;
	lg.focus = pid;
	lg.focus_seq = seq;
	lg.have_rel = false;
	snprintf(lg.focus_text, sizeof(lg.focus_text), "%s", text);
}

struct bs_pid log_focus(const struct app *a)
{
	(void)a;
	return lg.focus;
}

uint64_t log_focus_seq(const struct app *a)
{
	(void)a;
	return lg.focus_seq;
}

void log_relations(struct app *a, const struct relations *r)
{
	if (!app_focus_open(a) || !bs_pid_eq(r->pid, lg.focus))
		return;
	lg.rel = *r;
	lg.have_rel = true;
	lg.rel_ms = clock_mono_ms();
	if (!a->paused)
		a->dirty = true;
}

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
	case EV_TIMEOUT:
		snprintf(out, n, "timeout  (receive ... after expired)");
		break;
	case EV_ALARM: {
		struct sbuf t = SBUF_INIT;
		alarm_text(&t, e->extra, e->elapsed_us, e->heap[0], e->heap[1],
			   e->peer, e->peer_name, e->payload);
		snprintf(out, n, "ALARM    %s", sbuf_str(&t));
		sbuf_release(&t);
		break;
	}
	case EV_EXIT:
		snprintf(out, n, "exited   %s%s", pl, cut);
		break;
	case EV_REGISTER:
		snprintf(out, n, "registered as %s", e->name ? e->name : "");
		break;
	case EV_CALL: {
		/* as the code reads: m:f(9), each argument on its own */
		struct sbuf call = SBUF_INIT;
		term_call_text(&call, e->mfa, e->payload, e->truncated);
		snprintf(out, n, "call     %s%s%s", sbuf_str(&call),
			 e->extra ? "  from " : "", e->extra ? e->extra : "");
		sbuf_release(&call);
		break;
	}
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
	case EV_CALL: case EV_RETURN: case EV_EXCEPTION: case EV_TIMEOUT:
		return ROLE_DIM;
	case EV_ALARM: return ROLE_ERROR;   /* the VM says it is in trouble */
	default: return ROLE_PROC;
	}
}

/* Is e a line of the log of pid, as the log is shown? */
static bool log_has(const struct sevent *e, struct bs_pid pid)
{
	return e && bs_pid_eq(e->pid, pid) &&
		!(lg.hide_timeouts && e->type == EV_TIMEOUT);
}

/* The lines of process pid before seq end, newest first: how many there
 * are, and how many of them are newer than seq newer_than (if not 0). */
static int log_count(const struct app *a, struct bs_pid pid, uint64_t end,
		     uint64_t newer_than, int *newer)
{
	const struct store *st = &a->store;
	int total = 0;
	*newer = 0;
	uint64_t oldest = store_oldest_seq(st);
	for (uint64_t s = end; s-- > oldest;) {
		const struct sevent *e = store_event(st, s);
		if (!log_has(e, pid))
			continue;
		total++;
		if (newer_than && s > newer_than)
			(*newer)++;
	}
	return total;
}

/* The seqs of at most n of those lines, after skipping the newest skip. */
static int log_lines(const struct app *a, struct bs_pid pid, uint64_t end,
		     int skip, uint64_t *seqs, int n)
{
	const struct store *st = &a->store;
	int seen = 0, got = 0;
	uint64_t oldest = store_oldest_seq(st);
	for (uint64_t s = end; s-- > oldest && got < n;) {
		const struct sevent *e = store_event(st, s);
		if (!log_has(e, pid))
			continue;
		if (seen++ >= skip)
			seqs[got++] = s;
	}
	return got;
}

/* Where the log ends: the newest event, or where it was paused. */
static uint64_t log_end(const struct app *a)
{
	return a->paused ? a->pause_seq : a->store.next_seq;
}

/* "mem 6400", "mem at least 5000000" (not measured: too dear for the
 * target), "mem 6400 (12 s ago)" */
static void size_words(const char *what, const struct proc_size *z,
		       long long now, char *out, size_t n)
{
	if (z->at_least)
		snprintf(out, n, "%s at least %ld", what, z->bytes);
	else if (store_size_stale(z, now))
		snprintf(out, n, "%s %ld (%lld s ago)", what, z->bytes,
			 (now - z->ms) / 1000);
	else
		snprintf(out, n, "%s %ld", what, z->bytes);
}

/* What the last sample said of the process in focus (it is sampled every
 * second while its log is open), after the counts: "" until sampled. */
static void proc_sizes(const struct proc *p, char *out, size_t n)
{
	*out = '\0';
	if (!p || p->exited || p->memory.bytes < 0)
		return;
	char mem[64], heap[64];
	long long now = clock_mono_ms();
	size_words("mem", &p->memory, now, mem, sizeof(mem));
	size_words("heap", &p->heap, now, heap, sizeof(heap));
	int k = snprintf(out, n, "  %s  %s  reds %ld", mem, heap, p->reds);
	if (k > 0 && (size_t)k < n && p->rreds >= 0)
		k += snprintf(out + k, n - (size_t)k, " (%ld/s)", p->rreds);
	if (k > 0 && (size_t)k < n && p->mqlen >= 0)
		snprintf(out + k, n - (size_t)k, "  mq %ld", p->mqlen);
}

/*
 * What its agent said last of the process's links, monitors and
 * ancestors ("" until said, and once it exited), with less of the lists
 * at each detail: 0 all, 1 the parent alone of the ancestors, 2 no
 * monitors listed, 3 no links listed, REL_COUNTS the counts alone.  The
 * agent looks at a process with many links rarely (its links are a walk
 * the target pays for): what was said STORE_STALE_MS ago or more starts
 * with how long ago.
 */
#define REL_COUNTS 4
static void proc_relations(const struct proc *p, int detail,
			   struct sbuf *out)
{
	const struct relations *r = &lg.rel;
	sbuf_reset(out);
	if (!lg.have_rel || !bs_pid_eq(r->pid, lg.focus) || (p && p->exited))
		return;
	long long age = clock_mono_ms() - lg.rel_ms;
	if (age > STORE_STALE_MS)
		sbuf_addf(out, "(%lld s ago) ", age / 1000);
	sbuf_addf(out, "links %ld", r->links);
	if (detail < 3 && r->link_list[0])
		sbuf_addf(out, " %s", r->link_list);
	sbuf_addf(out, "  monitors %ld", r->monitors);
	if (detail < 2 && r->monitor_list[0])
		sbuf_addf(out, " %s", r->monitor_list);
	sbuf_addf(out, "  monitored by %ld", r->monitored_by);
	if (detail >= REL_COUNTS)
		return;
	if (!r->ancestors_known) {
		sbuf_addstr(out, "  ancestors unknown");
	} else if (r->ancestors[0]) {
		const char *sp = strchr(r->ancestors, ' ');
		if (detail < 1 || !sp)
			sbuf_addf(out, "  ancestors %s", r->ancestors);
		else
			sbuf_addf(out, "  ancestors %.*s ...",
				  (int)(sp - r->ancestors), r->ancestors);
	}
}

/* The most of the relations that fits in cols columns, into out;
 * whether it fits. */
static bool proc_relations_fit(const struct proc *p, int cols,
			       struct sbuf *out)
{
	for (int d = 0; d <= REL_COUNTS; d++) {
		proc_relations(p, d, out);
		if (draw_width(sbuf_str(out)) <= cols)
			return true;
	}
	return false;
}

static void proc_draw(struct app *a, int y, int h)
{
	struct store *st = &a->store;
	struct list *l = &a->pos[VIEW_PROC];
	struct proc *p = store_proc(st, lg.focus);
	char title[1024];
	struct sbuf rel = SBUF_INIT;

	char extra[160] = "";
	size_t xl = 0;
	if (p && p->timeouts)
		xl = (size_t)snprintf(extra, sizeof(extra), "  timeouts %lu%s",
				      p->timeouts, lg.hide_timeouts ?
				      " (hidden)" : "");
	if (p && (p->run_us || p->gcs))
		snprintf(extra + xl, sizeof(extra) - xl,
			 "  on a scheduler %.1f ms  gcs %lu",
			 (double)p->run_us / 1000.0, p->gcs);
	/* a registered process says what it is too */
	char what[300];
	snprintf(what, sizeof(what), "%s%s%s%s", p ? store_proc_title(p) : "",
		 p && p->name && p->label ? " (" : "",
		 p && p->name && p->label ? p->label : "",
		 p && p->name && p->label ? ")" : "");
	char sizes[256];
	proc_sizes(p, sizes, sizeof(sizes));
	snprintf(title, sizeof(title), " %s %s  sent %lu  received %lu  spawned %lu%s%s%s",
		 lg.focus_text, what,
		 p ? p->sends : 0, p ? p->receives : 0, p ? p->spawns : 0,
		 extra, p && p->exited ? "  (exited)" : "", sizes);
	/* the relations after the rest when they fit whole, else on a line
	 * of their own (as much of them as fits) while the log keeps a few
	 * lines, else their counts, cut short */
	proc_relations(p, 0, &rel);
	bool second = false;
	if (rel.len && draw_width(title) + 2 + draw_width(sbuf_str(&rel)) > COLS) {
		second = h >= 6;
		if (second)
			proc_relations_fit(p, COLS - 1, &rel);
		else
			proc_relations(p, REL_COUNTS, &rel);
	}
	if (rel.len && !second) {
		size_t tl = strlen(title);
		snprintf(title + tl, sizeof(title) - tl, "  %s", sbuf_str(&rel));
	}
	draw_text(y, 0, COLS, title, draw_attr(a, ROLE_HEADER));
	y++;
	h--;
	if (second) {
		move(y, 0);
		clrtoeol();
		char line[REL_TEXT_MAX * 3 + 128];
		snprintf(line, sizeof(line), " %s", sbuf_str(&rel));
		draw_text(y, 0, COLS, line, draw_attr(a, ROLE_HEADER));
		y++;
		h--;
	}
	sbuf_release(&rel);
	if (h <= 0)
		return;

	/* the lines shown, newest first; then printed oldest on top.  A
	 * cursor moved back stays on its event, and the lines with it,
	 * however many lines come after; a paused log ends where it was
	 * paused. */
	uint64_t end = log_end(a);
	uint64_t *seqs = xmalloc(sizeof(*seqs) * (size_t)h);
	int newer;
	int total = log_count(a, lg.focus, end, l->sel ? lg.anchor : 0,
			      &newer);
	if (l->sel && lg.anchor) {
		l->top += newer - l->sel;
		l->sel = newer;
	}
	list_fit(l, LIST_LOG, total, h);
	int got = log_lines(a, lg.focus, end, l->top, seqs, h);
	int cur = l->sel - l->top;   /* the cursor, in seqs */
	lg.cursor = cur >= 0 && cur < got ? seqs[cur] : 0;
	lg.anchor = l->sel ? lg.cursor : 0;
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
		bool at = got - 1 - i == cur;
		draw_time(t, sizeof(t), e->ts);
		draw_text(y + i, 0, 13, t, draw_attr(a, at ? ROLE_SELECTED : ROLE_DIM));
		line_text(e, text, sizeof(text));
		draw_text(y + i, 13, COLS - 13, text,
			  draw_attr(a, at ? ROLE_SELECTED : role_of(e)));
	}
	free(seqs);
}

/* The process a line names: the other end of a send, a spawn or a link,
 * the sender of a paired receive; NULL if none. */
static const char *line_peer(const struct sevent *e)
{
	switch (e->type) {
	case EV_SEND: case EV_SEND_DEAD: case EV_SPAWN: case EV_SPAWNED:
	case EV_LINK: case EV_UNLINK: case EV_GETTING_LINKED:
	case EV_GETTING_UNLINKED:
		return e->peer;
	case EV_RECEIVE:
		return e->from;
	default:
		return NULL;
	}
}

int app_jump(struct app *a, const char *what)
{
	if (!what || !*what || what[0] == '#') {   /* none, or a port */
		app_msg(a, true, "this line names no process; J opens the log "
			"of the process a send, spawn or link names");
		return ACT_REDRAW;
	}
	return app_focus_text(a, what);
}

/* Does the line of e hold the text searched for?  Case matters only
 * when the text has a capital letter. */
static bool line_matches(const struct sevent *e, const char *pat)
{
	char text[2048];
	line_text(e, text, sizeof(text));
	for (const char *p = pat; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			return strstr(text, pat) != NULL;
	return strcasestr(text, pat) != NULL;
}

int log_search(struct app *a, const char *text, bool older,
	       bool from_cursor)
{
	struct store *st = &a->store;
	if (text && *text)
		snprintf(lg.search, sizeof(lg.search), "%s", text);
	struct list *l = &a->pos[VIEW_PROC];
	if (!lg.search[0]) {
		app_msg(a, true, "nothing to search for; / searches the log");
		return ACT_REDRAW;
	}
	/* lines counted from the newest, as the cursor is */
	int idx = 0, found = -1;
	uint64_t oldest = store_oldest_seq(st);
	for (uint64_t s = log_end(a); s-- > oldest;) {
		const struct sevent *e = store_event(st, s);
		if (!log_has(e, lg.focus))
			continue;
		bool ahead = older ? idx > l->sel || (from_cursor && idx == l->sel) :
			idx < l->sel || (from_cursor && idx == l->sel);
		if (ahead && line_matches(e, lg.search)) {
			found = idx;
			if (older)
				break;   /* the first older one is the nearest */
		}
		if (!older && idx >= l->sel)
			break;       /* the last newer one seen is the nearest */
		idx++;
	}
	if (found < 0) {
		app_msg(a, true, "no %s line matches \"%s\"; %s", older ?
			"older" : "newer", lg.search, older ?
			"N searches newer lines" : "n searches older lines");
		return ACT_REDRAW;
	}
	l->sel = found;
	lg.anchor = 0;   /* the next draw anchors on it */
	/* a line off the screen comes into its middle */
	if (found < l->top || found >= l->top + l->page)
		l->top = found - l->page / 2 > 0 ? found - l->page / 2 : 0;
	return ACT_REDRAW;
}

/* The event under the cursor, as last drawn; NULL (and said) if none. */
static const struct sevent *cursor_event(struct app *a)
{
	const struct sevent *e = lg.cursor ?
		store_event(&a->store, lg.cursor) : NULL;
	if (!e)
		app_msg(a, true, "no line under the cursor");
	return e;
}

static int proc_request(struct app *a, enum request req)
{
	const struct sevent *e;
	switch (req) {
	case REQ_ENTER:
		if ((e = cursor_event(a)))
			event_open(a, e);
		return ACT_REDRAW;
	case REQ_JUMP:
		if (!(e = cursor_event(a)))
			return ACT_REDRAW;
		char peer[PIDTEXT_MAX];   /* the event leaves with the log */
		snprintf(peer, sizeof(peer), "%s", line_peer(e) ? line_peer(e) : "");
		return app_jump(a, peer);
	case REQ_SEARCH_NEXT:
	case REQ_SEARCH_PREV:
		return log_search(a, NULL, req == REQ_SEARCH_NEXT, false);
	case REQ_TIMEOUTS:
		lg.hide_timeouts = !lg.hide_timeouts;
		lg.anchor = 0;
		app_msg(a, false, lg.hide_timeouts ? "receive timeouts hidden; "
			"T shows them" : "receive timeouts shown; T hides them");
		return ACT_REDRAW;
	default:
		break;
	}
	if (!list_request(&a->pos[VIEW_PROC], LIST_LOG, req))
		return ACT_NONE;
	lg.anchor = 0;   /* the next draw anchors where the move went */
	return ACT_REDRAW;
}

/* a newly opened log follows its newest line */
static void proc_enter(struct app *a)
{
	list_reset(&a->pos[VIEW_PROC]);
	lg.anchor = 0;
	lg.cursor = 0;
}

static void proc_leave(struct app *a)
{
	lg.have_rel = false;
	procs_select(a, lg.focus);
	if (app_tagged(a, lg.focus) < 0)   /* a tagged one stays in focus */
		node_focus(a, lg.focus, false);
}

const struct view_ops proc_view_ops = {
	.draw = proc_draw,
	.request = proc_request,
	.enter = proc_enter,
	.leave = proc_leave,
};
