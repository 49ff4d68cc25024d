/*
 * recording: the reader of batch NDJSON and exports (see recording.h).
 *
 * Bytes come in through rbuf, a fixed buffer.  A line wholly inside it is
 * parsed in place (its newline becomes the NUL cJSON stops at); an export
 * that short is parsed whole, then handed out an entry at a time from
 * r->export across calls.  A line that spans reads is gathered in
 * r->line, up to line_max, past which the rest of it is read and dropped;
 * while it is gathered, r->scan follows its structure, and once the
 * members before its first array say it is an export, the line is no
 * longer gathered: each entry of its arrays is, parsed and handed out as
 * it ends (so an export of any size takes an entry's worth of memory).
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

/* bytes asked of each read; the fuzz target builds with a tiny one */
#ifndef RECORDING_RBUF_SIZE
#define RECORDING_RBUF_SIZE (64 * 1024)
#endif
#define RBUF_SIZE RECORDING_RBUF_SIZE
/* input read by one recording_read, so that progress can be shown */
#define READ_BUDGET ((uint64_t)8 << 20)
/* a line buffer grown beyond this is freed, not kept for the next line */
#define LINE_KEEP (1 << 20)

#define STR(x) STR_(x)
#define STR_(x) #x

#define HOW_TO_RECORD "record one with beamscope --batch -o FILE or :record FILE"

/* an export being handed out */
struct recording_export {
	cJSON *doc;
	const cJSON *proc;       /* the next process entry, or NULL */
	const cJSON *event;      /* the next event, or NULL */
	int node;                /* the export's "node" */
	unsigned long line;      /* where it is, for malformed entries */
};

static const struct recording_sink no_sink;

/* Fields.  Each returns false when the key is there with the wrong type
 * (or a number out of range) and leaves the default when it is absent. */

static bool get_str(const cJSON *o, const char *key, const char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	*out = NULL;
	if (!v)
		return true;
	if (!cJSON_IsString(v) || !v->valuestring)
		return false;
	*out = v->valuestring;
	return true;
}

static bool get_bool(const cJSON *o, const char *key, bool *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!v)
		return true;
	if (!cJSON_IsBool(v))
		return false;
	*out = cJSON_IsTrue(v);
	return true;
}

/* An integer in [lo, hi) into *out: 1, 0 when absent, -1 when it is not
 * one.  JSON numbers are doubles here, exact up to 2^53. */
#define EXACT 9007199254740992.0   /* 2^53 */

static int get_num(const cJSON *o, const char *key, double lo, double hi,
		   double *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!v)
		return 0;
	if (!cJSON_IsNumber(v))
		return -1;
	double d = v->valuedouble;
	/* the bounds are powers of two, exactly representable; NaN fails;
	 * from 2^53 on every double is a whole number */
	if (!(d >= lo && d < hi))
		return -1;
	if (d > -EXACT && d < EXACT && d != (double)(long long)d)
		return -1;
	*out = d;
	return 1;
}

#define I64_LO (-9223372036854775808.0)
#define I64_HI 9223372036854775808.0

static bool get_i64(const cJSON *o, const char *key, int64_t *out)
{
	double d;
	int k = get_num(o, key, I64_LO, I64_HI, &d);
	if (k > 0)
		*out = (int64_t)d;
	return k >= 0;
}

static bool get_long(const cJSON *o, const char *key, long *out)
{
	double d;
	int k = get_num(o, key, (double)LONG_MIN, -(double)LONG_MIN, &d);
	if (k > 0)
		*out = (long)d;
	return k >= 0;
}

static bool get_ulong(const cJSON *o, const char *key, unsigned long *out)
{
	double d;
	int k = get_num(o, key, 0, 2.0 * -(double)LONG_MIN, &d);
	if (k > 0)
		*out = (unsigned long)d;
	return k >= 0;
}

/* Nodes. */

const char *recording_node(const struct recording *r, int idx)
{
	return idx >= 0 && idx < r->nnodes ? r->nodes[idx] : NULL;
}

/*
 * The index of node name[0..len); -1 when the recording names too many.
 * A new node is told to the sink only once something that names it is
 * delivered (tell_nodes); a line found malformed takes back the nodes it
 * added (forget_nodes), so that no node is made up from a broken line.
 */
static int node_index(struct recording *r, const char *name, size_t len)
{
	int i = r->last_node;
	if (i < r->nnodes && strlen(r->nodes[i]) == len &&
	    !memcmp(r->nodes[i], name, len))
		return i;
	for (i = 0; i < r->nnodes; i++)
		if (strlen(r->nodes[i]) == len && !memcmp(r->nodes[i], name, len))
			return r->last_node = i;
	if (r->nnodes >= RECORDING_NODES_MAX) {
		r->over_nodes = true;   /* the line is malformed for this */
		return -1;
	}
	r->nodes = xrealloc(r->nodes, (size_t)(r->nnodes + 1) * sizeof(*r->nodes));
	r->nodes[r->nnodes] = xstrndup(name, len);
	return r->last_node = r->nnodes++;
}

static void tell_nodes(struct recording *r, const struct recording_sink *s,
		       void *arg)
{
	for (; r->told < r->nnodes; r->told++)
		if (s->node)
			s->node(arg, r->told, r->nodes[r->told]);
}

static void forget_nodes(struct recording *r, int keep)
{
	while (r->nnodes > keep && r->nnodes > r->told)
		free(r->nodes[--r->nnodes]);
}

/* A line's "node", registered: its index, or -1. */
static int line_node(struct recording *r, const cJSON *o)
{
	const char *node;
	if (!get_str(o, "node", &node) || !node || !*node)
		return -1;
	return node_index(r, node, strlen(node));
}

/* A pid text of something on node `node`: false when it is not one. */
static bool pid_of(struct recording *r, const char *text, int node,
		   struct bs_pid *pid)
{
	struct pidtext pt;
	if (pidtext_parse(text, &pt) < 0)
		return false;
	if (pt.node_len) {
		node = node_index(r, pt.node, pt.node_len);
		if (node < 0)
			return false;
	}
	pid->num = pt.num;
	pid->serial = pt.serial;
	pid->node = (uint32_t)node;
	return true;
}

/* Registers every name of a "nodes" array; false if it is not one. */
static bool nodes_array(struct recording *r, const cJSON *o)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "nodes"), *n;
	if (!a)
		return true;
	if (!cJSON_IsArray(a))
		return false;
	cJSON_ArrayForEach(n, a) {
		if (!cJSON_IsString(n) || !n->valuestring || !*n->valuestring ||
		    node_index(r, n->valuestring, strlen(n->valuestring)) < 0)
			return false;
	}
	return true;
}

/* What is read. */

static void malformed(struct recording *r, unsigned long line, const char *why)
{
	if (r->over_nodes)
		why = "more than " STR(RECORDING_NODES_MAX) " nodes";
	r->over_nodes = false;
	if (!r->stats.malformed++) {
		r->stats.first_malformed = line;
		r->stats.first_malformed_why = why;
	}
}

static int event_type_of(const char *json)
{
	for (int t = 0; t < EV__COUNT; t++)
		if (!EVENT_IS_GC_START(t) && !strcmp(event_types[t].json, json))
			return t;
	return -1;
}

/* The type a gc or running line names in kind or state; -1 if none. */
static int refine_type(int t, const cJSON *o)
{
	const char *v;
	if (t == EV_GC_MINOR_END) {
		if (!get_str(o, "kind", &v) || !v)
			return -1;
		return !strcmp(v, "minor") ? EV_GC_MINOR_END :
			!strcmp(v, "major") ? EV_GC_MAJOR_END : -1;
	}
	if (t == EV_IN) {
		if (!get_str(o, "state", &v) || !v)
			return -1;
		for (int u = EV_IN; u <= EV_OUT_EXITED; u++)
			if (!strcmp(event_types[u].tag, v))
				return u;
		return -1;
	}
	return t;
}

/* An event object into ev and its line's node into *node; NULL, or what
 * is wrong with it. */
static const char *parse_event(struct recording *r, const cJSON *o, int t,
			       struct event *ev, int *node)
{
	bool dead = false;

	memset(ev, 0, sizeof(*ev));
	ev->elapsed_us = -1;
	ev->heap[0] = ev->heap[1] = ev->heap[2] = ev->heap[3] = -1;
	int u = refine_type(t, o);
	if (u < 0)
		return t == EV_IN ? "no running state" : "no gc kind";
	t = u;
	if (t == EV_SEND && (!get_bool(o, "undelivered", &dead)))
		return "bad field type";
	ev->type = dead ? EV_SEND_DEAD : (enum event_type)t;

	if (!cJSON_GetObjectItemCaseSensitive(o, "ts"))
		return "no ts";
	if (!get_i64(o, "ts", &ev->ts))
		return "bad ts";
	if ((*node = line_node(r, o)) < 0)
		return "no node";
	if (!get_str(o, "pid", &ev->pid_text) || !ev->pid_text)
		return "no pid";
	if (!pid_of(r, ev->pid_text, *node, &ev->pid))
		return "bad pid";

	/* the keys as the JSON writer writes them (event.h) */
	const struct event_fields *k = &event_fields[ev->type];
	const char *from_node;
	if (!get_str(o, "name", &ev->name) || !get_str(o, "label", &ev->label) ||
	    !get_str(o, "mfa", &ev->mfa) ||
	    (k->peer.name[0] && !get_str(o, k->peer.name, &ev->peer)) ||
	    (k->peer_name.name[0] &&
	     !get_str(o, k->peer_name.name, &ev->peer_name)) ||
	    (k->extra.name[0] && !get_str(o, k->extra.name, &ev->extra)) ||
	    !get_str(o, k->payload.name, &ev->payload) ||
	    !get_bool(o, "truncated", &ev->truncated) ||
	    !get_i64(o, "elapsed_us", &ev->elapsed_us) ||
	    !get_str(o, "from", &ev->from) ||
	    !get_str(o, "from_node", &from_node) ||
	    !get_i64(o, "latency_us", &ev->latency_us))
		return "bad field type";
	if (ev->type == EV_GEN_CALL || ev->type == EV_GEN_REPLY) {
		const char *tag = NULL;
		char *end;
		if (!get_str(o, "tag", &tag) || !tag)
			return "no gen call tag";
		ev->gen_tag = strtoull(tag, &end, 16);
		if (end == tag || *end)
			return "bad gen call tag";
	}
	if (EVENT_IS_GC(ev->type) &&
	    (!get_long(o, "heap_before", &ev->heap[0]) ||
	     !get_long(o, "heap_after", &ev->heap[1]) ||
	     !get_long(o, "old_heap_before", &ev->heap[2]) ||
	     !get_long(o, "old_heap_after", &ev->heap[3])))
		return "bad field type";
	return NULL;
}

static void deliver_event(struct recording *r, int node, const struct event *ev,
			  const struct recording_sink *s, void *arg)
{
	struct recording_stats *st = &r->stats;
	if (!st->has_ts || ev->ts < st->first_ts)
		st->first_ts = ev->ts;
	if (!st->has_ts || ev->ts > st->last_ts)
		st->last_ts = ev->ts;
	st->has_ts = true;
	st->items++;
	st->events++;
	tell_nodes(r, s, arg);
	if (s->event)
		s->event(arg, node, ev);
}

static const char *take_counts(struct recording *r, const cJSON *o,
			       const struct recording_sink *s, void *arg)
{
	struct recording_counts c = { 0 };
	int node;

	if (!cJSON_GetObjectItemCaseSensitive(o, "ts"))
		return "no ts";
	if (!get_i64(o, "ts", &c.ts))
		return "bad ts";
	if ((node = line_node(r, o)) < 0)
		return "no node";
	if (!get_str(o, "pid", &c.pid_text) || !c.pid_text ||
	    !pid_of(r, c.pid_text, node, &c.pid))
		return "no pid";
	if (!get_str(o, "name", &c.name) || !get_ulong(o, "sends", &c.sends) ||
	    !get_ulong(o, "receives", &c.receives) ||
	    !get_ulong(o, "spawns", &c.spawns))
		return "bad field type";
	r->stats.items++;
	tell_nodes(r, s, arg);
	if (s->counts)
		s->counts(arg, node, &c);
	return NULL;
}

static const char *take_summary(struct recording *r, const cJSON *o,
				const char *type, const struct recording_sink *s,
				void *arg)
{
	struct recording_summary sm = {
		.type = type, .started_ts = -1, .duration_ms = -1, .events = -1,
		.malformed = -1, .obj = o,
	};
	int node = -1;

	if (!get_str(o, "node", &sm.node))
		return "bad node";
	if (sm.node && (node = line_node(r, o)) < 0)
		return "no node";
	if (!nodes_array(r, o))
		return "bad nodes";
	if (!sm.node && !cJSON_GetObjectItemCaseSensitive(o, "nodes"))
		return "no node";
	if (!get_str(o, "ended", &sm.ended) ||
	    !get_i64(o, "started_ts", &sm.started_ts) ||
	    !get_i64(o, "duration_ms", &sm.duration_ms) ||
	    !get_i64(o, "events", &sm.events) ||
	    !get_i64(o, "malformed", &sm.malformed))
		return "bad field type";
	r->stats.items++;
	tell_nodes(r, s, arg);
	if (s->summary)
		s->summary(arg, node, &sm);
	return NULL;
}

/* Exports. */

/* An export's process entry into p and its node (the export's unless it
 * names one) into *node; NULL, or what is wrong with it. */
static const char *parse_proc(struct recording *r, const cJSON *o, int *node,
			      struct recording_proc *p)
{
	const char *pnode;

	memset(p, 0, sizeof(*p));
	p->mqlen = -1;
	if (!cJSON_IsObject(o))
		return "process entry is not an object";
	if (!get_str(o, "node", &pnode))
		return "bad node";
	if (pnode && (*node = line_node(r, o)) < 0)
		return "bad node";
	if (!get_str(o, "pid", &p->pid_text) || !p->pid_text ||
	    !pid_of(r, p->pid_text, *node, &p->pid))
		return "no pid";
	if (!get_str(o, "name", &p->name) || !get_str(o, "label", &p->label) ||
	    !get_str(o, "initial_call", &p->initial_call) ||
	    !get_str(o, "current_function", &p->current_function) ||
	    !get_ulong(o, "sends", &p->sends) ||
	    !get_ulong(o, "receives", &p->receives) ||
	    !get_ulong(o, "spawns", &p->spawns) ||
	    !get_long(o, "message_queue_len", &p->mqlen) ||
	    !get_i64(o, "running_us", &p->running_us) ||
	    !get_ulong(o, "gcs", &p->gcs) ||
	    !get_str(o, "parent", &p->parent_text) ||
	    !get_bool(o, "exited", &p->exited) ||
	    !get_str(o, "reason", &p->reason))
		return "bad field type";
	if (p->parent_text) {
		if (!pid_of(r, p->parent_text, *node, &p->parent))
			return "bad parent";
		p->has_parent = true;
	}
	if (!p->exited)
		p->reason = NULL;
	return NULL;
}

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

	if ((*node = line_node(r, doc)) < 0)
		return "no node";
	if (!nodes_array(r, doc))
		return "bad nodes";
	if (!get_i64(doc, "exported_ts", &ts) ||
	    !get_i64(doc, "evicted_events", &evicted))
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
	const char *why = parse_proc(r, o, &node, &p);
	if (why) {
		malformed(r, line, why);
		forget_nodes(r, mark);
		return;
	}
	r->stats.items++;
	tell_nodes(r, s, arg);
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
	if (!cJSON_IsObject(o) || !get_str(o, "type", &type) || !type) {
		malformed(r, line, "event is not an object with a type");
		return;
	}
	if ((t = event_type_of(type)) < 0) {
		malformed(r, line, "unknown type");
		return;
	}
	if ((why = parse_event(r, o, t, &ev, &node))) {
		malformed(r, line, why);
		forget_nodes(r, mark);
		return;
	}
	deliver_event(r, node, &ev, s, arg);
}

/* An export on one line read whole: takes doc on success, and hands its
 * entries out from r->export across calls. */
static const char *take_export(struct recording *r, cJSON *doc,
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
	tell_nodes(r, s, arg);
	return NULL;
}

static void export_done(struct recording *r)
{
	cJSON_Delete(r->export->doc);
	free(r->export);
	r->export = NULL;
}

/* Up to n entries of the export: how many were looked at. */
static int export_step(struct recording *r, int n,
		       const struct recording_sink *s, void *arg)
{
	struct recording_export *x = r->export;
	int done = 0;

	for (; x->proc && done < n; x->proc = x->proc->next, done++)
		export_proc(r, x->proc, x->node, x->line, s, arg);
	for (; !x->proc && x->event && done < n; x->event = x->event->next, done++)
		export_event(r, x->event, x->line, s, arg);
	if (!x->proc && !x->event)
		export_done(r);
	return done;
}

/* Lines. */

static bool blank(const char *p, const char *end)
{
	for (; p < end; p++)
		if (*p != ' ' && *p != '\t' && *p != '\r')
			return false;
	return true;
}

/* Parse p[0..n) (with p[n] == '\0'): the object, or NULL. */
static cJSON *parse_line(const char *p, size_t n)
{
	const char *end = NULL;
	if (memchr(p, '\0', n))
		return NULL;
	cJSON *o = cJSON_ParseWithLengthOpts(p, n, &end, 0);
	if (o && (!cJSON_IsObject(o) || !end || end < p || end > p + n ||
		  !blank(end, p + n))) {
		cJSON_Delete(o);
		o = NULL;
	}
	return o;
}

/* What the line is: NULL, or why it cannot be read. */
static const char *dispatch(struct recording *r, cJSON *o,
			    const struct recording_sink *s, void *arg,
			    bool *kept)
{
	const char *type;
	int t;

	*kept = false;
	if (!get_str(o, "type", &type) || !type)
		return "no type";
	if (!strcmp(type, "counts"))
		return take_counts(r, o, s, arg);
	if (!strcmp(type, "summary") || !strcmp(type, "node_summary"))
		return take_summary(r, o, type, s, arg);
	/* made again from the gen_call records when it is read */
	if (!strcmp(type, "gen_call_stats") || !strcmp(type, "slow_call") ||
	    !strcmp(type, "gen_call_totals"))
		return NULL;
	/* what a node said of itself: the view shows it live only */
	if (!strcmp(type, "node_stats"))
		return NULL;
	if (!strcmp(type, "export")) {
		const char *why = take_export(r, o, s, arg);
		*kept = !why;
		return why;
	}
	if ((t = event_type_of(type)) < 0)
		return "unknown type";

	struct event ev;
	int node;
	const char *why = parse_event(r, o, t, &ev, &node);
	if (!why)
		deliver_event(r, node, &ev, s, arg);
	return why;
}

static void take_line(struct recording *r, char *p, size_t n, bool last,
		      const struct recording_sink *s, void *arg)
{
	unsigned long line = ++r->stats.lines;
	if (blank(p, p + n))
		return;
	cJSON *o = parse_line(p, n);
	if (!o) {
		if (last)
			r->stats.truncated = true;
		else
			malformed(r, line, "not a JSON object");
		return;
	}
	bool kept;
	int mark = r->nnodes;
	const char *why = dispatch(r, o, s, arg, &kept);
	if (why) {
		malformed(r, line, why);
		forget_nodes(r, mark);
	}
	if (!kept)
		cJSON_Delete(o);
}

/* 1: read some; 0: the end; 2: not now (a quiet pipe: starved, or a
 * signal to see to); -1: error. */
static int fill(struct recording *r)
{
	r->rpos = r->rlen = 0;
	ssize_t k = read(r->fd, r->rbuf, RBUF_SIZE);
	if (k < 0 && errno == EINTR)
		return 2;
	if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		r->starved = true;
		return 2;
	}
	r->starved = false;
	if (k < 0) {
		sbuf_reset(&r->error);
		sbuf_addf(&r->error, "cannot read \"%s\": %s", r->path,
			  strerror(errno));
		return -1;
	}
	if (k == 0) {
		r->eof = true;
		return 0;
	}
	r->rlen = (size_t)k;
	r->stats.bytes += (uint64_t)k;
	return 1;
}

/* A line's buffer is done with: kept for the next one unless it grew big. */
static void line_reset(struct recording *r)
{
	if (r->line.cap > LINE_KEEP)
		sbuf_release(&r->line);
	else
		sbuf_reset(&r->line);
}

/* The start of a line too long to keep. */
static void too_long(struct recording *r)
{
	r->stats.too_long++;
	malformed(r, r->stats.lines + 1, "line too long");
	r->skipping = true;
	line_reset(r);
}

/* Streamed exports. */

enum { ARRAY_PROCS = 1, ARRAY_EVENTS = 2 };

/* A new line: nothing known of it. */
static void scan_reset(struct recording_scan *sc)
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
static size_t scan_detect(struct recording_scan *sc, const char *p, size_t n,
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
static bool stream_begin(struct recording *r)
{
	struct recording_scan *sc = &r->scan;
	const char *type = NULL;
	sbuf_reset(&sc->head);
	sbuf_add(&sc->head, r->line.buf, sc->member_at);
	sbuf_addch(&sc->head, '}');
	cJSON *o = memchr(sc->head.buf, '\0', sc->head.len) ? NULL :
		cJSON_ParseWithLength(sc->head.buf, sc->head.len);
	bool is = cJSON_IsObject(o) && get_str(o, "type", &type) && type &&
		!strcmp(type, "export");
	cJSON_Delete(o);
	if (!is) {
		sc->mode = SCAN_PLAIN;
		sc->array = 0;
		return false;
	}
	sc->mode = SCAN_STREAM;
	sc->depth = 2;   /* in the array */
	line_reset(r);
	return true;
}

/* The header of an export being streamed (r->scan.head): its nodes are
 * told; if it is not one, the rest of the line is skipped. */
static void stream_header(struct recording *r, const struct recording_sink *s,
			  void *arg)
{
	struct recording_scan *sc = &r->scan;
	int mark = r->nnodes;
	cJSON *o = cJSON_ParseWithLength(sc->head.buf, sc->head.len);
	const char *why = export_header(r, o, &sc->node);
	cJSON_Delete(o);
	if (why) {
		malformed(r, r->stats.lines + 1, why);
		forget_nodes(r, mark);
		r->skipping = true;
		sc->mode = SCAN_PLAIN;
		return;
	}
	tell_nodes(r, s, arg);
}

/* An entry's byte: kept while the entry fits in line_max. */
static void entry_add(struct recording *r, char c)
{
	struct recording_scan *sc = &r->scan;
	if (sc->entry_long)
		return;
	if (r->line.len + 1 > r->line_max) {
		sc->entry_long = true;
		line_reset(r);
		return;
	}
	sbuf_addch(&r->line, c);
}

enum { STREAM_MORE, STREAM_ENTRY, STREAM_EOL };

/*
 * A streamed export's bytes p[0..n): how many were taken; *what says
 * whether an entry is whole (in r->line, or skipped: entry_long) or the
 * line ended (its newline taken).
 */
static size_t scan_stream(struct recording *r, const char *p, size_t n,
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
static void take_entry(struct recording *r, const char *p, size_t n,
		       const struct recording_sink *s, void *arg)
{
	struct recording_scan *sc = &r->scan;
	unsigned long line = r->stats.lines + 1;
	if (sc->entry_long) {
		r->stats.too_long++;
		malformed(r, line, "entry too long");
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
static void stream_end(struct recording *r, bool last)
{
	r->stats.lines++;
	if (!r->scan.closed && last)
		r->stats.truncated = r->stats.export_cut = true;
	else if (!r->scan.closed)
		malformed(r, r->stats.lines, "export cut short");
	line_reset(r);
	scan_reset(&r->scan);
}

/* Lines. */

/* What next_line found. */
enum {
	NEXT_ERROR = -1, NEXT_END = 0, NEXT_LINE = 1, NEXT_LATER = 2,
	NEXT_HEADER = 3,   /* a streamed export's header: stream_header */
	NEXT_ENTRY = 4,    /* an entry of it in p, n: take_entry */
};

/*
 * The next line in *p, *n, NUL-terminated, *last when it ended at the end
 * of the input without a newline; or the next piece of a streamed export.
 * NEXT_LATER: stop for now (read enough since `since`, or a pipe has
 * nothing yet).
 */
static int next_line(struct recording *r, char **p, size_t *n, bool *last,
		     uint64_t since)
{
	struct recording_scan *sc = &r->scan;
	*last = false;
	for (;;) {
		if (r->rpos < r->rlen) {
			char *start = r->rbuf + r->rpos;
			size_t avail = r->rlen - r->rpos;
			if (sc->mode == SCAN_STREAM && !r->skipping) {
				int what;
				r->rpos += scan_stream(r, start, avail, &what);
				if (what == STREAM_ENTRY) {
					*p = r->line.buf ? r->line.buf : start;
					*n = r->line.len;
					return NEXT_ENTRY;
				}
				if (what == STREAM_EOL)
					stream_end(r, false);
				continue;
			}
			char *nl = memchr(start, '\n', avail);
			size_t take = nl ? (size_t)(nl - start) : avail;

			if (r->skipping) {
				r->rpos += take + (nl ? 1 : 0);
				if (nl) {
					r->skipping = false;
					r->stats.lines++;
					scan_reset(sc);
				}
				continue;
			}
			if (nl && !r->line.len) {   /* whole in the buffer */
				r->rpos += take + 1;
				*nl = '\0';
				*p = start;
				*n = take;
				return NEXT_LINE;
			}
			bool opens = false;
			size_t use = sc->mode == SCAN_DETECT ?
				scan_detect(sc, start, take, r->line.len, &opens) :
				take;
			if (r->line.len + use > r->line_max) {
				too_long(r);
				continue;
			}
			sbuf_add(&r->line, start, use);
			r->rpos += use;
			if (opens) {
				if (stream_begin(r)) {
					r->rpos++;   /* the '[' */
					return NEXT_HEADER;
				}
				continue;   /* gathered whole after all */
			}
			if (nl) {
				r->rpos++;
				*p = r->line.buf;
				*n = r->line.len;
				return NEXT_LINE;
			}
			continue;
		}
		if (r->eof) {
			if (r->skipping) {
				r->skipping = false;
				r->stats.lines++;
			}
			if (sc->mode == SCAN_STREAM) {
				stream_end(r, true);
				return NEXT_END;
			}
			if (!r->line.len)
				return NEXT_END;
			*p = r->line.buf;
			*n = r->line.len;
			*last = true;
			return NEXT_LINE;
		}
		if (r->stats.bytes - since >= READ_BUDGET)
			return NEXT_LATER;
		int k = fill(r);
		if (k < 0)
			return NEXT_ERROR;
		if (k == 2)
			return NEXT_LATER;
	}
}

static void line_done(struct recording *r)
{
	line_reset(r);
	scan_reset(&r->scan);
}

int recording_read(struct recording *r, int max_items,
		   const struct recording_sink *s, void *arg)
{
	int budget = max_items > 0 ? max_items : 1, steps = 0;
	uint64_t since = r->stats.bytes;

	if (!s)
		s = &no_sink;
	while (steps < budget) {
		if (r->export) {
			steps += export_step(r, budget - steps, s, arg);
			continue;
		}
		char *p;
		size_t n;
		bool last;
		int k = next_line(r, &p, &n, &last, since);
		if (k == NEXT_LATER)
			return 1;
		if (k == NEXT_ERROR || k == NEXT_END)
			return k;
		if (k == NEXT_HEADER) {
			stream_header(r, s, arg);
			continue;
		}
		if (k == NEXT_ENTRY) {
			take_entry(r, p, n, s, arg);
			line_reset(r);
			steps++;
			continue;
		}
		take_line(r, p, n, last, s, arg);
		line_done(r);
		steps++;
	}
	return r->export || !r->eof || r->rpos < r->rlen || r->line.len ||
		r->scan.mode == SCAN_STREAM ? 1 : 0;
}

/* Opening. */

/* The first line that is not blank in buf[0..n): its newline, or NULL
 * when no such line is there whole. */
static const char *first_line_end(const char *buf, size_t n)
{
	const char *p = buf, *end = buf + n, *nl;
	while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
		if (!blank(p, nl))
			return nl;
		p = nl + 1;
	}
	return NULL;
}

static const char binary[] = "holds binary data";
static const char blank_only[] = "is blank";

/* What is wrong with the first line that is not blank, as far as it was
 * read (NULL: nothing), and its number. */
static const char *first_line_check(const struct recording *r,
				    unsigned long *lineno)
{
	const char *p = r->rbuf, *end = r->rbuf + r->rlen;
	*lineno = 1;
	for (;;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *e = nl ? nl : end;
		if (!blank(p, e))
			break;
		if (!nl)
			return blank_only;
		p = nl + 1;
		(*lineno)++;
	}
	const char *nl = memchr(p, '\n', (size_t)(end - p));
	const char *e = nl ? nl : end;
	if (memchr(p, '\0', (size_t)(e - p)))
		return binary;
	if (!nl && !r->eof) {
		/* longer than what was read: judge its start */
		while (*p == ' ' || *p == '\t')
			p++;
		return *p == '{' ? NULL : "is not JSON";
	}
	char *copy = xstrndup(p, (size_t)(e - p));
	cJSON *o = parse_line(copy, (size_t)(e - p));
	const char *type = NULL, *why = NULL;
	if (!o)
		why = "is not JSON";
	else if (!get_str(o, "type", &type) || !type)
		why = "is JSON without a \"type\"";
	cJSON_Delete(o);
	free(copy);
	return why;
}

int recording_open_fd(struct recording *r, int fd, const char *name,
		      struct sbuf *err)
{
	struct stat st;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->path = xstrdup(name);
	r->line_max = RECORDING_LINE_MAX;
	r->rbuf = xmalloc(RBUF_SIZE);
	sbuf_init(&r->line);
	sbuf_init(&r->error);

	if (fstat(fd, &st) < 0) {
		sbuf_addf(err, "cannot open \"%s\": %s", name, strerror(errno));
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		sbuf_addf(err, "\"%s\" is a directory; open a file, "
			  HOW_TO_RECORD, name);
		goto fail;
	}
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		sbuf_addf(err, "\"%s\" is not a file or a pipe; open a file, "
			  HOW_TO_RECORD, name);
		goto fail;
	}
	/* a file's size says how far loading is; 0 (a pipe, or a file of
	 * /proc, whose size says nothing) is not known: it is read to tell */
	if (S_ISREG(st.st_mode))
		r->stats.size = (uint64_t)st.st_size;

	/* the first line, or as much of it as the buffer holds; a signal
	 * while a pipe is quiet ends the wait */
	size_t got = 0;
	while (got < RBUF_SIZE && !first_line_end(r->rbuf, got)) {
		ssize_t k = read(fd, r->rbuf + got, RBUF_SIZE - got);
		if (k < 0 && errno == EINTR) {
			sbuf_addf(err, "interrupted while waiting for \"%s\"",
				  name);
			goto fail;
		}
		if (k < 0) {
			sbuf_addf(err, "cannot read \"%s\": %s", name,
				  strerror(errno));
			goto fail;
		}
		if (k == 0) {
			r->eof = true;
			break;
		}
		got += (size_t)k;
		r->stats.bytes += (uint64_t)k;
	}
	r->rlen = got;
	if (!got) {
		sbuf_addf(err, "\"%s\" is empty; " HOW_TO_RECORD, name);
		goto fail;
	}
	/* from now on a quiet pipe is waited for in the caller's loop, never
	 * in a read */
	if (S_ISFIFO(st.st_mode))
		(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);

	unsigned long lineno;
	const unsigned char *u = (const unsigned char *)r->rbuf;
	if (got >= 2 && u[0] == 0x1f && u[1] == 0x8b) {
		sbuf_addf(err, "\"%s\" is compressed (gzip); uncompress it "
			  "first, or read it through a pipe", name);
		goto fail;
	}
	const char *why = first_line_check(r, &lineno);
	if (why == binary) {
		sbuf_addf(err, "\"%s\" is not a beamscope recording: it holds "
			  "binary data; open a file written by beamscope "
			  "--batch -o FILE or :export FILE", name);
		goto fail;
	}
	if (why == blank_only) {
		if (!r->eof)
			return 0;   /* blank as far as was read: let reading tell */
		sbuf_addf(err, "\"%s\" is empty; " HOW_TO_RECORD, name);
		goto fail;
	}
	if (why) {
		sbuf_addf(err, "\"%s\" is not a beamscope recording: line %lu %s; "
			  "open a file written by beamscope --batch -o FILE "
			  "or :export FILE", name, lineno, why);
		goto fail;
	}
	return 0;

fail:
	recording_release(r);
	return -1;
}

int recording_open(struct recording *r, const char *path, struct sbuf *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		memset(r, 0, sizeof(*r));
		r->fd = -1;
		sbuf_addf(err, "cannot open \"%s\": %s", path, strerror(errno));
		return -1;
	}
	return recording_open_fd(r, fd, path, err);
}

void recording_release(struct recording *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	if (r->export)
		export_done(r);
	for (int i = 0; i < r->nnodes; i++)
		free(r->nodes[i]);
	free(r->nodes);
	r->nodes = NULL;
	r->nnodes = 0;
	free(r->path);
	r->path = NULL;
	free(r->rbuf);
	r->rbuf = NULL;
	r->rpos = r->rlen = 0;
	sbuf_release(&r->line);
	sbuf_release(&r->scan.head);
	sbuf_release(&r->error);
}
