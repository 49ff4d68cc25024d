/*
 * session: the one engine under batch mode and the view.
 *
 * A session owns its targets and their whole life: attach (one node, several,
 * --cluster), trace with a spec, the readable fds and what to do when one is
 * readable, ticks (pings, the stall re-check, --reconnect retries, the merge
 * watermark), stop and drain, lost nodes.  It reports through a sink and
 * never prints: front ends (batch, the view) choose the sink and run the loop.
 *
 * Everything after start-up is asynchronous: session_start() and
 * session_stop() set a goal, and each node moves towards it one answer at a
 * time as session_poll() reads.  Nothing waits inside a request; a front end
 * that must wait (batch before its first event, the view before its screen
 * is up) polls until session_settled().
 *
 * A session may instead replay a recording (session_open_recording): the
 * same sinks get the same callbacks, filtered by the same spec; nothing is
 * attached and the commands that need a node say so.
 *
 * Invariants: node indexes never change (a node that leaves stays in the
 * array, not present); every event handed to the sink has pid.node set to
 * its node's index; with several nodes, events reach the sink in time order
 * on beamscope's clock.
 */
#ifndef BS_SESSION_H
#define BS_SESSION_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "agent.h"
#include "callstack.h"
#include "decode.h"
#include "gencall.h"
#include "merge.h"
#include "nodestat.h"
#include "opts.h"
#include "sbuf.h"
#include "stats.h"

/* the engine's constants: each has one definition */
#define SESSION_PING_MS 1000       /* heartbeat to every agent */
#define SESSION_STOP_TMO_MS 5000   /* a stop's reply and last batches ... */
#define SESSION_STOP_QUIET_MS 1000 /* ... longer while batches still come */
#define SESSION_STOP_MAX_MS 60000  /* ... but never longer than this */
#define SESSION_SILENT_MS 5000     /* no reply from an agent: is it there? */
#define SESSION_RETRY_MS 1000      /* --reconnect: try a lost node again */
#define SESSION_CLOCK_SAMPLES 8    /* round trips to measure a node's clock */
#define SESSION_BATCH_MAX 2000     /* events per batch from a worker */
#define SESSION_BATCH_MS 5         /* a partial batch waits at most this */
/* processes waiting to be described, and described ones remembered per
 * node: past that the table starts again (they are asked about again) */
#define SESSION_ASK_MAX 16384
#define SESSION_ASK_MS 100
#define SESSION_LABELS_MAX 65536    /* 1.5 MB of slots, names apart */
/* where labels exist (OTP 27), a process that had none at its first
 * answer is asked once more this long after it */
#define SESSION_RELABEL_MS 2000
#define SESSION_INTERVAL_MS 250    /* count-tier deltas, info samples */
#define SESSION_RECHECK_MS 3000    /* after a stall: ask the agents again */
#define SESSION_MERGE_SLACK_US 100000 /* a busy node's streams may lag */
#define SESSION_MERGE_QUIET_MS 250 /* no batch for this long: quiet */
#define SESSION_MERGE_MAX 500000   /* events held for ordering */
/* messages read from one node per turn: batch mode reads much at a time;
 * the view reads little, so that a key waits at most for this much */
#define SESSION_READ_BATCH 256
#define SESSION_READ_VIEW 4
/* recording lines read per turn */
#define SESSION_REPLAY_SLICE 2000

struct recording;
struct recording_proc;
struct replay;
struct rerender_node;

enum snode_state {
	SN_IDLE,        /* nothing of ours runs there */
	SN_CONNECTING,  /* a thread of its own asks epmd and shakes hands */
	SN_ATTACHING,   /* connected; the agent is being started */
	SN_CLOCK,       /* measuring its clock (several nodes) */
	SN_READY,       /* the agent runs; not tracing */
	SN_STARTING,    /* trace request sent */
	SN_TRACING,
	SN_STOPPING,    /* stop sent; its reply and last batches awaited */
	SN_LEAVING,     /* waiting for the agent's code to leave */
	SN_LOST,        /* the connection went away */
	SN_RECORDED,    /* a node of a recording */
};

/*
 * What a front end reads of one node: a snapshot session_node() makes,
 * valid until the next call for the same node.  What it points to is the
 * engine's, read only, valid while the session lives.
 */
struct node_view {
	int idx;
	const char *arg;            /* the name as given */
	bool present;               /* in the session (:detach takes it out) */
	enum snode_state state;
	const char *state_name;     /* the state in a word, for people */
	enum term_syntax syn;       /* the syntax its events are written in */
	const struct names *names;  /* its registered names, as its agent said */
	const struct trace_stats *st;
	bool stats_ready;           /* st is set up */
	const struct trace_result *tr;   /* of its last trace request */
	bool ever_lost, ever_left;
	const char *left;           /* its agent left by itself: why; "" */
	const char *tripped;        /* a limit the target enforced; "" */
	const char *cleared;        /* what someone else cleared of our
				     * tracing mid-run; "" */
	int sessions;               /* times an agent was started there */
	long long clock_offset_us, clock_error_us;
	long shed;                  /* events shed over --rate */
	long count_overflow;        /* count-tier events with no slot; -1 */
	unsigned long malformed;    /* batches its decoder refused */
	unsigned long unknown;      /* messages its agent did not know */
	const struct node_stats *nstats;   /* the node at a glance */
	bool counted;               /* its last trace counts processes */
	struct {
		bool have;
		long scanned, total;   /* this pass: looked at, in it */
		long pass_ms;          /* the last whole pass took; 0: none yet */
	} top;                      /* what its agent last said of top mode */
};

/* INFO: progress detail (batch prints it, the view does not);
 * NOTE: worth a line anywhere; WARN and ERROR: something went wrong;
 * REFUSED: a change the targets refused at its start (session_add_call,
 * session_set_match), taken back: tracing starts again as before */
enum session_level { SESSION_INFO, SESSION_NOTE, SESSION_WARN, SESSION_ERROR,
		     SESSION_REFUSED };

/*
 * What a session reports.  Every callback may be NULL.  Strings are valid
 * during the call only.  node is the index of the node in the session.
 */
struct session_sink {
	/* an event asked for, in order; counted against max_events */
	void (*event)(void *arg, int node, const struct event *ev);
	/* count-tier deltas of one process (counts lines of a recording are
	 * turned into deltas too) */
	void (*counts)(void *arg, int node, struct bs_pid pid,
		       const char *pid_text, unsigned long sends,
		       unsigned long receives, unsigned long spawns);
	/* a recording: the counts handed over so far are as of ts, when its
	 * counts lines were written (one call per interval it has, so that
	 * a series stays a series) */
	void (*counts_at)(void *arg, int64_t ts);
	/* what is known of a process: a sample from the target, a name from
	 * a registration, an entry of an export; NULL/-1: not known */
	void (*info)(void *arg, int node, struct bs_pid pid,
		     const char *pid_text, const char *name,
		     const char *current, long mqlen);
	/* a sample's memory and heap, in bytes (measured, or at least),
	 * and reductions; NULL: not wanted */
	void (*sizes)(void *arg, int node, struct bs_pid pid,
		      struct psize memory, long reductions, struct psize heap);
	/* what a process is, beyond its initial call: a proc_lib process's
	 * '$initial_call' or its label, asked of the agent once */
	void (*label)(void *arg, int node, struct bs_pid pid,
		      const char *pid_text, const char *label);
	/* a whole process record of an export being reopened */
	void (*proc)(void *arg, int node, const struct recording_proc *p);
	/* a node's state changed (attached, tracing, lost, left, stopped) */
	void (*node_state)(void *arg, int node);
	/* one line for the user */
	void (*notice)(void *arg, enum session_level level, const char *text);
	/* a start succeeded: processes traced, on how many nodes, and how
	 * many another tracer had (a failed start is an ERROR notice and
	 * start_rc) */
	void (*started)(void *arg, unsigned long traced, int nodes,
			unsigned long skipped);
	/* a node's sample arrived (node_view.nstats->last) */
	void (*node_sample)(void *arg, int node);
	/* the links, monitors and ancestors of a process in focus, about
	 * once a second while it is (r->pid.node is the node's index) */
	void (*relations)(void *arg, int node, const struct relations *r);
	/* the sampling profiler's stacks, one call each, then what its
	 * second cost and reached */
	void (*profile_sample)(void *arg, int node, const struct prof_sample *p);
	void (*profile_second)(void *arg, int node, const struct prof_stats *st);
	/* exact mode's totals since it began, about once a second */
	void (*profile_calls)(void *arg, int node, const struct prof_calls *c);
	void *arg;
};

/* What to trace; the session keeps its own copy. */
#define SESSION_CALLS_MAX 32
struct session_spec {
	int kinds;
	char *pids;             /* --pids vocabulary, owned once copied;
				 * NULL or "" is all */
	bool follow;            /* pids is one process, and all it spawns */
	char *calls[SESSION_CALLS_MAX]; /* call patterns, owned */
	int ncalls;
	char match[BS_MAX_MATCH + 1]; /* --match, :match; "": none */
	double duration;        /* seconds; 0: none */
	unsigned long max_events; /* events handed to the sink; 0: none */
	unsigned payload;
	bool counts_only;       /* every process in the count tier (batch
				 * --counts) */
	bool ship_all;          /* every event shipped (batch); else the
				 * processes not named one by one are counted */
	bool gen_calls;         /* pair gen calls (kinds has gen_call and
				 * exit: the records, and what closes calls) */
	int syntax;             /* a term_syntax; -1: each target's own */
};

/* The engine's state: private to src/engine (session_priv.h). */
struct session;


/* The two front ends, for what they trace by default. */
enum session_front { SESSION_BATCH, SESSION_VIEW };
/* What the options ask of a front end's session: sp points into cfg (the
 * session copies what it keeps at session_init). */
void session_spec_from_config(struct session_spec *sp,
			      const struct config *cfg, enum session_front front);
/* What the session traces (its spec), to read. */
const struct session_spec *session_spec(const struct session *s);
/*
 * Changes for the next start (the caller starts it: session_start).  A
 * call pattern or a match the targets refuse is taken back, said as
 * SESSION_REFUSED, and tracing starts again without it.
 * session_add_call: 0, or -1 with why (not a pattern, or
 * SESSION_CALLS_MAX already).  session_remove_call: 0, or -1 if no
 * pattern was added as that text.  session_set_match: "" for none.
 */
int session_add_call(struct session *s, const char *pattern, struct sbuf *why);
int session_remove_call(struct session *s, const char *pattern);
void session_set_match(struct session *s, const char *pattern);
/* Take back the change being tried, if any: true if there was one. */
bool session_take_back(struct session *s);
/* The other changes, also for the next start.  session_set_kinds: the
 * --events kinds (call patterns and gen call pairing keep theirs);
 * session_set_gen_calls: false when there is nothing to change (as asked
 * already, or a recording, which has its records). */
void session_set_kinds(struct session *s, int kinds);
void session_set_duration(struct session *s, double secs);
void session_set_max_events(struct session *s, unsigned long n);
void session_set_payload(struct session *s, unsigned bytes);
bool session_set_gen_calls(struct session *s, bool on);

/* A session of the options cfg (kept, not copied), tracing spec (copied),
 * reporting to sink; freed with session_free. */
struct session *session_new(const struct config *cfg,
			    const struct session_spec *spec,
			    const struct session_sink *sink);
void session_free(struct session *s);
/* Another sink beside the front end's (a JSON file, a store, a summary):
 * it hears every hook it has, after those added before it.  At most
 * SESSION_SINKS_MAX; false when full.  It stays until session_free. */
#define SESSION_SINKS_MAX 4
bool session_add_sink(struct session *s, const struct session_sink *sink);
void session_spec_release(struct session_spec *sp);
/* A copy of src in dst (calls duplicated). */
void session_spec_copy(struct session_spec *dst, const struct session_spec *src);
/* What --pids says from now on (:pids, :follow, :unfollow), and whether it
 * is followed; takes effect at the next start. */
void session_set_pids(struct session *s, const char *pids, bool follow);

/* A node to trace; required: a failure to attach it fails the start. */
int session_add_node(struct session *s, const char *name, bool required);
/* The node called name (as given, as it calls itself, or its short name):
 * its index, or -1. */
int session_find_node(const struct session *s, const char *name);
const char *session_node_name(const struct session *s, int i);
/* The registered name of the process a pid text names ("<0.85.0>" on
 * node, or "<name@host.85.0>"), or NULL. */
const char *session_text_name(struct session *s, int node,
			      const char *pid_text);
/* What the agent said the process a pid text names is (a label, as
 * session_proc_label), or NULL. */
const char *session_text_label(struct session *s, int node,
			       const char *pid_text);
/* The registered name of a process as its node's agent knows it, or NULL. */
const char *session_proc_name(const struct session *s, struct bs_pid pid);
/* What the agent said a process is (sink.label), or NULL. */
const char *session_proc_label(const struct session *s, struct bs_pid pid);

/*
 * Ask for tracing with the current spec, from scratch: nodes that trace
 * with an older spec stop first.  Asynchronous: the outcome is told through
 * the sink (notice) and, once session_settled(), in start_rc.
 */
void session_start(struct session *s);
/* Stop tracing everywhere (asynchronous); why is kept for the status line. */
void session_stop(struct session *s, const char *why);
/* Take one node out (:detach): stopped, left clean. */
void session_drop_node(struct session *s, int idx);
/*
 * Print terms and names in syn (a term_syntax; -1: each node's own) from
 * the next event on.  Returns the syntax of the first node attached, or
 * of syn when none is.
 */
int session_set_syntax(struct session *s, int syn);
/* The syntax node's terms and names are printed in now. */
enum term_syntax session_node_syntax(const struct session *s, int node);
/* Put a process in or out of focus (its events are shipped). */
void session_focus(struct session *s, struct bs_pid pid, bool on);
/* The processes a view shows, for each tracing node's agent to sample
 * every second (memory, reductions, heap) in place of the last ones. */
void session_sample(struct session *s, const struct bs_pid *pids, size_t n);
/*
 * Can the nodes attached have the pids of a --pids text (or the one pid)?
 * A node drops the connection that sends it one of its own pids it cannot
 * have, so the prompt asks first.  0, or -1 with a one-line message in err
 * (what, e.g. the command, starts it).
 */
int session_check_pids(const struct session *s, const char *pids,
		       const char *what, struct sbuf *err);
int session_check_pid(const struct session *s, struct bs_pid pid,
		      const char *what, struct sbuf *err);
/* Ask every agent, now and as they come, for its node's samples once a
 * second (sink.node_sample), or stop them: what it turned on to measure
 * is turned off again. */
void session_node_stats(struct session *s, bool on);
/*
 * The sampling profiler (nif/beamscope_prof.erl): the processes of who (a
 * list of pids and names) on node (an index; -1: every node) sampled hz
 * times a second in all, spending at most budget_us of each target's time
 * a second; who NULL: off.  Asked of each agent as it comes up; what
 * they take comes to the sinks' profile hooks.
 */
void session_profile(struct session *s, int node, const struct pidsel *who,
		     int hz, long budget_us);
/* The same for the n processes of the node leading by reductions a
 * second, as top mode's scan finds them (within its own budget of 1% of
 * a scheduler), picked again each second. */
void session_profile_top(struct session *s, int node, int n, int hz,
			 long budget_us);
/*
 * Exact mode (nif/beamscope_prof.erl): call_time and call_memory on the
 * functions the n patterns name ("mod", "mod:fun", "mod:fun/N"), in a
 * trace session of each agent's own, on node (an index; -1 every node);
 * n 0: off.  Apart from the sampling profiler.  What each agent did is a
 * notice (a refusal a warning); the totals come to the sinks'
 * profile_calls hook about once a second.  0, or -1 with why in err (too
 * many patterns, one too long).
 */
#define SESSION_EXACT_MAX 16
#define SESSION_EXACT_LEN 256
int session_profile_calls(struct session *s, int node,
			  const char *const *patterns, int n, struct sbuf *err);
/* The patterns timed, at most max of them into out; 0: exact mode off. */
int session_exact(const struct session *s, const char **out, int max);
/*
 * The VM's alarms (nif/beamscope_alarm.erl) on every node, now and as
 * they come, at the thresholds of sp (alarm.h); NULL: off.  Each alarm is
 * an event of its process (EV_ALARM) to the sinks, whatever the kinds
 * asked for; what each agent did (on, or off because someone else holds
 * the node's system monitor) is a notice.
 */
void session_alarms(struct session *s, const struct alarm_spec *sp);
/* Whether alarms are wanted, and at what thresholds (NULL: off). */
const struct alarm_spec *session_alarm_spec(const struct session *s);
/* The alarms reported so far on all nodes; *suppressed: those the agents
 * did not ship (over their rate), when not NULL. */
unsigned long session_alarm_count(const struct session *s,
				  unsigned long *suppressed);
/* Top mode: every agent, now and as they come, looks for the n processes
 * of its node that lead by metric (memory, reductions,
 * message_queue_len) and samples them every second; NULL: off. */
void session_top(struct session *s, const char *metric, int n);
/* Followers drop their flags at their next event; tracing counts as
 * stopped ("unfollowed"). */
int session_unfollow(struct session *s);
/* Attach a node of the cluster (a view opened on several), at the next
 * start: its index, or SESSION_ATTACHED_ALREADY, or SESSION_NODES_FULL
 * (BS_MAX_NODES). */
#define SESSION_ATTACHED_ALREADY (-1)
#define SESSION_NODES_FULL (-2)
int session_attach_node(struct session *s, const char *name);
/* How many nodes are in the session (attached or attaching). */
int session_present_nodes(const struct session *s);
/* Why tracing stopped ("" while tracing), and whether it is wanted. */
const char *session_stopped_why(const struct session *s);
/* Events since the last start, as max_events counts them; in the whole
 * run; refused at max_events since the last start. */
unsigned long session_events(const struct session *s);
unsigned long session_events_all(const struct session *s);
unsigned long session_over_limit(const struct session *s);
/* Several nodes on one merged timeline; how the merge paired their
 * sends and receives. */
bool session_multi(const struct session *s);
const struct merge_stats *session_merge_stats(const struct session *s);
/* The nodes: how many slots are used, and one of them, to read. */
int session_nnodes(const struct session *s);
const struct node_view *session_node(struct session *s, int i);
/* How node i's events were rendered, for rerender_*. */
void session_rerender_node(const struct session *s, int i,
			   struct rerender_node *rn);
bool session_wants_tracing(const struct session *s);
/* The gen calls paired (read only); forget them (:clear); a call open
 * for longer than us is stuck. */
const struct gencalls *session_gencalls(const struct session *s);
/* Render what the gen calls hold again in another syntax. */
struct rerender_node;
void session_rerender(struct session *s, const struct rerender_node *nodes,
		      int n);
void session_forget_calls(struct session *s);
void session_set_stuck(struct session *s, int64_t us);
/* Told of every gen call closed (NULL: no one); the calls' clock moved
 * to now_us (a recording's: its own time). */
void session_on_call_done(struct session *s, gc_done_fn fn, void *arg);
void session_calls_tick(struct session *s, int64_t now_us);
/* Every event is in: what waits is settled now.  The rows changed since
 * the last time, each once, to fn. */
void session_calls_settle(struct session *s);
void session_calls_changed(struct session *s,
			   void (*fn)(void *arg, struct gc_row *r), void *arg);
/* The modules loaded on a tracing node, sorted and NULL-ended, for
 * completion: asked for once (asynchronously) and kept; NULL until the
 * answer is in. */
const char *const *session_modules(struct session *s);
/* --cluster: add every visible node of the attached ones (blocking; at
 * start-up only). */
void session_discover(struct session *s);

/*
 * The loop's fds: fills pfd (up to max) with the nodes' sockets, or a
 * recording's pipe while it has nothing to read, and returns how many.
 * After poll(), session_poll_done() reads what arrived (at most budget
 * messages per node) and runs the ticks.
 */
int session_pollfds(struct session *s, struct pollfd *pfd, int max);
void session_poll_done(struct session *s, const struct pollfd *pfd, int n,
		       int budget);
/* How long the loop may sleep before the session wants a turn, in ms:
 * at most wanted; 0 while a recording has more to read at once. */
int session_wait_ms(const struct session *s, int wanted);
/* Run the ticks without reading (also called by session_poll_done). */
void session_tick(struct session *s);

/*
 * The one run loop of every front end: each turn polls the signal pipe,
 * the front end's own fds and the session's, reads what arrived (budget
 * messages per node), runs the ticks and reads the next slice of a
 * recording, then calls step.  step gets the signal taken this turn (0:
 * none) and the front end's fds with their revents; it returns
 * SESSION_GO_ON, or anything else to end the loop with that.  wait_ms
 * says how long the front end may sleep (its own timers); NULL: a second.
 * A poll() that a signal interrupts marks the front end's fds readable
 * (curses turns SIGWINCH into a key); one that fails otherwise ends the
 * loop with SESSION_POLL_FAILED.
 */
#define SESSION_GO_ON (-1)
#define SESSION_POLL_FAILED (-2)
#define SESSION_LOOP_FDS 2
struct session_loop {
	struct pollfd fds[SESSION_LOOP_FDS];
	int nfds;
	int budget;
	long long (*wait_ms)(void *arg);
	int (*step)(void *arg, int sig, const struct pollfd *fds);
	void *arg;
};
int session_run(struct session *s, struct session_loop *l);

/* No node is between states: every request has its answer (or failed). */
bool session_settled(const struct session *s);
/* Is any node tracing?  Any lost?  Every present node lost? */
bool session_tracing(const struct session *s);
bool session_any_lost(const struct session *s);
bool session_all_lost(const struct session *s);
/* What waits for an answer, for the status line ("node x: starting the
 * agent"); "" when nothing does. */
void session_pending_text(const struct session *s, struct sbuf *out);
/* A limit that tripped: "max_events", "duration", "rate", or the target's
 * word; NULL if none. */
const char *session_tripped(const struct session *s);
/* Events delivered by every node (shipped), and dropped on the targets. */
unsigned long session_delivered(const struct session *s);
unsigned long session_dropped(const struct session *s);

/*
 * Start-up, before the front end has a loop: attach every node and wait
 * for the agents (nothing traced yet; session_discover may follow), then
 * start and wait for the outcome.  EXIT_* codes, err says what failed; a
 * signal ends the wait with EXIT_OK and "interrupted" in err.
 */
int session_attach_wait(struct session *s, struct sbuf *err);
int session_start_wait(struct session *s, struct sbuf *err);

/* Stop every node and wait (polling) for their last batches, up to
 * SESSION_STOP_TMO_MS; a second signal stops the wait. */
void session_drain(struct session *s);

/* One line for the user, through the sink. */
void session_notice(struct session *s, enum session_level level,
		    const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A source other than a live node hands over one event of node: the
 * spec's kinds and the event limit apply, then the sink (ev may be
 * changed). */
void session_feed(struct session *s, int node, struct event *ev);

/*
 * Replay a recording (replay.c): the session gets its nodes from the file and feeds
 * the sink as session_poll_done() (or session_replay()) reads it.  0, or
 * -1 with err.
 */
int session_open_recording(struct session *s, const char *path,
			   struct sbuf *err);
/* Read the next slice of the recording; false once it is all read. */
bool session_replay(struct session *s, int max_items);
bool session_is_recording(const struct session *s);
/* The recording's file, open for reading (an output must not be it), or
 * -1. */
int session_recording_fd(const struct session *s);
void session_replay_release(struct session *s);
/* Loading progress, 0..100; 100 when done or live; -1 while a stream of
 * unknown size (a pipe) is read. */
int session_replay_percent(const struct session *s);
/* The recording is all read; how many of its bytes so far; what loading
 * found (once done), and whether some of it was malformed; its path. */
bool session_replay_done(const struct session *s);
uint64_t session_replay_bytes(const struct session *s);
const char *session_replay_summary(const struct session *s, bool *malformed);
const char *session_recording_path(const struct session *s);
const struct recording_stats *session_recording_stats(const struct session *s);
/* A recording read from a pipe that has nothing more yet. */
bool session_replay_starved(const struct session *s);

#endif
