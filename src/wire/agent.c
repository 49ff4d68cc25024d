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
#include "agent_priv.h"

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

static void on_PROFILE(struct agent *a, const char *buf, const struct msg *m)
{
	if (a->stream.profile)
		a->stream.profile(a->stream.arg, buf, m);
}

static void on_ALARMS(struct agent *a, const char *buf, const struct msg *m)
{
	if (a->stream.alarms)
		a->stream.alarms(a->stream.arg, buf, m);
}

static void on_ALARM_STATE(struct agent *a, const char *buf,
			   const struct msg *m)
{
	if (a->stream.alarm_state)
		a->stream.alarm_state(a->stream.arg, buf, m);
}

static void on_CALLS(struct agent *a, const char *buf, const struct msg *m)
{
	if (a->stream.calls)
		a->stream.calls(a->stream.arg, buf, m);
}

static void on_CALLS_STATE(struct agent *a, const char *buf,
			   const struct msg *m)
{
	if (a->stream.calls_state)
		a->stream.calls_state(a->stream.arg, buf, m);
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
		{ .fd = conn_poll_fd(a->conn), .events = POLLIN },
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
		struct pollfd more = { .fd = conn_poll_fd(a->conn), .events = POLLIN };
		if (poll(&more, 1, 0) <= 0)
			break;
	}
	agent_op_step(a);  /* a lost connection ends the operation too */
	return r;
}

/* how long a step waits for its answer */
int answer_ms(const struct agent *a)
{
	return a->rpc_tmo_ms ? a->rpc_tmo_ms : RPC_TMO_MS;
}

int rpc_fail(struct agent *a, int r, const char *what, struct sbuf *err)
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

void reply_text(const ei_x_buff *x, int idx, const char *node,
		       struct sbuf *out)
{
	if (term_render(x->buff, &idx, node, out, 300, NULL) < 0)
		sbuf_addstr(out, "(malformed)");
}

/* Send rpc Mod:Fun(Args) and free args; false when it could not be sent.
 * The reply arrives in a->rpc_reply. */
bool rpc_send(struct agent *a, const char *mod, const char *fun,
		     ei_x_buff *args)
{
	a->rpc_got = false;
	a->rpc_want = ei_rpc_to(&a->conn->ec, a->conn->fd, (char *)mod,
				(char *)fun, args->buff, args->index) >= 0;
	ei_x_free(args);
	return a->rpc_want;
}

/* rpc erlang:Fun(Atom) */
bool rpc_atom(struct agent *a, const char *fun, const char *atom)
{
	ei_x_buff args;
	ei_x_new(&args);  /* ei_rpc_to wants no version byte */
	ei_x_encode_list_header(&args, 1);
	ei_x_encode_atom(&args, atom);
	ei_x_encode_empty_list(&args);
	return rpc_send(a, "erlang", fun, &args);
}

/* Did the rpc answer the atom true? */
bool rpc_true(const struct agent *a)
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

bool read_info(struct agent *a, const char *buf, int *idx)
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

int request_send(struct agent *a, ei_x_buff *x)
{
	return conn_send(a->conn, &a->pid, x, SEND_TMO_MS);
}

/* {beamscope, Secret, Ref, ...}: the caller encodes the request after this. */
void request_begin(struct agent *a, ei_x_buff *x, erlang_ref *ref)
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
bool req_send(struct agent *a, ei_x_buff *x)
{
	a->req_got = false;
	a->req_want = request_send(a, x) == 0;
	ei_x_free(x);
	return a->req_want;
}

/* A request that is just an atom. */
bool req_atom(struct agent *a, const char *what)
{
	ei_x_buff x;
	request_begin(a, &x, &a->req_ref);
	ei_x_encode_atom(&x, what);
	return req_send(a, &x);
}

void encode_pidsel(struct agent *a, ei_x_buff *x, const struct pidsel *sel)
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

/* At a port given rather than epmd's, the node's own name: another node
 * could be listening there. */
bool agent_send_name(struct agent *a)
{
	ei_x_buff args;
	ei_x_new(&args);
	ei_x_encode_empty_list(&args);
	bool ok = rpc_send(a, "erlang", "node", &args);
	ei_x_free(&args);
	return ok;
}

enum op_step agent_got_name(struct agent *a)
{
	int idx = 1;
	char name[MAXATOMLEN_UTF8];
	if (ei_decode_atom(a->rpc_reply.buff, &idx, name) < 0) {
		sbuf_addf(&a->op.err, "node \"%s\" gave an odd answer to "
			  "erlang:node(): ", a->conn->target);
		reply_text(&a->rpc_reply, 1, NULL, &a->op.err);
		return op_done(a, EXIT_REFUSED);
	}
	/* the part before '@': the host may be spelt another way */
	size_t n = strcspn(a->conn->target, "@");
	if (strncmp(name, a->conn->target, n) || name[n] != '@') {
		sbuf_addf(&a->op.err, "port %d is node \"%s\", not \"%s\"; give "
			  "the port of the node asked for", a->conn->port,
			  name, a->conn->target);
		return op_done(a, EXIT_REFUSED);
	}
	return ST_RELEASE;
}
