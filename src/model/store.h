/*
 * store: what the UI and export know about a traced node.
 *
 *  - a bounded ring of events, by count and by bytes, oldest dropped
 *    first; each event gets a sequence id, and views hold sequence ids,
 *    never pointers;
 *  - one record per process seen: name, current function, totals and
 *    per-second rates of sends/receives/spawns, message queue length,
 *    parent, and how it exited.
 *
 * The table can be bounded too (max_procs).  Exit events can be dropped
 * on the target, so a process is not known to be gone just because it
 * went quiet: beyond max_procs records the store forgets the processes
 * quiet the longest (unregistered ones before registered ones), never the
 * ones the front end asked to keep (store_keep).  Of the exited ones it
 * keeps at most max_exited.  A forgotten process that is active again
 * comes back with fresh totals.
 * Forgetting happens in store_tick and, so that a burst between two ticks
 * cannot grow the table either, in the calls that add processes; a struct
 * proc pointer is therefore valid only until the next store_add_event,
 * store_add_counts, store_set_info or store_tick.
 *
 * Totals come from events for processes in focus (event tier) and from the
 * agent's counter deltas for the rest (count tier); the tracer never
 * reports the same event both ways, so they simply add up.
 * The spawn tree is kept as links between records, made as spawns are
 * seen: a view walks it without looking for anyone's children.
 * The store never draws and never talks to the network.
 */
#ifndef BS_STORE_H
#define BS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "hmap.h"

/* an event owned by the store */
struct sevent {
	uint64_t seq;
	enum event_type type;
	int64_t ts;
	struct bs_pid pid;
	bool truncated;
	uint8_t syn;          /* the enum term_syntax its text is in */
	uint8_t raw_part;     /* RAW_*: what raw holds */
	uint32_t raw_len;
	int64_t elapsed_us;   /* return/exception/gc: since the start; -1 */
	long heap[4];         /* gc: heap before, after, old before, after */
	char *pid_text, *name, *peer, *peer_name, *mfa, *payload, *extra,
		*from;        /* one block */
	const char *raw;      /* what was shipped, in the same block
			       * (struct event's raw), or NULL */
	int64_t latency_us;   /* a paired receive: since its send */
	size_t size;          /* bytes of its block (strings and raw) */
};

/* Bytes the ring's events may hold together (their strings and raw
 * bytes): STORE_EVENT_BYTES for each slot on average, and never less
 * than STORE_BYTES_MIN; beyond that the oldest events go, whatever the
 * count.  The newest event is always kept. */
#define STORE_EVENT_BYTES 1024
#define STORE_BYTES_MIN ((size_t)64 << 20)

#define STORE_LATENCIES 1024

/* one traced function: what the calls view shows */
struct fstat {
	char *mfa;
	unsigned long calls, rcalls, tick_calls;   /* totals, last second */
	unsigned long returns, exceptions;
	struct bs_pid last_pid;       /* the process that called it last */
	char last_pid_text[48];
	uint32_t lat[STORE_LATENCIES]; /* recent call-to-return times, us */
	size_t nlat, latpos;
};

/* Sends and receives a second over the last STORE_HISTORY seconds (the
 * table's sparklines), with their sums; held only by a process that sent
 * or received in them. */
#define STORE_HISTORY 30
struct proc_history {
	uint32_t sends[STORE_HISTORY], receives[STORE_HISTORY];
	uint8_t pos;          /* where the next second goes */
	uint8_t n;            /* seconds held */
	uint8_t quiet;        /* seconds in a row with neither */
	unsigned long sum_sends, sum_receives;
};

/*
 * A sampled size, in bytes; -1 until sampled.  The agent measures it when
 * that is cheap enough for the target, else says what it is at least: a
 * lower bound replaces a measured value only once that is older than
 * STORE_STALE_MS and smaller than the bound.
 */
struct proc_size {
	long bytes;
	bool at_least;       /* a lower bound, not measured */
	int64_t ms;          /* when it was said (clock_mono_ms) */
};

/* a measured size older than this is shown as old */
#define STORE_STALE_MS 2500

struct proc {
	struct bs_pid pid;
	char pid_text[48];
	char *name;          /* registered name, or NULL */
	char *initial;       /* initial call "m:f/N", when seen spawned */
	char *label;         /* what it is: proc_lib's '$initial_call' or its
			      * label (session_proc_label), or NULL */
	char *current;       /* current function, when sampled */
	unsigned long sends, receives, spawns;       /* totals */
	unsigned long timeouts;                      /* receive timeouts shipped;
						      * not among receives */
	unsigned long alarms;  /* the VM's alarms of it (EV_ALARM) */
	char last_alarm[24];   /* the kind of the last one; "" none */
	unsigned long rsends, rreceives, rspawns;    /* in the last second */
	unsigned long tick_sends, tick_receives, tick_spawns; /* at last tick */
	struct proc_history *hist;   /* NULL: quiet the last STORE_HISTORY
				      * seconds */
	long mqlen;          /* -1: not sampled */
	struct proc_size memory, heap;
	long reds;           /* reductions; -1: not sampled */
	long rreds;          /* reductions a second between the last two
			      * samples; -1: fewer than two */
	int64_t reds_ms;     /* when reds was sampled */
	bool has_parent;
	struct bs_pid parent;
	/* the spawn tree, between records of the store: the parent's record
	 * (NULL when it is not kept), the children in the order they were
	 * linked, and the siblings either side */
	struct proc *up, *kids, *kids_tail, *prev_sib, *next_sib;
	bool exited;
	uint64_t exit_tick;  /* the store's ticks when it was seen exiting */
	char *reason;        /* exit reason */
	int64_t last_ts;     /* last activity, target clock */
	int64_t run_us;      /* time on a scheduler (running events) */
	int64_t in_ts;       /* scheduled in at, -1 when out */
	unsigned long gcs;   /* garbage collections */
	uint64_t first_seq;  /* first event of it still worth looking at */
	uint64_t seen;       /* store clock at its last activity */
	bool kept;           /* in the keep list, during a pass that forgets */
};

struct store {
	struct sevent *ring;  /* cap slots */
	size_t cap;
	uint64_t next_seq;    /* seq the next event gets; seqs start at 1 */
	uint64_t oldest;      /* the oldest seq held (next_seq: none) */
	uint64_t evicted;     /* events pushed out of the ring */
	size_t bytes, max_bytes; /* the events' blocks, and their bound */

	struct proc **procs;  /* owned; index order is first-seen order */
	size_t nprocs, procs_cap;
	struct hmap index;    /* pid -> its record (the key is the record's) */
	uint64_t generation;  /* bumped on every change, for redraw checks */
	uint64_t ticks;       /* store_tick calls: the store's seconds */
	size_t max_exited;    /* exited processes kept; the oldest go first */
	size_t nexited;
	uint64_t alarms;      /* the VM's alarms added, all processes */
	uint64_t pruned;      /* exited processes forgotten */
	size_t max_procs;     /* processes kept at most; 0: no bound */
	uint64_t forgotten;   /* quiet processes forgotten for max_procs */
	uint64_t clock;       /* stamps activity: one step per touch */
	uint64_t forget_work; /* records looked at by passes that forget */
	struct bs_pid *keep;  /* never forgotten; owned, nkeep of them */
	size_t nkeep;
	uint64_t tree_gen;    /* bumped when a spawn link changes or records
			       * go: a view's copy of the tree is stale */
	bool history;         /* keep the processes' last 30 seconds (the
			       * view's sparklines); off unless set */
	struct fstat **funcs; /* traced functions seen; owned */
	size_t nfuncs;
};

/* A ring of ring_cap events and max_bytes of store_ring_bytes(ring_cap). */
void store_init(struct store *st, size_t ring_cap);
size_t store_ring_bytes(size_t ring_cap);
void store_release(struct store *st);
/* Forget every event and process (the "clear" command). */
void store_clear(struct store *st);

/* Copy ev in (it may be reused by the caller after this) and account it. */
uint64_t store_add_event(struct store *st, const struct event *ev);
/* New text for event e of the ring (its raw bytes rendered again): the
 * strings of ev replace e's own; e keeps its numbers and raw bytes. */
void store_set_text(struct store *st, struct sevent *e,
		    const struct event *ev);
/* Count-tier deltas for one process. */
void store_add_counts(struct store *st, struct bs_pid pid, const char *pid_text,
		      unsigned long sends, unsigned long receives,
		      unsigned long spawns);
/* A sample of process_info for one process. */
/* A sample's sizes (bytes, or at least that many) and reductions taken
 * at now_ms; reductions a second come from two samples in a row. */
void store_set_sizes(struct store *st, struct bs_pid pid, long memory,
		     bool memory_at_least, long reductions, long heap,
		     bool heap_at_least, int64_t now_ms);
/* Whether a measured size is older than STORE_STALE_MS at now_ms. */
bool store_size_stale(const struct proc_size *z, int64_t now_ms);
void store_set_info(struct store *st, struct bs_pid pid, const char *pid_text,
		    const char *name, const char *current, long mqlen);
/* What the agent said a process is; a process not kept is left alone. */
void store_set_label(struct store *st, struct bs_pid pid, const char *label);
/* What names a process for people: its registered name, else its label,
 * else its initial call; "" if none is known. */
const char *store_proc_title(const struct proc *p);
/* What an export knew of a process that its events may not tell: its
 * initial call, parent, and how it ended (fields already known stay). */
void store_recorded_proc(struct store *st, struct proc *p, const char *initial,
			 bool has_parent, struct bs_pid parent, bool exited,
			 const char *reason);
/* Close the per-second window: rates become the last second's counts;
 * forget the oldest exited processes beyond max_exited, and the quietest
 * beyond max_procs.  A second in which nothing changed, rates and
 * sparklines alike (a sparkline moves on for 30 quiet seconds), leaves
 * the generation as it was. */
void store_tick(struct store *st);
/* The i-th newest second of a history (0: the last whole second); 0
 * beyond what it holds. */
uint32_t store_hist_sends(const struct proc_history *h, unsigned i);
uint32_t store_hist_receives(const struct proc_history *h, unsigned i);

/* The processes to keep whatever happens (the one in focus, the rows on
 * screen), until the next call; the pids are copied. */
void store_keep(struct store *st, const struct bs_pid *pids, size_t n);

struct proc *store_proc(const struct store *st, struct bs_pid pid);
/* Percentile p (0..100) of a function's recent latencies; -1 if none. */
long store_latency(const struct fstat *f, int p);
/* The event with this seq, or NULL when it has left the ring. */
const struct sevent *store_event(const struct store *st, uint64_t seq);
uint64_t store_oldest_seq(const struct store *st);

#endif
