/*
 * session_priv: the session engine's state, for the engine's own files
 * (session.c, stream.c, lifecycle.c, loop.c, access.c, replay.c, spec.c)
 * and its unit tests.  Front ends use the functions of session.h; make
 * layers refuses this header anywhere else.
 */
#ifndef BS_SESSION_PRIV_H
#define BS_SESSION_PRIV_H

#include <pthread.h>

#include "agent.h"
#include "alarm.h"
#include "analyser.h"
#include "conn.h"
#include "session.h"

#define SESSION_ANALYSERS 4

/* Every analyser that is on and has a hook for it hears it, in order. */
#define CHAIN(s, hook, ...) do {					\
	for (int an_ = 0; an_ < (s)->nchain; an_++) {			\
		const struct analyser_slot *a_ = &(s)->chain[an_];	\
		if (a_->ops->hook && (!a_->on || *a_->on))		\
			a_->ops->hook(a_->st, __VA_ARGS__);		\
	}								\
} while (0)

/* Every sink with a hook for it hears it, in the order they were added. */
#define SINKS(s, hook, ...) do {					\
	for (int sk_ = 0; sk_ < (s)->nsinks; sk_++)			\
		if ((s)->sinks[sk_].hook)				\
			(s)->sinks[sk_].hook((s)->sinks[sk_].arg,	\
					     __VA_ARGS__);		\
} while (0)

/* Whether any sink has a hook, in *any (what none hears is not asked). */
#define SINKS_ANY(s, hook, any) do {					\
	*(any) = false;							\
	for (int sk_ = 0; sk_ < (s)->nsinks; sk_++)			\
		if ((s)->sinks[sk_].hook)				\
			*(any) = true;					\
} while (0)

/* One target node and its agent session. */
struct snode {
	struct session *s;
	int idx;
	char arg[520];          /* the name as given, or as its peers know it */
	char name[MAXATOMLEN_UTF8]; /* as it calls itself, once known */
	bool present;           /* in the session (:detach takes it out) */
	bool required;          /* named by the user: failing to attach it
				 * fails the start */
	enum snode_state state;
	struct conn conn;
	/* SN_CONNECTING: the connector thread owns conn until it writes its
	 * byte to connect_pipe; then its result is in connect_rc and the two
	 * texts */
	pthread_t connector;
	int connect_pipe[2];
	int connect_rc;
	struct sbuf connect_err, connect_warn;
	struct agent agent;
	struct decoder dec;
	struct trace_stats st;
	bool stats_ready;       /* stats and decoder are set up */
	struct trace_result tr; /* of the last trace request */
	unsigned gen;           /* the session generation it traces */
	bool ever_lost;
	char left[32];          /* its agent left by itself: agent_timeout or
				 * agent_lost; "" otherwise */
	bool ever_left;
	int sessions;           /* times an agent was started there */
	long long clock_offset_us, clock_error_us;
	int64_t last_ts;        /* newest event, beamscope's clock */
	long long last_rx_ms;   /* when its last batch arrived */
	long long next_retry_ms;
	bool retry_said;        /* told the user why it is not back yet */
	long long deadline_ms;  /* SN_STOPPING: give up waiting then */
	long long stop_ms;      /* SN_STOPPING: when the stop was sent */
	bool silence_check;     /* the alive question asks about silence */
	char tripped[32];       /* a limit the target enforced, "" if none */
	char cleared[96];       /* what someone else cleared of our tracing
				 * mid-run ("flags,new_processes"), "" if
				 * nothing: the counts are not complete */
	long shed;              /* events shed over --rate */
	long count_overflow;    /* count-tier events that found no slot; -1 */
	/* what its processes are (the agent's describe): a process met is
	 * asked about once, "" until answered or when it had nothing to say */
	struct names labels;
	struct bs_pid *ask;     /* met, not asked yet; SESSION_ASK_MAX */
	int nask;
	long long next_ask_ms;  /* the next questions go then, or when a
				 * request's worth is waiting */
	struct relabel *later;  /* to ask once more, oldest first: a ring of
				 * SESSION_ASK_MAX, the rest not asked again */
	int later_head, nlater;
	char error[1400];       /* why the last attempt failed, "" if none */
	int error_rc;
	/* the node at a glance (the view's header): its samples while asked
	 * for, and its events and drops a second, kept always */
	unsigned long events;   /* as s->events counts them, this node's,
				 * in the whole run */
	struct node_stats nstats;
	bool nstats_on;         /* its agent was asked for samples */
	bool counted;           /* its last trace counts processes (the count
				 * tier: samples, top mode), not only ships */
	/* top mode: what its agent was asked ("" off), and what it last
	 * said of its scan */
	char top_asked[24];
	int top_asked_n;
	unsigned prof_asked;    /* the profiler as asked of its agent: the
				 * session's prof_gen then; 0 never */
	unsigned alarm_asked;   /* the alarms likewise (alarm_gen) */
	unsigned exact_asked;   /* exact mode likewise (exact_gen) */
	unsigned long alarms;   /* the VM's alarms it reported */
	unsigned long alarms_suppressed; /* ... and its agent did not ship */
	struct {
		bool have;
		long scanned, total;   /* this pass: looked at, in it */
		long pass_ms;          /* the last whole pass took; 0: none yet */
	} top;
	struct node_view view;  /* what session_node() last made of it */
};

struct session {
	const struct config *cfg;
	/* the front end's sink first, then those added (session_add_sink) */
	struct session_sink sinks[SESSION_SINKS_MAX + 1];
	int nsinks;
	struct session_spec spec;
	bool multi;             /* several nodes: merged timeline */
	struct snode *nodes;    /* nodes_max slots, never moved */
	int nnodes, nodes_max;  /* BS_MAX_NODES, or a recording's
				 * RECORDING_NODES_MAX */
	struct merge merge;
	struct callstacks calls;
	struct gencalls gcalls; /* gen calls paired, when spec.gen_calls */
	/* the analysers, in order: each with its state, and what says it
	 * is on (NULL: always) */
	struct analyser_slot {
		const struct analyser_ops *ops;
		void *st;
		const bool *on;
	} chain[SESSION_ANALYSERS];
	int nchain;

	/* the goal: tracing (with generation gen) or not */
	bool want_tracing;
	bool hold;              /* agents up, not tracing yet (start-up) */
	unsigned gen;
	bool start_pending;     /* the outcome of a start is not told yet */
	bool start_checked;     /* the names of this start were checked */
	int start_rc;           /* EXIT_* of the last start, once settled */
	char start_error[1400];
	bool closing;           /* the final stop: no waiting for code to go */
	bool waiting;           /* a front end waits for the start's outcome */
	char stopped_why[128];  /* why tracing stopped, "" while tracing */

	long long trace_start_ms;
	/* events (see the man page: of the kinds asked for, shipped or
	 * counted on the target) since the last start: what max_events
	 * limits and the view's ev/s shows */
	unsigned long events;
	unsigned long events_all; /* ... in the whole run */
	bool limit_hit;         /* max_events reached */
	unsigned long over_limit; /* events refused at max_events since the
				   * last start: a recording was cut */
	long long last_turn_ms, recheck_at_ms, next_ping_ms;
	long long rates_ms;     /* the nodes' events and drops a second:
				 * when last taken */
	bool node_stats;        /* the agents send their node's samples */
	char top_metric[24];    /* top mode: the agents' metric; "" off */
	int top_n;
	/* the sampling profiler as wanted: whom (on prof_node, -1 every
	 * node; none when !prof_on), how often, within what budget; each
	 * change a new prof_gen */
	bool prof_on;
	struct pidsel prof_sel;
	int prof_top;           /* > 0: the leaders by reductions, not sel */
	int prof_node, prof_hz;
	long prof_budget_us;
	unsigned prof_gen;
	/* the VM's alarms as wanted (every node), each change a new
	 * alarm_gen */
	bool alarms_on;
	struct alarm_spec alarms;
	unsigned alarm_gen;
	/* exact mode as wanted: the patterns timed (none: off) on
	 * exact_node (-1 every node), each change a new exact_gen */
	char exact_pat[SESSION_EXACT_MAX][SESSION_EXACT_LEN];
	int exact_n, exact_node;
	unsigned exact_gen;
	unsigned long counted;  /* count-tier events, all nodes and starts */

	char **modules;         /* loaded on a target, NULL-ended; NULL
				 * until asked for and answered */

	/* replaying a recording */
	struct recording *rec;
	char *rec_path;
	struct pidsel rec_sel;  /* the spec's processes, for filtering */
	bool rec_sel_ready;
	struct replay *replay;  /* what replay.c keeps while it reads */
	bool rec_done;
	char rec_summary[600];  /* what loading found, once done */

	/* a change of the spec tried at the next start (spec.c) */
	enum { SESSION_TRIAL_NONE, SESSION_TRIAL_CALL,
	       SESSION_TRIAL_MATCH } trial;
	char match_before[BS_MAX_MATCH + 1];
};

void session_init(struct session *s, const struct config *cfg,
		  const struct session_spec *spec, const struct session_sink *sink);
void session_release(struct session *s);

/* ---- shared by the engine's files: a node's steps (lifecycle.c), the
 * goal (session.c), the stream (stream.c) ---- */

void node_agent_fresh(struct snode *n);
void node_ask_labels(struct snode *n);
void node_ask_labels_again(struct snode *n, long long now);
void node_ask_structs(struct snode *n);
bool node_busy(const struct snode *n);
void stream_from_merge(void *arg, const struct mitem *it);
bool node_has_agent(const struct snode *n);
const char *node_meet(struct snode *n, struct bs_pid pid);
void node_agent_left(struct snode *n);
bool node_connect_done(struct snode *n, bool wait);
void node_lost(struct snode *n);
int node_of_text(void *arg, const char *pid_text);
void node_open(struct snode *n);
void node_rates(struct session *s, long long now);
void node_stats_reconcile(struct snode *n);
void node_step(struct snode *n);
void node_stop(struct snode *n);
void node_trace(struct snode *n);
void node_on_labels(void *arg, const char *buf, const struct msg *m);
void node_on_relations(void *arg, const char *buf, const struct msg *m);
void goal_reconcile(struct session *s);
void node_top_reconcile(struct snode *n);
void node_profile_reconcile(struct snode *n);
void node_alarms_reconcile(struct snode *n);
void node_exact_reconcile(struct snode *n);
void node_set_state(struct snode *n, enum snode_state st);
void goal_start_failed(struct session *s, int rc, const char *why);
struct snode *node_add(struct session *s, const char *name, bool required);
struct snode *node_find(struct session *s, const char *name);
const char *node_state_name(const struct snode *n);
#endif
