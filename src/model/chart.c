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
/* the focus a lifeline was charted with takes effect on its node within
 * this time: until its first message shows it has, a send to it cannot
 * be judged (its receive may have gone unshipped) */
#define SHIP_GRACE_US 1000000
/* the workers of one node may ship out of order by this much: a send this
 * much younger than a receive ends the look for the receive's send */
#define REORDER_US 1000000
#define NONE ((size_t)-1)

static int cmp_rows(const void *pa, const void *pb)
{
	const struct chart_row *x = pa, *y = pb;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * What pairing keeps while the rows are built: per lifeline, when its
 * receives are known to be shipped, and the sends to it that wait for a
 * receive, in two lists in row order: the judged ones (sent while its
 * receives were shipped) and the others, which a receive takes only when
 * no judged send fits it.
 */
struct pairing {
	int64_t judged_from[CHART_LINES];   /* sends from then on are judged */
	bool known[CHART_LINES];            /* judged_from is set */
	int64_t evidence[CHART_LINES];      /* its first message since its
					     * since, by time; INT64_MAX */
	size_t judged[CHART_LINES], unjudged[CHART_LINES];   /* list heads */
	size_t *next;                       /* per row: the next in its list */
};

/* A message event of the lifeline: its receives are being shipped. */
static bool is_evidence(enum event_type t)
{
	return t == EV_SEND || t == EV_SEND_DEAD || t == EV_RECEIVE ||
		t == EV_TIMEOUT;
}

/* When lifeline i's receives are known to be shipped: from its first
 * message since it was charted, or, for one quiet so long, SHIP_GRACE_US
 * after it was charted (the first event of the store since then); with
 * no message of its own yet, from when it was charted. */
static void shipped_from(const struct chart *c, const struct store *st,
			 uint64_t end, struct pairing *p, int i)
{
	uint64_t s = c->lines[i].since;
	if (s < store_oldest_seq(st))
		s = store_oldest_seq(st);
	const struct sevent *e = s < end ? store_event(st, s) : NULL;
	p->known[i] = e != NULL;
	if (!e)
		return;
	p->judged_from[i] = e->ts;
	if (p->evidence[i] != INT64_MAX)
		p->judged_from[i] = p->evidence[i] < e->ts + SHIP_GRACE_US ?
			p->evidence[i] : e->ts + SHIP_GRACE_US;
}

/* The sends to lifelines in their lists, judged or not; a judged one
 * waits for its receive.  A send to a lifeline before it was charted is
 * in neither: both ends must have been shipped for a pair. */
static void pairing_lists(struct chart *c, struct pairing *p)
{
	p->next = xmalloc((c->nrows ? c->nrows : 1) * sizeof(*p->next));
	for (int i = 0; i < CHART_LINES; i++)
		p->judged[i] = p->unjudged[i] = NONE;
	for (size_t i = c->nrows; i-- > 0;) {
		struct chart_row *r = &c->rows[i];
		p->next[i] = NONE;
		if (r->kind != CHART_MSG || r->to >= c->nlines ||
		    r->state == CHART_DEAD)
			continue;
		int to = r->to;
		/* sent before its receiver was charted: its receive was not
		 * shipped, or is not this send's to claim */
		if (r->seq < c->lines[to].since)
			continue;
		bool judged = p->known[to] && r->ts >= p->judged_from[to];
		r->state = judged ? CHART_WAITING : CHART_PLAIN;
		size_t *head = judged ? &p->judged[to] : &p->unjudged[to];
		p->next[i] = *head;   /* built from the last row: in row order */
		*head = i;
	}
}

/* Does row r (a send) fit receive e: the same message, or, when the
 * receive names its sender (several nodes), a send of that sender's
 * whatever the text (a pid in it prints differently on each node)?  A
 * send made after the receive never does, on one node; across nodes the
 * clocks may differ. */
static bool fits(const struct chart *c, const struct chart_row *r,
		 const struct sevent *e, int sender, bool *later)
{
	bool same_node = c->lines[r->from].pid.node == e->pid.node;
	*later = same_node && r->ts > e->ts + REORDER_US;
	if (same_node && r->ts > e->ts)
		return false;
	if (sender >= 0)
		return r->from == sender;
	return !strcmp(r->text, e->payload ? e->payload : "");
}

/* The first send of the list at head that fits e, taken out of it; NONE
 * when none does among the first PAIR_WINDOW. */
static size_t take(struct chart *c, struct pairing *p, size_t *head,
		   const struct sevent *e, int sender)
{
	size_t *link = head;
	for (int looked = 0; *link != NONE && looked < PAIR_WINDOW; looked++) {
		size_t i = *link;
		bool later;
		if (fits(c, &c->rows[i], e, sender, &later)) {
			*link = p->next[i];
			return i;
		}
		if (later)
			break;
		link = &p->next[i];
	}
	return NONE;
}

/* A receive by lifeline to: the send it pairs with, made delivered; false
 * when none fits.  A judged send first, in the order they were sent (a
 * mailbox is first in, first out), then one sent after to was charted
 * but before its receives were known to be shipped (it may have been
 * received unseen).  With
 * several nodes the receive may know its sender: a send of that lifeline
 * only. */
static bool pair(struct chart *c, struct pairing *p, const struct sevent *e,
		 int to)
{
	int sender = -1;
	if (e->from) {
		sender = line_named(c, e->from, NULL, e->pid.node);
		if (sender == c->nlines)
			return false;   /* from a process not charted */
	}
	size_t i = take(c, p, &p->judged[to], e, sender);
	if (i == NONE)
		i = take(c, p, &p->unjudged[to], e, sender);
	if (i == NONE)
		return false;
	struct chart_row *r = &c->rows[i];
	r->state = CHART_PLAIN;
	r->paired = true;
	if (e->from)
		r->latency_us = e->latency_us;
	return true;
}

void chart_build(struct chart *c, const struct store *st, uint64_t end)
{
	struct pairing p;
	c->nrows = 0;
	c->nmsgs = 0;
	uint64_t oldest = store_oldest_seq(st);
	if (end > st->next_seq)
		end = st->next_seq;
	for (int i = 0; i < CHART_LINES; i++)
		p.evidence[i] = INT64_MAX;
	/* first the sends and everything else, then the receives pair with
	 * them: the workers that ship a send and its receive may not keep
	 * their order, and a receive never comes before its send */
	for (uint64_t s = oldest; s < end; s++) {
		const struct sevent *e = store_event(st, s);
		int at = e ? chart_line_of(c, e->pid) : -1;
		if (at < 0)
			continue;
		if (is_evidence(e->type) && s >= c->lines[at].since &&
		    e->ts < p.evidence[at])
			p.evidence[at] = e->ts;
		int peer = line_named(c, e->peer, e->peer_name, e->pid.node);
		struct chart_row *r;
		switch (e->type) {
		case EV_SEND:
		case EV_SEND_DEAD:
			r = row_add(c, CHART_MSG, e, at, peer);
			/* judged once every lifeline's shipping is known */
			r->state = e->type == EV_SEND_DEAD ? CHART_DEAD : CHART_PLAIN;
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
		case EV_ALARM:     /* the VM's, on its lifeline */
			r = row_add(c, CHART_ALARM, e, at, -1);
			r->text = e->extra ? e->extra : "";
			r->latency_us = e->elapsed_us;
			break;
		default:
			break;
		}
	}
	for (int i = 0; i < c->nlines; i++)
		shipped_from(c, st, end, &p, i);
	pairing_lists(c, &p);
	size_t sent_rows = c->nrows;
	for (uint64_t s = oldest; s < end; s++) {
		const struct sevent *e = store_event(st, s);
		int at = e && e->type == EV_RECEIVE ? chart_line_of(c, e->pid) : -1;
		if (at < 0)
			continue;
		if (sent_rows && pair(c, &p, e, at))
			continue;
		int from = e->from ? line_named(c, e->from, NULL, e->pid.node) :
			c->nlines;
		struct chart_row *r = row_add(c, CHART_MSG, e, from, at);
		if (e->from)
			r->latency_us = e->latency_us;
	}
	free(p.next);
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
		case CHART_ALARM:
			note(&out, fmt, r->from, -1, "alarm", r->text, NULL);
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
