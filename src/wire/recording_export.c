/*
 * recording_export: the JSON export (one document, --export and the
 * view's export) reopened as a recording: its header, processes and
 * events, read whole when small or streamed a piece at a time when large.
 */
#include "recording.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pidtext.h"
#include "xalloc.h"
#include "recording_priv.h"

/* The array at key: its first element in *first; false if not an array. */
static bool export_array(const cJSON *o, const char *key, const cJSON **first)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
	*first = NULL;
	if (!a)
		return true;
	if (!cJSON_IsArray(a))
		return false;
	*first = a->child;
	return true;
}

/* What an export says of itself (its node and nodes, when it was written,
 * what its ring had lost), with the node in *node; NULL, or what is wrong. */
static const char *export_header(struct recording *r, const cJSON *doc,
				 int *node)
{
	int64_t ts = -1, evicted = -1;

	if ((*node = rec_line_node(r, doc)) < 0)
		return "no node";
	if (!rec_nodes_array(r, doc))
		return "bad nodes";
	if (!rec_get_i64(doc, "exported_ts", &ts) ||
	    !rec_get_i64(doc, "evicted_events", &evicted))
		return "bad field type";
	r->stats.is_export = true;
	r->stats.exported_ts = ts;
	r->stats.evicted_events = evicted;
	return NULL;
}

/* A process entry of an export on line `line`, whose node is xnode. */
static void export_proc(struct recording *r, const cJSON *o, int xnode,
			unsigned long line, const struct recording_sink *s,
			void *arg)
{
	struct recording_proc p;
	int node = xnode, mark = r->nnodes;
	const char *why = rec_parse_proc(r, o, &node, &p);
	if (why) {
		rec_malformed(r, line, why);
		rec_forget_nodes(r, mark);
		return;
	}
	r->stats.items++;
	rec_tell_nodes(r, s, arg);
	if (s->proc)
		s->proc(arg, node, &p);
}

/* An event entry of an export on line `line`. */
static void export_event(struct recording *r, const cJSON *o,
			 unsigned long line, const struct recording_sink *s,
			 void *arg)
{
	const char *type, *why;
	struct event ev;
	int t, node, mark = r->nnodes;
	if (!cJSON_IsObject(o) || !rec_get_str(o, "type", &type) || !type) {
		rec_malformed(r, line, "event is not an object with a type");
		return;
	}
	if ((t = rec_event_type_of(type)) < 0) {
		rec_malformed(r, line, "unknown type");
		return;
	}
	if ((why = rec_parse_event(r, o, t, &ev, &node))) {
		rec_malformed(r, line, why);
		rec_forget_nodes(r, mark);
		return;
	}
	rec_deliver_event(r, node, &ev, s, arg);
}

/* An export on one line read whole: takes doc on success, and hands its
 * entries out from r->export across calls. */
const char *rec_take_export(struct recording *r, cJSON *doc,
			       const struct recording_sink *s, void *arg)
{
	struct recording_export x = { .doc = doc, .line = r->stats.lines };
	const char *why;

	if (!export_array(doc, "processes", &x.proc) ||
	    !export_array(doc, "events", &x.event))
		return "bad field type";
	if ((why = export_header(r, doc, &x.node)))
		return why;
	r->export = xmalloc(sizeof(*r->export));
	*r->export = x;
	rec_tell_nodes(r, s, arg);
	return NULL;
}

void rec_export_done(struct recording *r)
{
	cJSON_Delete(r->export->doc);
	free(r->export);
	r->export = NULL;
}

/* Up to n entries of the export: how many were looked at. */
int rec_export_step(struct recording *r, int n,
		       const struct recording_sink *s, void *arg)
{
	struct recording_export *x = r->export;
	int done = 0;

	for (; x->proc && done < n; x->proc = x->proc->next, done++)
		export_proc(r, x->proc, x->node, x->line, s, arg);
	for (; !x->proc && x->event && done < n; x->event = x->event->next, done++)
		export_event(r, x->event, x->line, s, arg);
	if (!x->proc && !x->event)
		rec_export_done(r);
	return done;
}

/* Streamed exports. */


/* A new line: nothing known of it. */
void rec_scan_reset(struct recording_scan *sc)
{
	struct sbuf head = sc->head;
	memset(sc, 0, sizeof(*sc));
	sbuf_reset(&head);
	sc->head = head;
}

/*
 * The top object's structure, byte by byte, outside entries: strings,
 * depth, and the key each member's value belongs to.  When c opens the
 * value of "processes" or "events" as an array, that array's kind.
 */
static int scan_top(struct recording_scan *sc, char c)
{
	if (sc->str) {
		if (sc->esc)
			sc->esc = false;
		else if (c == '\\')
			sc->esc = true;
		else if (c == '"')
			sc->str = sc->in_key = false;
		else if (sc->in_key)   /* a longer key matches none of ours */
			sc->key[sc->keylen < sizeof(sc->key) - 1 ?
				sc->keylen++ : sc->keylen] = c;
		return 0;
	}
	bool value = sc->depth == 1 && sc->want_value;
	if (c != ' ' && c != '\t' && c != '\r')
		sc->want_value = false;
	switch (c) {
	case '"':
		sc->str = true;
		if (sc->depth == 1 && sc->want_key) {
			sc->in_key = true;
			sc->want_key = false;
			sc->keylen = 0;
		}
		return 0;
	case ':':
		sc->want_value = sc->depth == 1;
		return 0;
	case ',':
		sc->want_key = sc->depth == 1;
		return 0;
	case '{':
	case '[':
		sc->want_key = sc->depth++ == 0 && c == '{';
		if (!value || c != '[' || sc->keylen >= sizeof(sc->key) - 1)
			return 0;
		sc->key[sc->keylen] = '\0';
		return !strcmp(sc->key, "processes") ? ARRAY_PROCS :
			!strcmp(sc->key, "events") ? ARRAY_EVENTS : 0;
	case '}':
	case ']':
		if (sc->depth > 0 && --sc->depth == 0)
			sc->closed = true;
		return 0;
	default:
		return 0;
	}
}

/*
 * The start of a line that spans reads, p[0..n) of it, its first byte at
 * offset `at` of the line: how many bytes come before the '[' of an
 * export's first array (n when none does; *opens then stays false).
 */
size_t rec_scan_detect(struct recording_scan *sc, const char *p, size_t n,
			  size_t at, bool *opens)
{
	*opens = false;
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (!sc->depth && !sc->str && c != '{' && c != ' ' &&
		    c != '\t' && c != '\r') {
			sc->mode = SCAN_PLAIN;   /* not an object */
			return n;
		}
		/* where the members so far end: after the top object's '{',
		 * before a ',' of it */
		size_t end = !sc->str && c == '{' && !sc->depth ? at + i + 1 :
			!sc->str && c == ',' && sc->depth == 1 ? at + i : 0;
		int a = scan_top(sc, c);
		if (end)
			sc->member_at = end;
		if (a) {
			sc->array = a;
			*opens = true;
			return i;
		}
		if (sc->closed) {
			sc->mode = SCAN_PLAIN;
			return n;
		}
	}
	return n;
}

/*
 * The line so far is the start of an export, up to the '[' of its first
 * array: the members before it, made an object, tell (r->scan.head); if
 * they say "type":"export", the line is streamed from here.
 */
bool rec_stream_begin(struct recording *r)
{
	struct recording_scan *sc = &r->scan;
	const char *type = NULL;
	sbuf_reset(&sc->head);
	sbuf_add(&sc->head, r->line.buf, sc->member_at);
	sbuf_addch(&sc->head, '}');
	cJSON *o = memchr(sc->head.buf, '\0', sc->head.len) ? NULL :
		cJSON_ParseWithLength(sc->head.buf, sc->head.len);
	bool is = cJSON_IsObject(o) && rec_get_str(o, "type", &type) && type &&
		!strcmp(type, "export");
	cJSON_Delete(o);
	if (!is) {
		sc->mode = SCAN_PLAIN;
		sc->array = 0;
		return false;
	}
	sc->mode = SCAN_STREAM;
	sc->depth = 2;   /* in the array */
	rec_line_reset(r);
	return true;
}

/* The header of an export being streamed (r->scan.head): its nodes are
 * told; if it is not one, the rest of the line is skipped. */
void rec_stream_header(struct recording *r, const struct recording_sink *s,
			  void *arg)
{
	struct recording_scan *sc = &r->scan;
	int mark = r->nnodes;
	cJSON *o = cJSON_ParseWithLength(sc->head.buf, sc->head.len);
	const char *why = export_header(r, o, &sc->node);
	cJSON_Delete(o);
	if (why) {
		rec_malformed(r, r->stats.lines + 1, why);
		rec_forget_nodes(r, mark);
		r->skipping = true;
		sc->mode = SCAN_PLAIN;
		return;
	}
	rec_tell_nodes(r, s, arg);
}

/* An entry's byte: kept while the entry fits in line_max. */
static void entry_add(struct recording *r, char c)
{
	struct recording_scan *sc = &r->scan;
	if (sc->entry_long)
		return;
	if (r->line.len + 1 > r->line_max) {
		sc->entry_long = true;
		rec_line_reset(r);
		return;
	}
	sbuf_addch(&r->line, c);
}


/*
 * A streamed export's bytes p[0..n): how many were taken; *what says
 * whether an entry is whole (in r->line, or skipped: entry_long) or the
 * line ended (its newline taken).
 */
size_t rec_scan_stream(struct recording *r, const char *p, size_t n,
			  int *what)
{
	struct recording_scan *sc = &r->scan;
	*what = STREAM_MORE;
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		if (c == '\n') {   /* never inside JSON text: the line ends */
			*what = STREAM_EOL;
			return i + 1;
		}
		if (!sc->in_entry && sc->array && sc->depth == 2) {
			/* between the entries of an array */
			if (c == ' ' || c == '\t' || c == '\r' || c == ',')
				continue;
			if (c == ']' || c == '}') {   /* '}': not JSON; ends it too */
				sc->array = 0;
				sc->depth = 1;
				if (c == '}')
					scan_top(sc, c);
				continue;
			}
			sc->in_entry = true;
			sc->entry_long = false;
			sc->entry_scalar = c != '{' && c != '[';
		}
		if (!sc->in_entry) {
			int a = scan_top(sc, c);
			if (a)
				sc->array = a;
			continue;
		}
		/* an entry: a scalar ends before the ',' or ']' after it, an
		 * object or array with its closing bracket */
		if (sc->entry_scalar && !sc->str && sc->depth == 2 &&
		    (c == ',' || c == ']' || c == '}')) {
			sc->in_entry = false;
			*what = STREAM_ENTRY;
			return i;
		}
		entry_add(r, c);
		scan_top(sc, c);
		if (!sc->entry_scalar && sc->depth == 2) {
			sc->in_entry = false;
			*what = STREAM_ENTRY;
			return i + 1;
		}
	}
	return n;
}

/* An entry of a streamed export, whole in p[0..n). */
void rec_take_entry(struct recording *r, const char *p, size_t n,
		       const struct recording_sink *s, void *arg)
{
	struct recording_scan *sc = &r->scan;
	unsigned long line = r->stats.lines + 1;
	if (sc->entry_long) {
		r->stats.too_long++;
		rec_malformed(r, line, "entry too long");
		return;
	}
	cJSON *o = memchr(p, '\0', n) ? NULL : cJSON_ParseWithLength(p, n);
	if (sc->array == ARRAY_PROCS)
		export_proc(r, o, sc->node, line, s, arg);
	else
		export_event(r, o, line, s, arg);
	cJSON_Delete(o);
}

/* A streamed export's line is over (last: at the end of the input,
 * without a newline): an export cut short is malformed, or, on the last
 * line, flagged as truncated; what it held stands. */
void rec_stream_end(struct recording *r, bool last)
{
	r->stats.lines++;
	if (!r->scan.closed && last)
		r->stats.truncated = r->stats.export_cut = true;
	else if (!r->scan.closed)
		rec_malformed(r, r->stats.lines, "export cut short");
	rec_line_reset(r);
	rec_scan_reset(&r->scan);
}
