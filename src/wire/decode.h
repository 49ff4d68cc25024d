/*
 * decode: classify every message that arrives from the target by its shape,
 * and turn event batches into struct event records.
 *
 * Message shapes (see nif/PROTOCOL.md):
 *   {rex, Reply}                                  bootstrap rpc reply
 *   {beamscope_reply, Ref, Reply}                 agent reply
 *   {beamscope_batch, W, Seq, Dropped, Events}    event batch (a binary)
 *   {beamscope_eos, W, Batches, Dropped, Taken}   a worker's last word
 *   {beamscope_counts, Seq, Overflow, Counts}     count-tier deltas
 *   {beamscope_info, Samples}                     process_info samples
 *   {beamscope_labels, Labels}                    what processes are
 *   {beamscope_relations, Relations}              links, monitors and
 *                                                 ancestors in focus
 *   {beamscope_limit, Tripped, Shed}              a limit, events shed
 *   {beamscope_exit, Why, DepMs[, Reason]}        the agent left by itself
 *   {beamscope_node, Sample}                      the node at a glance
 *                                                 (nodestat.h decodes it)
 *   {beamscope_top, Metric, Scanned, Total, PassMs}  the top-N scan's pass
 *   {beamscope_structs, [{Module, Fields}]}       Elixir struct modules
 *                                                 asked about
 *   {beamscope_profile, {Stats, Samples}}         a second of the sampling
 *                                                 profiler's stacks
 *   {beamscope_alarms, Suppressed, Alarms}        the VM's alarms
 *   {beamscope_alarm_state, State}                what an alarms request did
 *   {beamscope_calls, Stats, Rows}                exact mode's totals
 *   {beamscope_calls_state, State}                what an exact request did
 * Anything else is WIRE_UNKNOWN: counted by the caller and ignored.  The
 * shape says nothing about who sent it: the caller checks that.
 */
#ifndef BS_DECODE_H
#define BS_DECODE_H

#include <ei.h>
#include <stdbool.h>
#include <stddef.h>

#include "event.h"
#include "names.h"
#include "sbuf.h"
#include "term.h"

/*
 * WIRE_MESSAGES: every message the C node takes, one row each: its tag,
 * its arities (the first element is the tag), who may send it, and its
 * fields after the tag, one letter each: r the reply's ref, w worker, s
 * seq, d dropped, t taken, L limit (an atom), b the body (the rest, read
 * by the handler).  Fields past the message's arity are absent: taken
 * -1, body 0.  decode_msg reads every row by this; agent.c has a handler
 * per row and checks the sender first (the build fails without one).
 */
enum wire_sender {
	WIRE_FROM_ANY,        /* rex answers with a plain send */
	WIRE_FROM_AGENT,
	WIRE_FROM_WORKER,     /* the worker the message names */
	WIRE_FROM_WORKER_OR_AGENT,  /* the agent speaks for a worker */
	WIRE_FROM_AGENT_OR_LOST,    /* or a worker, to say the agent is lost */
};

/*  id          tag                     arity  sender                     fields */
#define WIRE_MESSAGES(X) \
	X(RPC_REPLY, "rex",                 2, 2, WIRE_FROM_ANY,             "b") \
	X(REPLY,     "beamscope_reply",     3, 3, WIRE_FROM_AGENT,           "rb") \
	X(BATCH,     "beamscope_batch",     5, 5, WIRE_FROM_WORKER,          "wsdb") \
	X(EOS,       "beamscope_eos",       4, 5, WIRE_FROM_WORKER_OR_AGENT, "wsdt") \
	X(COUNTS,    "beamscope_counts",    4, 4, WIRE_FROM_AGENT,           "sdb") \
	X(INFO,      "beamscope_info",      2, 2, WIRE_FROM_AGENT,           "b") \
	X(LABELS,    "beamscope_labels",    2, 2, WIRE_FROM_AGENT,           "b") \
	X(RELATIONS, "beamscope_relations", 2, 2, WIRE_FROM_AGENT,           "b") \
	X(LIMIT,     "beamscope_limit",     3, 3, WIRE_FROM_AGENT,           "Ld") \
	X(EXIT,      "beamscope_exit",      3, 4, WIRE_FROM_AGENT_OR_LOST,   "Lsb") \
	X(NODE,      "beamscope_node",      2, 2, WIRE_FROM_AGENT,           "b") \
	X(TOP,       "beamscope_top",       5, 5, WIRE_FROM_AGENT,           "Lsdt") \
	X(CLEARED,   "beamscope_cleared",   2, 2, WIRE_FROM_AGENT,           "b") \
	X(STRUCTS,   "beamscope_structs",   2, 2, WIRE_FROM_AGENT,           "b") \
	X(PROFILE,   "beamscope_profile",   2, 2, WIRE_FROM_AGENT,           "b") \
	X(ALARMS,    "beamscope_alarms",    3, 3, WIRE_FROM_AGENT,           "db") \
	X(ALARM_STATE, "beamscope_alarm_state", 2, 2, WIRE_FROM_AGENT,       "b") \
	X(CALLS,     "beamscope_calls",     3, 3, WIRE_FROM_AGENT,           "b") \
	X(CALLS_STATE, "beamscope_calls_state", 2, 2, WIRE_FROM_AGENT,       "b")

enum wire_kind {
	WIRE_UNKNOWN,
#define X(id, tag, amin, amax, from, fields) WIRE_##id,
	WIRE_MESSAGES(X)
#undef X
	WIRE__COUNT
};

struct wire_message {
	const char *tag;
	int arity_min, arity_max;
	enum wire_sender from;
	const char *fields;
};

/* The rows, by kind (WIRE_UNKNOWN's is empty). */
extern const struct wire_message wire_messages[WIRE__COUNT];

struct msg {
	enum wire_kind kind;
	int body;            /* index of the reply term or the event list */
	erlang_ref ref;      /* WIRE_REPLY */
	long worker;         /* WIRE_BATCH, WIRE_EOS */
	long seq;            /* batch sequence number, or batch count at eos */
	long dropped;        /* cumulative drops of that worker; overflow; shed */
	long taken;          /* WIRE_EOS: events the worker took from its ring,
			      * shipped or not; -1 if not said */
	char limit[32];      /* WIRE_LIMIT: none, max_events, rate, duration;
			      * WIRE_EXIT: why the agent left (body: its
			      * reason, a binary, when there is one; else 0);
			      * WIRE_TOP: the metric (seq: processes looked
			      * at this pass, dropped: in it, taken: the
			      * last whole pass's ms) */
};

/* Classify the message in buf (starting with the version byte). */
enum wire_kind decode_msg(const char *buf, struct msg *m);

struct decoder {
	const char *node;       /* the target: its pids print as <0.N.S>;
				 * NULL: every pid prints with its node */
	size_t node_len;
	size_t payload_max;     /* payload text limit in bytes; 0: none */
	struct names *names;    /* updated by register/unregister */
	struct sbuf scratch;    /* backs the strings of the current event */
	unsigned long malformed;/* events that could not be decoded */
	bool reference;         /* ei's decoders only, nothing read in place:
				 * what the tests compare the fast paths to */
	enum term_syntax syn;   /* terms, names and functions as this
				 * language prints them */
	struct term_dialect dia;/* and as the target's printers do (zero:
				 * as OTP 25 and Elixir 1.14) */
	struct sbuf names_text; /* Elixir: the current event's names */
};

typedef void (*event_fn)(void *arg, const struct event *ev);

void decoder_init(struct decoder *d, const char *node, size_t payload_max,
		  struct names *names);
void decoder_release(struct decoder *d);

/*
 * What an event kept to be rendered again (its raw, raw_len, raw_part),
 * into ev, in d's syntax: as decoding the entry in that syntax in the
 * first place gives it.  An entry kept whole gives the whole event; a
 * message kept alone (RAW_PAYLOAD), only its payload and truncated.  d is
 * a decoder of its own: a registration decoded again goes into d's table
 * of names, which must not be the live one.  0, or -1 if it does not
 * decode.
 */
int decode_again(struct decoder *d, enum event_type type, const char *raw,
		 uint32_t len, uint8_t part, struct event *ev);

/*
 * Decode the events at buf[*idx], calling fn for each in order: a list of
 * event tuples, or a binary of event tuples each encoded whole (version
 * byte and all), back to back, as the workers ship them.  Malformed events
 * are skipped and counted.  Returns the number of events handed to fn, or
 * -1 if the list or binary itself is malformed.
 */
long decode_events(struct decoder *d, const char *buf, int *idx, int worker,
		   event_fn fn, void *arg);

typedef void (*count_fn)(void *arg, struct bs_pid pid, const char *pid_text,
			 unsigned long sends, unsigned long receives);
typedef void (*info_fn)(void *arg, struct bs_pid pid, const char *pid_text,
			const char *name, const char *current, long mqlen);

/* A sample's memory or heap, in bytes: measured, or what it is at least
 * where measuring it would have cost the target too much (a long message
 * queue: nif/beamscope_info.erl, Dear process_info items); bytes is -1
 * when not sampled. */
struct psize {
	long bytes;
	bool at_least;
};

/* memory, reductions and heap of a sample; reductions -1 when not sampled */
typedef void (*pinfo_fn)(void *arg, struct bs_pid pid, struct psize memory,
			 long reductions, struct psize heap);

/* bytes of a process's label at most, as the agent cuts it */
#define LABEL_MAX 120

/* again: the target has labels (OTP 27) and the process had none yet;
 * asking once more later may find one */
typedef void (*label_fn)(void *arg, struct bs_pid pid, const char *pid_text,
			 const char *label, bool again);

/* The count list of a WIRE_COUNTS at buf[*idx]; entries or -1. */
long decode_counts(struct decoder *d, const char *buf, int *idx,
		   count_fn fn, void *arg);
/* The sample list of a WIRE_INFO at buf[*idx]; entries or -1. */
long decode_info(struct decoder *d, const char *buf, int *idx,
		 info_fn fn, void *arg);
/* The same, and the sizes of the samples that carry them to pfn. */
long decode_info_sizes(struct decoder *d, const char *buf, int *idx,
		       info_fn fn, pinfo_fn pfn, void *arg);
/* The list of a WIRE_LABELS at buf[*idx]: label is NULL for a process
 * with nothing to say beyond its initial call; entries or -1. */
long decode_labels(struct decoder *d, const char *buf, int *idx,
		   label_fn fn, void *arg);

/*
 * What the agent says of a process in focus: how many links, monitors
 * and monitors of it there are, the first few links and monitors, and
 * its '$ancestors' (the parent first), as texts of entries separated by
 * a space, each in the decoder's syntax: pids as the node writes them
 * (<0.80.0>), ports (#Port<0.5>), names as atoms (my_sup, Shop.Sup).  A
 * list with more than it shows ends in " ...".
 */
#define REL_TEXT_MAX 320
struct relations {
	struct bs_pid pid;
	long links, monitors, monitored_by;
	char link_list[REL_TEXT_MAX];
	char monitor_list[REL_TEXT_MAX];
	char ancestors[REL_TEXT_MAX];   /* "" when it has none */
	bool ancestors_known;           /* false: the agent could not say */
};

typedef void (*relations_fn)(void *arg, const struct relations *r);

/* The list of a WIRE_RELATIONS at buf[*idx]; entries or -1. */
long decode_relations(struct decoder *d, const char *buf, int *idx,
		      relations_fn fn, void *arg);

/*
 * The sampling profiler's second (nif/beamscope_prof.erl): what it cost
 * and reached, and each stack it took.  Frames are functions as the
 * decoder's syntax writes them (m:f/N, M.f/N), root first; a stack the
 * agent read the cut way has "..." for its root, one it bounded "..."
 * in its middle.
 */
#define PROF_FRAMES_MAX 256
struct prof_stats {
	long samples, used_us, waited_us, skipped, gone, procs, cut, ms;
};
struct prof_sample {
	struct bs_pid pid;
	const char *pid_text;
	int64_t ts_us;             /* the target's clock */
	char status[24];           /* running, runnable, waiting, ... */
	bool whole;                /* read from the VM's dump of the stack */
	int nframes;
	const char *frames[PROF_FRAMES_MAX];
};
typedef void (*prof_fn)(void *arg, const struct prof_sample *s);

/* The body of a WIRE_PROFILE at buf[*idx]: its stats into *st, each
 * sample to fn; samples or -1. */
long decode_profile(struct decoder *d, const char *buf, int *idx,
		    struct prof_stats *st, prof_fn fn, void *arg);

/*
 * The VM's alarms (nif/beamscope_alarm.erl).  Each alarm of a
 * WIRE_ALARMS body is handed to fn as an event of type EV_ALARM (event.h:
 * its kind in extra, a port in peer, a node in peer_name, what else the
 * VM says in payload, elapsed_us, heap[0] bytes, heap[1] a queue's
 * length); alarms handed on, or -1.
 */
long decode_alarms(struct decoder *d, const char *buf, int *idx, event_fn fn,
		   void *arg);

/* What the agent did with an alarms request (WIRE_ALARM_STATE). */
enum alarm_state_kind { ALARM_STATE_ON, ALARM_STATE_OFF, ALARM_STATE_HELD,
			ALARM_STATE_FAILED };
struct alarm_state {
	enum alarm_state_kind kind;
	char how[32];           /* on: session or system_monitor */
	char unsupported[128];  /* on: alarms the target lacks, "a,b" */
	char holder[64];        /* held: who holds the node's system monitor */
	char holder_name[256];  /* and its registered name; "" none */
};
int decode_alarm_state(struct decoder *d, const char *buf, int *idx,
		       struct alarm_state *st);

/*
 * Exact mode (nif/beamscope_prof.erl): the totals, since it began, of each
 * function timed that was called, over every process of the node.  Names
 * as the decoder's syntax writes them, valid until the next decode.
 */
#define PROF_CALLS_MAX 256
struct prof_call {
	const char *name;
	long long calls, us;
	long long words;        /* -1: the VM does not count them */
};
struct prof_calls {
	long functions;         /* timed */
	long read;              /* read this time (in turn, within a time
				 * budget: the others' totals are older) */
	long read_us;           /* what reading them took the agent */
	long ms;                /* since exact mode began */
	int n;
	struct prof_call rows[PROF_CALLS_MAX];
};
/* The body of a WIRE_CALLS at buf[*idx] into *c: 0, or -1. */
int decode_calls(struct decoder *d, const char *buf, int *idx,
		 struct prof_calls *c);

/* What the agent did with an exact mode request (WIRE_CALLS_STATE):
 * off; on, functions timed; error, its one line. */
enum calls_state_kind { CALLS_STATE_OFF, CALLS_STATE_ON, CALLS_STATE_ERROR };
struct calls_state {
	enum calls_state_kind kind;
	long functions;
	char why[400];
};
int decode_calls_state(const char *buf, int *idx, struct calls_state *st);

#endif
