/*
 * tracer.h: what the files of the tracer NIF share.  The session and its
 * parts (the rings, the encoding cache, the count tables), the event kinds,
 * the atoms, and the functions one file calls in another:
 *
 *   beamscope_tracer.c  the module: load, the session's NIFs, the table
 *   callbacks.c         the erl_tracer callbacks, the count tier, limits
 *   cut.c               terms measured and cut to the payload budget
 *   encode.c            events in the external term format, its cache
 *   ring.c              the rings events are shipped in, and their sizes
 *
 * The invariants of the whole are at the top of beamscope_tracer.c.
 * Everything declared here is hidden: the library exports nif_init alone,
 * and calls between the files are direct.
 */
#ifndef BEAMSCOPE_TRACER_H
#define BEAMSCOPE_TRACER_H

#include <erl_nif.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#pragma GCC visibility push(hidden)

#define CACHE_LINE 64

/* event kinds; the bit values are shared with the agent and the C node */
enum {
	K_SEND = 1,
	K_RECEIVE = 2,
	K_SPAWN = 4,
	K_EXIT = 8,
	K_LINK = 16,
	K_REGISTER = 32,
	K_CALL = 64,
	K_GC = 128,
	K_RUNNING = 256,
	K_TIMEOUT = 512,       /* receive timeouts (marked by the agent) */
	K_GENCALL = 1024,      /* gen calls and their replies, as records */
	K_ALL = 1023 | K_GENCALL
};

#define ATOMS(X) \
	X(ok, "ok") \
	X(true_, "true") \
	X(false_, "false") \
	X(trace, "trace") \
	X(discard, "discard") \
	X(remove, "remove") \
	X(trace_status, "trace_status") \
	X(extra, "extra") \
	X(send, "send") \
	X(send_to_non_existing_process, "send_to_non_existing_process") \
	X(receive, "receive") \
	X(spawn, "spawn") \
	X(spawned, "spawned") \
	X(exit, "exit") \
	X(link, "link") \
	X(unlink, "unlink") \
	X(getting_linked, "getting_linked") \
	X(getting_unlinked, "getting_unlinked") \
	X(register_, "register") \
	X(unregister, "unregister") \
	X(ellipsis, "...") \
	X(struct_key, "__struct__") \
	X(call, "call") \
	X(return_from, "return_from") \
	X(exception_from, "exception_from") \
	X(match_spec_result, "match_spec_result") \
	X(gc_minor_start, "gc_minor_start") \
	X(gc_minor_end, "gc_minor_end") \
	X(gc_major_start, "gc_major_start") \
	X(gc_major_end, "gc_major_end") \
	X(heap_size, "heap_size") \
	X(old_heap_size, "old_heap_size") \
	X(in, "in") \
	X(out, "out") \
	X(in_exiting, "in_exiting") \
	X(out_exiting, "out_exiting") \
	X(out_exited, "out_exited") \
	X(fun, "#Fun") \
	X(wake, "$beamscope_wake") \
	X(alias, "alias") \
	X(gen_call_msg, "$gen_call") \
	X(gen_call, "gen_call") \
	X(gen_reply, "gen_reply") \
	X(timeout, "timeout") \
	X(timeout_mark, "$beamscope_timeout") \
	X(other_mark, "$beamscope_other") \
	X(proc_lib, "proc_lib") \
	X(init_p, "init_p") \
	X(gen, "gen") \
	X(init_it, "init_it") \
	X(init, "init") \
	X(gen_server, "gen_server") \
	X(gen_event, "gen_event") \
	X(supervisor, "supervisor") \
	X(supervisor_bridge, "supervisor_bridge")

#define X(id, text) extern ERL_NIF_TERM am_##id;
ATOMS(X)
#undef X

/*
 * Per-worker ring of encoded events, filled by tracees on every scheduler
 * and emptied by its worker only (take/3).  The ring is a power of two of
 * CELL-byte cells; an event takes whole cells: a header (the publish word
 * and the length), then its external term format.  A tracee claims cells
 * by compare-and-swap on tail, as long as they are free (tail - head <=
 * ncells), writes its event, then publishes it: the first cell's publish
 * word becomes position + 1, in the same cache line as the start of the
 * event.  The worker takes published events in claim order, stopping at
 * the first that is not published yet, and gives the cells back by moving
 * head, after clearing the first word of every cell it read (any cell may
 * start an event on the next round, and must not look published by the
 * bytes of an older one).  Positions only grow (64 bits), so a word left
 * from an earlier round never looks published either.
 */
#define CELL 64

struct rec_head {
	atomic_ullong pub;         /* position + 1 once the event is written */
	uint32_t len;              /* bytes of the encoding that follows */
	uint32_t pad;
};

#define REC_HEAD sizeof(struct rec_head)

struct ring {
	_Alignas(CACHE_LINE) atomic_ullong tail;  /* cells claimed since the start */
	_Alignas(CACHE_LINE) atomic_ullong head;  /* cells given back by the worker */
	atomic_int idle;           /* the worker sleeps until woken */
	atomic_long dropped;       /* cumulative: no room, too big, discarded */
	atomic_long taken;         /* events take/3 gave the worker */
	atomic_long batches;       /* take/3 calls that gave any */
	unsigned char *data;       /* ncells * CELL, in the session's mapping */
};

_Static_assert(sizeof(struct ring) % CACHE_LINE == 0, "rings share no line");

/*
 * Encodings of atoms and local pids (immediates, so the word is the
 * identity) from term_to_binary, shared by all schedulers.  Each slot is a
 * seqlock: a writer that cannot make the sequence odd at once leaves the
 * slot alone, a reader that sees it change treats the lookup as a miss.
 */
#define ECACHE_SLOTS 2048          /* a power of two */
#define ECACHE_WORDS 12            /* up to 96 bytes of encoding */

struct eslot {
	atomic_uint seq;           /* odd while written */
	atomic_uint len;
	atomic_uintptr_t key;      /* the term; 0: empty */
	atomic_uint_least64_t w[ECACHE_WORDS];
};

/*
 * Count tier: per-pid counters in three tables that rotate at every harvest
 * (counts_take/1): one takes counts, one waits, one is read and cleared.  A
 * table is read one interval after it stopped being the active one, long
 * after any tracee that picked it up has finished, so deltas are exact with
 * no lock; and dead processes leave the tables by themselves.
 */
#define COUNT_SLOTS 32768          /* per table; a power of two */
#define COUNT_PROBES 32
#define FOCUS_MAX 64

struct cslot {
	atomic_uintptr_t key;      /* the pid term; 0: free */
	atomic_ulong sends;
	atomic_ulong receives;
};

/* limits: which one tripped first */
enum { TRIP_NONE, TRIP_EVENTS, TRIP_RATE, TRIP_DURATION };

struct session {
	atomic_bool active;
	/* limits, checked before an event is built; set before any tracing */
	unsigned limit_kinds;  /* the kinds the user asked for */
	long max_events;       /* 0: none */
	atomic_long produced;  /* admitted events */
	ErlNifSInt64 deadline_ns; /* monotonic; 0: none */
	ErlNifSInt64 rate_ns;  /* nanoseconds per event at the allowed rate; 0: none */
	ErlNifSInt64 burst_ns; /* how far ahead of time the bucket may run */
	atomic_llong tat_ns;   /* the bucket's theoretical arrival time (GCRA) */
	bool shed;             /* over the rate: drop and count, do not stop */
	atomic_long shed_count;
	atomic_int tripped;
	bool count_tier;       /* sends/receives counted unless in focus */
	struct cslot *tables;  /* 3 * COUNT_SLOTS, inside this resource */
	atomic_uint table;     /* the one taking counts */
	atomic_long overflow;  /* counted events that found no slot */
	atomic_uint nfocus;
	atomic_uintptr_t focus[FOCUS_MAX];  /* pid terms; 0: free */
	unsigned kinds;        /* K_* bits to produce */
	unsigned nworkers;
	size_t payload;        /* budget for B, in bytes of text; 0: none */
	unsigned long long ncells;  /* per ring; a power of two */
	ErlNifPid *workers;    /* nworkers, in mem */
	struct ring *rings;    /* nworkers, in mem, aligned */
	struct eslot *ecache;  /* ECACHE_SLOTS, in mem */
	void *mem;             /* one anonymous mapping: all of the above */
	size_t mem_size;
};

extern ErlNifResourceType *session_type;

/* bignums strictly between these are small enough to send whole */
extern ERL_NIF_TERM big_hi, big_lo;

static inline struct session *get_session(ErlNifEnv *env, ERL_NIF_TERM t)
{
	void *p;
	if (!enif_get_resource(env, t, session_type, &p))
		return NULL;
	return p;
}

/* The session if it still wants events; NULL means: answer remove. */
static inline struct session *live_session(ErlNifEnv *env, ERL_NIF_TERM t)
{
	struct session *s = get_session(env, t);
	if (s && atomic_load_explicit(&s->active, memory_order_acquire))
		return s;
	return NULL;
}

/* cut.c: a term within a budget of text, and what a spawn runs */
ERL_NIF_TERM payload(ErlNifEnv *env, ERL_NIF_TERM t, size_t budget, bool *cut);
ERL_NIF_TERM spawn_mfa(ErlNifEnv *env, ERL_NIF_TERM mfa, size_t budget,
		       bool *cut);
ERL_NIF_TERM initial_call(ErlNifEnv *env, ERL_NIF_TERM mfa);

/*
 * encode.c: terms as term_to_binary writes them, into a buffer that is on
 * the stack while it is small.  The buffer's few helpers are inline: the
 * encoder calls them for every term of every event.
 */
struct enc {
	unsigned char *p;
	size_t len, cap;
	bool ok;                   /* false: out of memory, drop the event */
	unsigned char small[768];
};

bool enc_grow(struct enc *e, size_t n);

static inline void enc_init(struct enc *e)
{
	e->p = e->small;
	e->len = 0;
	e->cap = sizeof(e->small);
	e->ok = true;
}

static inline void enc_release(struct enc *e)
{
	if (e->p != e->small)
		enif_free(e->p);
}

static inline bool enc_room(struct enc *e, size_t n)
{
	return e->len + n <= e->cap || enc_grow(e, n);
}

static inline void enc_put(struct enc *e, const void *b, size_t n)
{
	if (!enc_room(e, n))
		return;
	memcpy(e->p + e->len, b, n);
	e->len += n;
}

void enc_int(struct enc *e, ErlNifSInt64 v);
void enc_cached(ErlNifEnv *env, struct session *s, struct enc *e,
		ERL_NIF_TERM t);
void enc_term(ErlNifEnv *env, struct session *s, struct enc *e,
	      ERL_NIF_TERM t, int depth);

/* ring.c: shipping an event into its worker's ring; a session's layout,
 * where each part of its mapping starts, and its size */
struct layout {
	unsigned long long cells;  /* per ring */
	size_t rings, cache, tables, bufs, size;
};

void session_layout(struct layout *l, unsigned n, size_t payload,
		    long high_water, bool count_tier);
bool reserve(struct session *s, ERL_NIF_TERM tracee, unsigned *w);
void ring_read(struct session *s, struct ring *r, size_t off, void *b,
	       size_t n);
void ship(ErlNifEnv *env, struct session *s, unsigned w, ERL_NIF_TERM tag,
	  ERL_NIF_TERM tracee, ERL_NIF_TERM a, ERL_NIF_TERM b, bool cut);

/* callbacks.c: the erl_tracer callbacks, for the table in beamscope_tracer.c */
ERL_NIF_TERM nif_enabled(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_enabled_send(ErlNifEnv *env, int argc,
			      const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_enabled_receive(ErlNifEnv *env, int argc,
				 const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_enabled_procs(ErlNifEnv *env, int argc,
			       const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_enabled_call(ErlNifEnv *env, int argc,
			      const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_enabled_gc(ErlNifEnv *env, int argc,
			    const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_enabled_running(ErlNifEnv *env, int argc,
				 const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_enabled_other(ErlNifEnv *env, int argc,
			       const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_trace(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_trace_send(ErlNifEnv *env, int argc,
			    const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_trace_receive(ErlNifEnv *env, int argc,
			       const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_trace_procs(ErlNifEnv *env, int argc,
			     const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_trace_call(ErlNifEnv *env, int argc,
			    const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_trace_gc(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_trace_running(ErlNifEnv *env, int argc,
			       const ERL_NIF_TERM argv[]);
ERL_NIF_TERM nif_trace_other(ErlNifEnv *env, int argc,
			     const ERL_NIF_TERM argv[]);

#pragma GCC visibility pop

#endif
