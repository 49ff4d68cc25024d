/*
 * agent: bootstrap over rex, then requests to the agent process, all on the
 * one pump.  At most one rpc and one request are outstanding at a time: rex
 * replies carry no reference, and a request's reply is matched by req_ref.
 *
 * Every exchange that takes more than one message is an operation (a->op),
 * a walk through the step table below: a step sends one message and names
 * what it waits for; its handler reads the answer and names the next step.
 * Replies move an operation on as agent_read() dispatches them, deadlines
 * as agent_op_step() is called.  The blocking calls begin an operation and
 * pump until it is done, so each protocol sequence is written once.
 */
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "clock.h"
#include "esc.h"
#include "embed.h"
#include "exitcode.h"
#include "pidsel.h"
#include "sig.h"
#include "term.h"
#include "wire.h"
#include "xalloc.h"

#define READ_BUDGET 256          /* messages per pump, so keys stay live */
#define MSG_TMO_MS 5000          /* the rest of a message that has begun */
#define SEND_TMO_MS 5000
#define RPC_TMO_MS 15000
/* how long an attach waits for the session of a beamscope that died */
#define GONE_WAIT_MS 4000
/* ... and for our code to go when no agent has the name: the workers of
 * an agent that was killed may be cleaning up */
#define ORPHAN_WAIT_MS 8000
#define GONE_PAUSE_MS 20         /* between two looks at the old code */
/* the bootstrap lock: a process of the target registered under this name
 * while one beamscope checks for other sessions, loads and starts its
 * agent; it ends when released, or by itself after LOCK_MS */
#define LOCK_NAME "beamscope_bootstrap"
#define LOCK_MS 30000
#define LOCK_WAIT_MS 6000        /* another bootstrap holds it: wait so long */
#define WAIT_SLICE_MS 50         /* longest pump of a blocking call */

#ifndef BS_OTP_ARCH
#define BS_OTP_ARCH "unknown"
#endif

void agent_init(struct agent *a, struct conn *c, const struct agent_stream *s)
{
	memset(a, 0, sizeof(*a));
	a->conn = c;
	a->stream = *s;
	names_init(&a->names);
	structs_init(&a->structs);
	ei_x_new(&a->rpc_reply);
	ei_x_new(&a->req_reply);
	sbuf_init(&a->op.err);
}

void agent_release(struct agent *a)
{
	agent_op_end(a);  /* leaves op.err empty, nothing to free */
	free(a->worker_pids);
	a->worker_pids = NULL;
	names_release(&a->names);
	structs_release(&a->structs);
	ei_x_free(&a->rpc_reply);
	ei_x_free(&a->req_reply);
}

static bool same_ref(const erlang_ref *x, const erlang_ref *y)
{
	if (x->len != y->len || x->creation != y->creation ||
	    strcmp(x->node, y->node))
		return false;
	for (int i = 0; i < x->len && i < 5; i++)
		if (x->n[i] != y->n[i])
			return false;
	return true;
}

/* Copy the term at buf[idx] into dst as a standalone encoded term. */
static void copy_term(ei_x_buff *dst, const char *buf, int idx)
{
	int end = idx;
	dst->index = 0;
	ei_x_encode_version(dst);
	if (ei_skip_term(buf, &end) == 0)
		ei_x_append_buf(dst, buf + idx, end - idx);
	else
		ei_x_encode_atom(dst, "malformed");
}

static bool same_pid(const erlang_pid *x, const erlang_pid *y)
{
	return x->num == y->num && x->serial == y->serial &&
		x->creation == y->creation && !strcmp(x->node, y->node);
}

/* The distribution says who sent the message (a send to our name does; a
 * send to our pid does not), and it is the agent. */
static bool from_agent(const struct agent *a)
{
	const erlang_msg *msg = &a->conn->msg;
	return a->started && msg->msgtype == ERL_REG_SEND &&
		same_pid(&msg->from, &a->pid);
}

/* ... and it is worker w (any worker, w < 0). */
static bool from_worker(const struct agent *a, long w)
{
	const erlang_msg *msg = &a->conn->msg;
	if (!a->started || !a->worker_pids || msg->msgtype != ERL_REG_SEND)
		return false;
	if (w >= 0)
		return w < a->workers && same_pid(&msg->from, &a->worker_pids[w]);
	for (int i = 0; i < a->workers; i++)
		if (same_pid(&msg->from, &a->worker_pids[i]))
			return true;
	return false;
}

/* The agent's reason for leaving, if it gave one: printable text only. */
static void exit_reason(struct agent *a, const char *buf, const struct msg *m)
{
	char text[sizeof(a->gone_reason)];
	int idx = m->body, type, size;
	long len;
	a->gone_reason[0] = '\0';
	if (!m->body || ei_get_type(buf, &idx, &type, &size) < 0 ||
	    type != ERL_BINARY_EXT || size < 0 || (size_t)size >= sizeof(text) ||
	    ei_decode_binary(buf, &idx, text, &len) < 0)
		return;
	for (long i = 0; i < len; i++)
		if ((unsigned char)text[i] < 0x20 || text[i] == 0x7f)
			text[i] = '?';
	text[len] = '\0';
	snprintf(a->gone_reason, sizeof(a->gone_reason), "%s", text);
}

static bool read_structs(struct agent *a, const char *buf, int *idx);

/* ---- the messages, one handler each (WIRE_MESSAGES) ---- */

typedef void (*wire_handler)(struct agent *a, const char *buf,
			     const struct msg *m);

/* only the answer awaited is taken, and the start's must carry our
 * secret (got_start) */
static void on_RPC_REPLY(struct agent *a, const char *buf, const struct msg *m)
{
	if (a->rpc_want && !a->rpc_got) {
		copy_term(&a->rpc_reply, buf, m->body);
		a->rpc_got = true;
	}
}

/* other replies answer pings: nothing to do */
static void on_REPLY(struct agent *a, const char *buf, const struct msg *m)
{
	a->heard_ms = clock_mono_ms();
	if (a->req_want && !a->req_got && same_ref(&m->ref, &a->req_ref)) {
		copy_term(&a->req_reply, buf, m->body);
		a->req_got = true;
	}
}

static void on_BATCH(struct agent *a, const char *buf, const struct msg *m)
{
	if (a->stream.batch)
		a->stream.batch(a->stream.arg, buf, m);
}

static void on_EOS(struct agent *a, const char *buf, const struct msg *m)
{
	(void)buf;
	if (a->stream.eos)
		a->stream.eos(a->stream.arg, m);
}

static void on_COUNTS(struct agent *a, const char *buf, const struct msg *m)
{
	if (a->stream.counts)
		a->stream.counts(a->stream.arg, buf, m);
}

static void on_INFO(struct agent *a, const char *buf, const struct msg *m)
{
	if (a->stream.info)
		a->stream.info(a->stream.arg, buf, m);
}

static void on_LABELS(struct agent *a, const char *buf, const struct msg *m)
{
	if (a->stream.labels)
		a->stream.labels(a->stream.arg, buf, m);
}

static void on_STRUCTS(struct agent *a, const char *buf, const struct msg *m)
{
	int idx = m->body;
	if (!read_structs(a, buf, &idx))
		a->unknown++;
}

static void on_RELATIONS(struct agent *a, const char *buf, const struct msg *m)
{
	if (a->stream.relations)
		a->stream.relations(a->stream.arg, buf, m);
}

static void on_NODE(struct agent *a, const char *buf, const struct msg *m)
{
	if (a->stream.node)
		a->stream.node(a->stream.arg, buf, m);
}

static void on_TOP(struct agent *a, const char *buf, const struct msg *m)
{
	(void)buf;
	if (a->stream.top)
		a->stream.top(a->stream.arg, m);
}

static void on_LIMIT(struct agent *a, const char *buf, const struct msg *m)
{
	(void)buf;
	if (a->stream.limit)
		a->stream.limit(a->stream.arg, m);
}

static void on_CLEARED(struct agent *a, const char *buf, const struct msg *m)
{
	if (a->stream.cleared)
		a->stream.cleared(a->stream.arg, buf, m);
}

static void on_EXIT(struct agent *a, const char *buf, const struct msg *m)
{
	a->gone = true;
	snprintf(a->gone_why, sizeof(a->gone_why), "%s", m->limit);
	exit_reason(a, buf, m);
	a->gone_dep_ms = m->seq;
}

static const wire_handler handlers[WIRE__COUNT] = {
#define X(id, tag, amin, amax, from, fields) [WIRE_##id] = on_##id,
	WIRE_MESSAGES(X)
#undef X
};

/* May this process say this message? */
static bool sender_ok(struct agent *a, const struct msg *m)
{
	switch (wire_messages[m->kind].from) {
	case WIRE_FROM_ANY:
		return true;
	case WIRE_FROM_AGENT:
		return from_agent(a);
	case WIRE_FROM_WORKER:
		return from_worker(a, m->worker);
	case WIRE_FROM_WORKER_OR_AGENT:
		return from_worker(a, m->worker) || from_agent(a);
	case WIRE_FROM_AGENT_OR_LOST:
		/* a worker tells when the agent was killed */
		return from_agent(a) ||
			(from_worker(a, -1) && !strcmp(m->limit, "agent_lost"));
	}
	return false;
}

static void dispatch(struct agent *a)
{
	const char *buf = a->conn->rx.buff;
	struct msg m;

	/* nothing reaches ei's decoders unchecked; the shape first, then
	 * whether its sender may say it */
	if (wire_check(buf, (size_t)a->conn->rx.index) < 0 ||
	    decode_msg(buf, &m) == WIRE_UNKNOWN || !sender_ok(a, &m)) {
		a->unknown++;
		return;
	}
	handlers[m.kind](a, buf, &m);
}

enum pump_result agent_pump(struct agent *a, int ms)
{
	struct pollfd pfd[2] = {
		{ .fd = a->conn->fd, .events = POLLIN },
		{ .fd = sig_fd(), .events = POLLIN },
	};
	if (a->conn->fd < 0)
		return PUMP_LOST;
	int r = poll(pfd, 2, ms);
	if (r < 0)
		return errno == EINTR ? PUMP_SIGNAL : PUMP_OK;
	if (pfd[1].revents & POLLIN)
		return PUMP_SIGNAL;
	if (!(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
		return PUMP_OK;
	return agent_read(a, READ_BUDGET);
}

enum pump_result agent_read(struct agent *a, int budget)
{
	enum pump_result r = PUMP_OK;
	long long until = clock_mono_ms() + AGENT_READ_SLICE_MS;
	for (int n = 0; n < budget; n++) {
		if (n && clock_mono_ms() >= until)
			break;
		int got = conn_read(a->conn, MSG_TMO_MS);
		if (got < 0) {
			r = PUMP_LOST;
			break;
		}
		if (got > 0) {
			dispatch(a);
			/* at once, not after the rest of the budget: a clock
			 * sample's round trip ends when its reply is read */
			agent_op_step(a);
		}
		struct pollfd more = { .fd = a->conn->fd, .events = POLLIN };
		if (poll(&more, 1, 0) <= 0)
			break;
	}
	agent_op_step(a);  /* a lost connection ends the operation too */
	return r;
}

/* how long a step waits for its answer */
static int answer_ms(const struct agent *a)
{
	return a->rpc_tmo_ms ? a->rpc_tmo_ms : RPC_TMO_MS;
}

enum { RPC_TIMEOUT = -1, RPC_LOST = -2 };

static int rpc_fail(struct agent *a, int r, const char *what, struct sbuf *err)
{
	if (r == RPC_LOST) {
		sbuf_addf(err, "lost the connection to \"%s\" while %s",
			  a->conn->target, what);
		return EXIT_LOST;
	}
	sbuf_addf(err, "node \"%s\" did not answer while %s; is it overloaded?",
		  a->conn->target, what);
	return EXIT_CONNECT;
}

static void reply_text(const ei_x_buff *x, int idx, const char *node,
		       struct sbuf *out)
{
	if (term_render(x->buff, &idx, node, out, 300, NULL) < 0)
		sbuf_addstr(out, "(malformed)");
}

/* Send rpc Mod:Fun(Args) and free args; false when it could not be sent.
 * The reply arrives in a->rpc_reply. */
static bool rpc_send(struct agent *a, const char *mod, const char *fun,
		     ei_x_buff *args)
{
	a->rpc_got = false;
	a->rpc_want = ei_rpc_to(&a->conn->ec, a->conn->fd, (char *)mod,
				(char *)fun, args->buff, args->index) >= 0;
	ei_x_free(args);
	return a->rpc_want;
}

/* rpc erlang:Fun(Atom) */
static bool rpc_atom(struct agent *a, const char *fun, const char *atom)
{
	ei_x_buff args;
	ei_x_new(&args);  /* ei_rpc_to wants no version byte */
	ei_x_encode_list_header(&args, 1);
	ei_x_encode_atom(&args, atom);
	ei_x_encode_empty_list(&args);
	return rpc_send(a, "erlang", fun, &args);
}

/* Did the rpc answer the atom true? */
static bool rpc_true(const struct agent *a)
{
	int idx = 1;
	char atom[MAXATOMLEN];
	return ei_decode_atom(a->rpc_reply.buff, &idx, atom) == 0 &&
		!strcmp(atom, "true");
}

/* The worker pids of the start/4 reply, in index order. */
static int read_worker_pids(struct agent *a, const char *buf, int *idx)
{
	int n;
	if (ei_decode_list_header(buf, idx, &n) < 0 || n < 1 || n > 4096)
		return -1;
	free(a->worker_pids);
	a->worker_pids = xcalloc((size_t)n, sizeof(erlang_pid));
	for (int k = 0; k < n; k++)
		if (ei_decode_pid(buf, idx, &a->worker_pids[k]) < 0)
			return -1;
	return ei_skip_term(buf, idx) < 0 ? -1 : n;
}

/* Decode the start/4 reply's info map; false if it lacks our secret (it
 * is not the answer of the agent we started) or its workers. */
/*
 * One {Module, Fields} of what the agent says of structs: Fields a list of
 * atoms or UTF-8 binaries (the struct's fields in order), false (no
 * struct) or unknown (it could not say).  false when it is not that shape.
 */
static bool read_struct(struct agent *a, const char *buf, int *idx)
{
	char mod[MAXATOMLEN_UTF8], what[16];
	int arity, n, type, size;
	if (ei_decode_tuple_header(buf, idx, &arity) < 0 || arity != 2 ||
	    ei_decode_atom_as(buf, idx, mod, sizeof(mod), ERLANG_UTF8, NULL,
			      NULL) < 0 ||
	    ei_get_type(buf, idx, &type, &size) < 0)
		return false;
	if (type == ERL_ATOM_EXT || type == ERL_SMALL_ATOM_EXT ||
	    type == ERL_ATOM_UTF8_EXT || type == ERL_SMALL_ATOM_UTF8_EXT) {
		if (ei_decode_atom_as(buf, idx, what, sizeof(what), ERLANG_UTF8,
				      NULL, NULL) < 0)
			return false;
		if (!strcmp(what, "false"))
			structs_set(&a->structs, mod, strlen(mod), NULL, NULL, -1);
		return true;   /* unknown: it stays so */
	}
	if (ei_decode_list_header(buf, idx, &n) < 0 || n > STRUCTS_FIELDS_MAX)
		return false;
	char **fields = calloc((size_t)n + 1, sizeof(char *));
	size_t *lens = calloc((size_t)n + 1, sizeof(size_t));
	bool ok = fields && lens;
	for (int i = 0; ok && i < n; i++) {
		/* an atom, or a binary for a module read from its object file
		 * (the agent makes no atom) */
		char f[MAXATOMLEN_UTF8];
		long blen;
		if (ei_get_type(buf, idx, &type, &size) == 0 &&
		    type == ERL_BINARY_EXT && size > 0 &&
		    (size_t)size < sizeof(f)) {
			ok = ei_decode_binary(buf, idx, f, &blen) == 0;
			f[ok ? blen : 0] = '\0';
			ok = ok && strlen(f) == (size_t)blen;
		} else {
			ok = ei_decode_atom_as(buf, idx, f, sizeof(f), ERLANG_UTF8,
					       NULL, NULL) == 0;
		}
		if (ok) {
			lens[i] = strlen(f);
			fields[i] = strdup(f);
			ok = fields[i] != NULL;
		}
	}
	if (ok && n > 0 && ei_skip_term(buf, idx) < 0)
		ok = false;
	if (ok)
		structs_set(&a->structs, mod, strlen(mod),
			    (const char *const *)fields, lens, n);
	for (int i = 0; fields && i < n; i++)
		free(fields[i]);
	free(fields);
	free(lens);
	return ok;
}

/* A list of {Module, Fields} (read_struct); false if it is no list. */
static bool read_structs(struct agent *a, const char *buf, int *idx)
{
	int n;
	if (ei_decode_list_header(buf, idx, &n) < 0)
		return false;
	for (int i = 0; i < n; i++)
		if (!read_struct(a, buf, idx))
			return false;
	return n == 0 || ei_skip_term(buf, idx) == 0;
}

static bool read_info(struct agent *a, const char *buf, int *idx)
{
	int arity, npids = -1;
	bool secret = false;
	if (ei_decode_map_header(buf, idx, &arity) < 0)
		return false;
	for (int i = 0; i < arity; i++) {
		char key[MAXATOMLEN_UTF8];
		long v;
		if (ei_decode_atom(buf, idx, key) < 0)
			return false;
		if (!strcmp(key, "workers") && ei_decode_long(buf, idx, &v) == 0) {
			a->workers = (int)v;
		} else if (!strcmp(key, "worker_pids")) {
			if ((npids = read_worker_pids(a, buf, idx)) < 0)
				return false;
		} else if (!strcmp(key, "secret")) {
			char got[AGENT_SECRET_LEN];
			long len;
			int type, size;
			if (ei_get_type(buf, idx, &type, &size) < 0 ||
			    type != ERL_BINARY_EXT || size != AGENT_SECRET_LEN ||
			    ei_decode_binary(buf, idx, got, &len) < 0)
				return false;
			secret = !memcmp(got, a->secret, sizeof(got));
		} else if (!strcmp(key, "schedulers") &&
			   ei_decode_long(buf, idx, &v) == 0) {
			a->schedulers = (int)v;
		} else if (!strcmp(key, "printer") &&
			   ei_decode_long(buf, idx, &v) == 0) {
			a->printer = (unsigned)v & (TD_BIN_UTF8_LEAD |
				TD_ERL_MAP_AS_SENT | TD_EX_MAP_BACK |
				TD_EX_SIGIL_C | TD_EX_STRUCTS |
				TD_EX_ESC_INVISIBLE);
		} else if (!strcmp(key, "structs")) {
			if (!read_structs(a, buf, idx))
				return false;
		} else if (!strcmp(key, "names")) {
			int n;
			if (ei_decode_list_header(buf, idx, &n) < 0)
				return false;
			for (int k = 0; k < n; k++) {
				int t;
				erlang_pid p;
				char name[MAXATOMLEN_UTF8];
				if (ei_decode_tuple_header(buf, idx, &t) < 0 || t != 2 ||
				    ei_decode_pid(buf, idx, &p) < 0 ||
				    ei_decode_atom_as(buf, idx, name, sizeof(name),
						      ERLANG_UTF8, NULL, NULL) < 0)
					return false;
				struct bs_pid bp = { p.num, p.serial, 0 };
				names_set(&a->names, bp, name);
			}
			if (n > 0 && ei_skip_term(buf, idx) < 0)
				return false;
		} else if (ei_skip_term(buf, idx) < 0) {
			return false;
		}
	}
	return secret && npids == a->workers;
}

static int request_send(struct agent *a, ei_x_buff *x)
{
	return conn_send(a->conn, &a->pid, x, SEND_TMO_MS);
}

/* {beamscope, Secret, Ref, ...}: the caller encodes the request after this. */
static void request_begin(struct agent *a, ei_x_buff *x, erlang_ref *ref)
{
	ei_x_new_with_version(x);
	ei_x_encode_tuple_header(x, 4);
	ei_x_encode_atom(x, "beamscope");
	ei_x_encode_binary(x, a->secret, sizeof(a->secret));
	ei_make_ref(&a->conn->ec, ref);
	ei_x_encode_ref(x, ref);
}

/* Send a request made by request_begin with a->req_ref, and free x; false
 * when it could not be sent.  The reply arrives in a->req_reply. */
static bool req_send(struct agent *a, ei_x_buff *x)
{
	a->req_got = false;
	a->req_want = request_send(a, x) == 0;
	ei_x_free(x);
	return a->req_want;
}

/* A request that is just an atom. */
static bool req_atom(struct agent *a, const char *what)
{
	ei_x_buff x;
	request_begin(a, &x, &a->req_ref);
	ei_x_encode_atom(&x, what);
	return req_send(a, &x);
}

static void encode_pidsel(struct agent *a, ei_x_buff *x, const struct pidsel *sel)
{
	switch (sel->mode) {
	case SEL_ALL: ei_x_encode_atom(x, "all"); return;
	case SEL_NEW: ei_x_encode_atom(x, "new"); return;
	case SEL_EXISTING: ei_x_encode_atom(x, "existing"); return;
	case SEL_LIST: break;
	}
	ei_x_encode_list_header(x, sel->n);
	for (int i = 0; i < sel->n; i++) {
		const struct pidsel_item *it = &sel->items[i];
		if (it->is_pid) {
			/* node and creation of the target */
			wire_encode_pid(x, a->pid.node, it->num, it->serial,
					a->pid.creation);
		} else {
			ei_x_encode_atom_as(x, it->name, ERLANG_UTF8, ERLANG_UTF8);
		}
	}
	ei_x_encode_empty_list(x);
}

/* A string that fits in out, or -1 (never writes past outsz). */
static int decode_str(const char *buf, int *idx, char *out, size_t outsz)
{
	int type, size;
	if (ei_get_type(buf, idx, &type, &size) < 0 || size < 0 ||
	    (size_t)size >= outsz)
		return -1;
	if (type == ERL_NIL_EXT) {
		(*idx)++;
		out[0] = '\0';
		return 0;
	}
	return type == ERL_STRING_EXT ? ei_decode_string(buf, idx, out) : -1;
}

/* n bytes for people: "512 MiB", "2.0 GiB". */
static void size_text(unsigned long long n, char *out, size_t outsz)
{
	if (n >= 1ULL << 30)
		snprintf(out, outsz, "%.1f GiB", (double)n / (1ULL << 30));
	else if (n >= 1ULL << 20)
		snprintf(out, outsz, "%llu MiB", (n + (1ULL << 19)) >> 20);
	else
		snprintf(out, outsz, "%llu KiB", (n + 512) >> 10);
}

/*
 * {memory_cap | no_memory, Need, Cap, Memory} at buf[idx] (after the tag):
 * what the session would take and why it may not; false if it is not that.
 */
static bool memory_refusal(struct agent *a, const char *tag, const char *buf,
			   int idx, const char *options, struct sbuf *err)
{
	unsigned long long need, cap, mem;
	char tn[32], tc[32], tm[32];
	const char *node = a->node[0] ? a->node : a->conn->target;
	if ((strcmp(tag, "memory_cap") && strcmp(tag, "no_memory")) ||
	    ei_decode_ulonglong(buf, &idx, &need) < 0 ||
	    ei_decode_ulonglong(buf, &idx, &cap) < 0 ||
	    ei_decode_ulonglong(buf, &idx, &mem) < 0)
		return false;
	size_text(need, tn, sizeof(tn));
	size_text(cap, tc, sizeof(tc));
	size_text(mem, tm, sizeof(tm));
	if (!strcmp(tag, "no_memory"))
		sbuf_addf(err, "node \"%s\" could not give the %s the session "
			  "needs; nothing was traced; lower %s", node, tn, options);
	else if (mem)
		sbuf_addf(err, "the session would take %s on \"%s\", more than "
			  "beamscope takes there (%s: an eighth of its %s, at "
			  "most 1 GiB); nothing was traced; lower %s", tn, node,
			  tc, tm, options);
	else
		sbuf_addf(err, "the session would take %s on \"%s\", more than "
			  "beamscope takes there (%s); nothing was traced; "
			  "lower %s", tn, node, tc, options);
	return true;
}

/* Turn an {error, Reason} from the trace request into advice; the exit code. */
static int trace_error(struct agent *a, const char *buf, int idx,
		       struct sbuf *err)
{
	int arity, save = idx, rc = EXIT_REFUSED;
	char tag[MAXATOMLEN_UTF8];
	struct sbuf what = SBUF_INIT, extra = SBUF_INIT;

	if (ei_decode_tuple_header(buf, &idx, &arity) == 0 && arity >= 2 &&
	    ei_decode_atom(buf, &idx, tag) == 0) {
		if (arity == 4 && memory_refusal(a, tag, buf, idx,
				"--workers, --high-water or --payload-bytes", err))
			goto out;
		term_render(buf, &idx, a->node, &what, 200, NULL);
		if (arity == 3)
			term_render(buf, &idx, a->node, &extra, 200, NULL);
		if (!strcmp(tag, "traced_by_other")) {
			sbuf_addf(err, "%s is already traced by another tracer "
				  "(%s) in the node's one shared trace session; "
				  "nothing was traced: stop that trace first, "
				  "leave the process out of --pids, or take it "
				  "with --take-over", sbuf_str(&what),
				  sbuf_str(&extra));
			goto out;
		} else if (!strcmp(tag, "no_such_process")) {
			sbuf_addf(err, "no process %s on node \"%s\"; list "
				  "processes with erlang:processes() there",
				  sbuf_str(&what), a->node);
			goto out;
		} else if (!strcmp(tag, "no_such_name")) {
			sbuf_addf(err, "no process is registered as %s on node "
				  "\"%s\"; list names with erlang:registered() there",
				  sbuf_str(&what), a->node);
			goto out;
		} else if ((!strcmp(tag, "bad_pattern") ||
			    !strcmp(tag, "bad_match")) && arity == 5) {
			/* {bad_pattern | bad_match, Text, Line, Col, Message} */
			char text[1024], msg[1024];
			long line, col;
			idx = save;
			ei_decode_tuple_header(buf, &idx, &arity);
			ei_skip_term(buf, &idx);
			if (decode_str(buf, &idx, text, sizeof(text)) == 0 &&
			    ei_decode_long(buf, &idx, &line) == 0 &&
			    ei_decode_long(buf, &idx, &col) == 0 &&
			    decode_str(buf, &idx, msg, sizeof(msg)) == 0) {
				sbuf_addf(err, "--%s \"%s\": line %ld, column %ld: %s",
					  strcmp(tag, "bad_match") ? "call" : "match",
					  text, line, col, msg);
				rc = EXIT_USAGE;
				goto out;
			}
		} else if (!strcmp(tag, "bad_call") && arity == 3) {
			/* {bad_call, Text, {not_loaded, M | NameBin} |
			 * {no_function, M, F | NameBin, A}} */
			char text[1024], why[MAXATOMLEN_UTF8];
			int a2;
			idx = save;
			ei_decode_tuple_header(buf, &idx, &arity);
			ei_skip_term(buf, &idx);
			if (decode_str(buf, &idx, text, sizeof(text)) == 0 &&
			    ei_decode_tuple_header(buf, &idx, &a2) == 0 &&
			    ei_decode_atom(buf, &idx, why) == 0) {
				struct sbuf t = SBUF_INIT;
				int type, size;
				char name[MAXATOMLEN_UTF8];
				long len;
				if (!strcmp(why, "not_loaded")) {
					/* the module, or the name the node has no
					 * atom for, as a binary */
					if (ei_get_type(buf, &idx, &type, &size) == 0 &&
					    type == ERL_BINARY_EXT &&
					    size < (int)sizeof(name) &&
					    ei_decode_binary(buf, &idx, name, &len) == 0) {
						name[len] = '\0';
						term_atom_text(&t, TERM_ERLANG, name);
					} else {
						term_render(buf, &idx, a->node, &t,
							    200, NULL);
					}
					sbuf_addf(err, "--call \"%s\": module %s is not "
						  "loaded on \"%s\"; beamscope never loads "
						  "code, so nothing was traced", text,
						  sbuf_str(&t), a->node);
				} else {
					sbuf_addf(err, "--call \"%s\": no function of "
						  "the module matches on \"%s\"; nothing "
						  "was traced", text, a->node);
				}
				sbuf_release(&t);
				goto out;
			}
		} else if (!strcmp(tag, "match_busy") && arity == 3) {
			/* {match_busy, send | 'receive', TheirMatchSpec} */
			sbuf_addf(err, "the %s trace pattern on \"%s\" is set by "
				  "another tool (%s); --match would replace it, so "
				  "nothing was traced: reset it with "
				  "erlang:trace_pattern(%s, true, []) once that tool "
				  "is done, trace without --match, or take it with "
				  "--take-over", sbuf_str(&what), a->node,
				  sbuf_str(&extra), sbuf_str(&what));
			goto out;
		} else if (!strcmp(tag, "new_traced_by_other")) {
			sbuf_addf(err, "new processes on \"%s\" are already traced "
				  "by another tracer (%s); nothing was traced: stop "
				  "it first, use --pids existing, or take them with "
				  "--take-over", a->node, sbuf_str(&what));
			goto out;
		}
	}
	sbuf_addf(err, "the agent on \"%s\" refused to trace: ", a->node);
	idx = save;
	term_render(buf, &idx, a->node, err, 300, NULL);
out:
	sbuf_release(&what);
	sbuf_release(&extra);
	return rc;
}

/* Key => true in a map being encoded: a flag that is on. */
static void encode_true(ei_x_buff *x, const char *key)
{
	ei_x_encode_atom(x, key);
	ei_x_encode_atom(x, "true");
}

/* The trace request, {trace, Options}, in x (new). */
static void trace_encode(struct agent *a, const struct trace_spec *spec,
			 ei_x_buff *x)
{
	int kinds = spec->kinds;
	request_begin(a, x, &a->req_ref);
	ei_x_encode_tuple_header(x, 2);
	ei_x_encode_atom(x, "trace");
	ei_x_encode_map_header(x, 7 + (spec->count_tier ? 2 : 0) +
			       (spec->ncalls ? 1 : 0) + (spec->follow ? 1 : 0) +
			       (spec->match ? 1 : 0) + (spec->legacy ? 1 : 0) +
			       (spec->take_over ? 1 : 0) +
			       (spec->elixir_calls ? 1 : 0));
	/* heads in Elixir form: the reader goes with them, and is loaded
	 * for them only */
	if (spec->elixir_calls) {
		ei_x_encode_atom(x, "elixir");
		ei_x_encode_binary(x, bs_elixir_beam,
				   EMBED_SIZE(bs_elixir_beam));
	}
	if (spec->legacy)
		encode_true(x, "legacy");
	if (spec->take_over)
		encode_true(x, "take_over");
	ei_x_encode_atom(x, "max_events");
	ei_x_encode_ulong(x, spec->max_events);
	ei_x_encode_atom(x, "duration_ms");
	ei_x_encode_ulong(x, spec->duration_ms);
	ei_x_encode_atom(x, "rate");
	ei_x_encode_ulong(x, spec->rate);
	ei_x_encode_atom(x, "on_limit");
	ei_x_encode_atom(x, spec->shed ? "shed" : "stop");
	if (spec->ncalls) {
		ei_x_encode_atom(x, "calls");
		ei_x_encode_list_header(x, spec->ncalls);
		for (int i = 0; i < spec->ncalls; i++) {
			/* {elixir, Text}: the target's Elixir reads it */
			if (i < 32 && (spec->elixir_calls >> i & 1)) {
				ei_x_encode_tuple_header(x, 2);
				ei_x_encode_atom(x, "elixir");
			}
			ei_x_encode_string(x, spec->calls[i]);
		}
		ei_x_encode_empty_list(x);
	}
	if (spec->match) {
		ei_x_encode_atom(x, "match");
		ei_x_encode_string(x, spec->match);
	}
	if (spec->follow)
		encode_true(x, "follow");
	if (spec->count_tier) {
		ei_x_encode_atom(x, "tier");
		ei_x_encode_atom(x, "count");
		ei_x_encode_atom(x, "interval_ms");
		ei_x_encode_long(x, (long)(spec->interval_ms ? spec->interval_ms : 250));
	}
	ei_x_encode_atom(x, "events");
	int nk = 0;
	for (int bit = 1; bit <= KIND_LAST; bit <<= 1)
		nk += (kinds & bit) && event_kind_name(bit);
	ei_x_encode_list_header(x, nk);
	for (int bit = 1; bit <= KIND_LAST; bit <<= 1)
		if ((kinds & bit) && event_kind_name(bit))
			ei_x_encode_atom(x, event_kind_name(bit));
	ei_x_encode_empty_list(x);
	ei_x_encode_atom(x, "pids");
	encode_pidsel(a, x, spec->sel);
	ei_x_encode_atom(x, "payload_bytes");
	ei_x_encode_long(x, (long)spec->payload_bytes);
}

/* The trace reply into res; EXIT_OK, or the exit code with err set. */
static int trace_decode(struct agent *a, struct trace_result *res,
			struct sbuf *err)
{
	const char *buf = a->req_reply.buff;
	int idx = 1, arity;
	char tag[MAXATOMLEN];
	if (ei_decode_tuple_header(buf, &idx, &arity) < 0 || arity != 2 ||
	    ei_decode_atom(buf, &idx, tag) < 0)
		return trace_error(a, buf, 1, err);
	if (strcmp(tag, "ok"))
		return trace_error(a, buf, idx, err);
	int n;
	if (ei_decode_map_header(buf, &idx, &n) < 0)
		return EXIT_OK;
	for (int i = 0; i < n; i++) {
		char key[MAXATOMLEN];
		if (ei_decode_atom(buf, &idx, key) < 0)
			break;
		if (!strcmp(key, "traced")) {
			long v;
			if (ei_decode_long(buf, &idx, &v) == 0)
				res->traced = (unsigned long)v;
		} else if (!strcmp(key, "skipped")) {
			int len;
			if (ei_decode_list_header(buf, &idx, &len) < 0)
				break;
			res->skipped = xcalloc((size_t)len + 1, sizeof(char *));
			for (int k = 0; k < len; k++) {
				struct sbuf t = SBUF_INIT;
				term_render(buf, &idx, a->node, &t, 100, NULL);
				res->skipped[res->nskipped++] = xstrdup(sbuf_str(&t));
				sbuf_release(&t);
			}
			if (len > 0)
				ei_skip_term(buf, &idx);
		} else if (!strcmp(key, "patterns")) {
			/* [{Text, FunctionsSet}] in --call order */
			int len, t;
			if (ei_decode_list_header(buf, &idx, &len) < 0)
				break;
			for (int k = 0; k < len; k++) {
				long nf = 0;
				if (ei_decode_tuple_header(buf, &idx, &t) < 0 ||
				    ei_skip_term(buf, &idx) < 0 ||
				    ei_decode_long(buf, &idx, &nf) < 0)
					break;
				if (res->npatterns < 32)
					res->pattern_functions[res->npatterns++] = nf;
			}
			if (len > 0)
				ei_skip_term(buf, &idx);
		} else if (!strcmp(key, "receive_pattern") ||
			   !strcmp(key, "send_pattern")) {
			char *out = key[0] == 'r' ? res->receive_pattern :
				res->send_pattern;
			if (ei_decode_atom(buf, &idx, key) < 0)
				break;
			snprintf(out, sizeof(res->send_pattern), "%s",
				 strcmp(key, "off") ? "other" : "off");
		} else if (!strcmp(key, "tracing")) {
			if (ei_decode_atom(buf, &idx, key) < 0)
				break;
			snprintf(res->tracing, sizeof(res->tracing), "%s",
				 strcmp(key, "session") ? "legacy" : "session");
		} else if (!strcmp(key, "new_skipped")) {
			struct sbuf t = SBUF_INIT;
			term_render(buf, &idx, a->node, &t, 100, NULL);
			free(res->new_skipped);
			res->new_skipped = xstrdup(sbuf_str(&t));
			sbuf_release(&t);
		} else if (!strcmp(key, "taken") ||
			   !strcmp(key, "gc_skipped")) {
			long v;
			bool taken = !strcmp(key, "taken");
			if (ei_decode_long(buf, &idx, &v) < 0)
				break;
			*(taken ? &res->taken : &res->gc_skipped) = v;
		} else if (!strcmp(key, "gc_new_skipped")) {
			if (ei_decode_atom(buf, &idx, key) < 0)
				break;
			res->gc_new_skipped = !strcmp(key, "true");
		} else if (!strcmp(key, "skipped_functions")) {
			int len;
			if (ei_decode_list_header(buf, &idx, &len) < 0)
				break;
			res->skipped_functions = xcalloc((size_t)len + 1, sizeof(char *));
			for (int k = 0; k < len; k++) {
				char mod[MAXATOMLEN_UTF8], fun[MAXATOMLEN_UTF8], s[2100];
				long ar;
				int t;
				if (ei_decode_tuple_header(buf, &idx, &t) < 0 ||
				    ei_decode_atom(buf, &idx, mod) < 0 ||
				    ei_decode_atom(buf, &idx, fun) < 0 ||
				    ei_decode_long(buf, &idx, &ar) < 0)
					break;
				snprintf(s, sizeof(s), "%s:%s/%ld", mod, fun, ar);
				res->skipped_functions[res->nskipped_functions++] = xstrdup(s);
			}
			if (len > 0)
				ei_skip_term(buf, &idx);
		} else {
			ei_skip_term(buf, &idx);
		}
	}
	return EXIT_OK;
}

/*
 * The steps.  A step's send puts its one message on the wire (false: the
 * connection is gone); its handler reads the answer and returns the next
 * step, or ST_END through op_done().
 */
enum op_step {
	ST_RELEASE, ST_ARCH, ST_ELIXIR,
	ST_LOCK_SPAWN, ST_LOCK_TIMER, ST_LOCK_TAKE, ST_LOCK_PAUSE,
	ST_WHEREIS,
	ST_LOADED, ST_OLD_CODE, ST_PAUSE,  /* the old session's code leaving */
	ST_LOAD, ST_START,
	ST_TRACE, ST_CLOCK, ST_NODES, ST_ALIVE, ST_MODULES,
	ST_END
};

enum op_wait { WAIT_RPC, WAIT_REQUEST, WAIT_PAUSE };

static void lock_release(struct agent *a);

static enum op_step op_done(struct agent *a, int rc)
{
	a->op.done = true;
	a->op.rc = rc;
	if (a->op.kind == AOP_ATTACH)
		lock_release(a);
	return ST_END;
}

static bool send_release(struct agent *a)
{
	return rpc_atom(a, "system_info", "otp_release");
}

/* The rpc answered a string that fits in out; if not, the reason is in
 * op.err. */
static bool got_string(struct agent *a, const char *item, char *out,
		       size_t outsz)
{
	int idx = 1, type, size;
	if (ei_get_type(a->rpc_reply.buff, &idx, &type, &size) == 0 &&
	    type == ERL_STRING_EXT && size >= 0 && (size_t)size < outsz &&
	    ei_decode_string(a->rpc_reply.buff, &idx, out) == 0)
		return true;
	sbuf_addf(&a->op.err, "node \"%s\" gave an odd answer to "
		  "erlang:system_info(%s): ", a->conn->target, item);
	reply_text(&a->rpc_reply, 1, NULL, &a->op.err);
	return false;
}

static enum op_step got_release(struct agent *a)
{
	if (!got_string(a, "otp_release", a->otp, sizeof(a->otp)))
		return op_done(a, EXIT_REFUSED);
	if (atoi(a->otp) < AGENT_MIN_OTP) {
		sbuf_addf(&a->op.err, "node \"%s\" runs OTP %s; beamscope needs "
			  "OTP %d or newer on the target", a->conn->target,
			  a->otp, AGENT_MIN_OTP);
		return op_done(a, EXIT_REFUSED);
	}
	return ST_ARCH;
}

static bool send_arch(struct agent *a)
{
	return rpc_atom(a, "system_info", "system_architecture");
}

static enum op_step got_arch(struct agent *a)
{
	char arch[256];
	if (!got_string(a, "system_architecture", arch, sizeof(arch)))
		return op_done(a, EXIT_REFUSED);
	if (strcmp(arch, BS_OTP_ARCH)) {
		sbuf_addf(&a->op.err, "node \"%s\" runs on %s, but this beamscope "
			  "carries a tracer built for %s; use a beamscope built "
			  "for %s", a->conn->target, arch, BS_OTP_ARCH, arch);
		return op_done(a, EXIT_REFUSED);
	}
	return ST_ELIXIR;
}

/* Does the target run Elixir?  application:get_key(elixir, vsn) */
static bool send_elixir(struct agent *a)
{
	ei_x_buff args;
	ei_x_new(&args);
	ei_x_encode_list_header(&args, 2);
	ei_x_encode_atom(&args, "elixir");
	ei_x_encode_atom(&args, "vsn");
	ei_x_encode_empty_list(&args);
	return rpc_send(a, "application", "get_key", &args);
}

/* {ok, "1.14.0"}: Elixir; undefined (or anything else): none */
static enum op_step got_elixir(struct agent *a)
{
	int idx = 1, arity, type, size;
	char ok[MAXATOMLEN];
	a->elixir[0] = '\0';
	if (ei_decode_tuple_header(a->rpc_reply.buff, &idx, &arity) == 0 &&
	    arity == 2 && ei_decode_atom(a->rpc_reply.buff, &idx, ok) == 0 &&
	    !strcmp(ok, "ok") &&
	    ei_get_type(a->rpc_reply.buff, &idx, &type, &size) == 0 &&
	    type == ERL_STRING_EXT && size > 0 && (size_t)size < sizeof(a->elixir) &&
	    ei_decode_string(a->rpc_reply.buff, &idx, a->elixir) < 0)
		a->elixir[0] = '\0';
	return ST_LOCK_SPAWN;
}

/*
 * The bootstrap lock.  Checking for another session, loading the agent
 * and starting it must happen for one beamscope at a time: a second load
 * would make the first session's code old under it.  The lock is a name:
 * a process of the target's own code (it sleeps until any message, and
 * one comes after LOCK_MS at the latest) is registered under it, which
 * only one can do.  It is released when the attach ends, however it ends.
 */
static bool send_lock_spawn(struct agent *a)
{
	ei_x_buff args;
	ei_x_new(&args);  /* ei_rpc_to wants no version byte */
	ei_x_encode_list_header(&args, 3);
	ei_x_encode_atom(&args, "erlang");
	ei_x_encode_atom(&args, "exit");
	ei_x_encode_list_header(&args, 1);
	ei_x_encode_atom(&args, "normal");
	ei_x_encode_empty_list(&args);
	ei_x_encode_empty_list(&args);
	ei_x_buff call;
	ei_x_new(&call);
	ei_x_encode_list_header(&call, 3);
	ei_x_encode_atom(&call, "erlang");
	ei_x_encode_atom(&call, "hibernate");
	ei_x_append_buf(&call, args.buff, args.index);
	ei_x_encode_empty_list(&call);
	ei_x_free(&args);
	return rpc_send(a, "erlang", "spawn", &call);
}

static enum op_step got_lock_spawn(struct agent *a)
{
	int idx = 1;
	if (ei_decode_pid(a->rpc_reply.buff, &idx, &a->lock) < 0) {
		sbuf_addf(&a->op.err, "node \"%s\" would not start a process: ",
			  a->conn->target);
		reply_text(&a->rpc_reply, 1, NULL, &a->op.err);
		return op_done(a, EXIT_REFUSED);
	}
	a->lock_spawned = true;
	return ST_LOCK_TIMER;
}

/* erlang:send_after(LOCK_MS, Lock, release): it ends by itself */
static bool send_lock_timer(struct agent *a)
{
	ei_x_buff args;
	ei_x_new(&args);
	ei_x_encode_list_header(&args, 3);
	ei_x_encode_long(&args, LOCK_MS);
	ei_x_encode_pid(&args, &a->lock);
	ei_x_encode_atom(&args, "release");
	ei_x_encode_empty_list(&args);
	return rpc_send(a, "erlang", "send_after", &args);
}

static enum op_step got_lock_timer(struct agent *a)
{
	a->op.until_ms = clock_mono_ms() + LOCK_WAIT_MS;
	return ST_LOCK_TAKE;
}

static bool send_lock_take(struct agent *a)
{
	ei_x_buff args;
	ei_x_new(&args);
	ei_x_encode_list_header(&args, 2);
	ei_x_encode_atom(&args, LOCK_NAME);
	ei_x_encode_pid(&args, &a->lock);
	ei_x_encode_empty_list(&args);
	return rpc_send(a, "erlang", "register", &args);
}

static enum op_step got_lock_take(struct agent *a)
{
	if (rpc_true(a))
		return ST_WHEREIS;
	if (clock_mono_ms() < a->op.until_ms)
		return ST_LOCK_PAUSE;
	sbuf_addf(&a->op.err, "another beamscope has been attaching to node "
		  "\"%s\" for a while and is not done; try again in a moment",
		  a->conn->target);
	return op_done(a, EXIT_REFUSED);
}

static enum op_step after_lock_pause(struct agent *a)
{
	(void)a;
	return ST_LOCK_TAKE;
}

/* Any message ends the lock's process (and so frees the name); sent once
 * the attach is over, and also when the lock was never had. */
static void lock_release(struct agent *a)
{
	if (!a->lock_spawned)
		return;
	a->lock_spawned = false;
	ei_x_buff x;
	ei_x_new_with_version(&x);
	ei_x_encode_atom(&x, "release");
	conn_send(a->conn, &a->lock, &x, SEND_TMO_MS);
	ei_x_free(&x);
}

/* Another session's agent is there: the words for it. */
static void other_session(struct agent *a, const erlang_pid *other)
{
	sbuf_reset(&a->op.err);
	sbuf_addf(&a->op.err, "node \"%s\" is already being traced by another "
		  "beamscope (agent <0.%u.%u>), which is still there; wait for "
		  "it to end, it cleans up by itself", a->conn->target,
		  other->num, other->serial);
}

/* someone else's session? */
static bool send_whereis(struct agent *a)
{
	return rpc_atom(a, "whereis", "beamscope_agent");
}

static enum op_step got_whereis(struct agent *a)
{
	int idx = 1, type, size;
	erlang_pid other;
	if (ei_get_type(a->rpc_reply.buff, &idx, &type, &size) < 0 ||
	    (type != ERL_PID_EXT && type != ERL_NEW_PID_EXT) ||
	    ei_decode_pid(a->rpc_reply.buff, &idx, &other) < 0) {
		/* no session; but our code may still be loaded, by the workers
		 * of an agent that was killed, cleaning up for it: our code is
		 * never loaded over code that runs */
		a->op.saw_agent = false;
		a->op.until_ms = clock_mono_ms() + ORPHAN_WAIT_MS;
		return ST_LOADED;
	}
	/* a session whose beamscope died is already cleaning up (its agent
	 * saw the connection go): let it finish.  Both outcomes are worded
	 * now, while its pid is at hand; the gone steps keep one of them. */
	snprintf(a->notice, sizeof(a->notice), "waited for the session of a "
		 "beamscope that is gone (agent <0.%u.%u>) to finish cleaning up",
		 other.num, other.serial);
	other_session(a, &other);
	a->op.saw_agent = true;
	a->op.until_ms = clock_mono_ms() + GONE_WAIT_MS;
	return ST_LOADED;
}

static bool send_loaded(struct agent *a)
{
	return rpc_atom(a, "module_loaded", "beamscope_agent");
}

/* Still loaded: no need to ask about old code this round. */
static enum op_step got_loaded(struct agent *a)
{
	return rpc_true(a) ? ST_PAUSE : ST_OLD_CODE;
}

static bool send_old_code(struct agent *a)
{
	return rpc_atom(a, "check_old_code", "beamscope_agent");
}

static enum op_step got_old_code(struct agent *a)
{
	if (rpc_true(a))
		return ST_PAUSE;
	if (a->op.kind != AOP_ATTACH)
		return op_done(a, EXIT_OK);
	sbuf_reset(&a->op.err);  /* it left: no refusal; the notice stays */
	return ST_LOAD;
}

/* The old session's code stayed for longer than the wait allows. */
static enum op_step gone_late(struct agent *a)
{
	if (a->op.kind == AOP_ATTACH && !a->op.saw_agent)
		return ST_LOAD;   /* nobody runs it: left over, replaced */
	if (a->op.kind == AOP_ATTACH) {
		a->notice[0] = '\0';  /* the refusal is in op.err already */
		return op_done(a, EXIT_REFUSED);
	}
	sbuf_addf(&a->op.err, "beamscope's agent is still loaded on \"%s\"; "
		  "a new session can start once it is gone", a->conn->target);
	return op_done(a, EXIT_CONNECT);
}

/* The pause between two rounds is over. */
static enum op_step after_pause(struct agent *a)
{
	return clock_mono_ms() < a->op.until_ms ? ST_LOADED : gone_late(a);
}

/* the agent module; it loads the tracer and the NIF itself */
static bool send_load(struct agent *a)
{
	ei_x_buff args;
	ei_x_new(&args);  /* ei_rpc_to wants no version byte */
	ei_x_encode_list_header(&args, 3);
	ei_x_encode_atom(&args, "beamscope_agent");
	ei_x_encode_string(&args, "beamscope_agent.beam");
	ei_x_encode_binary(&args, bs_agent_beam, EMBED_SIZE(bs_agent_beam));
	ei_x_encode_empty_list(&args);
	return rpc_send(a, "code", "load_binary", &args);
}

static enum op_step got_load(struct agent *a)
{
	int idx = 1, arity;
	char tag[MAXATOMLEN];
	if (ei_decode_tuple_header(a->rpc_reply.buff, &idx, &arity) < 0 ||
	    arity != 2 || ei_decode_atom(a->rpc_reply.buff, &idx, tag) < 0 ||
	    strcmp(tag, "module")) {
		sbuf_addf(&a->op.err, "node \"%s\" would not load beamscope's "
			  "agent: ", a->conn->target);
		reply_text(&a->rpc_reply, 1, NULL, &a->op.err);
		return op_done(a, EXIT_REFUSED);
	}
	return ST_START;
}

static bool send_start(struct agent *a)
{
	const struct agent_opts *o = &a->op.opts;
	ei_x_buff args;
	ei_x_new(&args);  /* ei_rpc_to wants no version byte */
	ei_x_encode_list_header(&args, 4);
	ei_x_encode_pid(&args, conn_self(a->conn));
	ei_x_encode_binary(&args, bs_tracer_beam, EMBED_SIZE(bs_tracer_beam));
	ei_x_encode_binary(&args, bs_tracer_so, EMBED_SIZE(bs_tracer_so));
	ei_x_encode_map_header(&args, 7);
	ei_x_encode_atom(&args, "secret");
	ei_x_encode_binary(&args, a->secret, sizeof(a->secret));
	ei_x_encode_atom(&args, "lock");
	ei_x_encode_pid(&args, &a->lock);
	ei_x_encode_atom(&args, "workers");
	ei_x_encode_long(&args, o->workers);
	ei_x_encode_atom(&args, "dep_timeout_ms");
	ei_x_encode_long(&args, (long)o->dep_timeout_ms);
	ei_x_encode_atom(&args, "high_water");
	ei_x_encode_long(&args, (long)o->high_water);
	ei_x_encode_atom(&args, "batch_max");
	ei_x_encode_long(&args, (long)o->batch_max);
	ei_x_encode_atom(&args, "batch_ms");
	ei_x_encode_long(&args, (long)o->batch_ms);
	ei_x_encode_empty_list(&args);
	return rpc_send(a, "beamscope_agent", "start", &args);
}

/* {error, Reason} from start/4 that has words of its own; false if not. */
static bool start_refusal(struct agent *a, const char *buf)
{
	int idx = 1, arity;
	char tag[MAXATOMLEN_UTF8];
	erlang_pid other;
	if (ei_decode_tuple_header(buf, &idx, &arity) < 0 || arity != 2 ||
	    ei_decode_atom(buf, &idx, tag) < 0 || strcmp(tag, "error") ||
	    ei_decode_tuple_header(buf, &idx, &arity) < 0 ||
	    ei_decode_atom(buf, &idx, tag) < 0)
		return false;
	if (arity == 2 && !strcmp(tag, "already_attached") &&
	    ei_decode_pid(buf, &idx, &other) == 0) {
		other_session(a, &other);
		return true;
	}
	return arity == 4 && memory_refusal(a, tag, buf, idx,
					    "--workers or --high-water",
					    &a->op.err);
}

static enum op_step got_start(struct agent *a)
{
	const char *buf = a->rpc_reply.buff;
	int idx = 1, arity;
	char tag[MAXATOMLEN];
	if (start_refusal(a, buf))
		return op_done(a, EXIT_REFUSED);
	if (ei_decode_tuple_header(buf, &idx, &arity) < 0 || arity != 3 ||
	    ei_decode_atom(buf, &idx, tag) < 0 || strcmp(tag, "ok") ||
	    ei_decode_pid(buf, &idx, &a->pid) < 0) {
		sbuf_addf(&a->op.err, "the agent did not start on \"%s\": ",
			  a->conn->target);
		reply_text(&a->rpc_reply, 1, NULL, &a->op.err);
		return op_done(a, EXIT_REFUSED);
	}
	snprintf(a->node, sizeof(a->node), "%s", a->pid.node);
	if (!read_info(a, buf, &idx) || a->workers <= 0) {
		/* someone else's answer, or not the agent we know */
		sbuf_addf(&a->op.err, "the answer to starting the agent on "
			  "\"%s\" was not from the agent beamscope started; "
			  "nothing is traced; try again", a->conn->target);
		return op_done(a, EXIT_REFUSED);
	}
	a->started = true;
	a->gone = false;
	a->heard_ms = clock_mono_ms();
	return op_done(a, EXIT_OK);
}

/* sent by agent_trace_begin, which has the spec */
static enum op_step got_trace(struct agent *a)
{
	return op_done(a, trace_decode(a, a->op.trace, &a->op.err));
}

/* A request's answer that is not what the protocol says. */
static enum op_step odd_reply(struct agent *a, const char *what)
{
	sbuf_addf(&a->op.err, "the agent on \"%s\" gave an odd answer to %s: ",
		  a->node, what);
	reply_text(&a->req_reply, 1, a->node, &a->op.err);
	return op_done(a, EXIT_REFUSED);
}

static bool send_clock(struct agent *a)
{
	a->op.t0_us = clock_wall_us();
	return req_atom(a, "clock");
}

static enum op_step got_clock(struct agent *a)
{
	struct agent_op_state *op = &a->op;
	long long t1 = clock_wall_us(), remote;
	int idx = 1, arity;
	char tag[MAXATOMLEN_UTF8];
	if (ei_decode_tuple_header(a->req_reply.buff, &idx, &arity) < 0 ||
	    arity != 2 || ei_decode_atom(a->req_reply.buff, &idx, tag) < 0 ||
	    strcmp(tag, "clock") ||
	    ei_decode_longlong(a->req_reply.buff, &idx, &remote) < 0)
		return odd_reply(a, "a clock request");
	/* the round trip with the least queueing bounds the error best */
	if (op->best_rtt_us < 0 || t1 - op->t0_us < op->best_rtt_us) {
		op->best_rtt_us = t1 - op->t0_us;
		op->offset_us = remote - (op->t0_us + t1) / 2;
		op->error_us = (op->best_rtt_us + 1) / 2;
	}
	return ++op->taken < op->samples ? ST_CLOCK : op_done(a, EXIT_OK);
}

static bool send_nodes(struct agent *a)
{
	return req_atom(a, "nodes");
}

/* a list of nodes or modules longer than this is not believed */
#define AGENT_ATOMS_MAX 100000

/* {Tag, [Atom]}: the atoms into op.nodes. */
static enum op_step got_atoms(struct agent *a, const char *tag_want,
			      const char *what)
{
	const char *buf = a->req_reply.buff;
	int idx = 1, arity, n, type, size;
	char tag[MAXATOMLEN_UTF8];
	if (ei_decode_tuple_header(buf, &idx, &arity) < 0 || arity != 2 ||
	    ei_decode_atom(buf, &idx, tag) < 0 || strcmp(tag, tag_want) ||
	    ei_get_type(buf, &idx, &type, &size) < 0)
		return odd_reply(a, what);
	if (type == ERL_NIL_EXT) {
		a->op.nodes = xcalloc(1, sizeof(char *));
		return op_done(a, EXIT_OK);
	}
	if (ei_decode_list_header(buf, &idx, &n) < 0 || n < 0 ||
	    n > AGENT_ATOMS_MAX)
		return odd_reply(a, what);
	char **names = xcalloc((size_t)n + 1, sizeof(char *));
	for (int i = 0; i < n; i++) {
		char name[MAXATOMLEN_UTF8];
		if (ei_decode_atom(buf, &idx, name) < 0) {
			node_names_free(names);
			return odd_reply(a, what);
		}
		names[i] = xstrdup(name);
	}
	a->op.nodes = names;
	return op_done(a, EXIT_OK);
}

static enum op_step got_nodes(struct agent *a)
{
	return got_atoms(a, "nodes", "the nodes request");
}

static bool send_modules(struct agent *a)
{
	return req_atom(a, "modules");
}

static enum op_step got_modules(struct agent *a)
{
	return got_atoms(a, "modules", "the modules request");
}

static bool send_alive(struct agent *a)
{
	ei_x_buff args;
	ei_x_new(&args);  /* ei_rpc_to wants no version byte */
	ei_x_encode_list_header(&args, 1);
	ei_x_encode_pid(&args, &a->pid);
	ei_x_encode_empty_list(&args);
	return rpc_send(a, "erlang", "is_process_alive", &args);
}

static enum op_step got_alive(struct agent *a)
{
	int idx = 1;
	char word[MAXATOMLEN];
	if (ei_decode_atom(a->rpc_reply.buff, &idx, word) < 0) {
		sbuf_addf(&a->op.err, "node \"%s\" gave an odd answer to "
			  "erlang:is_process_alive/1: ", a->conn->target);
		reply_text(&a->rpc_reply, 1, a->node, &a->op.err);
		return op_done(a, EXIT_REFUSED);
	}
	a->op.alive = !strcmp(word, "true");
	return op_done(a, EXIT_OK);
}

static const struct op_step_def {
	const char *text;        /* what the step waits for, for people */
	enum op_wait wait;
	bool (*send)(struct agent *a);       /* NULL: sent by the begin */
	enum op_step (*got)(struct agent *a);
} steps[ST_END] = {
	/* the architecture too: its failures were always worded so */
	[ST_RELEASE]  = { "asking for its release", WAIT_RPC, send_release, got_release },
	[ST_ARCH]     = { "asking for its release", WAIT_RPC, send_arch, got_arch },
	[ST_ELIXIR]   = { "asking for its release", WAIT_RPC, send_elixir, got_elixir },
	[ST_LOCK_SPAWN] = { "waiting for another beamscope to attach", WAIT_RPC, send_lock_spawn, got_lock_spawn },
	[ST_LOCK_TIMER] = { "waiting for another beamscope to attach", WAIT_RPC, send_lock_timer, got_lock_timer },
	[ST_LOCK_TAKE]  = { "waiting for another beamscope to attach", WAIT_RPC, send_lock_take, got_lock_take },
	[ST_LOCK_PAUSE] = { "waiting for another beamscope to attach", WAIT_PAUSE, NULL, after_lock_pause },
	[ST_WHEREIS]  = { "looking for another session", WAIT_RPC, send_whereis, got_whereis },
	[ST_LOADED]   = { "waiting for the old session to leave", WAIT_RPC, send_loaded, got_loaded },
	[ST_OLD_CODE] = { "waiting for the old session to leave", WAIT_RPC, send_old_code, got_old_code },
	[ST_PAUSE]    = { "waiting for the old session to leave", WAIT_PAUSE, NULL, after_pause },
	[ST_LOAD]     = { "loading the agent", WAIT_RPC, send_load, got_load },
	[ST_START]    = { "starting the agent", WAIT_RPC, send_start, got_start },
	[ST_TRACE]    = { "setting trace flags", WAIT_REQUEST, NULL, got_trace },
	[ST_CLOCK]    = { "measuring its clock", WAIT_REQUEST, send_clock, got_clock },
	[ST_NODES]    = { "listing its nodes", WAIT_REQUEST, send_nodes, got_nodes },
	[ST_ALIVE]    = { "asking whether the agent is there", WAIT_RPC, send_alive, got_alive },
	[ST_MODULES]  = { "listing its modules", WAIT_REQUEST, send_modules, got_modules },
};

/* The step's answer, if it still comes, is nobody's. */
static void op_unwant(struct agent *a)
{
	switch (steps[a->op.step].wait) {
	case WAIT_RPC: a->rpc_want = false; break;
	case WAIT_REQUEST: a->req_want = false; break;
	case WAIT_PAUSE: break;
	}
}

/* Is the attach waiting for an old session to leave?  Its notice is only
 * tentative then. */
static bool attach_waits_gone(const struct agent *a)
{
	return a->op.kind == AOP_ATTACH && !a->op.done &&
		(a->op.step == ST_LOADED || a->op.step == ST_OLD_CODE ||
		 a->op.step == ST_PAUSE);
}

static void op_enter(struct agent *a, enum op_step st);

/* The step's answer did not come: the connection is gone, or it is late. */
static void op_fail(struct agent *a, int r)
{
	struct agent_op_state *op = &a->op;
	op_unwant(a);
	if (attach_waits_gone(a)) {
		/* a target too busy to say is taken as the session staying */
		if (r == RPC_TIMEOUT) {
			enum op_step next = gone_late(a);
			if (!op->done)
				op_enter(a, next);
			return;
		}
		a->notice[0] = '\0';
		sbuf_reset(&op->err);
	}
	op_done(a, rpc_fail(a, r, steps[op->step].text, &op->err));
}

/* The step's message went out (or could not): its answer is due. */
static void op_sent(struct agent *a, bool sent)
{
	struct agent_op_state *op = &a->op;
	op->deadline_ms = clock_mono_ms() + (steps[op->step].wait == WAIT_PAUSE ?
				      GONE_PAUSE_MS : answer_ms(a));
	if (!sent)
		op_fail(a, RPC_LOST);
}

static void op_enter(struct agent *a, enum op_step st)
{
	a->op.step = st;
	op_sent(a, !steps[st].send || steps[st].send(a));
}

bool agent_op_step(struct agent *a)
{
	struct agent_op_state *op = &a->op;
	while (op->kind != AOP_NONE && !op->done) {
		const struct op_step_def *s = &steps[op->step];
		long long now = clock_mono_ms();
		bool arrived = s->wait == WAIT_RPC ? a->rpc_got :
			s->wait == WAIT_REQUEST ? a->req_got :
			now >= op->deadline_ms;
		if (arrived) {
			op_unwant(a);
			enum op_step next = s->got(a);
			if (!op->done)
				op_enter(a, next);
		} else if (a->conn->fd < 0) {
			op_fail(a, RPC_LOST);
		} else if (now >= op->deadline_ms) {
			op_fail(a, RPC_TIMEOUT);
		} else {
			break;
		}
	}
	return op->kind == AOP_NONE || op->done;
}

void agent_op_end(struct agent *a)
{
	struct agent_op_state *op = &a->op;
	if (attach_waits_gone(a))
		a->notice[0] = '\0';
	if (op->kind != AOP_NONE && !op->done)
		op_unwant(a);
	if (op->kind == AOP_ATTACH)
		lock_release(a);
	node_names_free(op->nodes);
	sbuf_release(&op->err);
	memset(op, 0, sizeof(*op));
	sbuf_init(&op->err);
	op->kind = AOP_NONE;
}

const char *agent_op_text(const struct agent *a)
{
	if (a->op.kind == AOP_NONE || a->op.done)
		return "";
	return steps[a->op.step].text;
}

/*
 * Make kind the operation.  False if another was in progress: that one is
 * abandoned, and the new one is done at once with EXIT_FAIL.
 */
static bool op_start(struct agent *a, enum agent_op kind)
{
	bool busy = a->op.kind != AOP_NONE && !a->op.done;
	agent_op_end(a);
	a->op.kind = kind;
	a->op.alive = -1;
	a->op.best_rtt_us = -1;
	if (!busy)
		return true;
	sbuf_addf(&a->op.err, "another request to \"%s\" is in progress",
		  a->conn->target);
	op_done(a, EXIT_FAIL);
	return false;
}

/* Fresh random bytes; the kernel's, or /dev/urandom's. */
static int random_bytes(unsigned char *buf, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t r = getrandom(buf + got, n - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (got == n)
		return 0;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t r = read(fd, buf, n);
	close(fd);
	return r == (ssize_t)n ? 0 : -1;
}

void agent_attach_begin(struct agent *a, const struct agent_opts *o)
{
	if (!op_start(a, AOP_ATTACH))
		return;
	a->op.opts = *o;
	if (random_bytes(a->secret, sizeof(a->secret)) < 0) {
		sbuf_addf(&a->op.err, "cannot read random bytes for the session's "
			  "secret: %s", strerror(errno));
		op_done(a, EXIT_FAIL);
		return;
	}
	op_enter(a, ST_RELEASE);
}

void agent_trace_begin(struct agent *a, const struct trace_spec *spec,
		       struct trace_result *res)
{
	memset(res, 0, sizeof(*res));
	if (!op_start(a, AOP_TRACE))
		return;
	ei_x_buff x;
	trace_encode(a, spec, &x);
	a->op.trace = res;
	a->op.step = ST_TRACE;
	op_sent(a, req_send(a, &x));
}

void agent_clock_begin(struct agent *a, int samples)
{
	if (!op_start(a, AOP_CLOCK))
		return;
	a->op.samples = samples;
	if (samples > 0)
		op_enter(a, ST_CLOCK);
	else
		op_done(a, EXIT_OK);
}

void agent_gone_begin(struct agent *a, int ms)
{
	if (!op_start(a, AOP_GONE))
		return;
	a->op.until_ms = clock_mono_ms() + ms;
	if (ms > 0)
		op_enter(a, ST_LOADED);
	else
		gone_late(a);
}

void agent_nodes_begin(struct agent *a)
{
	if (op_start(a, AOP_NODES))
		op_enter(a, ST_NODES);
}

void agent_alive_begin(struct agent *a)
{
	if (op_start(a, AOP_ALIVE))
		op_enter(a, ST_ALIVE);
}

void agent_modules_begin(struct agent *a)
{
	if (op_start(a, AOP_MODULES))
		op_enter(a, ST_MODULES);
}

/*
 * The one blocking call (--discover, before anything is traced): begin,
 * then pump this agent alone until the operation is done.  A signal leaves
 * it unfinished for agent_op_end.  The operation's rc, or -1.
 */
static int op_wait(struct agent *a)
{
	while (!agent_op_step(a)) {
		long long left = a->op.deadline_ms - clock_mono_ms();
		int ms = left <= 0 ? 0 : left < WAIT_SLICE_MS ? (int)left :
			WAIT_SLICE_MS;
		if (agent_pump(a, ms) == PUMP_SIGNAL)
			return -1;
	}
	return a->op.rc;
}

int agent_visible_nodes(struct agent *a, char ***out)
{
	int n = -1;
	*out = NULL;
	agent_nodes_begin(a);
	if (op_wait(a) == EXIT_OK) {
		*out = a->op.nodes;
		a->op.nodes = NULL;
		for (n = 0; (*out)[n]; n++)
			;
	}
	agent_op_end(a);
	return n;
}

void trace_result_release(struct trace_result *r)
{
	for (int i = 0; i < r->nskipped; i++)
		free(r->skipped[i]);
	free(r->skipped);
	for (int i = 0; i < r->nskipped_functions; i++)
		free(r->skipped_functions[i]);
	free(r->skipped_functions);
	free(r->new_skipped);
	memset(r, 0, sizeof(*r));
}

int agent_ping(struct agent *a)
{
	ei_x_buff x;
	erlang_ref ref;
	request_begin(a, &x, &ref);
	ei_x_encode_atom(&x, "ping");
	int r = request_send(a, &x);
	ei_x_free(&x);
	return r;
}

int agent_focus(struct agent *a, unsigned num, unsigned serial, bool on)
{
	ei_x_buff x;
	erlang_ref ref;
	/* a pid the target cannot have would cost the connection */
	if (!pidsel_fits(atoi(a->otp), num, serial))
		return -1;
	request_begin(a, &x, &ref);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, on ? "focus" : "unfocus");
	/* node and creation of the target */
	wire_encode_pid(&x, a->pid.node, num, serial, a->pid.creation);
	int r = request_send(a, &x);
	ei_x_free(&x);
	return r;
}

/* {Tag, [Pid]}: at most max of pids, local pids of the target, without a
 * reply (answered on the stream, if at all). */
static int pid_list_request(struct agent *a, const char *tag,
			    const struct bs_pid *pids, int n, int max)
{
	ei_x_buff x;
	erlang_ref ref;
	if (n > max)
		n = max;
	request_begin(a, &x, &ref);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, tag);
	ei_x_encode_list_header(&x, n);
	for (int i = 0; i < n; i++)   /* node and creation of the target */
		wire_encode_pid(&x, a->pid.node, pids[i].num, pids[i].serial,
				a->pid.creation);
	ei_x_encode_empty_list(&x);
	int r = request_send(a, &x);
	ei_x_free(&x);
	return r;
}

int agent_sample(struct agent *a, const struct bs_pid *pids, int n)
{
	return pid_list_request(a, "sample", pids, n, AGENT_SAMPLE_MAX);
}

int agent_structs(struct agent *a, char *const *mods, int n)
{
	ei_x_buff x;
	erlang_ref ref;
	if (n > 64)
		n = 64;
	request_begin(a, &x, &ref);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "structs");
	ei_x_encode_list_header(&x, n);
	for (int i = 0; i < n; i++)
		ei_x_encode_atom_as(&x, mods[i], ERLANG_UTF8, ERLANG_UTF8);
	ei_x_encode_empty_list(&x);
	int r = request_send(a, &x);
	ei_x_free(&x);
	return r;
}

int agent_describe(struct agent *a, const struct bs_pid *pids, int n,
		   bool again)
{
	return pid_list_request(a, again ? "describe_again" : "describe",
				pids, n, AGENT_DESCRIBE_MAX);
}

int agent_node_stats(struct agent *a, bool on)
{
	ei_x_buff x;
	erlang_ref ref;
	request_begin(a, &x, &ref);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "node_stats");
	ei_x_encode_boolean(&x, on);
	int r = request_send(a, &x);
	ei_x_free(&x);
	return r;
}

int agent_top(struct agent *a, const char *metric, int n)
{
	ei_x_buff x;
	erlang_ref ref;
	request_begin(a, &x, &ref);
	if (metric) {
		ei_x_encode_tuple_header(&x, 3);
		ei_x_encode_atom(&x, "top");
		ei_x_encode_atom(&x, metric);
		ei_x_encode_long(&x, n);
	} else {
		ei_x_encode_tuple_header(&x, 2);
		ei_x_encode_atom(&x, "top");
		ei_x_encode_atom(&x, "off");
	}
	int r = request_send(a, &x);
	ei_x_free(&x);
	return r;
}

int agent_unfollow(struct agent *a)
{
	ei_x_buff x;
	erlang_ref ref;
	request_begin(a, &x, &ref);
	ei_x_encode_atom(&x, "unfollow");
	int r = request_send(a, &x);
	ei_x_free(&x);
	return r;
}

int agent_stop_send(struct agent *a)
{
	ei_x_buff x;
	/* the stop's reply is awaited with req_ref, which an operation in
	 * progress may be using: that one is abandoned */
	if (a->op.kind != AOP_NONE && !a->op.done)
		agent_op_end(a);
	request_begin(a, &x, &a->req_ref);
	ei_x_encode_atom(&x, "stop");
	a->req_want = true;
	a->req_got = false;
	int r = request_send(a, &x);
	ei_x_free(&x);
	return r;
}

bool agent_reply_arrived(const struct agent *a)
{
	return a->req_got;
}

void agent_set_lost(struct agent *a, const char *reason)
{
	if (a->gone)
		return;
	a->gone = true;
	snprintf(a->gone_why, sizeof(a->gone_why), "agent_lost");
	snprintf(a->gone_reason, sizeof(a->gone_reason), "%s", reason);
	a->gone_dep_ms = 0;
}

void agent_gone_text(const struct agent *a, struct sbuf *out)
{
	const char *node = a->node[0] ? a->node : a->conn->target;
	if (!strcmp(a->gone_why, "owner_silent"))
		sbuf_addf(out, "the agent on \"%s\" heard nothing from beamscope "
			  "for %ld s (--dependency-timeout) and cleaned up",
			  node, (a->gone_dep_ms + 999) / 1000);
	else if (!strcmp(a->gone_why, "aborted"))
		sbuf_addf(out, "the agent on \"%s\" was stopped from the target "
			  "and cleaned up", node);
	else if (!strcmp(a->gone_why, "agent_lost") && a->gone_reason[0]) {
		/* the reason is the target's word */
		sbuf_addf(out, "the agent on \"%s\" was lost (", node);
		esc_addstr(out, a->gone_reason);
		sbuf_addstr(out, "); its workers removed the tracer and cleaned up");
	} else if (!strcmp(a->gone_why, "agent_lost")) {
		sbuf_addf(out, "the agent on \"%s\" is gone without a word; "
			  "what it set may still be there until its next event",
			  node);
	} else {
		sbuf_addf(out, "the agent on \"%s\" went away (", node);
		esc_addstr(out, a->gone_why[0] ? a->gone_why : "unknown");
		sbuf_addstr(out, ") and cleaned up");
	}
}
