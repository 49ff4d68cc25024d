/*
 * chart: the rows of a sequence chart, from the store's events, and the
 * chart written as PlantUML or Mermaid.  See chart.h for how sends and
 * receives are paired.
 *
 * Everything written to an export goes through text_add: escaped for a
 * person first (esc.c: no control character or escape sequence gets
 * through), cut to CHART_TEXT_MAX bytes with "...", then escaped for the
 * format, so that no message can end a line, start markup or a comment.
 */
#include "chart.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "esc.h"
#include "pidtext.h"
#include "sbuf.h"
#include "xalloc.h"

void chart_init(struct chart *c)
{
	memset(c, 0, sizeof(*c));
}

void chart_release(struct chart *c)
{
	free(c->rows);
	memset(c, 0, sizeof(*c));
}

int chart_line_of(const struct chart *c, struct bs_pid pid)
{
	for (int i = 0; i < c->nlines; i++)
		if (bs_pid_eq(c->lines[i].pid, pid))
			return i;
	return -1;
}

int chart_add_line(struct chart *c, struct bs_pid pid, const char *pid_text,
		   const char *label, uint64_t since)
{
	if (c->nlines == CHART_LINES || chart_line_of(c, pid) >= 0)
		return -1;
	struct chart_line *l = &c->lines[c->nlines];
	l->pid = pid;
	snprintf(l->pid_text, sizeof(l->pid_text), "%s", pid_text);
	snprintf(l->label, sizeof(l->label), "%s", label ? label : "");
	l->since = since;
	return c->nlines++;
}

void chart_label(struct chart *c, const struct store *st)
{
	for (int i = 0; i < c->nlines; i++) {
		struct proc *p = store_proc(st, c->lines[i].pid);
		/* what the table calls it: its name, else what it is */
		const char *l = p ? store_proc_title(p) : NULL;
		if (l && *l)
			snprintf(c->lines[i].label, sizeof(c->lines[i].label),
				 "%s", l);
	}
}

/* The lifeline a peer text names, seen from an event of node; "others"
 * (c->nlines) when none. */
static int line_named(const struct chart *c, const char *peer,
		      const char *peer_name, uint32_t node)
{
	struct pidtext pt;
	if (!peer)
		return c->nlines;
	bool is_pid = pidtext_parse(peer, &pt) == 0;
	for (int i = 0; i < c->nlines; i++) {
		const struct chart_line *l = &c->lines[i];
		if (!strcmp(peer, l->pid_text))
			return i;
		if (is_pid && !pt.node_len && l->pid.node == node &&
		    l->pid.num == pt.num && l->pid.serial == pt.serial)
			return i;
		if (!is_pid && l->label[0] && (!strcmp(peer, l->label) ||
		    (peer_name && !strcmp(peer_name, l->label))))
			return i;
	}
	return c->nlines;
}

static struct chart_row *row_add(struct chart *c, enum chart_kind kind,
				 const struct sevent *e, int from, int to)
{
	if (c->nrows == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 256;
		c->rows = xrealloc(c->rows, c->cap * sizeof(*c->rows));
	}
	struct chart_row *r = &c->rows[c->nrows++];
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->from = from;
	r->to = to;
	r->seq = e->seq;
	r->ts = e->ts;
	r->latency_us = -1;
	r->truncated = e->truncated;
	r->text = e->payload ? e->payload : "";
	if (kind == CHART_MSG)
		c->nmsgs++;
	return r;
}

/* how far a receive looks among the sends waiting for it */
#define PAIR_WINDOW 512

static int cmp_rows(const void *pa, const void *pb)
{
	const struct chart_row *x = pa, *y = pb;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A receive by lifeline to: the send it pairs with, made delivered; false
 * when none waits.  With from (several nodes) the sender is known and the
 * first send of its lifeline to this one pairs; else the first send to
 * this one of the same message text. */
static bool pair(struct chart *c, size_t *first, const struct sevent *e,
		 int to)
{
	int sender = e->from ? line_named(c, e->from, NULL, e->pid.node) : -1;
	size_t looked = 0;
	bool skipping = true;
	for (size_t i = first[to]; i < c->nrows && looked < PAIR_WINDOW; i++) {
		struct chart_row *r = &c->rows[i];
		if (r->kind != CHART_MSG || r->to != to || r->from == c->nlines)
			continue;
		if (r->paired || r->state == CHART_DEAD) {
			if (skipping)
				first[to] = i + 1;
			continue;
		}
		skipping = false;
		looked++;
		if (sender >= 0 && sender < c->nlines ? r->from != sender :
		    strcmp(r->text, e->payload ? e->payload : ""))
			continue;
		r->state = CHART_PLAIN;
		r->paired = true;
		if (e->from)
			r->latency_us = e->latency_us;
		return true;
	}
	return false;
}

void chart_build(struct chart *c, const struct store *st, uint64_t end)
{
	c->nrows = 0;
	c->nmsgs = 0;
	uint64_t oldest = store_oldest_seq(st);
	if (end > st->next_seq)
		end = st->next_seq;
	/* first the sends and everything else, then the receives pair with
	 * them: the workers that ship a send and its receive may not keep
	 * their order, and a receive never comes before its send */
	for (uint64_t s = oldest; s < end; s++) {
		const struct sevent *e = store_event(st, s);
		int at = e ? chart_line_of(c, e->pid) : -1;
		if (at < 0)
			continue;
		int peer = line_named(c, e->peer, e->peer_name, e->pid.node);
		struct chart_row *r;
		switch (e->type) {
		case EV_SEND:
		case EV_SEND_DEAD:
			r = row_add(c, CHART_MSG, e, at, peer);
			r->state = e->type == EV_SEND_DEAD ? CHART_DEAD :
				peer < c->nlines && s >= c->lines[peer].since ?
				CHART_WAITING : CHART_PLAIN;
			break;
		case EV_SPAWN:
			r = row_add(c, CHART_SPAWN, e, at,
				    peer < c->nlines ? peer : -1);
			r->text = e->peer ? e->peer : "";
			r->mfa = e->mfa;
			break;
		case EV_SPAWNED:   /* drawn at the parent's spawn when charted */
			if (peer < c->nlines)
				break;
			r = row_add(c, CHART_SPAWN, e, at, -1);
			r->text = e->peer ? e->peer : "";
			r->mfa = e->mfa;
			r->from = at;
			break;
		case EV_EXIT:
			row_add(c, CHART_EXIT, e, at, -1);
			break;
		case EV_LINK:
		case EV_UNLINK:
			row_add(c, e->type == EV_LINK ? CHART_LINK : CHART_UNLINK,
				e, at, peer);
			break;
		case EV_GETTING_LINKED:
		case EV_GETTING_UNLINKED:   /* drawn at the other end's link */
			if (peer < c->nlines)
				break;
			row_add(c, e->type == EV_GETTING_LINKED ? CHART_LINK :
				CHART_UNLINK, e, peer, at);
			break;
		case EV_TIMEOUT:   /* a receive that timed out: on its lifeline */
			row_add(c, CHART_TIMEOUT, e, at, -1);
			break;
		default:
			break;
		}
	}
	size_t *first = xcalloc((size_t)c->nlines + 1, sizeof(*first));
	size_t sent_rows = c->nrows;
	for (uint64_t s = oldest; s < end; s++) {
		const struct sevent *e = store_event(st, s);
		int at = e && e->type == EV_RECEIVE ? chart_line_of(c, e->pid) : -1;
		if (at < 0)
			continue;
		if (sent_rows && pair(c, first, e, at))
			continue;
		int from = e->from ? line_named(c, e->from, NULL, e->pid.node) :
			c->nlines;
		struct chart_row *r = row_add(c, CHART_MSG, e, from, at);
		if (e->from)
			r->latency_us = e->latency_us;
	}
	free(first);
	if (c->nrows > 1)
		qsort(c->rows, c->nrows, sizeof(*c->rows), cmp_rows);
}

/* ---- exports ---- */

int chart_format_parse(const char *name)
{
	if (!strcmp(name, "plantuml") || !strcmp(name, "puml"))
		return CHART_PLANTUML;
	if (!strcmp(name, "mermaid") || !strcmp(name, "mmd"))
		return CHART_MERMAID;
	return -1;
}

int chart_format_of_path(const char *path)
{
	const char *dot = strrchr(path, '.');
	if (!dot || strchr(dot, '/'))
		return -1;
	if (!strcmp(dot, ".puml"))
		return CHART_PLANTUML;
	if (!strcmp(dot, ".mmd"))
		return CHART_MERMAID;
	return -1;
}

/* s for a person (esc.c), cut to CHART_TEXT_MAX bytes on a character,
 * "..." when cut, then escaped for the format: in PlantUML every ASCII
 * character that could start markup as <U+XXXX>, in Mermaid the ones
 * that could end a statement or start an entity as #N; */
static void text_add(struct sbuf *out, enum chart_format fmt, const char *s,
		     bool cut)
{
	struct sbuf e = SBUF_INIT;
	esc_addstr(&e, s ? s : "");
	const char *t = sbuf_str(&e);
	size_t n = strlen(t);
	if (n > CHART_TEXT_MAX) {
		n = CHART_TEXT_MAX;
		while (n && ((unsigned char)t[n] & 0xC0) == 0x80)
			n--;
		cut = true;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)t[i];
		bool plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			(ch >= '0' && ch <= '9') || ch >= 0x80 || ch == ' ' ||
			ch == ',' || ch == '.' || ch == '(' || ch == ')' ||
			ch == '\'';
		if (fmt == CHART_MERMAID)
			plain = plain || ch == ':' || ch == '_' || ch == '-' ||
				ch == '/' || ch == '*' || ch == '=' || ch == '@' ||
				ch == '!' || ch == '?' || ch == '$' || ch == '+';
		else
			plain = plain || ch == ':' || ch == '{' || ch == '}';
		if (plain)
			sbuf_addch(out, (char)ch);
		else if (fmt == CHART_PLANTUML)
			sbuf_addf(out, "<U+%04X>", ch);
		else
			sbuf_addf(out, "#%u;", ch);
	}
	if (cut)
		sbuf_addstr(out, "...");
	sbuf_release(&e);
}

static const char *line_title(const struct chart_line *l)
{
	return l->label[0] ? l->label : l->pid_text;
}

static void participants(struct sbuf *out, const struct chart *c,
			 enum chart_format fmt)
{
	for (int i = 0; i <= c->nlines; i++) {
		const char *title = i < c->nlines ? line_title(&c->lines[i]) :
			"others";
		if (fmt == CHART_PLANTUML) {
			sbuf_addstr(out, "participant \"");
			text_add(out, fmt, title, false);
			if (i < c->nlines && c->lines[i].label[0]) {
				sbuf_addstr(out, "\\n");
				text_add(out, fmt, c->lines[i].pid_text, false);
			}
			sbuf_addf(out, "\" as P%d\n", i);
		} else {
			sbuf_addf(out, "    participant P%d as ", i);
			text_add(out, fmt, title, false);
			if (i < c->nlines && c->lines[i].label[0]) {
				sbuf_addch(out, ' ');
				text_add(out, fmt, c->lines[i].pid_text, false);
			}
			sbuf_addch(out, '\n');
		}
	}
}

/* a note on one lifeline (or between two) */
static void note(struct sbuf *out, enum chart_format fmt, int from, int to,
		 const char *what, const char *text, const char *more)
{
	const char *ind = fmt == CHART_MERMAID ? "    " : "";
	if (to >= 0 && to != from)
		sbuf_addf(out, "%s%s over P%d,P%d: ", ind, fmt == CHART_MERMAID ?
			  "Note" : "note", from, to);
	else
		sbuf_addf(out, "%s%s over P%d: ", ind, fmt == CHART_MERMAID ?
			  "Note" : "note", from);
	sbuf_addstr(out, what);
	if (text && *text) {
		sbuf_addch(out, ' ');
		text_add(out, fmt, text, false);
	}
	if (more && *more) {
		sbuf_addch(out, ' ');
		text_add(out, fmt, more, false);
	}
	sbuf_addch(out, '\n');
}

static void message(struct sbuf *out, enum chart_format fmt,
		    const struct chart_row *r)
{
	static const char *const puml[] = {
		[CHART_PLAIN] = "->", [CHART_WAITING] = "-->",
		[CHART_DEAD] = "->x" };
	static const char *const mmd[] = {
		[CHART_PLAIN] = "->>", [CHART_WAITING] = "--)",
		[CHART_DEAD] = "-x" };
	if (fmt == CHART_PLANTUML)
		sbuf_addf(out, "P%d %s P%d : ", r->from, puml[r->state], r->to);
	else
		sbuf_addf(out, "    P%d%sP%d: ", r->from, mmd[r->state], r->to);
	text_add(out, fmt, r->text, r->truncated);
	if (r->state == CHART_DEAD)
		sbuf_addstr(out, " (no such process)");
	else if (r->state == CHART_WAITING)
		sbuf_addstr(out, " (not received)");
	if (r->latency_us >= 0)
		sbuf_addf(out, " (%lld us)", (long long)r->latency_us);
	sbuf_addch(out, '\n');
}

int chart_write(const struct chart *c, enum chart_format fmt, FILE *f)
{
	struct sbuf out = SBUF_INIT;
	sbuf_addstr(&out, fmt == CHART_PLANTUML ? "@startuml\n" :
		    "sequenceDiagram\n");
	participants(&out, c, fmt);
	for (size_t i = 0; i < c->nrows; i++) {
		const struct chart_row *r = &c->rows[i];
		switch (r->kind) {
		case CHART_MSG:
			message(&out, fmt, r);
			break;
		case CHART_SPAWN:
			note(&out, fmt, r->from, r->to, "spawn", r->text, r->mfa);
			break;
		case CHART_EXIT:
			note(&out, fmt, r->from, -1, "exit", r->text, NULL);
			break;
		case CHART_LINK:
		case CHART_UNLINK:
			note(&out, fmt, r->from, r->to, r->kind == CHART_LINK ?
			     "link" : "unlink", NULL, NULL);
			break;
		case CHART_TIMEOUT:
			note(&out, fmt, r->from, -1, "timeout", r->text, NULL);
			break;
		}
	}
	if (fmt == CHART_PLANTUML)
		sbuf_addstr(&out, "@enduml\n");
	const char *s = sbuf_str(&out);
	size_t n = strlen(s);
	int rc = fwrite(s, 1, n, f) == n ? 0 : -1;
	int saved = errno;
	sbuf_release(&out);
	errno = saved;
	return rc;
}
