/*
 * agent_ops: the agent's operations as steps, each a request and its
 * answer, driven by agent_op_step: attaching (release, lock, load,
 * start), tracing, the clock, leaving (see agent.h).
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

static void lock_release(struct agent *a);

enum op_step op_done(struct agent *a, int rc)
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

/* The agent's helper modules: it loads them itself, from start/4's
 * options, before it calls any (PROTOCOL.md). */
static const struct helper {
	const char *module;
	const unsigned char *beam, *end;
} helpers[] = {
	{ "beamscope_printer", bs_printer_beam, bs_printer_beam_end },
	{ "beamscope_info", bs_info_beam, bs_info_beam_end },
	{ "beamscope_pattern", bs_pattern_beam, bs_pattern_beam_end },
	{ "beamscope_prof", bs_prof_beam, bs_prof_beam_end },
	{ "beamscope_alarm", bs_alarm_beam, bs_alarm_beam_end },
	{ "beamscope_scan", bs_scan_beam, bs_scan_beam_end },
	{ "beamscope_trace", bs_trace_beam, bs_trace_beam_end },
};
enum { NHELPERS = sizeof(helpers) / sizeof(helpers[0]) };

static bool send_start(struct agent *a)
{
	const struct agent_opts *o = &a->op.opts;
	ei_x_buff args;
	ei_x_new(&args);  /* ei_rpc_to wants no version byte */
	ei_x_encode_list_header(&args, 4);
	ei_x_encode_pid(&args, conn_self(a->conn));
	ei_x_encode_binary(&args, bs_tracer_beam, EMBED_SIZE(bs_tracer_beam));
	ei_x_encode_binary(&args, bs_tracer_so, EMBED_SIZE(bs_tracer_so));
	ei_x_encode_map_header(&args, 8);
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
	ei_x_encode_atom(&args, "modules");
	ei_x_encode_list_header(&args, NHELPERS);
	for (size_t i = 0; i < NHELPERS; i++) {
		ei_x_encode_tuple_header(&args, 2);
		ei_x_encode_atom(&args, helpers[i].module);
		ei_x_encode_binary(&args, helpers[i].beam,
				   (long)(helpers[i].end - helpers[i].beam));
	}
	ei_x_encode_empty_list(&args);
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
	[ST_NAME]     = { "asking for its name", WAIT_RPC, agent_send_name, agent_got_name },
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
	op_enter(a, a->conn->by_port ? ST_NAME : ST_RELEASE);
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
