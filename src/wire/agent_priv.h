/*
 * agent_priv: what agent.c, agent_trace.c and agent_ops.c share, for
 * src/wire/ only.
 */
#ifndef BS_AGENT_PRIV_H
#define BS_AGENT_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#include <ei.h>

#include "agent.h"
#include "decode.h"
#include "sbuf.h"

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


enum { RPC_TIMEOUT = -1, RPC_LOST = -2 };

/*
 * The steps.  A step's send puts its one message on the wire (false: the
 * connection is gone); its handler reads the answer and returns the next
 * step, or ST_END through op_done().
 */
enum op_step {
	ST_NAME, ST_RELEASE, ST_ARCH, ST_ELIXIR,
	ST_LOCK_SPAWN, ST_LOCK_TIMER, ST_LOCK_TAKE, ST_LOCK_PAUSE,
	ST_WHEREIS,
	ST_LOADED, ST_OLD_CODE, ST_PAUSE,  /* the old session's code leaving */
	ST_LOAD, ST_START,
	ST_TRACE, ST_CLOCK, ST_NODES, ST_ALIVE, ST_MODULES,
	ST_END
};

enum op_wait { WAIT_RPC, WAIT_REQUEST, WAIT_PAUSE };

/* ---- shared by agent.c, agent_trace.c and agent_ops.c ---- */

int answer_ms(const struct agent *a);
void encode_pidsel(struct agent *a, ei_x_buff *x, const struct pidsel *sel);
bool memory_refusal(struct agent *a, const char *tag, const char *buf, int idx,
                    const char *options, struct sbuf *err);
bool read_info(struct agent *a, const char *buf, int *idx);
void reply_text(const ei_x_buff *x, int idx, const char *node,
                struct sbuf *out);
bool req_atom(struct agent *a, const char *what);
bool req_send(struct agent *a, ei_x_buff *x);
void request_begin(struct agent *a, ei_x_buff *x, erlang_ref *ref);
bool rpc_atom(struct agent *a, const char *fun, const char *atom);
int rpc_fail(struct agent *a, int r, const char *what, struct sbuf *err);
bool rpc_send(struct agent *a, const char *mod, const char *fun,
              ei_x_buff *args);
bool rpc_true(const struct agent *a);
int trace_decode(struct agent *a, struct trace_result *res, struct sbuf *err);
void trace_encode(struct agent *a, const struct trace_spec *spec,
                  ei_x_buff *x);
int request_send(struct agent *a, ei_x_buff *x);
/* the attach's steps: one ends it with its status; the name of a node
 * found at a port given (agent.c) */
enum op_step op_done(struct agent *a, int rc);
bool agent_send_name(struct agent *a);
enum op_step agent_got_name(struct agent *a);
#endif
