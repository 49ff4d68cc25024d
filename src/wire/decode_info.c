/*
 * decode_info: what the agent says of processes besides their events:
 * count-tier deltas, samples (names, current functions, queues, sizes),
 * labels, links and monitors; each a list of records read as a batch's
 * events are (decode.c).
 */
#include "decode.h"
#include "decode_priv.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "alarm.h"
#include "etf.h"
#include "retext.h"
#include "term.h"
#include "wire.h"

/* A local pid and its text, in scratch. */
static int get_pid(struct decoder *d, const char *buf, int *idx,
		   struct bs_pid *pid, const char **text)
{
	erlang_pid p;
	if (ei_decode_pid(buf, idx, &p) < 0)
		return -1;
	pid->num = p.num;
	pid->serial = p.serial;
	pid->node = 0;
	sbuf_reset(&d->scratch);
	term_pid_text(&d->scratch, d->node, p.node, p.num, p.serial);
	*text = d->scratch.buf;
	return 0;
}

struct counts_ctx {
	count_fn fn;
	void *arg;
};

static int one_count(struct decoder *d, const char *buf, int *idx, void *ctx)
{
	struct counts_ctx *c = ctx;
	struct bs_pid pid;
	const char *text;
	unsigned long s, r;
	int arity;
	if (ei_decode_tuple_header(buf, idx, &arity) < 0 || arity != 3 ||
	    get_pid(d, buf, idx, &pid, &text) < 0 ||
	    ei_decode_ulong(buf, idx, &s) < 0 ||
	    ei_decode_ulong(buf, idx, &r) < 0)
		return -1;
	c->fn(c->arg, pid, text, s, r);
	return 0;
}

long decode_counts(struct decoder *d, const char *buf, int *idx,
		   count_fn fn, void *arg)
{
	struct counts_ctx c = { fn, arg };
	return each_entry(d, buf, idx, one_count, &c);
}

struct info_ctx {
	info_fn fn;
	pinfo_fn pfn;   /* or NULL */
	void *arg;
};

/* Bytes, or {at_least, Bytes} where the agent did not measure them */
static int get_psize(const char *buf, int *idx, struct psize *out)
{
	char tag[MAXATOMLEN_UTF8];
	int arity, save = *idx;
	out->at_least = false;
	if (ei_decode_long(buf, idx, &out->bytes) == 0)
		return 0;
	*idx = save;
	if (ei_decode_tuple_header(buf, idx, &arity) < 0 || arity != 2 ||
	    decode_atom(buf, idx, tag, sizeof(tag)) < 0 ||
	    strcmp(tag, "at_least") || ei_decode_long(buf, idx, &out->bytes) < 0)
		return -1;
	out->at_least = true;
	return 0;
}

/* {Pid, Name | [], {M, F, A} | [], MessageQueueLen}, and from agents that
 * sample sizes Memory, Reductions, HeapBytes after it */
static int one_info(struct decoder *d, const char *buf, int *idx, void *ctx)
{
	struct info_ctx *c = ctx;
	struct bs_pid pid;
	const char *text;
	char name[MAXATOMLEN_UTF8], mod[MAXATOMLEN_UTF8], fun[MAXATOMLEN_UTF8];
	char current[2 * MAXATOMLEN_UTF8 + 32], ptext[64];
	bool has_name = false, has_current = false;
	long mq = -1, ar;
	int arity, type, size, t;

	if (ei_decode_tuple_header(buf, idx, &arity) < 0 ||
	    (arity != 4 && arity != 7) ||
	    get_pid(d, buf, idx, &pid, &text) < 0)
		return -1;
	snprintf(ptext, sizeof(ptext), "%s", text);
	if (ei_get_type(buf, idx, &type, &size) < 0)
		return -1;
	if (type == ERL_NIL_EXT) {
		(*idx)++;
	} else {
		if (decode_atom(buf, idx, name, sizeof(name)) < 0)
			return -1;
		has_name = true;
	}
	if (ei_get_type(buf, idx, &type, &size) < 0)
		return -1;
	if (type == ERL_NIL_EXT) {
		(*idx)++;
	} else {
		if (ei_decode_tuple_header(buf, idx, &t) < 0 || t != 3 ||
		    decode_atom(buf, idx, mod, sizeof(mod)) < 0 ||
		    decode_atom(buf, idx, fun, sizeof(fun)) < 0 ||
		    ei_decode_long(buf, idx, &ar) < 0)
			return -1;
		struct sbuf mfa = SBUF_INIT;
		term_mfa_text(&mfa, d->syn, mod, fun, ar);
		snprintf(current, sizeof(current), "%s", sbuf_str(&mfa));
		sbuf_release(&mfa);
		has_current = true;
	}
	if (ei_decode_long(buf, idx, &mq) < 0)
		return -1;
	struct psize mem = { -1, false }, heap = { -1, false };
	long reds = -1;
	if (arity == 7 &&
	    (get_psize(buf, idx, &mem) < 0 ||
	     ei_decode_long(buf, idx, &reds) < 0 ||
	     get_psize(buf, idx, &heap) < 0 ||
	     mem.bytes < 0 || heap.bytes < 0))
		return -1;
	if (has_name && d->syn == TERM_ELIXIR) {
		struct sbuf n = SBUF_INIT;
		term_atom_text(&n, TERM_ELIXIR, name);
		snprintf(name, sizeof(name), "%s", sbuf_str(&n));
		sbuf_release(&n);
	}
	c->fn(c->arg, pid, ptext, has_name ? name : NULL,
	      has_current ? current : NULL, mq);
	if (arity == 7 && c->pfn)
		c->pfn(c->arg, pid, mem, reds, heap);
	return 0;
}

long decode_info(struct decoder *d, const char *buf, int *idx,
		 info_fn fn, void *arg)
{
	struct info_ctx c = { fn, NULL, arg };
	return each_entry(d, buf, idx, one_info, &c);
}

long decode_info_sizes(struct decoder *d, const char *buf, int *idx,
		       info_fn fn, pinfo_fn pfn, void *arg)
{
	struct info_ctx c = { fn, pfn, arg };
	return each_entry(d, buf, idx, one_info, &c);
}

struct labels_ctx {
	label_fn fn;
	void *arg;
};

/* {Pid, Text | []} or {Pid, Text | [], again}: Text a UTF-8 binary, cut
 * to LABEL_MAX bytes here too */
static int one_label(struct decoder *d, const char *buf, int *idx, void *ctx)
{
	struct labels_ctx *c = ctx;
	struct bs_pid pid;
	const char *text;
	char ptext[64], label[LABEL_MAX + 1];
	int arity, type, size;
	long len;

	if (ei_decode_tuple_header(buf, idx, &arity) < 0 ||
	    (arity != 2 && arity != 3) ||
	    get_pid(d, buf, idx, &pid, &text) < 0 ||
	    ei_get_type(buf, idx, &type, &size) < 0)
		return -1;
	snprintf(ptext, sizeof(ptext), "%s", text);
	if (type == ERL_NIL_EXT) {
		(*idx)++;
		len = 0;
	} else if (type != ERL_BINARY_EXT || size > LABEL_MAX ||
		   ei_decode_binary(buf, idx, label, &len) < 0) {
		return -1;
	}
	label[len] = '\0';
	bool again = false;
	if (arity == 3) {
		char mark[MAXATOMLEN_UTF8];
		if (decode_atom(buf, idx, mark, sizeof(mark)) < 0 ||
		    strcmp(mark, "again"))
			return -1;
		again = true;
	}
	c->fn(c->arg, pid, ptext, len && !memchr(label, '\0', (size_t)len) ?
	      label : NULL, again);
	return 0;
}

long decode_labels(struct decoder *d, const char *buf, int *idx,
		   label_fn fn, void *arg)
{
	struct labels_ctx c = { fn, arg };
	return each_entry(d, buf, idx, one_label, &c);
}

/* ---- relations ---- */

/* One entry of a list of relations, into out: a pid as the node writes
 * it, a name as an atom, {process | port, X} as X, anything else as a
 * term, cut short. */
static int relation_text(struct decoder *d, const char *buf, int *idx,
			 struct sbuf *out, int depth)
{
	int type, size;
	if (ei_get_type(buf, idx, &type, &size) < 0)
		return -1;
	if (type == ERL_PID_EXT || type == ERL_NEW_PID_EXT) {
		erlang_pid p;
		if (ei_decode_pid(buf, idx, &p) < 0)
			return -1;
		term_pid_text(out, d->node, p.node, p.num, p.serial);
		return 0;
	}
	if (type == ERL_ATOM_EXT || type == ERL_SMALL_ATOM_EXT ||
	    type == ERL_ATOM_UTF8_EXT || type == ERL_SMALL_ATOM_UTF8_EXT) {
		char name[MAXATOMLEN_UTF8];
		if (decode_atom(buf, idx, name, sizeof(name)) < 0)
			return -1;
		if (!strcmp(name, "..."))   /* what the agent left out */
			sbuf_addstr(out, "...");
		else
			term_atom_text(out, d->syn, name);
		return 0;
	}
	if (type == ERL_SMALL_TUPLE_EXT && size == 2 && depth == 0) {
		/* {process, Pid}, {process, {Name, Node}}, {port, Port} */
		char kind[MAXATOMLEN_UTF8];
		int save = *idx, arity;
		if (ei_decode_tuple_header(buf, idx, &arity) == 0 &&
		    decode_atom(buf, idx, kind, sizeof(kind)) == 0 &&
		    (!strcmp(kind, "process") || !strcmp(kind, "port")))
			return relation_text(d, buf, idx, out, depth + 1);
		*idx = save;
	}
	if (type == ERL_SMALL_TUPLE_EXT && size == 2) {
		/* {Name, Node}: the name alone on the node traced */
		char name[MAXATOMLEN_UTF8], node[MAXATOMLEN_UTF8];
		int save = *idx, arity;
		if (ei_decode_tuple_header(buf, idx, &arity) == 0 &&
		    decode_atom(buf, idx, name, sizeof(name)) == 0 &&
		    decode_atom(buf, idx, node, sizeof(node)) == 0 &&
		    d->node && !strcmp(node, d->node)) {
			term_atom_text(out, d->syn, name);
			return 0;
		}
		*idx = save;
	}
	return term_render_dia(d->syn, &d->dia, buf, idx, d->node, out, 60,
			       NULL, false);
}

/* The entries of a list, separated by a space, into out (n bytes): as
 * many as fit whole, and " ..." when there are more than that or than
 * the list has (count). */
static int relation_list(struct decoder *d, const char *buf, int *idx,
			 long count, char *out, size_t n)
{
	int len, type, size;
	size_t used = 0;
	bool more = false;
	*out = '\0';
	if (ei_get_type(buf, idx, &type, &size) < 0)
		return -1;
	if (type == ERL_STRING_EXT) {
		/* small integers: a list, but of nothing a relation is */
		if (ei_skip_term(buf, idx) < 0)
			return -1;
		snprintf(out, n, "%s", size > 0 ? "..." : "");
		return 0;
	}
	if (ei_decode_list_header(buf, idx, &len) < 0)
		return -1;
	for (int i = 0; i < len; i++) {
		sbuf_reset(&d->scratch);
		if (relation_text(d, buf, idx, &d->scratch, 0) < 0)
			return -1;
		size_t k = d->scratch.len;
		if (more || used + (used ? 1 : 0) + k + 4 >= n) {
			more = true;
			continue;
		}
		if (used)
			out[used++] = ' ';
		memcpy(out + used, d->scratch.buf, k);
		used += k;
		out[used] = '\0';
	}
	if (len > 0) {
		if (ei_get_type(buf, idx, &type, &size) < 0 || type != ERL_NIL_EXT)
			return -1;
		(*idx)++;
	}
	if (more || count > len)
		snprintf(out + used, n - used, "%s...", used ? " " : "");
	return 0;
}

struct relations_ctx {
	relations_fn fn;
	void *arg;
};

/* {Pid, NLinks, Links, NMonitors, Monitors, NMonitoredBy, Ancestors},
 * Ancestors a list or unknown */
static int one_relations(struct decoder *d, const char *buf, int *idx,
			 void *ctx)
{
	struct relations_ctx *c = ctx;
	struct relations r;
	const char *text;
	int arity, type, size;

	memset(&r, 0, sizeof(r));
	if (ei_decode_tuple_header(buf, idx, &arity) < 0 || arity != 7 ||
	    get_pid(d, buf, idx, &r.pid, &text) < 0 ||
	    ei_decode_long(buf, idx, &r.links) < 0 || r.links < 0 ||
	    relation_list(d, buf, idx, r.links, r.link_list,
			  sizeof(r.link_list)) < 0 ||
	    ei_decode_long(buf, idx, &r.monitors) < 0 || r.monitors < 0 ||
	    relation_list(d, buf, idx, r.monitors, r.monitor_list,
			  sizeof(r.monitor_list)) < 0 ||
	    ei_decode_long(buf, idx, &r.monitored_by) < 0 ||
	    r.monitored_by < 0 || ei_get_type(buf, idx, &type, &size) < 0)
		return -1;
	if (type == ERL_LIST_EXT || type == ERL_NIL_EXT ||
	    type == ERL_STRING_EXT) {
		if (relation_list(d, buf, idx, 0, r.ancestors,
				  sizeof(r.ancestors)) < 0)
			return -1;
		r.ancestors_known = true;
	} else if (ei_skip_term(buf, idx) < 0) {
		return -1;
	}
	c->fn(c->arg, &r);
	return 0;
}

long decode_relations(struct decoder *d, const char *buf, int *idx,
		      relations_fn fn, void *arg)
{
	struct relations_ctx c = { fn, arg };
	return each_entry(d, buf, idx, one_relations, &c);
}

/* ---- the sampling profiler's second ---- */

int long_map_read(const char *buf, int *idx, const struct long_key *keys,
		  size_t nkeys, void *into)
{
	int n;
	if (ei_decode_map_header(buf, idx, &n) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		char key[MAXATOMLEN];
		long v;
		if (ei_decode_atom(buf, idx, key) < 0)
			return -1;
		if (ei_decode_long(buf, idx, &v) < 0) {
			if (ei_skip_term(buf, idx) < 0)
				return -1;
			continue;
		}
		for (size_t k = 0; k < nkeys; k++)
			if (!strcmp(key, keys[k].key))
				*(long *)((char *)into + keys[k].off) = v;
	}
	return 0;
}

static int prof_stats_read(const char *buf, int *idx, struct prof_stats *st)
{
	static const struct long_key keys[] = {
		{ "samples", offsetof(struct prof_stats, samples) },
		{ "used_us", offsetof(struct prof_stats, used_us) },
		{ "waited_us", offsetof(struct prof_stats, waited_us) },
		{ "skipped", offsetof(struct prof_stats, skipped) },
		{ "gone", offsetof(struct prof_stats, gone) },
		{ "procs", offsetof(struct prof_stats, procs) },
		{ "cut", offsetof(struct prof_stats, cut) },
		{ "ms", offsetof(struct prof_stats, ms) },
	};
	memset(st, 0, sizeof(*st));
	return long_map_read(buf, idx, keys, sizeof(keys) / sizeof(keys[0]), st);
}

/* one frame's text, as the decoder's syntax writes it, into scratch */
int prof_frame(struct decoder *d, const char *buf, int *idx)
{
	int type, size;
	char text[1100];
	if (ei_get_type(buf, idx, &type, &size) < 0 ||
	    type != ERL_BINARY_EXT || size <= 0 || size >= (int)sizeof(text))
		return -1;
	long len;
	if (ei_decode_binary(buf, idx, text, &len) < 0)
		return -1;
	text[len] = '\0';
	for (long i = 0; i < len; i++)
		if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
			text[i] = '?';
	if (d->syn != TERM_ERLANG &&
	    retext_mfa(&d->scratch, TERM_ERLANG, d->syn, text))
		return 0;
	sbuf_add(&d->scratch, text, (size_t)len);
	return 0;
}

struct prof_ctx {
	prof_fn fn;
	void *arg;
};

static int one_sample(struct decoder *d, const char *buf, int *idx, void *ctx)
{
	struct prof_ctx *c = ctx;
	struct prof_sample s;
	size_t at[PROF_FRAMES_MAX];
	int arity, n, whole;
	long long ts;
	memset(&s, 0, sizeof(s));
	if (ei_decode_tuple_header(buf, idx, &arity) < 0 || arity != 5 ||
	    ei_decode_longlong(buf, idx, &ts) < 0 ||
	    get_pid(d, buf, idx, &s.pid, &s.pid_text) < 0 ||
	    decode_atom(buf, idx, s.status, sizeof(s.status)) < 0 ||
	    ei_decode_list_header(buf, idx, &n) < 0)
		return -1;
	sbuf_addch(&d->scratch, '\0');
	/* leaf first on the wire; past the limit (the agent keeps fewer),
	 * the frames nearest the leaf go */
	int keep = n < PROF_FRAMES_MAX ? n : PROF_FRAMES_MAX;
	for (int i = 0; i < n; i++) {
		if (i < n - keep) {
			if (ei_skip_term(buf, idx) < 0)
				return -1;
			continue;
		}
		at[n - 1 - i] = d->scratch.len;
		if (prof_frame(d, buf, idx) < 0)
			return -1;
		sbuf_addch(&d->scratch, '\0');
	}
	if (n > 0 && ei_skip_term(buf, idx) < 0)   /* the list's tail */
		return -1;
	if (ei_decode_boolean(buf, idx, &whole) < 0)
		return -1;
	s.ts_us = ts;
	s.whole = whole;
	s.nframes = keep;
	s.pid_text = d->scratch.buf;
	for (int i = 0; i < keep; i++)
		s.frames[i] = d->scratch.buf + at[i];
	c->fn(c->arg, &s);
	return 0;
}

long decode_profile(struct decoder *d, const char *buf, int *idx,
		    struct prof_stats *st, prof_fn fn, void *arg)
{
	struct prof_ctx c = { fn, arg };
	int arity;
	if (ei_decode_tuple_header(buf, idx, &arity) < 0 || arity != 2 ||
	    prof_stats_read(buf, idx, st) < 0)
		return -1;
	return each_entry(d, buf, idx, one_sample, &c);
}

/* ---- the VM's alarms ---- */

/* a binary of at most max bytes into scratch, control bytes as '?' */
static int alarm_bin(struct decoder *d, const char *buf, int *idx, int max)
{
	int type, size;
	char text[600];
	if (ei_get_type(buf, idx, &type, &size) < 0 || type != ERL_BINARY_EXT ||
	    size < 0 || size > max || size >= (int)sizeof(text))
		return -1;
	long len;
	if (ei_decode_binary(buf, idx, text, &len) < 0)
		return -1;
	for (long i = 0; i < len; i++)
		if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
			text[i] = '?';
	sbuf_add(&d->scratch, text, (size_t)len);
	return 0;
}

/* a function "m:f/N" as the decoder's syntax writes it, into scratch */
static int alarm_mfa(struct decoder *d, const char *buf, int *idx)
{
	size_t at = d->scratch.len;
	if (alarm_bin(d, buf, idx, 512) < 0)
		return -1;
	if (d->syn == TERM_ERLANG || d->scratch.len == at)
		return 0;
	char mfa[600];
	size_t n = d->scratch.len - at;
	memcpy(mfa, d->scratch.buf + at, n);
	mfa[n] = '\0';
	d->scratch.len = at;
	if (!retext_mfa(&d->scratch, TERM_ERLANG, d->syn, mfa)) {
		d->scratch.len = at;
		sbuf_add(&d->scratch, mfa, n);
	}
	return 0;
}

/* long_schedule's where: {In, Out}, "in m:f/N, out m:f/N" */
static int alarm_where(struct decoder *d, const char *buf, int *idx)
{
	int arity;
	if (ei_decode_tuple_header(buf, idx, &arity) < 0 || arity != 2)
		return -1;
	for (int i = 0; i < 2; i++) {
		sbuf_addstr(&d->scratch, i ? ", out " : "in ");
		size_t at = d->scratch.len;
		if (alarm_mfa(d, buf, idx) < 0)
			return -1;
		if (d->scratch.len == at)
			sbuf_addstr(&d->scratch, "?");
	}
	return 0;
}

struct alarm_ctx {
	event_fn fn;
	void *arg;
};

static int one_alarm(struct decoder *d, const char *buf, int *idx, void *ctx)
{
	struct alarm_ctx *c = ctx;
	struct event ev;
	int arity, type, size;
	long long ts, ms, bytes, qlen;
	char kind[32];
	size_t at_pid, at_kind, at_port = 0, at_node = 0, at_info;
	bool port = false, node = false;
	memset(&ev, 0, sizeof(ev));
	sbuf_reset(&d->scratch);
	if (ei_decode_tuple_header(buf, idx, &arity) < 0 || arity != 8 ||
	    ei_decode_longlong(buf, idx, &ts) < 0 ||
	    decode_atom(buf, idx, kind, sizeof(kind)) < 0 ||
	    alarm_kind_of(kind) < 0)
		return -1;
	erlang_pid p;
	if (ei_decode_pid(buf, idx, &p) < 0)
		return -1;
	ev.pid = (struct bs_pid){ p.num, p.serial, 0 };
	at_pid = d->scratch.len;
	term_pid_text(&d->scratch, d->node, p.node, p.num, p.serial);
	sbuf_addch(&d->scratch, '\0');
	at_kind = d->scratch.len;
	sbuf_addstr(&d->scratch, kind);
	sbuf_addch(&d->scratch, '\0');
	if (ei_get_type(buf, idx, &type, &size) < 0)
		return -1;
	if (type == ERL_ATOM_EXT || type == ERL_SMALL_ATOM_EXT ||
	    type == ERL_ATOM_UTF8_EXT || type == ERL_SMALL_ATOM_UTF8_EXT) {
		if (ei_skip_term(buf, idx) < 0)   /* undefined */
			return -1;
	} else {
		erlang_port pt;
		if (ei_decode_port(buf, idx, &pt) < 0)
			return -1;
		at_port = d->scratch.len;
		sbuf_addf(&d->scratch, "#Port<0.%llu>", (unsigned long long)pt.id);
		sbuf_addch(&d->scratch, '\0');
		port = true;
	}
	if (ei_decode_longlong(buf, idx, &ms) < 0 ||
	    ei_decode_longlong(buf, idx, &bytes) < 0 ||
	    ei_decode_longlong(buf, idx, &qlen) < 0)
		return -1;
	at_info = d->scratch.len;
	if (!strcmp(kind, "long_schedule")) {
		if (alarm_where(d, buf, idx) < 0)
			return -1;
	} else if (alarm_bin(d, buf, idx, 512) < 0) {
		return -1;
	}
	sbuf_addch(&d->scratch, '\0');
	if (!strcmp(kind, "busy_dist_port") && d->scratch.buf[at_info]) {
		/* the detail is the node the port goes to */
		at_node = at_info;
		node = true;
	}
	ev.type = EV_ALARM;
	ev.ts = ts;
	ev.worker = -1;
	ev.elapsed_us = ms >= 0 && ms < (1LL << 40) ? ms * 1000 : -1;
	ev.heap[0] = bytes >= 0 ? (long)bytes : -1;
	ev.heap[1] = qlen >= 0 ? (long)qlen : -1;
	ev.heap[2] = ev.heap[3] = -1;
	ev.pid_text = d->scratch.buf + at_pid;
	ev.extra = d->scratch.buf + at_kind;
	ev.peer = port ? d->scratch.buf + at_port : NULL;
	ev.peer_name = node ? d->scratch.buf + at_node : NULL;
	ev.payload = node || !d->scratch.buf[at_info] ? NULL :
		d->scratch.buf + at_info;
	ev.raw_part = RAW_NOTHING;
	ev.syn = (uint8_t)d->syn;
	c->fn(c->arg, &ev);
	return 0;
}

long decode_alarms(struct decoder *d, const char *buf, int *idx, event_fn fn,
		   void *arg)
{
	struct alarm_ctx c = { fn, arg };
	return each_entry(d, buf, idx, one_alarm, &c);
}

int decode_alarm_state(struct decoder *d, const char *buf, int *idx,
		       struct alarm_state *st)
{
	int arity, type, size, n;
	char tag[16];
	memset(st, 0, sizeof(*st));
	if (ei_get_type(buf, idx, &type, &size) < 0)
		return -1;
	if (type != ERL_SMALL_TUPLE_EXT) {
		if (decode_atom(buf, idx, tag, sizeof(tag)) < 0 || strcmp(tag, "off"))
			return -1;
		st->kind = ALARM_STATE_OFF;
		return 0;
	}
	if (ei_decode_tuple_header(buf, idx, &arity) < 0 || arity < 2 ||
	    decode_atom(buf, idx, tag, sizeof(tag)) < 0)
		return -1;
	if (!strcmp(tag, "on") && arity == 3) {
		st->kind = ALARM_STATE_ON;
		if (decode_atom(buf, idx, st->how, sizeof(st->how)) < 0 ||
		    ei_decode_list_header(buf, idx, &n) < 0 || n > 8)
			return -1;
		for (int i = 0; i < n; i++) {
			char a[32];
			size_t l = strlen(st->unsupported);
			if (decode_atom(buf, idx, a, sizeof(a)) < 0)
				return -1;
			snprintf(st->unsupported + l, sizeof(st->unsupported) - l,
				 "%s%s", l ? "," : "", a);
		}
		return 0;
	}
	if (!strcmp(tag, "held") && arity == 3) {
		struct bs_pid p;
		const char *text;
		st->kind = ALARM_STATE_HELD;
		if (get_pid(d, buf, idx, &p, &text) < 0)
			return -1;
		snprintf(st->holder, sizeof(st->holder), "%s", text);
		if (decode_atom(buf, idx, st->holder_name, sizeof(st->holder_name)) < 0)
			return -1;
		if (!strcmp(st->holder_name, "undefined"))
			st->holder_name[0] = '\0';
		return 0;
	}
	st->kind = ALARM_STATE_FAILED;
	return ei_skip_term(buf, idx);
}
