/*
 * agent: beamscope's side of the wire protocol (nif/PROTOCOL.md).
 *
 * There is one receive path: agent_pump() reads what has arrived and
 * dispatches each message by its shape.  Waiting for an rpc or a request
 * reply is just pumping until the reply has been seen, so event batches that
 * arrive meanwhile are handed to the stream callbacks, never swallowed.
 *
 * Only the session's own processes are believed: a protocol message counts
 * when the distribution names its sender (the agent and its workers send
 * to our registered name) and the sender is the agent, or the worker the
 * message speaks for.  Everything else is counted in unknown and ignored.
 * Requests carry a secret made for each attach, which the agent checks.
 */
#ifndef BS_AGENT_H
#define BS_AGENT_H

#include <ei.h>
#include <stdbool.h>

#include "conn.h"
#include "decode.h"
#include "names.h"
#include "pidsel.h"
#include "sbuf.h"
#include "structs.h"

/* the oldest OTP release a target may run: the embedded code is built by it */
#define AGENT_MIN_OTP 25
/* bytes of the secret our requests carry */
#define AGENT_SECRET_LEN 16

struct agent_opts {
	int workers;             /* 0: one per scheduler */
	unsigned dep_timeout_ms; /* agent cleans up after this much silence */
	unsigned high_water;     /* ring cells per worker before drops */
	unsigned batch_max;      /* events per batch */
	unsigned batch_ms;       /* longest wait before a partial batch ships */
};

struct trace_result;

struct agent_stream {
	void (*batch)(void *arg, const char *buf, const struct msg *m);
	void (*eos)(void *arg, const struct msg *m);
	void (*counts)(void *arg, const char *buf, const struct msg *m); /* may be NULL */
	void (*info)(void *arg, const char *buf, const struct msg *m);   /* may be NULL */
	void (*labels)(void *arg, const char *buf, const struct msg *m); /* may be NULL */
	void (*relations)(void *arg, const char *buf, const struct msg *m); /* may be NULL */
	void (*limit)(void *arg, const struct msg *m);                   /* may be NULL */
	void (*node)(void *arg, const char *buf, const struct msg *m);   /* may be NULL */
	void (*top)(void *arg, const struct msg *m);                     /* may be NULL */
	void (*cleared)(void *arg, const char *buf, const struct msg *m); /* may be NULL */
	void (*profile)(void *arg, const char *buf, const struct msg *m); /* may be NULL */
	void (*alarms)(void *arg, const char *buf, const struct msg *m); /* may be NULL */
	void (*alarm_state)(void *arg, const char *buf, const struct msg *m); /* may be NULL */
	void (*calls)(void *arg, const char *buf, const struct msg *m); /* may be NULL */
	void (*calls_state)(void *arg, const char *buf, const struct msg *m); /* may be NULL */
	void *arg;
};

struct agent {
	struct conn *conn;
	struct agent_stream stream;
	erlang_pid pid;          /* the agent process on the target */
	erlang_pid *worker_pids; /* its workers, by index (workers of them) */
	unsigned char secret[AGENT_SECRET_LEN]; /* this attach's, for requests */
	erlang_pid lock;         /* holds the bootstrap lock while lock_spawned */
	bool lock_spawned;
	bool started;
	char node[MAXATOMLEN_UTF8]; /* the target's own name for itself */
	char otp[16];
	char elixir[16];         /* the target's Elixir version; "": none */
	unsigned printer;        /* what its printers do: TD_* (term.h) */
	struct structs structs;  /* its Elixir struct modules, as it said */
	int workers, schedulers;
	struct names names;      /* registered names, kept up to date */

	bool rpc_want, rpc_got;
	ei_x_buff rpc_reply;
	bool req_want, req_got;
	erlang_ref req_ref;
	ei_x_buff req_reply;

	unsigned long unknown;   /* messages of unknown shape */
	/* the agent left by itself (beamscope_exit): why, and the dependency
	 * timeout it had, when that was the reason */
	bool gone;
	char notice[160];        /* said once attached, if not empty */
	char gone_why[32];
	char gone_reason[128];   /* agent_lost: why it died, as the target said */
	long gone_dep_ms;
	long long heard_ms;      /* the agent's last reply (monotonic) */
	int rpc_tmo_ms;          /* how long to wait for an answer; 0: 15 s */

	/* the operation in progress (agent_*_begin), at most one at a time */
	struct agent_op_state {
		enum agent_op {
			AOP_NONE, AOP_ATTACH, AOP_CLOCK, AOP_TRACE, AOP_GONE,
			AOP_NODES, AOP_ALIVE, AOP_MODULES
		} kind;
		int step;               /* where in its sequence it is */
		bool saw_agent;         /* AOP_ATTACH: another session's agent */
		bool done;              /* finished: rc and err say how */
		int rc;                 /* EXIT_* once done */
		struct sbuf err;        /* one line for the user when rc != 0 */
		long long deadline_ms;  /* monotonic; the step's answer is late */
		long long until_ms;     /* AOP_GONE: give up at this time */
		struct agent_opts opts; /* AOP_ATTACH */
		int samples, taken;     /* AOP_CLOCK */
		long long t0_us, best_rtt_us;
		long long offset_us, error_us;
		struct trace_result *trace; /* AOP_TRACE: filled when done */
		char **nodes;           /* AOP_NODES, AOP_MODULES: owned
					 * until taken */
		int alive;              /* AOP_ALIVE: 1, 0, or -1 */
	} op;
};

enum pump_result { PUMP_OK, PUMP_SIGNAL, PUMP_LOST };

void agent_init(struct agent *a, struct conn *c, const struct agent_stream *s);
void agent_release(struct agent *a);

/* Wait up to ms for input; read and dispatch a bounded number of messages. */
enum pump_result agent_pump(struct agent *a, int ms);
/* The socket is readable: read and dispatch at most budget messages, and
 * for no longer than AGENT_READ_SLICE_MS (what they cost to take in
 * depends on what they hold: the loop looks at signals and deadlines
 * between two slices). */
#define AGENT_READ_SLICE_MS 50
enum pump_result agent_read(struct agent *a, int budget);


struct trace_result {
	unsigned long traced;
	char **skipped;          /* pid texts, owned */
	int nskipped;
	long pattern_functions[32]; /* functions each --call pattern set */
	int npatterns;
	char **skipped_functions;   /* "m:f/a" that had someone's pattern, owned */
	int nskipped_functions;
	/* the receive pattern was not ours to set ("other", "off"); "" */
	char receive_pattern[16];
	/* legacy: the send pattern is another's ("other", "off"); "" */
	char send_pattern[16];
	char tracing[16];        /* "session" (OTP 27+), "legacy"; "": unsaid */
	char *new_skipped;       /* legacy: new processes' tracer, another's
				  * (text, owned); NULL */
	long taken;              /* processes --take-over took */
	long gc_skipped;         /* processes whose gc another session traces */
	bool gc_new_skipped;     /* ... and new processes' */
};

struct trace_spec {
	int kinds;
	const struct pidsel *sel;
	unsigned payload_bytes;
	bool count_tier;         /* sends/receives counted, not shipped */
	unsigned interval_ms;    /* how often counts are shipped */
	const char *const *calls;/* call patterns, compiled on the target */
	int ncalls;
	unsigned long elixir_calls; /* bit i: calls[i] is a head in Elixir
				     * form, for the target's Elixir */
	const char *match;       /* --match, compiled on the target; NULL */
	bool follow;             /* children of the chosen processes too */
	unsigned long max_events;/* limits enforced on the target; 0: none */
	unsigned long duration_ms;
	unsigned long rate;      /* events/s */
	bool shed;               /* over the rate: shed instead of stopping */
	bool legacy;             /* the legacy session even where there are
				  * sessions (OTP 27+) */
	bool take_over;          /* legacy: take what another tracer holds */
};

void trace_result_release(struct trace_result *r);

/* Heartbeat; no reply is awaited. */
int agent_ping(struct agent *a);
/* Put the process <0.num.serial> in focus (its events are shipped) or
 * take it out; -1, and nothing sent, for a pid the target cannot have. */
int agent_focus(struct agent *a, unsigned num, unsigned serial, bool on);
/* Have these processes (at most AGENT_SAMPLE_MAX) sampled every second,
 * in place of the ones asked before; no reply. */
#define AGENT_SAMPLE_MAX 2000
int agent_sample(struct agent *a, const struct bs_pid *pids, int n);
/* Ask what these processes are (at most AGENT_DESCRIBE_MAX of them); the
 * answer comes on the stream (labels).  Local pids of the target.  again:
 * the second and last question about them (no answer says again). */
#define AGENT_DESCRIBE_MAX 500
/*
 * Ask what the modules named (atom texts, UTF-8) are: structs and their
 * fields; answered on the stream (beamscope_structs), which fills
 * a->structs.  At most 64 are asked.  0, or -1 if it could not be sent.
 */
int agent_structs(struct agent *a, char *const *mods, int n);
int agent_describe(struct agent *a, const struct bs_pid *pids, int n,
		   bool again);
/* Ask for the node's samples (the view's header) once a second, or stop
 * them; they come on the stream (node).  No reply is awaited. */
int agent_node_stats(struct agent *a, bool on);
/* Top mode: the agent looks for the n processes of the node that lead by
 * metric (memory, reductions a second, message_queue_len) and samples
 * them with the rows on screen; NULL: off.  No reply is awaited. */
int agent_top(struct agent *a, const char *metric, int n);
/* The sampling profiler: the processes of who (a list: pids of the target,
 * registered names) sampled hz times a second in all, spending at most
 * budget_us of the target's time a second; who NULL: the top_n processes
 * leading by reductions a second (top mode's scan, picked again each
 * second), or off when top_n is 0.  The samples come on the stream
 * (profile), a second at a time.  No reply is awaited. */
int agent_profile(struct agent *a, const struct pidsel *who, int top_n,
		  int hz, long budget_us);
/* Exact mode: call_time and call_memory on the functions the n patterns
 * name ("mod:_", "mod:fun", "mod:fun/2"), in a trace session of the
 * agent's; n 0: off.  What the agent did comes on the stream
 * (calls_state), then the totals once a second (calls).  Independent of
 * the sampling profiler.  No reply is awaited. */
int agent_profile_calls(struct agent *a, const char *const *patterns, int n);
/* The VM's alarms at the thresholds of sp (alarm.h), or off (sp NULL):
 * what the agent did comes on the stream (alarm_state), then the alarms
 * (alarms).  No reply is awaited. */
struct alarm_spec;
int agent_alarms(struct agent *a, const struct alarm_spec *sp);
/* Deactivate the session only: followers drop their flags at their next
 * event; the agent stays until stopped. */
int agent_unfollow(struct agent *a);
/* Ask the agent to stop; the reply and the workers' eos arrive by pumping.
 * The reply is matched like a request's, so an operation in progress is
 * abandoned first (agent_op_end: a->op.kind is AOP_NONE afterwards). */
int agent_stop_send(struct agent *a);
/* The visible nodes the target is connected to, as a NULL-ended array
 * (free with node_names_free); their number, or -1.  The one blocking
 * call: it pumps this agent alone until the answer (--discover, before
 * anything is traced). */
int agent_visible_nodes(struct agent *a, char ***out);
/* The agent is gone without a word (no reply for a while, and the target
 * says it is not there): it is lost, as one that was killed. */
void agent_set_lost(struct agent *a, const char *reason);
/* Why the agent left by itself, in one line for the user (gone only). */
void agent_gone_text(const struct agent *a, struct sbuf *out);
/* Has the reply to the last request arrived? */
bool agent_reply_arrived(const struct agent *a);

/*
 * Asynchronous operations.  agent_*_begin() sends the first message and
 * returns at once; the replies are handled as agent_read() dispatches them,
 * and agent_op_step() advances the operation (call it after every read and
 * on every tick, so that a late answer times out).  Once a->op.done, a->op.rc
 * is an EXIT_* code and a->op.err says what went wrong; agent_op_end() then
 * frees the state (the caller takes the results it wants first).  A begin
 * while another operation is in progress fails that begin at once: the one
 * in progress is abandoned (its answer is ignored), and a->op shows the new
 * one done with EXIT_FAIL.  A begin after a finished operation that was not
 * ended ends it first.
 */
void agent_attach_begin(struct agent *a, const struct agent_opts *o);
/* res is filled when the operation is done with EXIT_OK; the caller owns it. */
void agent_trace_begin(struct agent *a, const struct trace_spec *spec,
		       struct trace_result *res);
/* Done with the target's clock against ours from `samples` round trips:
 * target = ours + op.offset_us, within +-op.error_us. */
void agent_clock_begin(struct agent *a, int samples);
/* Done (EXIT_OK) once the agent's code is gone from the target, so that a
 * new session can start; EXIT_CONNECT when that takes longer than ms. */
void agent_gone_begin(struct agent *a, int ms);
/* Done with op.nodes, a NULL-ended array: take it (set it NULL) or it is
 * freed by agent_op_end. */
void agent_nodes_begin(struct agent *a);
/* Done with op.alive: 1, 0, or -1 (no answer). */
void agent_alive_begin(struct agent *a);
/* Done with op.nodes, a NULL-ended array of the modules loaded on the
 * target, sorted: take it or it is freed by agent_op_end. */
void agent_modules_begin(struct agent *a);
/* Advance the operation in progress; true when there is none or it is done. */
bool agent_op_step(struct agent *a);
/* Forget a finished (or abandoned) operation. */
void agent_op_end(struct agent *a);
/* What the operation in progress waits for, for people ("starting the
 * agent", "setting trace flags"); "" when none. */
const char *agent_op_text(const struct agent *a);

#endif
