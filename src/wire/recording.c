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
#include "recording_priv.h"
#include "alarm.h"

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

static const struct recording_sink no_sink;

/* What is read. */

void rec_malformed(struct recording *r, unsigned long line, const char *why)
{
	if (r->over_nodes)
		why = "more than " STR(RECORDING_NODES_MAX) " nodes";
	r->over_nodes = false;
	if (!r->stats.malformed++) {
		r->stats.first_malformed = line;
		r->stats.first_malformed_why = why;
	}
}

int rec_event_type_of(const char *json)
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
		if (!rec_get_str(o, "kind", &v) || !v)
			return -1;
		return !strcmp(v, "minor") ? EV_GC_MINOR_END :
			!strcmp(v, "major") ? EV_GC_MAJOR_END : -1;
	}
	if (t == EV_IN) {
		if (!rec_get_str(o, "state", &v) || !v)
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
const char *rec_parse_event(struct recording *r, const cJSON *o, int t,
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
	if (t == EV_SEND && (!rec_get_bool(o, "undelivered", &dead)))
		return "bad field type";
	ev->type = dead ? EV_SEND_DEAD : (enum event_type)t;

	if (!cJSON_GetObjectItemCaseSensitive(o, "ts"))
		return "no ts";
	if (!rec_get_i64(o, "ts", &ev->ts))
		return "bad ts";
	if ((*node = rec_line_node(r, o)) < 0)
		return "no node";
	if (!rec_get_str(o, "pid", &ev->pid_text) || !ev->pid_text)
		return "no pid";
	if (!rec_pid_of(r, ev->pid_text, *node, &ev->pid))
		return "bad pid";

	/* the keys as the JSON writer writes them (event.h) */
	const struct event_fields *k = &event_fields[ev->type];
	const char *from_node;
	if (!rec_get_str(o, "name", &ev->name) || !rec_get_str(o, "label", &ev->label) ||
	    !rec_get_str(o, "mfa", &ev->mfa) ||
	    (k->peer.name[0] && !rec_get_str(o, k->peer.name, &ev->peer)) ||
	    (k->peer_name.name[0] &&
	     !rec_get_str(o, k->peer_name.name, &ev->peer_name)) ||
	    (k->extra.name[0] && !rec_get_str(o, k->extra.name, &ev->extra)) ||
	    !rec_get_str(o, k->payload.name, &ev->payload) ||
	    !rec_get_bool(o, "truncated", &ev->truncated) ||
	    !rec_get_i64(o, "elapsed_us", &ev->elapsed_us) ||
	    !rec_get_str(o, "from", &ev->from) ||
	    !rec_get_str(o, "from_node", &from_node) ||
	    !rec_get_i64(o, "latency_us", &ev->latency_us))
		return "bad field type";
	if (ev->type == EV_GEN_CALL || ev->type == EV_GEN_REPLY) {
		const char *tag = NULL;
		char *end;
		if (!rec_get_str(o, "tag", &tag) || !tag)
			return "no gen call tag";
		ev->gen_tag = strtoull(tag, &end, 16);
		if (end == tag || *end)
			return "bad gen call tag";
	}
	if (ev->type == EV_ALARM &&
	    (!ev->extra || alarm_kind_of(ev->extra) < 0))
		return "no alarm kind";
	if (ev->type == EV_ALARM &&
	    (!rec_get_long(o, "heap_bytes", &ev->heap[0]) ||
	     !rec_get_long(o, "message_queue_len", &ev->heap[1])))
		return "bad field type";
	if (EVENT_IS_GC(ev->type) &&
	    (!rec_get_long(o, "heap_before", &ev->heap[0]) ||
	     !rec_get_long(o, "heap_after", &ev->heap[1]) ||
	     !rec_get_long(o, "old_heap_before", &ev->heap[2]) ||
	     !rec_get_long(o, "old_heap_after", &ev->heap[3])))
		return "bad field type";
	return NULL;
}

void rec_deliver_event(struct recording *r, int node, const struct event *ev,
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
	rec_tell_nodes(r, s, arg);
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
	if (!rec_get_i64(o, "ts", &c.ts))
		return "bad ts";
	if ((node = rec_line_node(r, o)) < 0)
		return "no node";
	if (!rec_get_str(o, "pid", &c.pid_text) || !c.pid_text ||
	    !rec_pid_of(r, c.pid_text, node, &c.pid))
		return "no pid";
	if (!rec_get_str(o, "name", &c.name) || !rec_get_ulong(o, "sends", &c.sends) ||
	    !rec_get_ulong(o, "receives", &c.receives) ||
	    !rec_get_ulong(o, "spawns", &c.spawns))
		return "bad field type";
	r->stats.items++;
	rec_tell_nodes(r, s, arg);
	if (s->counts)
		s->counts(arg, node, &c);
	return NULL;
}

/* A profile_sample line: its stack, root first, at most PROF_FRAMES_MAX
 * frames (those nearest the root) */
static const char *take_profile(struct recording *r, const cJSON *o,
				const struct recording_sink *s, void *arg)
{
	struct prof_sample p;
	const char *status;
	int node;
	memset(&p, 0, sizeof(p));
	if (!rec_get_i64(o, "ts", &p.ts_us))
		return "bad ts";
	if ((node = rec_line_node(r, o)) < 0)
		return "no node";
	if (!rec_get_str(o, "pid", &p.pid_text) || !p.pid_text ||
	    !rec_pid_of(r, p.pid_text, node, &p.pid))
		return "no pid";
	if (!rec_get_str(o, "status", &status) || !status)
		return "no status";
	snprintf(p.status, sizeof(p.status), "%s", status);
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(o, "whole");
	p.whole = cJSON_IsTrue(w);
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(o, "stack"), *f;
	if (!cJSON_IsArray(st))
		return "no stack";
	cJSON_ArrayForEach(f, st) {
		if (!cJSON_IsString(f))
			return "bad stack";
		if (p.nframes < PROF_FRAMES_MAX)
			p.frames[p.nframes++] = f->valuestring;
	}
	r->stats.items++;
	rec_tell_nodes(r, s, arg);
	if (s->profile)
		s->profile(arg, node, &p);
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

	if (!rec_get_str(o, "node", &sm.node))
		return "bad node";
	if (sm.node && (node = rec_line_node(r, o)) < 0)
		return "no node";
	if (!rec_nodes_array(r, o))
		return "bad nodes";
	if (!sm.node && !cJSON_GetObjectItemCaseSensitive(o, "nodes"))
		return "no node";
	if (!rec_get_str(o, "ended", &sm.ended) ||
	    !rec_get_i64(o, "started_ts", &sm.started_ts) ||
	    !rec_get_i64(o, "duration_ms", &sm.duration_ms) ||
	    !rec_get_i64(o, "events", &sm.events) ||
	    !rec_get_i64(o, "malformed", &sm.malformed))
		return "bad field type";
	r->stats.items++;
	rec_tell_nodes(r, s, arg);
	if (s->summary)
		s->summary(arg, node, &sm);
	return NULL;
}

/* Exports. */

/* An export's process entry into p and its node (the export's unless it
 * names one) into *node; NULL, or what is wrong with it. */
const char *rec_parse_proc(struct recording *r, const cJSON *o, int *node,
			      struct recording_proc *p)
{
	const char *pnode;

	memset(p, 0, sizeof(*p));
	p->mqlen = -1;
	if (!cJSON_IsObject(o))
		return "process entry is not an object";
	if (!rec_get_str(o, "node", &pnode))
		return "bad node";
	if (pnode && (*node = rec_line_node(r, o)) < 0)
		return "bad node";
	if (!rec_get_str(o, "pid", &p->pid_text) || !p->pid_text ||
	    !rec_pid_of(r, p->pid_text, *node, &p->pid))
		return "no pid";
	if (!rec_get_str(o, "name", &p->name) || !rec_get_str(o, "label", &p->label) ||
	    !rec_get_str(o, "initial_call", &p->initial_call) ||
	    !rec_get_str(o, "current_function", &p->current_function) ||
	    !rec_get_ulong(o, "sends", &p->sends) ||
	    !rec_get_ulong(o, "receives", &p->receives) ||
	    !rec_get_ulong(o, "spawns", &p->spawns) ||
	    !rec_get_long(o, "message_queue_len", &p->mqlen) ||
	    !rec_get_i64(o, "running_us", &p->running_us) ||
	    !rec_get_ulong(o, "gcs", &p->gcs) ||
	    !rec_get_str(o, "parent", &p->parent_text) ||
	    !rec_get_bool(o, "exited", &p->exited) ||
	    !rec_get_str(o, "reason", &p->reason))
		return "bad field type";
	if (p->parent_text) {
		if (!rec_pid_of(r, p->parent_text, *node, &p->parent))
			return "bad parent";
		p->has_parent = true;
	}
	if (!p->exited)
		p->reason = NULL;
	return NULL;
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
	if (!rec_get_str(o, "type", &type) || !type)
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
	if (!strcmp(type, "node_stats") || !strcmp(type, "profile_stats") ||
	    !strcmp(type, "profile_calls"))
		return NULL;
	if (!strcmp(type, "profile_sample"))
		return take_profile(r, o, s, arg);
	if (!strcmp(type, "export")) {
		const char *why = rec_take_export(r, o, s, arg);
		*kept = !why;
		return why;
	}
	if ((t = rec_event_type_of(type)) < 0)
		return "unknown type";

	struct event ev;
	int node;
	const char *why = rec_parse_event(r, o, t, &ev, &node);
	if (!why)
		rec_deliver_event(r, node, &ev, s, arg);
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
			rec_malformed(r, line, "not a JSON object");
		return;
	}
	bool kept;
	int mark = r->nnodes;
	const char *why = dispatch(r, o, s, arg, &kept);
	if (why) {
		rec_malformed(r, line, why);
		rec_forget_nodes(r, mark);
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
void rec_line_reset(struct recording *r)
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
	rec_malformed(r, r->stats.lines + 1, "line too long");
	r->skipping = true;
	rec_line_reset(r);
}

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
				r->rpos += rec_scan_stream(r, start, avail, &what);
				if (what == STREAM_ENTRY) {
					*p = r->line.buf ? r->line.buf : start;
					*n = r->line.len;
					return NEXT_ENTRY;
				}
				if (what == STREAM_EOL)
					rec_stream_end(r, false);
				continue;
			}
			char *nl = memchr(start, '\n', avail);
			size_t take = nl ? (size_t)(nl - start) : avail;

			if (r->skipping) {
				r->rpos += take + (nl ? 1 : 0);
				if (nl) {
					r->skipping = false;
					r->stats.lines++;
					rec_scan_reset(sc);
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
				rec_scan_detect(sc, start, take, r->line.len, &opens) :
				take;
			if (r->line.len + use > r->line_max) {
				too_long(r);
				continue;
			}
			sbuf_add(&r->line, start, use);
			r->rpos += use;
			if (opens) {
				if (rec_stream_begin(r)) {
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
				rec_stream_end(r, true);
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
	rec_line_reset(r);
	rec_scan_reset(&r->scan);
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
			steps += rec_export_step(r, budget - steps, s, arg);
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
			rec_stream_header(r, s, arg);
			continue;
		}
		if (k == NEXT_ENTRY) {
			rec_take_entry(r, p, n, s, arg);
			rec_line_reset(r);
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
	else if (!rec_get_str(o, "type", &type) || !type)
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
		rec_export_done(r);
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
