/*
 * agent: bootstrap over rex, then requests to the agent process, all on the
 * one pump.  At most one rpc and one request are outstanding at a time.
 */
#include "agent.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "embed.h"
#include "exitcode.h"
#include "sig.h"
#include "term.h"
#include "wire.h"
#include "xalloc.h"

#define READ_BUDGET 256          /* messages per pump, so keys stay live */
#define MSG_TMO_MS 5000          /* the rest of a message that has begun */
#define SEND_TMO_MS 5000
#define RPC_TMO_MS 15000

#ifndef BS_OTP_ARCH
#define BS_OTP_ARCH "unknown"
#endif

void agent_init(struct agent *a, struct conn *c, const struct agent_stream *s)
{
	memset(a, 0, sizeof(*a));
	a->conn = c;
	a->stream = *s;
	names_init(&a->names);
	ei_x_new(&a->rpc_reply);
	ei_x_new(&a->req_reply);
}

void agent_release(struct agent *a)
{
	names_release(&a->names);
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

static void dispatch(struct agent *a)
{
	const char *buf = a->conn->rx.buff;
	struct msg m;

	/* nothing reaches ei's decoders unchecked */
	if (wire_check(buf, (size_t)a->conn->rx.index) < 0) {
		a->unknown++;
		return;
	}
	switch (decode_msg(buf, &m)) {
	case WIRE_RPC_REPLY:
		if (a->rpc_want && !a->rpc_got) {
			copy_term(&a->rpc_reply, buf, m.body);
			a->rpc_got = true;
		}
		break;
	case WIRE_REPLY:
		if (a->req_want && !a->req_got && same_ref(&m.ref, &a->req_ref)) {
			copy_term(&a->req_reply, buf, m.body);
			a->req_got = true;
		}
		/* other replies answer pings: nothing to do */
		break;
	case WIRE_BATCH:
		if (a->stream.batch)
			a->stream.batch(a->stream.arg, buf, &m);
		break;
	case WIRE_EOS:
		if (a->stream.eos)
			a->stream.eos(a->stream.arg, &m);
		break;
	case WIRE_COUNTS:
		if (a->stream.counts)
			a->stream.counts(a->stream.arg, buf, &m);
		break;
	case WIRE_INFO:
		if (a->stream.info)
			a->stream.info(a->stream.arg, buf, &m);
		break;
	case WIRE_LIMIT:
		if (a->stream.limit)
			a->stream.limit(a->stream.arg, &m);
		break;
	case WIRE_EXIT:
		a->gone = true;
		snprintf(a->gone_why, sizeof(a->gone_why), "%s", m.limit);
		a->gone_dep_ms = m.seq;
		break;
	default:
		a->unknown++;
		break;
	}
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
	if (a->conn->fd < 0)
		return PUMP_LOST;
	for (int n = 0; n < budget; n++) {
		int got = conn_read(a->conn, MSG_TMO_MS);
		if (got < 0)
			return PUMP_LOST;
		if (got > 0)
			dispatch(a);
		struct pollfd more = { .fd = a->conn->fd, .events = POLLIN };
		if (poll(&more, 1, 0) <= 0)
			break;
	}
	return PUMP_OK;
}

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Pump until *flag, the deadline, a signal or a lost connection. */
static enum pump_result wait_for(struct agent *a, const bool *flag, int tmo_ms)
{
	long long deadline = now_ms() + tmo_ms;
	while (!*flag) {
		long long left = deadline - now_ms();
		if (left <= 0)
			return PUMP_OK;
		enum pump_result r = agent_pump(a, (int)left);
		if (r != PUMP_OK)
			return r;
	}
	return PUMP_OK;
}

/* how long an attach waits for the session of a beamscope that died */
#define GONE_WAIT_MS 4000

enum { RPC_OK = 0, RPC_TIMEOUT = -1, RPC_LOST = -2, RPC_SIGNAL = -3 };

static int rpc(struct agent *a, const char *mod, const char *fun,
	       ei_x_buff *args)
{
	a->rpc_want = true;
	a->rpc_got = false;
	if (ei_rpc_to(&a->conn->ec, a->conn->fd, (char *)mod, (char *)fun,
		      args->buff, args->index) < 0) {
		a->rpc_want = false;
		return RPC_LOST;
	}
	enum pump_result r = wait_for(a, &a->rpc_got, a->rpc_tmo_ms ?
				      a->rpc_tmo_ms : RPC_TMO_MS);
	a->rpc_want = false;
	if (a->rpc_got)
		return RPC_OK;
	return r == PUMP_LOST ? RPC_LOST : r == PUMP_SIGNAL ? RPC_SIGNAL :
		RPC_TIMEOUT;
}

static int rpc_fail(struct agent *a, int r, const char *what, struct sbuf *err)
{
	if (r == RPC_LOST) {
		sbuf_addf(err, "lost the connection to \"%s\" while %s",
			  a->conn->target, what);
		return EXIT_LOST;
	}
	if (r == RPC_SIGNAL) {
		sbuf_addf(err, "interrupted while %s", what);
		return EXIT_OK;
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

/* rpc erlang:system_info(Item) and expect a string. */
static int system_info(struct agent *a, const char *item, char *out,
		       size_t outsz, struct sbuf *err)
{
	ei_x_buff args;
	ei_x_new(&args);  /* ei_rpc_to wants no version byte */
	ei_x_encode_list_header(&args, 1);
	ei_x_encode_atom(&args, item);
	ei_x_encode_empty_list(&args);
	int r = rpc(a, "erlang", "system_info", &args);
	ei_x_free(&args);
	if (r != RPC_OK)
		return rpc_fail(a, r, "asking for its release", err);
	int idx = 1, type, size;
	if (ei_get_type(a->rpc_reply.buff, &idx, &type, &size) < 0 ||
	    type != ERL_STRING_EXT || (size_t)size >= outsz ||
	    ei_decode_string(a->rpc_reply.buff, &idx, out) < 0) {
		sbuf_addf(err, "node \"%s\" gave an odd answer to "
			  "erlang:system_info(%s): ", a->conn->target, item);
		reply_text(&a->rpc_reply, 1, NULL, err);
		return EXIT_REFUSED;
	}
	return EXIT_OK;
}

static void encode_binary(ei_x_buff *x, const unsigned char *b, long n)
{
	ei_x_encode_binary(x, b, n);
}

/* Decode the start/4 reply's info map. */
static void read_info(struct agent *a, const char *buf, int *idx)
{
	int arity;
	if (ei_decode_map_header(buf, idx, &arity) < 0)
		return;
	for (int i = 0; i < arity; i++) {
		char key[MAXATOMLEN_UTF8];
		long v;
		if (ei_decode_atom(buf, idx, key) < 0)
			return;
		if (!strcmp(key, "workers") && ei_decode_long(buf, idx, &v) == 0) {
			a->workers = (int)v;
		} else if (!strcmp(key, "schedulers") &&
			   ei_decode_long(buf, idx, &v) == 0) {
			a->schedulers = (int)v;
		} else if (!strcmp(key, "names")) {
			int n;
			if (ei_decode_list_header(buf, idx, &n) < 0)
				return;
			for (int k = 0; k < n; k++) {
				int t;
				erlang_pid p;
				char name[MAXATOMLEN_UTF8];
				if (ei_decode_tuple_header(buf, idx, &t) < 0 || t != 2 ||
				    ei_decode_pid(buf, idx, &p) < 0 ||
				    ei_decode_atom_as(buf, idx, name, sizeof(name),
						      ERLANG_UTF8, NULL, NULL) < 0)
					return;
				struct bs_pid bp = { p.num, p.serial, 0 };
				names_set(&a->names, bp, name);
			}
			if (n > 0 && ei_skip_term(buf, idx) < 0)
				return;
		} else if (ei_skip_term(buf, idx) < 0) {
			return;
		}
	}
}

int agent_attach(struct agent *a, const struct agent_opts *o, struct sbuf *err)
{
	char arch[256];
	int rc;

	if ((rc = system_info(a, "otp_release", a->otp, sizeof(a->otp), err)))
		return rc;
	if (atoi(a->otp) < AGENT_MIN_OTP) {
		sbuf_addf(err, "node \"%s\" runs OTP %s; beamscope needs OTP %d "
			  "or newer on the target", a->conn->target, a->otp, AGENT_MIN_OTP);
		return EXIT_REFUSED;
	}
	if ((rc = system_info(a, "system_architecture", arch, sizeof(arch), err)))
		return rc;
	if (strcmp(arch, BS_OTP_ARCH)) {
		sbuf_addf(err, "node \"%s\" runs on %s, but this beamscope carries a "
			  "tracer built for %s; use a beamscope built for %s",
			  a->conn->target, arch, BS_OTP_ARCH, arch);
		return EXIT_REFUSED;
	}

	/* someone else's session? */
	ei_x_buff args;
	ei_x_new(&args);  /* ei_rpc_to wants no version byte */
	ei_x_encode_list_header(&args, 1);
	ei_x_encode_atom(&args, "beamscope_agent");
	ei_x_encode_empty_list(&args);
	int r = rpc(a, "erlang", "whereis", &args);
	ei_x_free(&args);
	if (r != RPC_OK)
		return rpc_fail(a, r, "looking for another session", err);
	{
		int idx = 1, type, size;
		ei_get_type(a->rpc_reply.buff, &idx, &type, &size);
		erlang_pid other;
		if ((type == ERL_PID_EXT || type == ERL_NEW_PID_EXT) &&
		    ei_decode_pid(a->rpc_reply.buff, &idx, &other) == 0) {
			/* a session whose beamscope died is already cleaning
			 * up (its agent saw the connection go): let it finish */
			if (agent_wait_gone(a, GONE_WAIT_MS) < 0) {
				sbuf_addf(err, "node \"%s\" is already being "
					  "traced by another beamscope (agent "
					  "<0.%u.%u>), which is still there; wait "
					  "for it to end, it cleans up by itself",
					  a->conn->target, other.num, other.serial);
				return EXIT_REFUSED;
			}
			snprintf(a->notice, sizeof(a->notice), "waited for the "
				 "session of a beamscope that is gone (agent "
				 "<0.%u.%u>) to finish cleaning up",
				 other.num, other.serial);
		}
	}

	/* the agent module; it loads the tracer and the NIF itself */
	ei_x_new(&args);  /* ei_rpc_to wants no version byte */
	ei_x_encode_list_header(&args, 3);
	ei_x_encode_atom(&args, "beamscope_agent");
	ei_x_encode_string(&args, "beamscope_agent.beam");
	encode_binary(&args, bs_agent_beam, EMBED_SIZE(bs_agent_beam));
	ei_x_encode_empty_list(&args);
	r = rpc(a, "code", "load_binary", &args);
	ei_x_free(&args);
	if (r != RPC_OK)
		return rpc_fail(a, r, "loading the agent", err);
	{
		int idx = 1, arity;
		char tag[MAXATOMLEN];
		if (ei_decode_tuple_header(a->rpc_reply.buff, &idx, &arity) < 0 ||
		    arity != 2 || ei_decode_atom(a->rpc_reply.buff, &idx, tag) < 0 ||
		    strcmp(tag, "module")) {
			sbuf_addf(err, "node \"%s\" would not load beamscope's agent: ",
				  a->conn->target);
			reply_text(&a->rpc_reply, 1, NULL, err);
			return EXIT_REFUSED;
		}
	}

	ei_x_new(&args);  /* ei_rpc_to wants no version byte */
	ei_x_encode_list_header(&args, 4);
	ei_x_encode_pid(&args, conn_self(a->conn));
	encode_binary(&args, bs_tracer_beam, EMBED_SIZE(bs_tracer_beam));
	encode_binary(&args, bs_tracer_so, EMBED_SIZE(bs_tracer_so));
	ei_x_encode_map_header(&args, 5);
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
	r = rpc(a, "beamscope_agent", "start", &args);
	ei_x_free(&args);
	if (r != RPC_OK)
		return rpc_fail(a, r, "starting the agent", err);

	const char *buf = a->rpc_reply.buff;
	int idx = 1, arity;
	char tag[MAXATOMLEN];
	if (ei_decode_tuple_header(buf, &idx, &arity) < 0 || arity != 3 ||
	    ei_decode_atom(buf, &idx, tag) < 0 || strcmp(tag, "ok") ||
	    ei_decode_pid(buf, &idx, &a->pid) < 0) {
		sbuf_addf(err, "the agent did not start on \"%s\": ",
			  a->conn->target);
		reply_text(&a->rpc_reply, 1, NULL, err);
		return EXIT_REFUSED;
	}
	snprintf(a->node, sizeof(a->node), "%s", a->pid.node);
	read_info(a, buf, &idx);
	a->started = true;
	a->gone = false;
	if (a->workers <= 0) {
		sbuf_addstr(err, "the agent reported no workers");
		return EXIT_REFUSED;
	}
	return EXIT_OK;
}

static int request_send(struct agent *a, ei_x_buff *x)
{
	return conn_send(a->conn, &a->pid, x, SEND_TMO_MS);
}

/* {beamscope, Self, Ref, ...}: the caller encodes the request after this. */
static void request_begin(struct agent *a, ei_x_buff *x, erlang_ref *ref)
{
	ei_x_new_with_version(x);
	ei_x_encode_tuple_header(x, 4);
	ei_x_encode_atom(x, "beamscope");
	ei_x_encode_pid(x, conn_self(a->conn));
	ei_make_ref(&a->conn->ec, ref);
	ei_x_encode_ref(x, ref);
}

static int request(struct agent *a, ei_x_buff *x)
{
	a->req_want = true;
	a->req_got = false;
	if (request_send(a, x) < 0)
		return RPC_LOST;
	enum pump_result r = wait_for(a, &a->req_got, a->rpc_tmo_ms ?
				      a->rpc_tmo_ms : RPC_TMO_MS);
	a->req_want = false;
	if (a->req_got)
		return RPC_OK;
	return r == PUMP_LOST ? RPC_LOST : r == PUMP_SIGNAL ? RPC_SIGNAL :
		RPC_TIMEOUT;
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
			erlang_pid p = a->pid;  /* node and creation of the target */
			p.num = it->num;
			p.serial = it->serial;
			ei_x_encode_pid(x, &p);
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

/* Turn an {error, Reason} from the trace request into advice; the exit code. */
static int trace_error(struct agent *a, const char *buf, int idx,
		       struct sbuf *err)
{
	int arity, save = idx, rc = EXIT_REFUSED;
	char tag[MAXATOMLEN_UTF8];
	struct sbuf what = SBUF_INIT, extra = SBUF_INIT;

	if (ei_decode_tuple_header(buf, &idx, &arity) == 0 && arity >= 2 &&
	    ei_decode_atom(buf, &idx, tag) == 0) {
		term_render(buf, &idx, a->node, &what, 200, NULL);
		if (arity == 3)
			term_render(buf, &idx, a->node, &extra, 200, NULL);
		if (!strcmp(tag, "traced_by_other")) {
			sbuf_addf(err, "%s is already traced by another tracer "
				  "(%s); stop that trace first or leave the "
				  "process out of --pids", sbuf_str(&what),
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
		} else if (!strcmp(tag, "bad_pattern") && arity == 5) {
			/* {bad_pattern, Text, Line, Col, Message} */
			char text[1024], msg[1024];
			long line, col;
			idx = save;
			ei_decode_tuple_header(buf, &idx, &arity);
			ei_skip_term(buf, &idx);
			if (decode_str(buf, &idx, text, sizeof(text)) == 0 &&
			    ei_decode_long(buf, &idx, &line) == 0 &&
			    ei_decode_long(buf, &idx, &col) == 0 &&
			    decode_str(buf, &idx, msg, sizeof(msg)) == 0) {
				sbuf_addf(err, "--call \"%s\": line %ld, column %ld: %s",
					  text, line, col, msg);
				rc = EXIT_USAGE;
				goto out;
			}
		} else if (!strcmp(tag, "bad_call") && arity == 3) {
			/* {bad_call, Text, {not_loaded, M} | {no_function, M, F, A}} */
			char text[1024], why[MAXATOMLEN_UTF8];
			int a2;
			idx = save;
			ei_decode_tuple_header(buf, &idx, &arity);
			ei_skip_term(buf, &idx);
			if (decode_str(buf, &idx, text, sizeof(text)) == 0 &&
			    ei_decode_tuple_header(buf, &idx, &a2) == 0 &&
			    ei_decode_atom(buf, &idx, why) == 0) {
				struct sbuf t = SBUF_INIT;
				if (!strcmp(why, "not_loaded")) {
					term_render(buf, &idx, a->node, &t, 200, NULL);
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
		} else if (!strcmp(tag, "new_traced_by_other")) {
			sbuf_addf(err, "new processes on \"%s\" are already traced "
				  "by another tracer (%s); stop it first, or use "
				  "--pids existing", a->node, sbuf_str(&what));
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

int agent_trace(struct agent *a, const struct trace_spec *spec,
		struct trace_result *res, struct sbuf *err)
{
	ei_x_buff x;
	int kinds = spec->kinds;
	memset(res, 0, sizeof(*res));
	request_begin(a, &x, &a->req_ref);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "trace");
	ei_x_encode_map_header(&x, 7 + (spec->count_tier ? 2 : 0) +
			       (spec->ncalls ? 1 : 0) + (spec->follow ? 1 : 0));
	ei_x_encode_atom(&x, "max_events");
	ei_x_encode_ulong(&x, spec->max_events);
	ei_x_encode_atom(&x, "duration_ms");
	ei_x_encode_ulong(&x, spec->duration_ms);
	ei_x_encode_atom(&x, "rate");
	ei_x_encode_ulong(&x, spec->rate);
	ei_x_encode_atom(&x, "on_limit");
	ei_x_encode_atom(&x, spec->shed ? "shed" : "stop");
	if (spec->ncalls) {
		ei_x_encode_atom(&x, "calls");
		ei_x_encode_list_header(&x, spec->ncalls);
		for (int i = 0; i < spec->ncalls; i++)
			ei_x_encode_string(&x, spec->calls[i]);
		ei_x_encode_empty_list(&x);
	}
	if (spec->follow) {
		ei_x_encode_atom(&x, "follow");
		ei_x_encode_atom(&x, "true");
	}
	if (spec->count_tier) {
		ei_x_encode_atom(&x, "tier");
		ei_x_encode_atom(&x, "count");
		ei_x_encode_atom(&x, "interval_ms");
		ei_x_encode_long(&x, (long)(spec->interval_ms ? spec->interval_ms : 250));
	}
	ei_x_encode_atom(&x, "events");
	int nk = 0;
	for (int bit = 1; bit <= KIND_RUNNING; bit <<= 1)
		nk += (kinds & bit) && event_kind_name(bit);
	ei_x_encode_list_header(&x, nk);
	for (int bit = 1; bit <= KIND_RUNNING; bit <<= 1)
		if ((kinds & bit) && event_kind_name(bit))
			ei_x_encode_atom(&x, event_kind_name(bit));
	ei_x_encode_empty_list(&x);
	ei_x_encode_atom(&x, "pids");
	encode_pidsel(a, &x, spec->sel);
	ei_x_encode_atom(&x, "payload_bytes");
	ei_x_encode_long(&x, (long)spec->payload_bytes);

	int r = request(a, &x);
	ei_x_free(&x);
	if (r != RPC_OK)
		return rpc_fail(a, r, "setting trace flags", err);

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

void trace_result_release(struct trace_result *r)
{
	for (int i = 0; i < r->nskipped; i++)
		free(r->skipped[i]);
	free(r->skipped);
	for (int i = 0; i < r->nskipped_functions; i++)
		free(r->skipped_functions[i]);
	free(r->skipped_functions);
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

int agent_focus(struct agent *a, const char *pid_text, bool on)
{
	ei_x_buff x;
	erlang_ref ref;
	unsigned num, serial;
	if (sscanf(pid_text, "<0.%u.%u>", &num, &serial) != 2)
		return -1;
	erlang_pid p = a->pid;   /* node and creation of the target */
	p.num = num;
	p.serial = serial;
	request_begin(a, &x, &ref);
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, on ? "focus" : "unfocus");
	ei_x_encode_pid(&x, &p);
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
	request_begin(a, &x, &a->req_ref);
	ei_x_encode_atom(&x, "stop");
	a->req_want = true;
	a->req_got = false;
	int r = request_send(a, &x);
	ei_x_free(&x);
	return r;
}

/* rpc erlang:BIF(beamscope_agent); true if it answered true. */
static int agent_module_rpc(struct agent *a, const char *bif, bool *yes)
{
	ei_x_buff args;
	ei_x_new(&args);
	ei_x_encode_list_header(&args, 1);
	ei_x_encode_atom(&args, "beamscope_agent");
	ei_x_encode_empty_list(&args);
	int r = rpc(a, "erlang", bif, &args);
	ei_x_free(&args);
	if (r != RPC_OK)
		return -1;
	int idx = 1;
	char atom[MAXATOMLEN];
	*yes = ei_decode_atom(a->rpc_reply.buff, &idx, atom) == 0 &&
		!strcmp(atom, "true");
	return 0;
}

int agent_wait_gone(struct agent *a, int ms)
{
	long long deadline = now_ms() + ms;
	while (now_ms() < deadline) {
		bool loaded = true, old = true;
		if (agent_module_rpc(a, "module_loaded", &loaded) < 0 ||
		    agent_module_rpc(a, "check_old_code", &old) < 0)
			return -1;
		if (!loaded && !old)
			return 0;
		agent_pump(a, 20);
	}
	return -1;
}

bool agent_reply_arrived(const struct agent *a)
{
	return a->req_got;
}

/* A request that is just an atom; the reply term is in a->req_reply. */
static int simple_request(struct agent *a, const char *what)
{
	ei_x_buff x;
	request_begin(a, &x, &a->req_ref);
	ei_x_encode_atom(&x, what);
	int r = request(a, &x);
	ei_x_free(&x);
	return r;
}

static long long wall_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int agent_clock(struct agent *a, int samples, long long *offset_us,
		long long *error_us)
{
	long long best_rtt = -1;
	for (int i = 0; i < samples; i++) {
		long long t0 = wall_us();
		if (simple_request(a, "clock") != RPC_OK)
			return -1;
		long long t1 = wall_us();
		int idx = 1, arity;
		char tag[MAXATOMLEN_UTF8];
		long long remote;
		if (ei_decode_tuple_header(a->req_reply.buff, &idx, &arity) < 0 ||
		    arity != 2 || ei_decode_atom(a->req_reply.buff, &idx, tag) < 0 ||
		    strcmp(tag, "clock") ||
		    ei_decode_longlong(a->req_reply.buff, &idx, &remote) < 0)
			return -1;
		/* the round trip with the least queueing bounds the error best */
		if (best_rtt < 0 || t1 - t0 < best_rtt) {
			best_rtt = t1 - t0;
			*offset_us = remote - (t0 + t1) / 2;
			*error_us = (best_rtt + 1) / 2;
		}
	}
	return 0;
}

int agent_visible_nodes(struct agent *a, char ***out)
{
	*out = NULL;
	if (simple_request(a, "nodes") != RPC_OK)
		return -1;
	const char *buf = a->req_reply.buff;
	int idx = 1, arity, n, type, size;
	char tag[MAXATOMLEN_UTF8];
	if (ei_decode_tuple_header(buf, &idx, &arity) < 0 || arity != 2 ||
	    ei_decode_atom(buf, &idx, tag) < 0 || strcmp(tag, "nodes") ||
	    ei_get_type(buf, &idx, &type, &size) < 0)
		return -1;
	if (type == ERL_NIL_EXT) {
		*out = xcalloc(1, sizeof(char *));
		return 0;
	}
	if (ei_decode_list_header(buf, &idx, &n) < 0 || n < 0)
		return -1;
	char **names = xcalloc((size_t)n + 1, sizeof(char *));
	for (int i = 0; i < n; i++) {
		char name[MAXATOMLEN_UTF8];
		if (ei_decode_atom(buf, &idx, name) < 0) {
			node_names_free(names);
			return -1;
		}
		names[i] = xstrdup(name);
	}
	*out = names;
	return n;
}

void agent_check_gone(struct agent *a, long dep_ms)
{
	if (a->gone || agent_alive(a) != 0)
		return;
	a->gone = true;
	snprintf(a->gone_why, sizeof(a->gone_why), "owner_silent");
	a->gone_dep_ms = dep_ms;
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
	else
		sbuf_addf(out, "the agent on \"%s\" went away (%s) and cleaned up",
			  node, a->gone_why[0] ? a->gone_why : "unknown");
}

int agent_alive(struct agent *a)
{
	ei_x_buff args;
	ei_x_new(&args);  /* ei_rpc_to wants no version byte */
	ei_x_encode_list_header(&args, 1);
	ei_x_encode_pid(&args, &a->pid);
	ei_x_encode_empty_list(&args);
	int r = rpc(a, "erlang", "is_process_alive", &args);
	ei_x_free(&args);
	if (r != RPC_OK)
		return -1;
	int idx = 1;
	char word[MAXATOMLEN];
	if (ei_decode_atom(a->rpc_reply.buff, &idx, word) < 0)
		return -1;
	return !strcmp(word, "true");
}
