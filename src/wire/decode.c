/*
 * decode: message shapes and event batches.  One pass over each batch; the
 * strings of an event live in d->scratch until the next event.
 *
 * Sends and receives between local pids, nearly every event, take
 * decode_fast(), which reads the buffer in place; it leaves anything else,
 * unread, to decode_one(), which goes through ei's decoders.  Both give the
 * same event: the tests run every batch both ways (d->reference).
 */
#include "decode.h"
#include "decode_priv.h"

#include <stdio.h>
#include <string.h>

#include "etf.h"
#include "term.h"
#include "wire.h"

int decode_atom(const char *buf, int *idx, char *out, int outsz)
{
	return ei_decode_atom_as(buf, idx, out, outsz, ERLANG_UTF8, NULL, NULL);
}

const struct wire_message wire_messages[WIRE__COUNT] = {
#define X(id, tag, amin, amax, from, fields) \
	[WIRE_##id] = { tag, amin, amax, from, fields },
	WIRE_MESSAGES(X)
#undef X
};

/* One field of a message (a letter of its row's fields) into m. */
static int decode_field(const char *buf, int *idx, char f, struct msg *m)
{
	switch (f) {
	case 'r': return ei_decode_ref(buf, idx, &m->ref);
	case 'w': return ei_decode_long(buf, idx, &m->worker);
	case 's': return ei_decode_long(buf, idx, &m->seq);
	case 'd': return ei_decode_long(buf, idx, &m->dropped);
	case 't': return ei_decode_long(buf, idx, &m->taken);
	case 'L': return ei_decode_atom_as(buf, idx, m->limit, sizeof(m->limit),
					   ERLANG_UTF8, NULL, NULL);
	case 'b': m->body = *idx; return 0;   /* the handler reads it */
	default: return -1;
	}
}

enum wire_kind decode_msg(const char *buf, struct msg *m)
{
	int idx = 0, version, arity;
	char tag[MAXATOMLEN_UTF8];

	memset(m, 0, sizeof(*m));
	m->kind = WIRE_UNKNOWN;
	if (ei_decode_version(buf, &idx, &version) < 0 ||
	    ei_decode_tuple_header(buf, &idx, &arity) < 0 ||
	    arity < 2 || decode_atom(buf, &idx, tag, sizeof(tag)) < 0)
		return m->kind;
	for (int k = WIRE_UNKNOWN + 1; k < WIRE__COUNT; k++) {
		const struct wire_message *w = &wire_messages[k];
		if (arity < w->arity_min || arity > w->arity_max ||
		    strcmp(tag, w->tag))
			continue;
		if (strchr(w->fields, 't'))
			m->taken = -1;   /* unless the message says */
		/* the fields the arity has: the first arity - 1 letters */
		for (int f = 0; f < arity - 1 && w->fields[f]; f++)
			if (decode_field(buf, &idx, w->fields[f], m) < 0)
				return m->kind;
		m->kind = (enum wire_kind)k;
		break;
	}
	return m->kind;
}

void decoder_init(struct decoder *d, const char *node, size_t payload_max,
		  struct names *names)
{
	d->node = node;
	d->payload_max = payload_max;
	d->node_len = node ? strlen(node) : 0;
	d->names = names;
	sbuf_init(&d->scratch);
	sbuf_init(&d->names_text);
	d->malformed = 0;
	d->reference = false;
	d->syn = TERM_ERLANG;
	d->dia = (struct term_dialect){ 0, NULL };
}

void decoder_release(struct decoder *d)
{
	sbuf_release(&d->scratch);
	sbuf_release(&d->names_text);
}

/* An entry that does not decode: count it, step over it whole. */
static int skip_bad(struct decoder *d, const char *buf, int *idx, int start)
{
	d->malformed++;
	*idx = start;
	return ei_skip_term(buf, idx);
}

static int type_of(const char *tag)
{
	/* the two that matter: they are nearly every event */
	if (tag[0] == 's' && !strcmp(tag, "send"))
		return EV_SEND;
	if (tag[0] == 'r' && !strcmp(tag, "receive"))
		return EV_RECEIVE;
	for (int t = 0; t < EV__COUNT; t++)
		if (!strcmp(event_types[t].tag, tag))
			return t;
	return -1;
}

/* Render the term at *idx into scratch; returns its offset. */
static long put_term(struct decoder *d, const char *buf, int *idx, size_t max,
		     bool *cut)
{
	long off = (long)d->scratch.len;
	if (term_render_dia(d->syn, &d->dia, buf, idx, d->node, &d->scratch,
			    max, cut, d->reference) < 0)
		return -1;
	sbuf_addch(&d->scratch, '\0');
	return off;
}

/* A pid term: decode it too, so it can key the name table. */
static long put_peer(struct decoder *d, const char *buf, int *idx,
		     struct bs_pid *pid, bool *is_local)
{
	int type, size;
	*is_local = false;
	if (ei_get_type(buf, idx, &type, &size) < 0)
		return -1;
	if (type == ERL_PID_EXT || type == ERL_NEW_PID_EXT) {
		erlang_pid p;
		int save = *idx;
		if (ei_decode_pid(buf, idx, &p) < 0)
			return -1;
		*idx = save;
		pid->num = p.num;
		pid->serial = p.serial;
		*is_local = d->node && !strcmp(p.node, d->node);
		/* a pid names a process: <0.N.S> in either syntax */
		long off = (long)d->scratch.len;
		if (ei_skip_term(buf, idx) < 0)
			return -1;
		term_pid_text(&d->scratch, d->node, p.node, p.num, p.serial);
		sbuf_addch(&d->scratch, '\0');
		return off;
	}
	return put_term(d, buf, idx, 0, NULL);
}

/* {M, F, Arity} as "m:f/N" into scratch; its offset. */
static long put_mfa(struct decoder *d, const char *buf, int *idx)
{
	char mod[MAXATOMLEN_UTF8], fun[MAXATOMLEN_UTF8];
	int arity;
	long n;
	if (ei_decode_tuple_header(buf, idx, &arity) < 0 || arity != 3 ||
	    decode_atom(buf, idx, mod, sizeof(mod)) < 0 ||
	    decode_atom(buf, idx, fun, sizeof(fun)) < 0 ||
	    ei_decode_long(buf, idx, &n) < 0)
		return -1;
	long off = (long)d->scratch.len;
	term_mfa_text(&d->scratch, d->syn, mod, fun, n);
	sbuf_addch(&d->scratch, '\0');
	return off;
}

/*
 * A gen call's reference as a number that is the same on every node: its
 * node's name and its words, hashed (FNV-1a, 64 bits).  Its creation is
 * left out: the node sees its own references with the creation it has.
 */
static int get_gen_tag(const char *buf, int *idx, uint64_t *tag)
{
	erlang_ref r;
	uint64_t h = 0xcbf29ce484222325ULL;
	if (ei_decode_ref(buf, idx, &r) < 0)
		return -1;
	for (const char *p = r.node; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ULL;
	for (int i = 0; i < r.len && i < 5; i++)
		for (int b = 0; b < 4; b++)
			h = (h ^ ((r.n[i] >> (8 * b)) & 0xff)) * 0x100000001b3ULL;
	*tag = h;
	return 0;
}

static __attribute__((noinline)) void show_names(struct decoder *d,
						  struct event *ev);

/* The most text a message (the event's one term) of type t renders to. */
static size_t payload_cap(const struct decoder *d, enum event_type t)
{
	switch (t) {
	case EV_GEN_CALL:
	case EV_GEN_REPLY:
		return EVENT_GEN_TEXT_MAX;
	case EV_EXIT:
		/* an exit reason is shown even with payloads off, kept short */
		return d->payload_max ? d->payload_max : 64;
	default:
		return d->payload_max;
	}
}

/* Events whose only term is their message: it is all they keep to be
 * rendered again (decode_again). */
static bool payload_alone(enum event_type t)
{
	return t == EV_SEND || t == EV_SEND_DEAD || t == EV_RECEIVE ||
		t == EV_EXIT || t == EV_RETURN || t == EV_GEN_CALL ||
		t == EV_GEN_REPLY;
}

/* Where the texts of an event are in the scratch buffer (-1: none),
 * and what decode_one learns on the way to the end of the entry. */
struct slots {
	long pid, peer, mfa, payload, name, extra;
	long gc_heap, gc_old;
	struct bs_pid peer_pid;
	bool peer_local, cut;
};

/* An entry's third element (A): the peer, a name, a function, a heap. */
static int decode_a(struct decoder *d, const char *buf, int *idx,
		    struct event *ev, struct slots *sl)
{
	switch (ev->type) {
	case EV_RECEIVE:
	case EV_TIMEOUT:
	case EV_EXIT:
		if (ei_skip_term(buf, idx) < 0)
			return -1;
		break;
	case EV_REGISTER:
	case EV_UNREGISTER: {
		char name[MAXATOMLEN_UTF8];
		if (decode_atom(buf, idx, name, sizeof(name)) < 0)
			return -1;
		sl->name = (long)d->scratch.len;
		sbuf_addstr(&d->scratch, name);
		sbuf_addch(&d->scratch, '\0');
		if (ev->type == EV_REGISTER)
			names_set(d->names, ev->pid, name);
		else
			names_unset(d->names, ev->pid);
		break;
	}
	case EV_CALL: {
		/* the caller, with the stack action; else [] */
		int type, size;
		if (ei_get_type(buf, idx, &type, &size) < 0)
			return -1;
		if (type == ERL_NIL_EXT) {
			(*idx)++;
		} else if ((sl->extra = put_term(d, buf, idx, 200, NULL)) < 0) {
			return -1;
		}
		break;
	}
	case EV_RETURN:
	case EV_EXCEPTION:
		if ((sl->mfa = put_mfa(d, buf, idx)) < 0)
			return -1;
		break;
	case EV_GC_MINOR_START:
	case EV_GC_MINOR_END:
	case EV_GC_MAJOR_START:
	case EV_GC_MAJOR_END: {
		long heap, old;
		int t2;
		if (ei_decode_tuple_header(buf, idx, &t2) < 0 || t2 != 2 ||
		    ei_decode_long(buf, idx, &heap) < 0 ||
		    ei_decode_long(buf, idx, &old) < 0)
			return -1;
		sl->gc_heap = heap;
		sl->gc_old = old;
		break;
	}
	case EV_IN:
	case EV_OUT:
	case EV_IN_EXITING:
	case EV_OUT_EXITING:
	case EV_OUT_EXITED: {
		/* the current function, or 0 */
		int type, size;
		if (ei_get_type(buf, idx, &type, &size) < 0)
			return -1;
		if (type == ERL_SMALL_TUPLE_EXT) {
			if ((sl->mfa = put_mfa(d, buf, idx)) < 0)
				return -1;
		} else if (ei_skip_term(buf, idx) < 0) {
			return -1;
		}
		break;
	}
	case EV_GEN_CALL:
	case EV_GEN_REPLY: {
		/* gen_call: {To, Ref, Kind | []}; gen_reply: Ref */
		int t3, type, size;
		if (ev->type == EV_GEN_CALL &&
		    (ei_decode_tuple_header(buf, idx, &t3) < 0 || t3 != 3 ||
		     (sl->peer = put_peer(d, buf, idx, &sl->peer_pid, &sl->peer_local)) < 0))
			return -1;
		if (get_gen_tag(buf, idx, &ev->gen_tag) < 0)
			return -1;
		if (ev->type == EV_GEN_CALL) {
			if (ei_get_type(buf, idx, &type, &size) < 0)
				return -1;
			if (type == ERL_NIL_EXT) {
				(*idx)++;
			} else {
				char kind[MAXATOMLEN_UTF8];
				if (decode_atom(buf, idx, kind, sizeof(kind)) < 0)
					return -1;
				sl->extra = (long)d->scratch.len;
				sbuf_addstr(&d->scratch, kind);
				sbuf_addch(&d->scratch, '\0');
			}
		}
		break;
	}
	default:
		if ((sl->peer = put_peer(d, buf, idx, &sl->peer_pid, &sl->peer_local)) < 0)
			return -1;
		break;
	}

	return 0;
}

/* An entry's fourth element (B): the message, arguments, a result. */
static int decode_b(struct decoder *d, const char *buf, int *idx,
		    struct event *ev, struct slots *sl)
{
	int arity;
	if (ev->type == EV_EXCEPTION) {
		/* {Class, Reason} */
		char cls[MAXATOMLEN_UTF8];
		int type, size;
		if (ei_get_type(buf, idx, &type, &size) < 0)
			return -1;
		if (type == ERL_NIL_EXT) {
			(*idx)++;
		} else {
			if (ei_decode_tuple_header(buf, idx, &arity) < 0 || arity != 2 ||
			    decode_atom(buf, idx, cls, sizeof(cls)) < 0)
				return -1;
			sl->extra = (long)d->scratch.len;
			sbuf_addstr(&d->scratch, cls);
			sbuf_addch(&d->scratch, '\0');
			if ((sl->payload = put_term(d, buf, idx, d->payload_max ?
						  d->payload_max : 64, &sl->cut)) < 0)
				return -1;
		}
	} else if (ev->type == EV_RETURN) {
		if (d->payload_max) {
			if ((sl->payload = put_term(d, buf, idx, payload_cap(d, ev->type),
						  &sl->cut)) < 0)
				return -1;
		} else if (ei_skip_term(buf, idx) < 0) {
			return -1;
		}
	} else if (ev->type == EV_SPAWN || ev->type == EV_SPAWNED || ev->type == EV_CALL) {
		/* {M, F, Arity, Args}: Args may be cut, Arity is exact; a
		 * spawn by proc_lib has a fifth, {M, F, Arity}: what the
		 * process really runs (its initial call, in extra) */
		char mod[MAXATOMLEN_UTF8], fun[MAXATOMLEN_UTF8];
		long nargs;
		if (ei_decode_tuple_header(buf, idx, &arity) < 0 ||
		    (arity != 4 && (arity != 5 || ev->type == EV_CALL)) ||
		    decode_atom(buf, idx, mod, sizeof(mod)) < 0 ||
		    decode_atom(buf, idx, fun, sizeof(fun)) < 0 ||
		    ei_decode_long(buf, idx, &nargs) < 0)
			return -1;
		sl->mfa = (long)d->scratch.len;
		term_mfa_text(&d->scratch, d->syn, mod, fun, nargs);
		sbuf_addch(&d->scratch, '\0');
		if (d->payload_max) {
			sl->payload = (long)d->scratch.len;
			if (term_render_args_dia(d->syn, &d->dia, buf, idx, d->node,
						 &d->scratch, d->payload_max, &sl->cut,
						 d->reference) < 0)
				return -1;
			sbuf_addch(&d->scratch, '\0');
		} else if (ei_skip_term(buf, idx) < 0) {
			return -1;
		}
		if (arity == 5 && (sl->extra = put_mfa(d, buf, idx)) < 0)
			return -1;
	} else if (d->payload_max && (ev->type == EV_SEND ||
				      ev->type == EV_SEND_DEAD ||
				      ev->type == EV_RECEIVE ||
				      ev->type == EV_EXIT)) {
		if ((sl->payload = put_term(d, buf, idx, payload_cap(d, ev->type),
					  &sl->cut)) < 0)
			return -1;
	} else if (d->payload_max && (ev->type == EV_GEN_CALL ||
				      ev->type == EV_GEN_REPLY)) {
		if ((sl->payload = put_term(d, buf, idx, payload_cap(d, ev->type),
					  &sl->cut)) < 0)
			return -1;
	} else if (ev->type == EV_EXIT) {
		if ((sl->payload = put_term(d, buf, idx, payload_cap(d, ev->type),
					  &sl->cut)) < 0)
			return -1;
	} else if (ei_skip_term(buf, idx) < 0) {
		return -1;
	}

	return 0;
}

static int decode_one(struct decoder *d, const char *buf, int *idx,
		      struct event *ev)
{
	int arity;
	char tag[MAXATOMLEN_UTF8];
	erlang_pid tracee;
	long long ts;
	struct slots sl = { .pid = -1, .peer = -1, .mfa = -1, .payload = -1,
			    .name = -1, .extra = -1, .gc_heap = -1, .gc_old = -1 };

	if (ei_decode_tuple_header(buf, idx, &arity) < 0 || arity != 6 ||
	    decode_atom(buf, idx, tag, sizeof(tag)) < 0)
		return -1;
	int t = type_of(tag);
	if (t < 0 || ei_decode_pid(buf, idx, &tracee) < 0 ||
	    ei_decode_longlong(buf, idx, &ts) < 0)
		return -1;

	memset(ev, 0, sizeof(*ev));
	ev->type = (enum event_type)t;
	ev->ts = ts;
	ev->pid.num = tracee.num;
	ev->pid.serial = tracee.serial;
	sbuf_reset(&d->scratch);
	sl.pid = (long)d->scratch.len;
	term_pid_text(&d->scratch, d->node, tracee.node, tracee.num,
		      tracee.serial);
	sbuf_addch(&d->scratch, '\0');
	if (decode_a(d, buf, idx, ev, &sl) < 0)
		return -1;
	int b_start = *idx;
	if (decode_b(d, buf, idx, ev, &sl) < 0)
		return -1;
	int b_end = *idx;

	/* Cut */
	char flag[MAXATOMLEN_UTF8];
	if (decode_atom(buf, idx, flag, sizeof(flag)) < 0)
		return -1;
	ev->truncated = sl.cut || !strcmp(flag, "true");
	/* what to render again: the message alone when the rest reads the
	 * same in any syntax (a pid, a time) or is read back from its text
	 * (names, functions); else the whole entry (one_event) */
	ev->raw = NULL;
	if (payload_alone(ev->type) &&
	    (sl.peer < 0 || d->scratch.buf[sl.peer] == '<')) {
		/* with no message shown, nothing to keep */
		ev->raw = sl.payload >= 0 ? buf + b_start : NULL;
		ev->raw_len = sl.payload >= 0 ? (uint32_t)(b_end - b_start) : 0;
		ev->raw_part = sl.payload < 0 ? RAW_NOTHING : RAW_PAYLOAD |
			(strcmp(flag, "true") ? 0 : RAW_CUT_THERE);
	}

	/* all appends are done: the scratch buffer no longer moves */
	const char *base = d->scratch.buf;
	ev->pid_text = base + sl.pid;
	ev->peer = sl.peer >= 0 ? base + sl.peer : NULL;
	ev->mfa = sl.mfa >= 0 ? base + sl.mfa : NULL;
	ev->payload = sl.payload >= 0 ? base + sl.payload : NULL;
	ev->extra = sl.extra >= 0 ? base + sl.extra : NULL;
	ev->elapsed_us = -1;
	ev->heap[0] = ev->heap[1] = ev->heap[2] = ev->heap[3] = -1;
	if (EVENT_IS_GC_START(ev->type)) {
		ev->heap[0] = sl.gc_heap;
		ev->heap[2] = sl.gc_old;
	} else if (EVENT_IS_GC(ev->type)) {
		ev->heap[1] = sl.gc_heap;
		ev->heap[3] = sl.gc_old;
	}
	ev->name = sl.name >= 0 ? base + sl.name : names_get(d->names, ev->pid);
	if (ev->peer && sl.peer_local)
		ev->peer_name = names_get(d->names, sl.peer_pid);
	show_names(d, ev);
	return 0;
}

/* In Elixir syntax, the names of an event as Elixir writes atoms. */
static __attribute__((noinline)) void show_names(struct decoder *d, struct event *ev)
{
	long on = -1, op = -1;
	if (d->syn != TERM_ELIXIR || (!ev->name && !ev->peer_name))
		return;
	sbuf_reset(&d->names_text);
	if (ev->name && *ev->name) {
		on = (long)d->names_text.len;
		term_atom_text(&d->names_text, TERM_ELIXIR, ev->name);
		sbuf_addch(&d->names_text, '\0');
	}
	if (ev->peer_name && *ev->peer_name) {
		op = (long)d->names_text.len;
		term_atom_text(&d->names_text, TERM_ELIXIR, ev->peer_name);
		sbuf_addch(&d->names_text, '\0');
	}
	if (on >= 0)
		ev->name = d->names_text.buf + on;
	if (op >= 0)
		ev->peer_name = d->names_text.buf + op;
}

/* A pid of the target node, read in place. */
static int local_pid(const struct decoder *d, const char *buf, int *idx,
		     struct bs_pid *pid)
{
	uint32_t num, serial;
	if (!d->node ||
	    !etf_pid_local(buf, idx, d->node, d->node_len, &num, &serial))
		return 0;
	pid->num = num;
	pid->serial = serial;
	return 1;
}

/*
 * A send or a receive between pids of the target, with the usual encoding:
 * 1 if decoded, 0 to leave the entry to decode_one() (which then also
 * decides whether it is malformed).  Its result equals decode_one()'s.
 */
static int decode_fast(struct decoder *d, const char *buf, int *idx,
		       struct event *ev)
{
	const unsigned char *p = (const unsigned char *)buf + *idx;
	struct bs_pid tracee = { 0, 0, 0 }, peer = { 0, 0, 0 };
	int64_t ts;
	int i = *idx + 2;
	long o_peer = -1, o_payload = -1;
	enum event_type t;
	bool cut = false;

	if (p[0] != 'h' || p[1] != 6)
		return 0;
	if (etf_atom_is(buf, &i, "send", 4))
		t = EV_SEND;
	else if (etf_atom_is(buf, &i, "receive", 7))
		t = EV_RECEIVE;
	else
		return 0;
	if (!local_pid(d, buf, &i, &tracee) || !etf_int64(buf, &i, &ts))
		return 0;

	sbuf_reset(&d->scratch);
	term_pid_text_local(&d->scratch, tracee.num, tracee.serial);
	sbuf_addch(&d->scratch, '\0');
	if (t == EV_SEND) {
		o_peer = (long)d->scratch.len;
		if (!local_pid(d, buf, &i, &peer))
			return 0;
		term_pid_text_local(&d->scratch, peer.num, peer.serial);
		sbuf_addch(&d->scratch, '\0');
	} else if (buf[i] == 'j') {
		i++;
	} else {
		return 0;
	}
	int p_start = i;
	if (d->payload_max) {
		o_payload = (long)d->scratch.len;
		if (term_render_dia(d->syn, &d->dia, buf, &i, d->node,
				    &d->scratch, d->payload_max, &cut,
				    d->reference) < 0)
			return 0;
		sbuf_addch(&d->scratch, '\0');
	} else if (ei_skip_term(buf, &i) < 0) {
		return 0;
	}
	int p_end = i;
	bool cut_there = false;
	if (etf_atom_is(buf, &i, "true", 4))
		cut = cut_there = true;
	else if (!etf_atom_is(buf, &i, "false", 5))
		return 0;

	const char *base = d->scratch.buf;
	*ev = (struct event){
		.type = t,
		.ts = ts,
		.pid = tracee,
		.pid_text = base,
		.name = names_get(d->names, tracee),
		.payload = o_payload >= 0 ? base + o_payload : NULL,
		.elapsed_us = -1,
		.heap = { -1, -1, -1, -1 },
		.truncated = cut,
		.raw = o_payload >= 0 ? buf + p_start : NULL,
		.raw_len = o_payload >= 0 ? (uint32_t)(p_end - p_start) : 0,
		.raw_part = o_payload < 0 ? RAW_NOTHING : RAW_PAYLOAD |
			(cut_there ? RAW_CUT_THERE : 0),
	};
	if (o_peer >= 0) {
		ev->peer = base + o_peer;
		ev->peer_name = names_get(d->names, peer);
	}
	if (__builtin_expect(d->syn == TERM_ELIXIR, 0))
		show_names(d, ev);
	*idx = i;
	return 1;
}

long each_entry(struct decoder *d, const char *buf, int *idx,
		       entry_fn one, void *ctx)
{
	int n, type, size;
	long good = 0;

	if (ei_decode_list_header(buf, idx, &n) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		int start = *idx;
		if (one(d, buf, idx, ctx) == 0) {
			good++;
			continue;
		}
		if (skip_bad(d, buf, idx, start) < 0)
			return -1;
	}
	if (n > 0) {
		if (ei_get_type(buf, idx, &type, &size) < 0 || type != ERL_NIL_EXT)
			return -1;
		(*idx)++;
	}
	return good;
}

struct events_ctx {
	int worker;
	event_fn fn;
	void *arg;
};

static int one_event(struct decoder *d, const char *buf, int *idx, void *ctx)
{
	struct events_ctx *c = ctx;
	struct event ev;
	int start = *idx;
	if ((d->reference || !decode_fast(d, buf, idx, &ev)) &&
	    decode_one(d, buf, idx, &ev) < 0)
		return -1;
	ev.worker = c->worker;
	if (!ev.raw && ev.raw_part != RAW_NOTHING) {
		ev.raw = buf + start;
		ev.raw_len = (uint32_t)(*idx - start);
		ev.raw_part = RAW_ENTRY;
	}
	ev.syn = (uint8_t)d->syn;
	c->fn(c->arg, &ev);
	return 0;
}

/*
 * A binary of whole external terms back to back, as the workers pack
 * events: checked as a whole (it is opaque to the check of the message),
 * then walked like a list.
 */
static long each_record(struct decoder *d, const char *buf, int *idx,
			entry_fn one, void *ctx)
{
	size_t len = etf_u32((const unsigned char *)buf + *idx + 1);
	int i = *idx + 5, end = i + (int)len;
	long good = 0;

	*idx = end;
	if (wire_check_seq(buf + i, len) < 0)
		return -1;
	while (i < end) {
		int start = ++i;   /* past the version byte */
		if (one(d, buf, &i, ctx) == 0) {
			good++;
			continue;
		}
		if (skip_bad(d, buf, &i, start) < 0)
			return -1;
	}
	return good;
}

int decode_again(struct decoder *d, enum event_type type, const char *raw,
		 uint32_t len, uint8_t part, struct event *ev)
{
	int idx = 0;
	if ((part & RAW_PAYLOAD) && type < EV__COUNT) {
		bool cut = false;
		memset(ev, 0, sizeof(*ev));
		ev->type = type;
		sbuf_reset(&d->scratch);
		long off = put_term(d, raw, &idx, payload_cap(d, type), &cut);
		if (off < 0)
			return -1;
		ev->payload = d->scratch.buf + off;
		ev->truncated = cut || (part & RAW_CUT_THERE);
	} else if (!decode_fast(d, raw, &idx, ev) &&
		   (idx = 0, decode_one(d, raw, &idx, ev) < 0)) {
		return -1;
	}
	ev->raw = raw;
	ev->raw_len = len;
	ev->raw_part = part;
	ev->syn = (uint8_t)d->syn;
	return idx == (int)len ? 0 : -1;
}

long decode_events(struct decoder *d, const char *buf, int *idx, int worker,
		   event_fn fn, void *arg)
{
	struct events_ctx c = { worker, fn, arg };
	if (buf[*idx] == ERL_BINARY_EXT)
		return each_record(d, buf, idx, one_event, &c);
	return each_entry(d, buf, idx, one_event, &c);
}
