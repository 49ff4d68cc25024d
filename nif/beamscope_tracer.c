/*
 * beamscope_tracer: the erl_tracer NIF of beamscope (module beamscope_tracer).
 *
 * Owns the session resource, which is the tracer state every traced process
 * holds, and every callback ERTS makes into the tracer.  The events it sends
 * are described in nif/PROTOCOL.md.
 *
 * Invariants:
 *  - The callbacks run inside the traced process, on its scheduler, so they
 *    take no lock, never block, never send to the tracee, and every trace_*
 *    returns ok whatever happens.
 *  - Events are encoded in the tracee and put in its worker's ring; no
 *    message is sent per event.  A full ring drops the event and counts it
 *    in the ring's `dropped`, so a slow consumer costs the tracee no more
 *    than two loads and one atomic add, and produced = taken + dropped.
 *  - One tracee always maps to the same worker, so its events stay in order.
 *  - Work per event is bounded by the payload budget, never by the size of
 *    the traced term: terms are measured only up to the budget, then cut.
 *  - After session_stop/1 every callback answers `remove`, so each tracee
 *    drops the tracer at its next trace point, even if the agent is gone.
 *  - A session's memory is one mapping, sized and checked against the
 *    session cap before it is taken (session_new/5); a mapping that cannot
 *    be had is an error for the agent, never an abort of the VM.
 */
/* mmap's MAP_ANONYMOUS and sysconf's _SC_PHYS_PAGES */
#define _DEFAULT_SOURCE
#include <erl_nif.h>

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CACHE_LINE 64
#define MAX_WORKERS 1024
#define MAX_HIGH_WATER 0x40000000L
/* 64 MiB of events per worker at most */
#define RING_CELLS_MAX (1ULL << 20)
#define MAX_PAYLOAD (64u << 20)
#define DEPTH_MAX 10
/* whole bytes of a bitstring that is not whole bytes measured at most
 * (bits_measure); a longer one is cut there.  64: their text fits the
 * default payload budget, and measuring costs a few microseconds */
#define BITS_MEASURE_MAX 64
/* exit reasons are shown even with payloads off (PROTOCOL.md) */
#define EXIT_BUDGET_OFF 64
/* spawn fails with system_limit past this, so no spawn event has more */
#define MAX_ARITY 255
/* a session takes at most the smaller of these (PROTOCOL.md, the man page) */
#define SESSION_MEM_CEILING (1ULL << 30)
#define SESSION_MEM_SHARE 8   /* of the target's memory */

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

/* estimated size, in bytes of rendered text, of terms we do not walk */
enum {
	COST_PID = 12,
	COST_PORT = 14,
	COST_REF = 24,
	COST_FLOAT = 24,
	COST_BIG = 80,          /* a bignum below 2^256 */
	COST_ATOM_UNKNOWN = 64, /* an atom with characters beyond Latin-1 */
	COST_ELLIPSIS = 3,
	COST_FUN = 4,
	COST_BIN_OVERHEAD = 6   /* <<"">> */
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

#define X(id, text) static ERL_NIF_TERM am_##id;
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

static ErlNifResourceType *session_type;

/* bignums strictly between these are small enough to send whole */
static ErlNifEnv *consts_env;
static ERL_NIF_TERM big_hi, big_lo;

static struct session *get_session(ErlNifEnv *env, ERL_NIF_TERM t)
{
	void *p;
	if (!enif_get_resource(env, t, session_type, &p))
		return NULL;
	return p;
}

/* The session if it still wants events; NULL means: answer remove. */
static struct session *live_session(ErlNifEnv *env, ERL_NIF_TERM t)
{
	struct session *s = get_session(env, t);
	if (s && atomic_load_explicit(&s->active, memory_order_acquire))
		return s;
	return NULL;
}

/* ---------------------------------------------------------------------------
 * Payload: measure, and cut when it does not fit.  Both walks charge the same
 * estimated costs against one budget and stop once it is spent, so each is
 * O(budget).  Lists are followed along their tail without recursion;
 * recursion only goes into elements, at most DEPTH_MAX deep.
 */

static bool spend(size_t *left, size_t n)
{
	if (n > *left)
		return false;
	*left -= n;
	return true;
}

/* Spend what is there, up to n: for markers that are shown regardless. */
static void spend_some(size_t *left, size_t n)
{
	*left -= *left < n ? *left : n;
}

static size_t digits(ErlNifUInt64 v)
{
	size_t n = 1;
	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* Estimated text size of anything but a container or a bitstring. */
static size_t scalar_cost(ErlNifEnv *env, ERL_NIF_TERM t, ErlNifTermType type,
			  bool in_list)
{
	switch (type) {
	case ERL_NIF_TERM_TYPE_ATOM: {
		unsigned len;
		if (enif_get_atom_length(env, t, &len, ERL_NIF_LATIN1))
			return (size_t)len + 2;
		return COST_ATOM_UNKNOWN;
	}
	case ERL_NIF_TERM_TYPE_INTEGER: {
		ErlNifSInt64 i;
		ErlNifUInt64 u;
		if (enif_get_int64(env, t, &i)) {
			/* a string's characters render as one byte each */
			if (in_list && i >= 32 && i < 127)
				return 1;
			if (i < 0)
				return 1 + digits((ErlNifUInt64)(-(i + 1)) + 1);
			return digits((ErlNifUInt64)i);
		}
		if (enif_get_uint64(env, t, &u))
			return digits(u);
		/* bignums compare by size first, so this is O(1) */
		if (enif_compare(t, big_hi) < 0 && enif_compare(t, big_lo) > 0)
			return COST_BIG;
		return SIZE_MAX;
	}
	case ERL_NIF_TERM_TYPE_FLOAT:
		return COST_FLOAT;
	case ERL_NIF_TERM_TYPE_PID:
		return COST_PID;
	case ERL_NIF_TERM_TYPE_PORT:
		return COST_PORT;
	case ERL_NIF_TERM_TYPE_REFERENCE:
		return COST_REF;
	default:
		return SIZE_MAX;
	}
}

/*
 * A bitstring that is not whole bytes, printed as the Erlang shell prints
 * it, if its text has at most max bytes: the length of the text, or 0.
 * *whole gets how many whole bytes it has, or, when the text is longer,
 * how many it has at least (0 if that is not known).
 *
 * The NIF API has no call that tells the size of such a bitstring
 * (enif_inspect_binary refuses it), but enif_snprintf's %T prints it, as
 * "<<B1,...,Bn,Last:Bits>>", and its precision stops the printer after
 * that many bytes: every byte takes two characters at least, so the work
 * is O(max), and never more than BITS_MEASURE_MAX bytes (a few
 * microseconds: README, Measurements).
 */
static size_t bits_measure(ERL_NIF_TERM t, size_t max, size_t *whole)
{
	/* "255," a byte, and "<<", ",255:7>>" or the printer's "... " */
	char buf[4 * BITS_MEASURE_MAX + 32];
	size_t bytes = 0, len = 0;
	size_t most = max / 2 < BITS_MEASURE_MAX ? max / 2 : BITS_MEASURE_MAX;
	*whole = 0;
	int n = enif_snprintf(buf, sizeof(buf), "%.*T", (int)most + 1, t);
	buf[sizeof(buf) - 1] = '\0';
	if (n > 0 && (size_t)n < sizeof(buf) && !strncmp(buf, "<<", 2)) {
		const char *p = buf + 2;
		while (*p >= '0' && *p <= '9') {
			while (*p >= '0' && *p <= '9')
				p++;
			if (*p == ',') {
				bytes++;
				p++;
			} else if (*p == ':') {
				p++;
				while (*p >= '0' && *p <= '9')
					p++;
				if (!strncmp(p, ">>", 2))
					len = (size_t)(p + 2 - buf);
				break;
			} else {   /* the printer stopped after this byte */
				bytes++;
				break;
			}
		}
		*whole = bytes;
	}
	return len <= max ? len : 0;
}

/*
 * Does t fit in *left as it is?  Also false for what must be rebuilt
 * whatever its size: funs (their environment can be any size).
 */
static bool fits(ErlNifEnv *env, ERL_NIF_TERM t, int depth, size_t *left,
		 bool in_list)
{
	if (depth > DEPTH_MAX)
		return false;

	ErlNifTermType type = enif_term_type(env, t);
	switch (type) {
	case ERL_NIF_TERM_TYPE_LIST: {
		ERL_NIF_TERM h;
		if (!spend(left, 2))
			return false;
		while (enif_get_list_cell(env, t, &h, &t))
			if (!spend(left, 1) || !fits(env, h, depth + 1, left, true))
				return false;
		if (enif_is_empty_list(env, t))
			return true;
		return spend(left, 1) && fits(env, t, depth + 1, left, false);
	}
	case ERL_NIF_TERM_TYPE_TUPLE: {
		int n;
		const ERL_NIF_TERM *e;
		if (!enif_get_tuple(env, t, &n, &e) || !spend(left, 2))
			return false;
		for (int i = 0; i < n; i++)
			if (!spend(left, 1) || !fits(env, e[i], depth + 1, left, false))
				return false;
		return true;
	}
	case ERL_NIF_TERM_TYPE_MAP: {
		size_t n;
		ErlNifMapIterator it;
		ERL_NIF_TERM k, v;
		bool ok = true;
		if (!enif_get_map_size(env, t, &n) || !spend(left, 3))
			return false;
		if (n == 0)
			return true;
		if (!enif_map_iterator_create(env, t, &it, ERL_NIF_MAP_ITERATOR_FIRST))
			return false;
		while (ok && enif_map_iterator_get_pair(env, &it, &k, &v)) {
			ok = spend(left, 4) && fits(env, k, depth + 1, left, false) &&
			     fits(env, v, depth + 1, left, false);
			enif_map_iterator_next(env, &it);
		}
		enif_map_iterator_destroy(env, &it);
		return ok;
	}
	case ERL_NIF_TERM_TYPE_BITSTRING: {
		ErlNifBinary b;
		size_t whole, len;
		if (enif_inspect_binary(env, t, &b))
			return b.size <= *left &&
				spend(left, b.size + COST_BIN_OVERHEAD);
		len = bits_measure(t, *left, &whole);
		return len && spend(left, len);
	}
	case ERL_NIF_TERM_TYPE_FUN:
		return false;
	default:
		return spend(left, scalar_cost(env, t, type, in_list));
	}
}

/* A growable term array; the first 16 live on the stack. */
struct vec {
	ERL_NIF_TERM *p;
	size_t n, cap;
	ERL_NIF_TERM small[16];
};

static void vec_init(struct vec *v)
{
	v->p = v->small;
	v->n = 0;
	v->cap = sizeof(v->small) / sizeof(v->small[0]);
}

static bool vec_push(struct vec *v, ERL_NIF_TERM t)
{
	if (v->n == v->cap) {
		size_t cap = v->cap * 2;
		ERL_NIF_TERM *p = enif_alloc(cap * sizeof(*p));
		if (!p)
			return false;
		memcpy(p, v->p, v->n * sizeof(*p));
		if (v->p != v->small)
			enif_free(v->p);
		v->p = p;
		v->cap = cap;
	}
	v->p[v->n++] = t;
	return true;
}

static void vec_release(struct vec *v)
{
	if (v->p != v->small)
		enif_free(v->p);
}

struct cutter {
	ErlNifEnv *env;
	size_t left;     /* budget not spent yet */
	bool cut;        /* something was shortened or left out */
};

static ERL_NIF_TERM cut_term(struct cutter *c, ERL_NIF_TERM t, int depth,
			     bool in_list);

static ERL_NIF_TERM elide(struct cutter *c)
{
	c->cut = true;
	spend_some(&c->left, COST_ELLIPSIS);
	return am_ellipsis;
}

/* Did cutting turn a term into '...' (and not because it was '...')? */
static bool elided(ERL_NIF_TERM orig, ERL_NIF_TERM r)
{
	return r == am_ellipsis && orig != am_ellipsis;
}

static ERL_NIF_TERM cut_list(struct cutter *c, ERL_NIF_TERM t, int depth)
{
	ErlNifEnv *env = c->env;
	ERL_NIF_TERM h, e, tail = enif_make_list(env, 0), r;
	struct vec v;

	if (c->left < 2 + 1 + COST_ELLIPSIS)
		return elide(c);
	c->left -= 2;
	vec_init(&v);
	while (enif_get_list_cell(env, t, &h, &t)) {
		if (v.n > 0 && c->left < 2)
			goto cut_tail;
		spend_some(&c->left, 1);
		e = cut_term(c, h, depth + 1, true);
		/* an element that did not fit ends the list: "|..." says it */
		if ((v.n > 0 && elided(h, e)) || !vec_push(&v, e))
			goto cut_tail;
	}
	if (!enif_is_empty_list(env, t)) {     /* improper list */
		if (c->left < 2)
			goto cut_tail;
		c->left -= 1;
		tail = cut_term(c, t, depth + 1, false);
	}
	goto build;
cut_tail:
	tail = am_ellipsis;
	c->cut = true;
build:
	r = tail;
	for (size_t i = v.n; i > 0; i--)
		r = enif_make_list_cell(env, v.p[i - 1], r);
	vec_release(&v);
	return r;
}

/*
 * The elements past the budget collapse into one '...': keeping the arity
 * would cost O(arity), and a tuple can have millions of elements.
 */
static ERL_NIF_TERM cut_tuple(struct cutter *c, ERL_NIF_TERM t, int depth)
{
	ErlNifEnv *env = c->env;
	const ERL_NIF_TERM *e;
	int n;
	struct vec v;
	ERL_NIF_TERM x, r;

	if (!enif_get_tuple(env, t, &n, &e) || c->left < 2 + 1 + COST_ELLIPSIS)
		return elide(c);
	c->left -= 2;
	vec_init(&v);
	for (int i = 0; i < n; i++) {
		if (c->left < 2) {
			c->cut = true;
			vec_push(&v, am_ellipsis);
			break;
		}
		c->left -= 1;
		x = cut_term(c, e[i], depth + 1, false);
		if (!vec_push(&v, x)) {
			c->cut = true;
			break;
		}
		/* that '...' stands for the rest as well */
		if (elided(e[i], x))
			break;
	}
	r = enif_make_tuple_from_array(env, v.p, (unsigned)v.n);
	vec_release(&v);
	return r;
}

/*
 * Keys are kept whole or not at all, so two cut keys can never collide; the
 * pairs left out are marked by one '...' => '...' pair.  An Elixir
 * struct's __struct__ pair is kept first, whatever order the map holds its
 * keys in: what the map is says more than any one field.
 */
static ERL_NIF_TERM cut_map(struct cutter *c, ERL_NIF_TERM t, int depth)
{
	ErlNifEnv *env = c->env;
	ErlNifMapIterator it;
	ERL_NIF_TERM k, val, r;
	struct vec keys, vals;
	size_t n;
	bool more = false;

	if (!enif_get_map_size(env, t, &n))
		return elide(c);
	if (n == 0) {
		spend_some(&c->left, 3);
		return t;
	}
	if (c->left < 3 + 4 + 2 * COST_ELLIPSIS ||
	    !enif_map_iterator_create(env, t, &it, ERL_NIF_MAP_ITERATOR_FIRST))
		return elide(c);
	c->left -= 3;
	vec_init(&keys);
	vec_init(&vals);
	ERL_NIF_TERM mod;
	bool strukt = false;
	if (enif_get_map_value(env, t, am_struct_key, &mod) &&
	    enif_is_atom(env, mod)) {
		size_t left = c->left;
		if (spend(&left, 4) && fits(env, am_struct_key, depth + 1, &left, false) &&
		    fits(env, mod, depth + 1, &left, false) &&
		    vec_push(&keys, am_struct_key)) {
			if (vec_push(&vals, mod)) {
				c->left = left;
				strukt = true;
			} else {
				keys.n--;
			}
		}
	}
	while (enif_map_iterator_get_pair(env, &it, &k, &val)) {
		size_t left = c->left;
		if (strukt && k == am_struct_key) {
			enif_map_iterator_next(env, &it);
			continue;
		}
		if (!spend(&left, 4) || !fits(env, k, depth + 1, &left, false) ||
		    left < 1) {
			more = true;
			break;
		}
		c->left = left;
		if (!vec_push(&keys, k) ||
		    !vec_push(&vals, cut_term(c, val, depth + 1, false))) {
			keys.n = vals.n;
			more = true;
			break;
		}
		enif_map_iterator_next(env, &it);
	}
	enif_map_iterator_destroy(env, &it);
	if (more) {
		c->cut = true;
		if (vec_push(&keys, am_ellipsis) && !vec_push(&vals, am_ellipsis))
			keys.n--;
	}
	if (!enif_make_map_from_arrays(env, keys.p, vals.p, keys.n, &r)) {
		/* the marker met a real '...' key: leave the marker out */
		if (!more || !enif_make_map_from_arrays(env, keys.p, vals.p,
							keys.n - 1, &r))
			r = am_ellipsis;
	}
	vec_release(&keys);
	vec_release(&vals);
	return r;
}

static ERL_NIF_TERM cut_binary(struct cutter *c, ERL_NIF_TERM t)
{
	ErlNifBinary b;
	size_t size, cost;
	if (enif_inspect_binary(c->env, t, &b)) {
		size = b.size;
		cost = size + COST_BIN_OVERHEAD;
	} else {   /* not whole bytes: its text, if it fits */
		cost = bits_measure(t, c->left, &size);
		if (!cost)
			cost = SIZE_MAX;
	}
	if (cost <= c->left) {
		c->left -= cost;
		return t;
	}
	if (c->left <= COST_BIN_OVERHEAD || !size)
		return elide(c);
	size_t keep = c->left - COST_BIN_OVERHEAD;
	if (keep > size)
		keep = size;
	c->left = 0;
	c->cut = true;
	/* refers to the tracee's bytes: nothing is copied here */
	return enif_make_sub_binary(c->env, t, 0, keep);
}

static ERL_NIF_TERM cut_term(struct cutter *c, ERL_NIF_TERM t, int depth,
			     bool in_list)
{
	if (depth > DEPTH_MAX)
		return elide(c);

	ErlNifTermType type = enif_term_type(c->env, t);
	switch (type) {
	case ERL_NIF_TERM_TYPE_LIST:
		if (enif_is_empty_list(c->env, t)) {
			spend_some(&c->left, 2);
			return t;
		}
		return cut_list(c, t, depth);
	case ERL_NIF_TERM_TYPE_TUPLE:
		return cut_tuple(c, t, depth);
	case ERL_NIF_TERM_TYPE_MAP:
		return cut_map(c, t, depth);
	case ERL_NIF_TERM_TYPE_BITSTRING:
		return cut_binary(c, t);
	case ERL_NIF_TERM_TYPE_FUN:
		/* the shell shows funs no better, so this is not a cut */
		spend_some(&c->left, COST_FUN);
		return am_fun;
	default: {
		size_t cost = scalar_cost(c->env, t, type, in_list);
		if (cost > c->left)
			return elide(c);
		c->left -= cost;
		return t;
	}
	}
}

/* t itself when it fits the budget (no copy), else a cut copy; sets *cut. */
static ERL_NIF_TERM payload(ErlNifEnv *env, ERL_NIF_TERM t, size_t budget,
			    bool *cut)
{
	size_t left = budget;
	/* a bitstring that is not whole bytes alone: measured once, by the
	 * cut, which keeps it whole when it fits */
	bool bits = enif_term_type(env, t) == ERL_NIF_TERM_TYPE_BITSTRING &&
		!enif_is_binary(env, t);
	if (!bits && fits(env, t, 0, &left, false))
		return t;
	struct cutter c = { env, budget, false };
	ERL_NIF_TERM r = cut_term(&c, t, 0, false);
	*cut = *cut || c.cut;
	return r;
}

/* {M, F, Args} of a spawn event -> {M, F, Arity, Args cut} */
static ERL_NIF_TERM spawn_mfa(ErlNifEnv *env, ERL_NIF_TERM mfa, size_t budget,
			      bool *cut)
{
	const ERL_NIF_TERM *e;
	ERL_NIF_TERM h, t, nil = enif_make_list(env, 0);
	int n;
	unsigned arity = 0;

	if (!enif_get_tuple(env, mfa, &n, &e) || n != 3)
		return nil;
	/* bounded: a longer list could not have been spawned */
	for (t = e[2]; arity <= MAX_ARITY && enif_get_list_cell(env, t, &h, &t);)
		arity++;
	return enif_make_tuple4(env, e[0], e[1], enif_make_uint(env, arity),
				budget ? payload(env, e[2], budget, cut) : nil);
}

/*
 * The function a process started by proc_lib really runs, as proc_lib
 * keeps it in '$initial_call': a spawn of proc_lib:init_p(Parent,
 * Ancestors, M, F, A) runs M:F/length(A), and gen:init_it (gen_server,
 * gen_statem, supervisor, ...) the callback module's init/1, translated
 * as proc_lib:trans_init does.  {M, F, Arity}, or 0 when mfa is no such
 * spawn (a fun given to proc_lib names no function the NIF can read).
 * A process that exits before anyone asks keeps its name this way.  A
 * few compares, on a spawn only; the lists walked are bounded.
 */
#define GEN_ARGS_MAX 7

static ERL_NIF_TERM initial_call(ErlNifEnv *env, ERL_NIF_TERM mfa)
{
	const ERL_NIF_TERM *e, *t;
	ERL_NIF_TERM p[5], g[GEN_ARGS_MAX], l, h;
	int n, k, arity;

	if (!enif_get_tuple(env, mfa, &n, &e) || n != 3 ||
	    e[0] != am_proc_lib || e[1] != am_init_p)
		return 0;
	/* [Parent, Ancestors, M, F, A] */
	for (l = e[2], n = 0; n < 5 && enif_get_list_cell(env, l, &p[n], &l); n++)
		;
	if (n != 5 || !enif_is_empty_list(env, l) || !enif_is_atom(env, p[2]) ||
	    !enif_is_atom(env, p[3]))
		return 0;
	for (l = p[4], n = 0; n <= MAX_ARITY && enif_get_list_cell(env, l, &h, &l);
	     n++)
		if (n < GEN_ARGS_MAX)
			g[n] = h;
	if (n > MAX_ARITY || !enif_is_empty_list(env, l))
		return 0;
	if (p[2] != am_gen || p[3] != am_init_it)
		return enif_make_tuple3(env, p[2], p[3], enif_make_int(env, n));
	/* gen:init_it(GenMod, Starter, Parent, [Name,] Mod, Args, Opts): k is
	 * where Mod is */
	k = n == 6 ? 3 : 4;
	if ((n == 6 || n == 7) && g[0] == am_gen_server) {
		if (g[k] == am_supervisor && enif_get_tuple(env, g[k + 1], &arity,
							    &t) && arity == 3)
			return enif_make_tuple3(env, am_supervisor, t[1],
						enif_make_int(env, 1));
		if (g[k] == am_supervisor_bridge &&
		    enif_get_list_cell(env, g[k + 1], &h, &l))
			return enif_make_tuple3(env, am_supervisor_bridge, h,
						enif_make_int(env, 1));
	}
	if (n >= 1 && g[0] == am_gen_event)
		return enif_make_tuple3(env, am_gen_event, am_init_it,
					enif_make_int(env, 6));
	if (n == 6 && enif_is_atom(env, g[3]))
		return enif_make_tuple3(env, g[3], am_init, enif_make_int(env, 1));
	if (n >= 5 && enif_is_atom(env, g[4]))
		return enif_make_tuple3(env, g[4], am_init, enif_make_int(env, 1));
	return enif_make_tuple3(env, p[2], p[3], enif_make_int(env, n));
}

/* ---------------------------------------------------------------------------
 * Encoding: an event exactly as term_to_binary(Event) gives it on this VM,
 * version byte included, written into a buffer (on the stack while it is
 * small).  Atoms and local pids, most words of an event, come from the
 * cache; small integers, floats, tuples, lists, strings and binaries are
 * written here, by the rules ERTS encodes them with; anything else (maps,
 * bignums, references, ports, remote pids) is encoded by
 * enif_term_to_binary and spliced in.
 */

struct enc {
	unsigned char *p;
	size_t len, cap;
	bool ok;                   /* false: out of memory, drop the event */
	unsigned char small[768];
};

static void enc_init(struct enc *e)
{
	e->p = e->small;
	e->len = 0;
	e->cap = sizeof(e->small);
	e->ok = true;
}

static void enc_release(struct enc *e)
{
	if (e->p != e->small)
		enif_free(e->p);
}

static bool enc_grow(struct enc *e, size_t n)
{
	size_t cap = e->cap * 2;
	while (cap < e->len + n)
		cap *= 2;
	unsigned char *p = enif_alloc(cap);
	if (!p) {
		e->ok = false;
		return false;
	}
	memcpy(p, e->p, e->len);
	if (e->p != e->small)
		enif_free(e->p);
	e->p = p;
	e->cap = cap;
	return true;
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

static inline void enc_byte(struct enc *e, unsigned char c)
{
	if (enc_room(e, 1))
		e->p[e->len++] = c;
}

static void enc_be32(struct enc *e, uint32_t v)
{
	unsigned char b[4] = { (unsigned char)(v >> 24), (unsigned char)(v >> 16),
			       (unsigned char)(v >> 8), (unsigned char)v };
	enc_put(e, b, 4);
}

/* term_to_binary(T) without its version byte, spliced in. */
static void enc_ext(ErlNifEnv *env, struct enc *e, ERL_NIF_TERM t)
{
	ErlNifBinary bin;
	if (!enif_term_to_binary(env, t, &bin)) {
		e->ok = false;
		return;
	}
	enc_put(e, bin.data + 1, bin.size - 1);
	enif_release_binary(&bin);
}

static size_t ecache_index(ERL_NIF_TERM t)
{
	return (size_t)(((uint64_t)t * 0x9e3779b97f4a7c15ULL) >> 40) &
		(ECACHE_SLOTS - 1);
}

/* Straight into the output, whole words; committed only if the slot did
 * not change meanwhile. */
static bool ecache_get(struct session *s, ERL_NIF_TERM t, struct enc *e)
{
	struct eslot *sl = &s->ecache[ecache_index(t)];
	unsigned q = atomic_load_explicit(&sl->seq, memory_order_acquire);
	if ((q & 1) || atomic_load_explicit(&sl->key, memory_order_relaxed) != t)
		return false;
	unsigned n = atomic_load_explicit(&sl->len, memory_order_relaxed);
	unsigned words = (n + 7) / 8;
	if (words > ECACHE_WORDS || !enc_room(e, 8 * words))
		return false;
	unsigned char *out = e->p + e->len;
	for (unsigned i = 0; i < words; i++) {
		uint_least64_t w = atomic_load_explicit(&sl->w[i], memory_order_relaxed);
		memcpy(out + 8 * i, &w, 8);
	}
	atomic_thread_fence(memory_order_acquire);
	if (atomic_load_explicit(&sl->seq, memory_order_relaxed) != q)
		return false;
	e->len += n;
	return true;
}

static void ecache_put(struct session *s, ERL_NIF_TERM t,
		       const unsigned char *b, size_t n)
{
	struct eslot *sl = &s->ecache[ecache_index(t)];
	uint_least64_t w[ECACHE_WORDS] = { 0 };
	if (n > sizeof(w))
		return;
	memcpy(w, b, n);
	unsigned q = atomic_load_explicit(&sl->seq, memory_order_relaxed);
	if ((q & 1) || !atomic_compare_exchange_strong_explicit(
		    &sl->seq, &q, q + 1, memory_order_relaxed, memory_order_relaxed))
		return;   /* someone else is writing it: leave it to them */
	atomic_thread_fence(memory_order_release);
	atomic_store_explicit(&sl->key, (uintptr_t)t, memory_order_relaxed);
	atomic_store_explicit(&sl->len, (unsigned)n, memory_order_relaxed);
	for (unsigned i = 0; i < (n + 7) / 8; i++)
		atomic_store_explicit(&sl->w[i], w[i], memory_order_relaxed);
	atomic_store_explicit(&sl->seq, q + 2, memory_order_release);
}

/* An atom or a local pid, from the cache or into it. */
static void enc_cached(ErlNifEnv *env, struct session *s, struct enc *e,
		       ERL_NIF_TERM t)
{
	ErlNifBinary bin;
	if (ecache_get(s, t, e))
		return;
	if (!enif_term_to_binary(env, t, &bin)) {
		e->ok = false;
		return;
	}
	enc_put(e, bin.data + 1, bin.size - 1);
	ecache_put(s, t, bin.data + 1, bin.size - 1);
	enif_release_binary(&bin);
}

/* As ERTS writes an integer that fits in 64 bits. */
static void enc_int(struct enc *e, ErlNifSInt64 v)
{
	if (v >= 0 && v < 256) {
		unsigned char b[2] = { 'a', (unsigned char)v };
		enc_put(e, b, 2);
	} else if (v >= INT32_MIN && v <= INT32_MAX) {
		enc_byte(e, 'b');
		enc_be32(e, (uint32_t)v);
	} else {
		uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
		unsigned char b[11];
		unsigned n = 0;
		for (uint64_t x = u; x; x >>= 8)
			b[3 + n++] = (unsigned char)x;
		b[0] = 'n';
		b[1] = (unsigned char)n;
		b[2] = v < 0;
		enc_put(e, b, 3 + n);
	}
}

/* A proper list of at most 65535 integers 0..255: ERTS's STRING_EXT. */
static bool is_ext_string(ErlNifEnv *env, ERL_NIF_TERM t, unsigned *len)
{
	ERL_NIF_TERM h;
	unsigned n = 0, c;
	while (enif_get_list_cell(env, t, &h, &t)) {
		if (++n > 0xffff || enif_term_type(env, h) != ERL_NIF_TERM_TYPE_INTEGER ||
		    !enif_get_uint(env, h, &c) || c > 255)
			return false;
	}
	*len = n;
	return enif_is_empty_list(env, t);
}

#define ENC_DEPTH 64

static void enc_term(ErlNifEnv *env, struct session *s, struct enc *e,
		     ERL_NIF_TERM t, int depth)
{
	ErlNifTermType type = enif_term_type(env, t);
	ErlNifPid pid;

	if (!e->ok)
		return;
	if (depth > ENC_DEPTH) {
		enc_ext(env, e, t);
		return;
	}
	switch (type) {
	case ERL_NIF_TERM_TYPE_ATOM:
		enc_cached(env, s, e, t);
		return;
	case ERL_NIF_TERM_TYPE_PID:
		if (enif_get_local_pid(env, t, &pid))
			enc_cached(env, s, e, t);
		else
			enc_ext(env, e, t);
		return;
	case ERL_NIF_TERM_TYPE_INTEGER: {
		ErlNifSInt64 v;
		if (enif_get_int64(env, t, &v))
			enc_int(e, v);
		else
			enc_ext(env, e, t);
		return;
	}
	case ERL_NIF_TERM_TYPE_FLOAT: {
		double d;
		uint64_t bits;
		if (!enif_get_double(env, t, &d)) {
			enc_ext(env, e, t);
			return;
		}
		memcpy(&bits, &d, 8);
		enc_byte(e, 'F');
		enc_be32(e, (uint32_t)(bits >> 32));
		enc_be32(e, (uint32_t)bits);
		return;
	}
	case ERL_NIF_TERM_TYPE_TUPLE: {
		const ERL_NIF_TERM *el;
		int n;
		if (!enif_get_tuple(env, t, &n, &el)) {
			enc_ext(env, e, t);
			return;
		}
		if (n < 256) {
			unsigned char b[2] = { 'h', (unsigned char)n };
			enc_put(e, b, 2);
		} else {
			enc_byte(e, 'i');
			enc_be32(e, (uint32_t)n);
		}
		for (int i = 0; i < n; i++)
			enc_term(env, s, e, el[i], depth + 1);
		return;
	}
	case ERL_NIF_TERM_TYPE_LIST: {
		ERL_NIF_TERM h, tail = t;
		unsigned n;
		if (enif_is_empty_list(env, t)) {
			enc_byte(e, 'j');
			return;
		}
		if (is_ext_string(env, t, &n)) {
			unsigned char b[3] = { 'k', (unsigned char)(n >> 8), (unsigned char)n };
			enc_put(e, b, 3);
			if (!enc_room(e, n))
				return;
			while (enif_get_list_cell(env, tail, &h, &tail)) {
				unsigned c = 0;
				enif_get_uint(env, h, &c);
				e->p[e->len++] = (unsigned char)c;
			}
			return;
		}
		n = 0;
		for (ERL_NIF_TERM x = t; enif_get_list_cell(env, x, &h, &x);)
			n++;
		enc_byte(e, 'l');
		enc_be32(e, n);
		while (enif_get_list_cell(env, tail, &h, &tail))
			enc_term(env, s, e, h, depth + 1);
		enc_term(env, s, e, tail, depth + 1);
		return;
	}
	case ERL_NIF_TERM_TYPE_BITSTRING: {
		ErlNifBinary b;
		if (!enif_inspect_binary(env, t, &b)) {
			enc_ext(env, e, t);
			return;
		}
		enc_byte(e, 'm');
		enc_be32(e, (uint32_t)b.size);
		enc_put(e, b.data, b.size);
		return;
	}
	default:
		enc_ext(env, e, t);
		return;
	}
}

/* ---------------------------------------------------------------------------
 * Shipping an event: into the ring of the tracee's worker.
 */

/* The tracee's worker, if its ring has room for an event; else counted. */
static bool reserve(struct session *s, ERL_NIF_TERM tracee, unsigned *w)
{
	unsigned i = (unsigned)(enif_hash(ERL_NIF_INTERNAL_HASH, tracee, 0) %
				s->nworkers);
	struct ring *r = &s->rings[i];
	/* head first: it never passes tail, so used is never below 0 */
	unsigned long long head = atomic_load_explicit(&r->head, memory_order_relaxed);
	unsigned long long used =
		atomic_load_explicit(&r->tail, memory_order_relaxed) - head;
	/* a full ring costs the tracee two loads and one add */
	if (used + 2 > s->ncells) {
		atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
		return false;
	}
	*w = i;
	return true;
}

/* Copy n bytes to the ring at byte offset off, wrapping at its end. */
static void ring_write(struct session *s, struct ring *r, size_t off,
		       const void *b, size_t n)
{
	size_t size = (size_t)s->ncells * CELL, first = size - off;
	if (n <= first) {
		memcpy(r->data + off, b, n);
	} else {
		memcpy(r->data + off, b, first);
		memcpy(r->data, (const unsigned char *)b + first, n - first);
	}
}

static void ring_read(struct session *s, struct ring *r, size_t off, void *b,
		      size_t n)
{
	size_t size = (size_t)s->ncells * CELL, first = size - off;
	if (n <= first) {
		memcpy(b, r->data + off, n);
	} else {
		memcpy(b, r->data + off, first);
		memcpy((unsigned char *)b + first, r->data, n - first);
	}
}

/* Claim cells, write, publish; false if there is no room (nothing done). */
static bool ring_push(ErlNifEnv *env, struct session *s, unsigned w,
		      const unsigned char *b, size_t n)
{
	struct ring *r = &s->rings[w];
	unsigned long long k = (REC_HEAD + n + CELL - 1) / CELL, mask = s->ncells - 1;
	unsigned long long pos = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint32_t len = (uint32_t)n;

	if (k > s->ncells / 2)
		return false;
	do {
		/* head may be newer than pos, and past it: then the claim
		 * fails and pos is fresh; signed, so that is not "full" */
		unsigned long long head =
			atomic_load_explicit(&r->head, memory_order_acquire);
		if ((long long)(pos + k - head) > (long long)s->ncells)
			return false;
	} while (!atomic_compare_exchange_weak_explicit(
			 &r->tail, &pos, pos + k, memory_order_seq_cst,
			 memory_order_relaxed));
	/* the header is at a cell start: it never wraps */
	struct rec_head *h = (struct rec_head *)(void *)(r->data + (pos & mask) * CELL);
	h->len = len;
	ring_write(s, r, (size_t)(pos & mask) * CELL + REC_HEAD, b, n);
	atomic_store_explicit(&h->pub, pos + 1, memory_order_release);
	/* the worker sleeps only after it saw the ring empty, and tail moved
	 * (seq_cst) before this load: one of the two sees the other */
	if (atomic_load_explicit(&r->idle, memory_order_seq_cst) &&
	    atomic_exchange(&r->idle, 0))
		enif_send(env, &s->workers[w], NULL, am_wake);
	return true;
}

static void ship(ErlNifEnv *env, struct session *s, unsigned w, ERL_NIF_TERM tag,
		 ERL_NIF_TERM tracee, ERL_NIF_TERM a, ERL_NIF_TERM b, bool cut)
{
	ErlNifSInt64 us = enif_monotonic_time(ERL_NIF_USEC) +
		enif_time_offset(ERL_NIF_USEC);
	struct enc e;
	unsigned char head[3] = { 131, 'h', 6 };

	enc_init(&e);
	enc_put(&e, head, 3);
	enc_term(env, s, &e, tag, 0);
	enc_term(env, s, &e, tracee, 0);
	enc_int(&e, us);
	enc_term(env, s, &e, a, 0);
	enc_term(env, s, &e, b, 0);
	enc_cached(env, s, &e, cut ? am_true_ : am_false_);
	if (!e.ok || !ring_push(env, s, w, e.p, e.len))
		atomic_fetch_add_explicit(&s->rings[w].dropped, 1, memory_order_relaxed);
	enc_release(&e);
}

static unsigned send_kind(ERL_NIF_TERM tag)
{
	return tag == am_send || tag == am_send_to_non_existing_process ?
		K_SEND : 0;
}

static unsigned procs_kind(ERL_NIF_TERM tag)
{
	if (tag == am_spawn || tag == am_spawned)
		return K_SPAWN;
	if (tag == am_exit)
		return K_EXIT;
	if (tag == am_link || tag == am_unlink || tag == am_getting_linked ||
	    tag == am_getting_unlinked)
		return K_LINK;
	if (tag == am_register_ || tag == am_unregister)
		return K_REGISTER;
	return 0;
}

/* ---------------------------------------------------------------------------
 * Count tier.
 */

static bool in_focus(struct session *s, ERL_NIF_TERM tracee)
{
	if (!atomic_load_explicit(&s->nfocus, memory_order_relaxed))
		return false;
	for (int i = 0; i < FOCUS_MAX; i++)
		if (atomic_load_explicit(&s->focus[i], memory_order_relaxed) ==
		    (uintptr_t)tracee)
			return true;
	return false;
}

static void trip(struct session *s, int why);

/*
 * Count one send or receive of tracee; true if it was counted (or is over
 * the event limit), not shipped.  A counted event is an event as much as
 * a shipped one: it counts towards the event limit, so the limit, the
 * view's ev/s and the summaries agree on what an event is.
 */
static bool count_one(ErlNifEnv *env, struct session *s, ERL_NIF_TERM tracee,
		      bool send);

static bool counted(ErlNifEnv *env, struct session *s, ERL_NIF_TERM tracee,
		    bool send)
{
	if (!s->count_tier || in_focus(s, tracee))
		return false;
	return count_one(env, s, tracee, send);
}

/* Count it whoever it is (a local process); false for a port. */
static bool count_one(ErlNifEnv *env, struct session *s, ERL_NIF_TERM tracee,
		      bool send)
{
	ErlNifPid pid;
	if (!enif_get_local_pid(env, tracee, &pid))
		return false;                  /* a port: ship it */
	if (s->max_events &&
	    atomic_fetch_add_explicit(&s->produced, 1, memory_order_relaxed) >=
	    s->max_events) {
		trip(s, TRIP_EVENTS);
		return true;
	}
	uintptr_t key = (uintptr_t)pid.pid;
	unsigned t = atomic_load_explicit(&s->table, memory_order_acquire);
	struct cslot *tab = &s->tables[(size_t)t * COUNT_SLOTS];
	/* the slot only has to be the same for the same key: a multiplicative
	 * hash of the key word is enough, and costs no call */
	size_t h = (size_t)(((uint64_t)key * 0x9e3779b97f4a7c15ULL) >> 40);
	for (int p = 0; p < COUNT_PROBES; p++) {
		struct cslot *sl = &tab[(h + (size_t)p) & (COUNT_SLOTS - 1)];
		uintptr_t k = atomic_load_explicit(&sl->key, memory_order_relaxed);
		if (k == 0) {
			uintptr_t zero = 0;
			if (atomic_compare_exchange_strong(&sl->key, &zero, key))
				k = key;
			else
				k = zero;          /* someone else took it */
		}
		if (k == key) {
			atomic_fetch_add_explicit(send ? &sl->sends : &sl->receives,
						  1, memory_order_relaxed);
			return true;
		}
	}
	atomic_fetch_add_explicit(&s->overflow, 1, memory_order_relaxed);
	return true;
}

/* ---------------------------------------------------------------------------
 * Limits, before anything is built or copied.  A limit that stops
 * deactivates the session: every tracee drops its flags at its next event.
 */

static void trip(struct session *s, int why)
{
	int none = TRIP_NONE;
	atomic_compare_exchange_strong(&s->tripped, &none, why);
	atomic_store_explicit(&s->active, false, memory_order_release);
}

static bool admit(struct session *s, unsigned kind)
{
	ErlNifSInt64 now = 0;
	if (!(kind & s->limit_kinds))
		return true;          /* kept for names, not asked for */
	if (s->deadline_ns || s->rate_ns)
		now = enif_monotonic_time(ERL_NIF_NSEC);
	if (s->deadline_ns && now >= s->deadline_ns) {
		trip(s, TRIP_DURATION);
		return false;
	}
	if (s->rate_ns) {
		long long tat = atomic_load_explicit(&s->tat_ns, memory_order_relaxed);
		long long next;
		do {
			next = (tat > now ? tat : now) + s->rate_ns;
			if (next - now > s->burst_ns) {
				if (s->shed)
					atomic_fetch_add_explicit(&s->shed_count, 1,
								  memory_order_relaxed);
				else
					trip(s, TRIP_RATE);
				return false;
			}
		} while (!atomic_compare_exchange_weak(&s->tat_ns, &tat, next));
	}
	if (s->max_events &&
	    atomic_fetch_add_explicit(&s->produced, 1, memory_order_relaxed) >=
	    s->max_events) {
		trip(s, TRIP_EVENTS);
		return false;
	}
	return true;
}

/* ---------------------------------------------------------------------------
 * Gen calls: a `{'$gen_call', {From, Tag}, Request}` and the `{Tag, Reply}`
 * that answers it become compact records (PROTOCOL.md), in either tier,
 * without shipping the message: the shape check is a few compares, and a
 * record costs what one small event costs.  Pairing them is the C node's
 * job (src/analyse/gencall.c says why).  Only sends are looked at: the call's send
 * by the caller and the reply's send by the server are all it takes, and
 * receives stay counted in enabled_receive with no second callback.
 */
#define GEN_BUDGET 80          /* request and reply text, at most */

/* Tag is a reference (before OTP 24) or [alias | Ref]: the reference. */
static bool gen_ref(ErlNifEnv *env, ERL_NIF_TERM tag, ERL_NIF_TERM *ref)
{
	ERL_NIF_TERM hd, tl;
	if (enif_is_ref(env, tag)) {
		*ref = tag;
		return true;
	}
	if (enif_get_list_cell(env, tag, &hd, &tl) && hd == am_alias &&
	    enif_is_ref(env, tl)) {
		*ref = tl;
		return true;
	}
	return false;
}

/* A request's kind: its first element when that is an atom, or itself. */
static ERL_NIF_TERM gen_kind(ErlNifEnv *env, ERL_NIF_TERM req)
{
	const ERL_NIF_TERM *e;
	int n;
	if (enif_is_atom(env, req))
		return req;
	if (enif_get_tuple(env, req, &n, &e) && n > 0 && enif_is_atom(env, e[0]))
		return e[0];
	return enif_make_list(env, 0);
}

/*
 * gen_call:  A = {To, Ref, Kind}, B = the request (cut)
 * gen_reply: A = Ref,             B = the reply (cut)
 * With payloads off, B is [].
 */
static void do_gen(ErlNifEnv *env, struct session *s, const ERL_NIF_TERM argv[])
{
	const ERL_NIF_TERM *e, *from;
	ERL_NIF_TERM nil = enif_make_list(env, 0), ref, to, b = nil;
	size_t budget = s->payload && s->payload < GEN_BUDGET ? s->payload :
		s->payload ? GEN_BUDGET : 0;
	unsigned w;
	int n, m;
	bool cut = false;

	if (!enif_get_tuple(env, argv[3], &n, &e))
		return;
	if (n == 3 && e[0] == am_gen_call_msg) {
		if (!enif_get_tuple(env, e[1], &m, &from) || m != 2 ||
		    !gen_ref(env, from[1], &ref) || !reserve(s, argv[2], &w))
			return;
		if (!enif_get_map_value(env, argv[4], am_extra, &to))
			to = nil;
		if (budget)
			b = payload(env, e[2], budget, &cut);
		ship(env, s, w, am_gen_call, argv[2],
		     enif_make_tuple3(env, to, ref, gen_kind(env, e[2])), b, cut);
	} else if (n == 2 && gen_ref(env, e[0], &ref)) {
		if (!reserve(s, argv[2], &w))
			return;
		if (budget)
			b = payload(env, e[1], budget, &cut);
		ship(env, s, w, am_gen_reply, argv[2], ref, b, cut);
	}
}

/* Did enabled_send count this send (and so must not ship it)? */
static bool was_counted(ErlNifEnv *env, struct session *s, ERL_NIF_TERM tracee)
{
	ErlNifPid pid;
	return s->count_tier && !in_focus(s, tracee) &&
		enif_get_local_pid(env, tracee, &pid);
}

/*
 * A message the agent's --match pattern did not match, let through only
 * to be counted (a process in focus in the count tier) or for its gen
 * call record (PROTOCOL.md, Matching messages): never shipped.  In the
 * count tier it counts as the process's other messages do, so that its
 * totals stay exact; true when it was taken care of here.
 */
static bool unmatched(ErlNifEnv *env, struct session *s,
		      const ERL_NIF_TERM argv[], bool send)
{
	ERL_NIF_TERM v;
	if (!enif_get_map_value(env, argv[4], am_match_spec_result, &v) ||
	    v != am_other_mark)
		return false;
	if (s->count_tier)
		(void)count_one(env, s, argv[2], send);
	return true;
}

/* argv of trace*: Tag, Session, Tracee, TraceTerm, Opts */
static void do_send(ErlNifEnv *env, struct session *s, const ERL_NIF_TERM argv[])
{
	ERL_NIF_TERM to, b = enif_make_list(env, 0);
	unsigned w;
	bool cut = false;

	if ((s->kinds & K_GENCALL) && argv[0] == am_send)
		do_gen(env, s, argv);
	if (!(s->kinds & send_kind(argv[0])) || was_counted(env, s, argv[2]) ||
	    unmatched(env, s, argv, true) ||
	    !admit(s, K_SEND) || !reserve(s, argv[2], &w))
		return;
	if (!enif_get_map_value(env, argv[4], am_extra, &to))
		to = b;
	if (s->payload)
		b = payload(env, argv[3], s->payload, &cut);
	ship(env, s, w, argv[0], argv[2], to, b, cut);
}

/*
 * A receive that is a receive timeout, not a message: the agent's receive
 * pattern marks the timeouts of shipped processes (PROTOCOL.md); a real
 * message, the atom timeout included, never carries the mark.
 */
static bool is_timeout(ErlNifEnv *env, const ERL_NIF_TERM argv[])
{
	ERL_NIF_TERM v;
	return argv[3] == am_timeout &&
		enif_get_map_value(env, argv[4], am_match_spec_result, &v) &&
		v == am_timeout_mark;
}

static void do_receive(ErlNifEnv *env, struct session *s,
		       const ERL_NIF_TERM argv[])
{
	ERL_NIF_TERM nil = enif_make_list(env, 0), b = nil;
	unsigned w;
	bool cut = false;

	if (argv[0] != am_receive)
		return;
	/* a timeout of its own kind: never counted as a message, an event
	 * (for the limits) only when asked for */
	if (is_timeout(env, argv)) {
		if ((s->kinds & K_TIMEOUT) &&
		    (!s->count_tier || in_focus(s, argv[2])) &&
		    admit(s, K_TIMEOUT) && reserve(s, argv[2], &w))
			ship(env, s, w, am_timeout, argv[2], nil, nil, false);
		return;
	}
	if (!(s->kinds & K_RECEIVE) ||
	    counted(env, s, argv[2], false) || unmatched(env, s, argv, false) ||
	    !admit(s, K_RECEIVE) ||
	    !reserve(s, argv[2], &w))
		return;
	if (s->payload)
		b = payload(env, argv[3], s->payload, &cut);
	ship(env, s, w, argv[0], argv[2], nil, b, cut);
}

static void do_procs(ErlNifEnv *env, struct session *s, const ERL_NIF_TERM argv[])
{
	ERL_NIF_TERM nil = enif_make_list(env, 0), a = nil, b = nil, mfa;
	unsigned kind = procs_kind(argv[0]), w;
	bool cut = false;

	if (!(s->kinds & kind) || !admit(s, kind) || !reserve(s, argv[2], &w))
		return;
	switch (kind) {
	case K_SPAWN:
		/* spawn: TraceTerm is the child; spawned: the parent */
		a = argv[3];
		if (enif_get_map_value(env, argv[4], am_extra, &mfa)) {
			b = spawn_mfa(env, mfa, s->payload, &cut);
			/* {M, F, Arity, Args, Initial} for a proc_lib spawn */
			ERL_NIF_TERM init = initial_call(env, mfa);
			const ERL_NIF_TERM *f;
			int nf;
			if (init && enif_get_tuple(env, b, &nf, &f) && nf == 4)
				b = enif_make_tuple5(env, f[0], f[1], f[2], f[3], init);
		}
		break;
	case K_EXIT:
		b = payload(env, argv[3], s->payload ? s->payload : EXIT_BUDGET_OFF,
			    &cut);
		break;
	default:  /* the link peer, or the name */
		a = argv[3];
		break;
	}
	ship(env, s, w, argv[0], argv[2], a, b, cut);
}

/*
 * call:           A = match_spec_result (the caller, with `stack`) or [],
 *                 B = {M, F, Arity, Args}
 * return_from:    A = {M, F, Arity}, B = the value
 * exception_from: A = {M, F, Arity}, B = {Class, Reason}
 */
static void do_call(ErlNifEnv *env, struct session *s, const ERL_NIF_TERM argv[])
{
	ERL_NIF_TERM tag = argv[0], nil = enif_make_list(env, 0), a = nil, b = nil, v;
	unsigned w;
	bool cut = false;

	if (!(s->kinds & K_CALL) || (tag != am_call && tag != am_return_from &&
				    tag != am_exception_from) ||
	    !admit(s, K_CALL) || !reserve(s, argv[2], &w))
		return;
	if (tag == am_call) {
		b = spawn_mfa(env, argv[3], s->payload, &cut);
		if (enif_get_map_value(env, argv[4], am_match_spec_result, &v) &&
		    v != am_true_)
			a = payload(env, v, EXIT_BUDGET_OFF, &cut);
	} else {
		a = argv[3];
		if (enif_get_map_value(env, argv[4], am_extra, &v)) {
			/* an exception is shown even without payloads, kept short */
			size_t budget = tag == am_exception_from && !s->payload ?
				EXIT_BUDGET_OFF : s->payload;
			if (budget)
				b = payload(env, v, budget, &cut);
		}
	}
	ship(env, s, w, tag, argv[2], a, b, cut);
}

static ERL_NIF_TERM gate(struct session *s, unsigned kind);

static bool gc_tag(ERL_NIF_TERM t)
{
	return t == am_gc_minor_start || t == am_gc_minor_end ||
		t == am_gc_major_start || t == am_gc_major_end;
}

static bool running_tag(ERL_NIF_TERM t)
{
	return t == am_in || t == am_out || t == am_in_exiting ||
		t == am_out_exiting || t == am_out_exited;
}

/* gc_*: A = {HeapSize, OldHeapSize} in words, from the info list */
static void do_gc(ErlNifEnv *env, struct session *s, const ERL_NIF_TERM argv[])
{
	ERL_NIF_TERM h, t, nil = enif_make_list(env, 0);
	ERL_NIF_TERM heap = enif_make_int(env, -1), old = heap;
	unsigned w;
	int n = 0;

	if (!(s->kinds & K_GC) || !gc_tag(argv[0]) || !admit(s, K_GC) ||
	    !reserve(s, argv[2], &w))
		return;
	/* a short list of {Key, Int}; bounded all the same */
	for (t = argv[3]; n < 32 && enif_get_list_cell(env, t, &h, &t); n++) {
		const ERL_NIF_TERM *kv;
		int ar;
		if (!enif_get_tuple(env, h, &ar, &kv) || ar != 2)
			continue;
		if (kv[0] == am_heap_size)
			heap = kv[1];
		else if (kv[0] == am_old_heap_size)
			old = kv[1];
	}
	ship(env, s, w, argv[0], argv[2], enif_make_tuple2(env, heap, old), nil,
	     false);
}

/* in/out: A = the current function {M, F, Arity}, or 0 */
static void do_running(ErlNifEnv *env, struct session *s, const ERL_NIF_TERM argv[])
{
	unsigned w;
	if (!(s->kinds & K_RUNNING) || !running_tag(argv[0]) ||
	    !admit(s, K_RUNNING) || !reserve(s, argv[2], &w))
		return;
	ship(env, s, w, argv[0], argv[2], argv[3], enif_make_list(env, 0), false);
}

static ERL_NIF_TERM nif_enabled_gc(ErlNifEnv *env, int argc,
				   const ERL_NIF_TERM argv[])
{
	(void)argc;
	return gate(live_session(env, argv[1]), K_GC);
}

static ERL_NIF_TERM nif_enabled_running(ErlNifEnv *env, int argc,
					const ERL_NIF_TERM argv[])
{
	(void)argc;
	return gate(live_session(env, argv[1]), K_RUNNING);
}

static ERL_NIF_TERM nif_trace_gc(ErlNifEnv *env, int argc,
				 const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s = live_session(env, argv[1]);
	if (s)
		do_gc(env, s, argv);
	return am_ok;
}

static ERL_NIF_TERM nif_trace_running(ErlNifEnv *env, int argc,
				      const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s = live_session(env, argv[1]);
	if (s)
		do_running(env, s, argv);
	return am_ok;
}

/* ---------------------------------------------------------------------------
 * erl_tracer callbacks.  argv[1] is always the tracer state: our session.
 */

static ERL_NIF_TERM gate(struct session *s, unsigned kind)
{
	if (!s)
		return am_remove;
	return s->kinds & kind ? am_trace : am_discard;
}

static ERL_NIF_TERM nif_enabled(ErlNifEnv *env, int argc,
				const ERL_NIF_TERM argv[])
{
	(void)argc;
	if (!live_session(env, argv[1]))
		return am_remove;
	return argv[0] == am_trace_status ? am_trace : am_discard;
}

/*
 * Sends and receives are counted here, in the count tier, and the answer
 * is discard: ERTS then builds nothing and makes no second call.  Only an
 * event that is shipped (in focus, or the event tier) goes on to trace_*.
 */
static ERL_NIF_TERM nif_enabled_send(ErlNifEnv *env, int argc,
				     const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s = live_session(env, argv[1]);
	if (!s)
		return am_remove;
	/* gen calls are recognised in trace_send: every send goes there */
	ERL_NIF_TERM more = s->kinds & K_GENCALL ? am_trace : am_discard;
	if (!(s->kinds & send_kind(argv[0])))
		return send_kind(argv[0]) ? more : am_discard;
	return counted(env, s, argv[2], true) ? more : am_trace;
}

static ERL_NIF_TERM nif_enabled_receive(ErlNifEnv *env, int argc,
					const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s = live_session(env, argv[1]);
	if (!s)
		return am_remove;
	if (argv[0] != am_receive || !(s->kinds & (K_RECEIVE | K_TIMEOUT)))
		return am_discard;
	/* timeouts alone (the pattern rejects the messages): those of the
	 * processes whose events are shipped */
	if (!(s->kinds & K_RECEIVE))
		return s->count_tier && !in_focus(s, argv[2]) ? am_discard :
			am_trace;
	return counted(env, s, argv[2], false) ? am_discard : am_trace;
}

static ERL_NIF_TERM nif_enabled_procs(ErlNifEnv *env, int argc,
				      const ERL_NIF_TERM argv[])
{
	(void)argc;
	return gate(live_session(env, argv[1]), procs_kind(argv[0]));
}

static ERL_NIF_TERM nif_enabled_call(ErlNifEnv *env, int argc,
				     const ERL_NIF_TERM argv[])
{
	(void)argc;
	return gate(live_session(env, argv[1]), K_CALL);
}

static ERL_NIF_TERM nif_trace_call(ErlNifEnv *env, int argc,
				   const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s = live_session(env, argv[1]);
	if (s)
		do_call(env, s, argv);
	return am_ok;
}

/* garbage_collection, running_procs, ports, running_ports: never set */
static ERL_NIF_TERM nif_enabled_other(ErlNifEnv *env, int argc,
				      const ERL_NIF_TERM argv[])
{
	(void)argc;
	return gate(live_session(env, argv[1]), 0);
}

static ERL_NIF_TERM nif_trace(ErlNifEnv *env, int argc,
			      const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s = live_session(env, argv[1]);
	if (!s)
		return am_ok;
	if (send_kind(argv[0]))
		do_send(env, s, argv);
	else if (argv[0] == am_receive)
		do_receive(env, s, argv);
	else if (procs_kind(argv[0]))
		do_procs(env, s, argv);
	else if (gc_tag(argv[0]))
		do_gc(env, s, argv);
	else if (running_tag(argv[0]))
		do_running(env, s, argv);
	else
		do_call(env, s, argv);
	return am_ok;
}

static ERL_NIF_TERM nif_trace_send(ErlNifEnv *env, int argc,
				   const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s = live_session(env, argv[1]);
	if (s)
		do_send(env, s, argv);
	return am_ok;
}

static ERL_NIF_TERM nif_trace_receive(ErlNifEnv *env, int argc,
				      const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s = live_session(env, argv[1]);
	if (s)
		do_receive(env, s, argv);
	return am_ok;
}

static ERL_NIF_TERM nif_trace_procs(ErlNifEnv *env, int argc,
				    const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s = live_session(env, argv[1]);
	if (s)
		do_procs(env, s, argv);
	return am_ok;
}

static ERL_NIF_TERM nif_trace_other(ErlNifEnv *env, int argc,
				    const ERL_NIF_TERM argv[])
{
	(void)env;
	(void)argc;
	(void)argv;
	return am_ok;
}

/* ---------------------------------------------------------------------------
 * The session, for the agent and the workers.
 */

static size_t line_up(size_t n)
{
	return (n + CACHE_LINE - 1) & ~(size_t)(CACHE_LINE - 1);
}

/* Cells per ring: high_water of them, and room for the largest event. */
static unsigned long long ring_cells(size_t payload, long high_water)
{
	/* an event's encoding stays within a few bytes per byte of budget */
	unsigned long long ev = (4ULL * payload + 1024) / CELL + 1, want, n = 64;
	want = (unsigned long long)high_water > 4 * ev ?
		(unsigned long long)high_water : 4 * ev;
	while (n < want && n < RING_CELLS_MAX)
		n *= 2;
	return n;
}

/* Where each part of a session's mapping starts, and its size. */
struct layout {
	unsigned long long cells;  /* per ring */
	size_t rings, cache, tables, bufs, size;
};

static void session_layout(struct layout *l, unsigned n, size_t payload,
			   long high_water, bool count_tier)
{
	l->cells = ring_cells(payload, high_water);
	l->rings = line_up((size_t)n * sizeof(ErlNifPid));
	l->cache = l->rings + line_up((size_t)n * sizeof(struct ring));
	l->tables = l->cache + line_up(ECACHE_SLOTS * sizeof(struct eslot));
	l->bufs = l->tables + (count_tier ?
		line_up(3 * (size_t)COUNT_SLOTS * sizeof(struct cslot)) : 0);
	l->size = l->bufs + (size_t)n * (size_t)l->cells * CELL;
}

/* A number from the first line of a file; 0 if there is none ("max"). */
static unsigned long long file_number(const char *path)
{
	unsigned long long v = 0;
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v;
}

/* The memory this VM may use: the machine's, or its control group's limit
 * (cgroup v2, then v1) when that is smaller. */
static unsigned long long target_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	unsigned long long mem = pages > 0 && page > 0 ?
		(unsigned long long)pages * (unsigned long long)page : 0;
	char line[512], path[600];
	FILE *f = fopen("/proc/self/cgroup", "re");
	if (f) {
		while (fgets(line, sizeof(line), f)) {
			if (strncmp(line, "0::", 3))
				continue;
			line[strcspn(line, "\n")] = '\0';
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.max",
				 line + 3);
			unsigned long long lim = file_number(path);
			if (lim && (!mem || lim < mem))
				mem = lim;
		}
		fclose(f);
	}
	unsigned long long v1 =
		file_number("/sys/fs/cgroup/memory/memory.limit_in_bytes");
	if (v1 && (!mem || v1 < mem))
		mem = v1;
	return mem;
}

/* The most one session may take on this VM. */
static unsigned long long session_cap(unsigned long long mem)
{
	unsigned long long share = mem / SESSION_MEM_SHARE;
	return mem && share < SESSION_MEM_CEILING ? share : SESSION_MEM_CEILING;
}

/* The arguments of session_new and session_memory; false: badarg. */
static bool session_args(ErlNifEnv *env, const ERL_NIF_TERM argv[], int *n,
			 unsigned *kinds, ErlNifUInt64 *payload, ErlNifSInt64 *hw)
{
	return enif_get_int(env, argv[0], n) && *n >= 1 && *n <= MAX_WORKERS &&
		enif_get_uint(env, argv[1], kinds) && !(*kinds & ~(unsigned)K_ALL) &&
		enif_get_uint64(env, argv[2], payload) && *payload <= MAX_PAYLOAD &&
		enif_get_int64(env, argv[3], hw) && *hw >= 1 && *hw <= MAX_HIGH_WATER;
}

static ERL_NIF_TERM memory_error(ErlNifEnv *env, const char *why,
				 unsigned long long need, unsigned long long cap,
				 unsigned long long mem)
{
	return enif_make_tuple2(env, enif_make_atom(env, "error"),
		enif_make_tuple4(env, enif_make_atom(env, why),
				 enif_make_uint64(env, need),
				 enif_make_uint64(env, cap),
				 enif_make_uint64(env, mem)));
}

/*
 * session_memory(Workers, KindsMask, PayloadBytes, HighWater, CountTier)
 * -> {Need, Cap, Memory}: the bytes a session of this shape would take,
 * the most a session may take here, and the memory that cap comes from
 * (0: unknown).  Nothing is allocated.
 */
static ERL_NIF_TERM nif_session_memory(ErlNifEnv *env, int argc,
				       const ERL_NIF_TERM argv[])
{
	int n;
	unsigned kinds;
	ErlNifUInt64 payload;
	ErlNifSInt64 hw;
	struct layout l;
	(void)argc;
	if (!session_args(env, argv, &n, &kinds, &payload, &hw))
		return enif_make_badarg(env);
	session_layout(&l, (unsigned)n, (size_t)payload, (long)hw,
		       argv[4] == am_true_);
	unsigned long long mem = target_memory();
	return enif_make_tuple3(env, enif_make_uint64(env, l.size),
				enif_make_uint64(env, session_cap(mem)),
				enif_make_uint64(env, mem));
}

static void session_dtor(ErlNifEnv *env, void *obj)
{
	struct session *s = obj;
	(void)env;
	if (s->mem)
		munmap(s->mem, s->mem_size);
	s->mem = NULL;
}

/*
 * session_new(WorkersTuple, KindsMask, PayloadBytes, HighWater, CountTier)
 * -> Session | {error, {memory_cap, Need, Cap, Memory}}
 *            | {error, {no_memory, Need, Cap, Memory}}
 * The memory is checked against the cap first, then mapped: pages the
 * kernel zeroes, taken only as the rings fill.
 */
static ERL_NIF_TERM nif_session_new(ErlNifEnv *env, int argc,
				    const ERL_NIF_TERM argv[])
{
	bool count_tier = argc > 4 && argv[4] == am_true_;
	const ERL_NIF_TERM *ws;
	int n;
	unsigned kinds;
	ErlNifUInt64 payload;
	ErlNifSInt64 hw;
	ERL_NIF_TERM args[4];
	struct layout l;

	if (!enif_get_tuple(env, argv[0], &n, &ws))
		return enif_make_badarg(env);
	args[0] = enif_make_int(env, n);
	memcpy(args + 1, argv + 1, 3 * sizeof(ERL_NIF_TERM));
	if (!session_args(env, args, &n, &kinds, &payload, &hw))
		return enif_make_badarg(env);

	session_layout(&l, (unsigned)n, (size_t)payload, (long)hw, count_tier);
	unsigned long long mem = target_memory(), cap = session_cap(mem);
	if (l.size > cap)
		return memory_error(env, "memory_cap", l.size, cap, mem);
	void *m = mmap(NULL, l.size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return memory_error(env, "no_memory", l.size, cap, mem);
	struct session *s = enif_alloc_resource(session_type, sizeof(*s));
	memset(s, 0, sizeof(*s));
	s->mem = m;
	s->mem_size = l.size;
	char *p = m;   /* page-aligned, so every part is line-aligned */
	s->workers = (ErlNifPid *)(void *)p;
	s->rings = (struct ring *)(void *)(p + l.rings);
	s->ecache = (struct eslot *)(void *)(p + l.cache);
	if (count_tier)   /* zero pages: every slot free */
		s->tables = (struct cslot *)(void *)(p + l.tables);
	s->nworkers = (unsigned)n;
	s->ncells = l.cells;
	s->count_tier = count_tier;
	s->kinds = kinds;
	s->payload = (size_t)payload;
	for (int i = 0; i < n; i++) {
		struct ring *r = &s->rings[i];
		atomic_init(&r->tail, 0);
		atomic_init(&r->head, 0);
		atomic_init(&r->idle, 0);
		atomic_init(&r->dropped, 0);
		atomic_init(&r->taken, 0);
		atomic_init(&r->batches, 0);
		r->data = (unsigned char *)p + l.bufs +
			(size_t)i * (size_t)l.cells * CELL;
		if (!enif_get_local_pid(env, ws[i], &s->workers[i])) {
			enif_release_resource(s);   /* the destructor unmaps */
			return enif_make_badarg(env);
		}
	}
	atomic_init(&s->active, true);

	ERL_NIF_TERM t = enif_make_resource(env, s);
	enif_release_resource(s);
	return t;
}

static ERL_NIF_TERM nif_session_stop(ErlNifEnv *env, int argc,
				     const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s = get_session(env, argv[0]);
	if (!s)
		return enif_make_badarg(env);
	atomic_store_explicit(&s->active, false, memory_order_release);
	return am_ok;
}

/* counts_take(S) -> {Overflow, [{Pid, Sends, Receives}]}: the deltas of
 * the table retired one harvest ago; rotates the tables. */
static ERL_NIF_TERM nif_counts_take(ErlNifEnv *env, int argc,
				    const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s = get_session(env, argv[0]);
	if (!s || !s->count_tier)
		return enif_make_badarg(env);
	unsigned old = atomic_load_explicit(&s->table, memory_order_relaxed);
	atomic_store_explicit(&s->table, (old + 1) % 3, memory_order_release);
	struct cslot *tab = &s->tables[(size_t)((old + 2) % 3) * COUNT_SLOTS];
	ERL_NIF_TERM list = enif_make_list(env, 0);
	for (size_t i = 0; i < COUNT_SLOTS; i++) {
		struct cslot *sl = &tab[i];
		uintptr_t k = atomic_load_explicit(&sl->key, memory_order_relaxed);
		if (!k)
			continue;
		unsigned long snd = atomic_exchange(&sl->sends, 0);
		unsigned long rcv = atomic_exchange(&sl->receives, 0);
		atomic_store(&sl->key, 0);
		if (!snd && !rcv)
			continue;
		ErlNifPid pid;
		pid.pid = (ERL_NIF_TERM)k;
		list = enif_make_list_cell(env, enif_make_tuple3(env,
				enif_make_pid(env, &pid), enif_make_ulong(env, snd),
				enif_make_ulong(env, rcv)), list);
	}
	return enif_make_tuple2(env,
		enif_make_long(env, atomic_load(&s->overflow)), list);
}

/* session_limits(S, Kinds, MaxEvents, DurationMs, Rate, Shed): called once,
 * before the session traces anything; 0 means no limit. */
static ERL_NIF_TERM nif_session_limits(ErlNifEnv *env, int argc,
				       const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s = get_session(env, argv[0]);
	unsigned kinds;
	long max, ms, rate;
	if (!s || !enif_get_uint(env, argv[1], &kinds) ||
	    !enif_get_long(env, argv[2], &max) || max < 0 ||
	    !enif_get_long(env, argv[3], &ms) || ms < 0 ||
	    !enif_get_long(env, argv[4], &rate) || rate < 0 || rate > 1000000000 ||
	    (argv[5] != am_true_ && argv[5] != am_false_))
		return enif_make_badarg(env);
	s->limit_kinds = kinds;
	s->max_events = max;
	s->deadline_ns = ms ? enif_monotonic_time(ERL_NIF_NSEC) +
		(ErlNifSInt64)ms * 1000000 : 0;
	if (rate) {
		/* the monotonic clock may be negative: the bucket starts now */
		atomic_store(&s->tat_ns, enif_monotonic_time(ERL_NIF_NSEC));
		s->rate_ns = 1000000000LL / rate;
		if (s->rate_ns < 1)
			s->rate_ns = 1;
		s->burst_ns = s->rate_ns * rate;    /* a second's worth at once */
	}
	s->shed = argv[5] == am_true_;
	return am_ok;
}

/* limits(S) -> {none | max_events | rate | duration, Shed} */
static ERL_NIF_TERM nif_limits(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s = get_session(env, argv[0]);
	static const char *const names[] = { "none", "max_events", "rate", "duration" };
	if (!s)
		return enif_make_badarg(env);
	int t = atomic_load(&s->tripped);
	return enif_make_tuple2(env, enif_make_atom(env, names[t & 3]),
				enif_make_long(env, atomic_load(&s->shed_count)));
}

/* focus(S, Pid, Bool): Pid's sends and receives are shipped, not counted. */
static ERL_NIF_TERM nif_focus(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s = get_session(env, argv[0]);
	ErlNifPid pid;
	if (!s || !enif_get_local_pid(env, argv[1], &pid) ||
	    (argv[2] != am_true_ && argv[2] != am_false_))
		return enif_make_badarg(env);
	uintptr_t key = (uintptr_t)pid.pid;
	for (int i = 0; i < FOCUS_MAX; i++) {
		uintptr_t k = atomic_load(&s->focus[i]);
		if (k == key) {
			if (argv[2] == am_false_) {
				atomic_store(&s->focus[i], 0);
				atomic_fetch_sub(&s->nfocus, 1);
			}
			return am_ok;
		}
	}
	if (argv[2] == am_false_)
		return am_ok;
	for (int i = 0; i < FOCUS_MAX; i++) {
		uintptr_t zero = 0;
		if (atomic_compare_exchange_strong(&s->focus[i], &zero, key)) {
			atomic_fetch_add(&s->nfocus, 1);
			return am_ok;
		}
	}
	return enif_make_atom(env, "full");
}

/* The session and worker W of argv[0], argv[1]. */
static struct ring *get_ring(ErlNifEnv *env, const ERL_NIF_TERM argv[],
			     struct session **sp)
{
	struct session *s = get_session(env, argv[0]);
	unsigned w;
	if (!s || !enif_get_uint(env, argv[1], &w) || w >= s->nworkers)
		return NULL;
	*sp = s;
	return &s->rings[w];
}

/*
 * take(S, W, Max) -> {Count, Binary}: up to Max published events of worker
 * W, oldest first, each a whole external term (version byte and all), back
 * to back; {0, <<>>} if none.  Their cells go back to the tracees.  Only
 * worker W calls it, so head has one writer.
 */
static ERL_NIF_TERM nif_take(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s;
	struct ring *r = get_ring(env, argv, &s);
	unsigned max;
	if (!r || !enif_get_uint(env, argv[2], &max) || max < 1)
		return enif_make_badarg(env);
	unsigned long long mask = s->ncells - 1;
	unsigned long long h = atomic_load_explicit(&r->head, memory_order_relaxed);
	unsigned long long p = h;
	size_t total = 0;
	unsigned count = 0;
	struct rec_head *rh;

	/* what is published, in claim order */
	while (count < max) {
		rh = (struct rec_head *)(void *)(r->data + (p & mask) * CELL);
		if (atomic_load_explicit(&rh->pub, memory_order_acquire) != p + 1)
			break;
		total += rh->len;
		count++;
		p += (REC_HEAD + rh->len + CELL - 1) / CELL;
	}
	ERL_NIF_TERM bin;
	unsigned char *out = enif_make_new_binary(env, total, &bin);
	if (!out)
		return enif_make_badarg(env);
	for (unsigned long long q = h; q != p;) {
		rh = (struct rec_head *)(void *)(r->data + (q & mask) * CELL);
		unsigned long long k = (REC_HEAD + rh->len + CELL - 1) / CELL;
		ring_read(s, r, (size_t)(q & mask) * CELL + REC_HEAD, out, rh->len);
		out += rh->len;
		/* any of these cells may start an event next time round: its
		 * first word must not hold bytes of this one */
		for (unsigned long long j = 0; j < k; j++)
			memset(r->data + ((q + j) & mask) * CELL, 0, sizeof(atomic_ullong));
		q += k;
	}
	/* the cells are read: tracees may have them */
	atomic_store_explicit(&r->head, p, memory_order_release);
	if (count) {
		atomic_fetch_add_explicit(&r->taken, count, memory_order_relaxed);
		atomic_fetch_add_explicit(&r->batches, 1, memory_order_relaxed);
	}
	return enif_make_tuple2(env, enif_make_uint(env, count), bin);
}

/*
 * discard(S, W) -> Count: what is left in worker W's ring, published, is
 * given back unread and counted as dropped, so that delivered + dropped
 * stays what the tracees produced when a drain runs out of time.  Called
 * by worker W, or by the agent once W is dead (head has one writer).
 */
static ERL_NIF_TERM nif_discard(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s;
	struct ring *r = get_ring(env, argv, &s);
	if (!r)
		return enif_make_badarg(env);
	unsigned long long mask = s->ncells - 1;
	unsigned long long p = atomic_load_explicit(&r->head, memory_order_relaxed);
	long count = 0;
	for (;;) {
		struct rec_head *rh = (struct rec_head *)(void *)(r->data + (p & mask) * CELL);
		if (atomic_load_explicit(&rh->pub, memory_order_acquire) != p + 1)
			break;
		unsigned long long k = (REC_HEAD + rh->len + CELL - 1) / CELL;
		for (unsigned long long j = 0; j < k; j++)
			memset(r->data + ((p + j) & mask) * CELL, 0, sizeof(atomic_ullong));
		p += k;
		count++;
	}
	atomic_fetch_add_explicit(&r->dropped, count, memory_order_relaxed);
	atomic_store_explicit(&r->head, p, memory_order_release);
	return enif_make_long(env, count);
}

/* worker_stats(S, W) -> {Batches, Dropped, Taken}: what W's ring gave. */
static ERL_NIF_TERM nif_worker_stats(ErlNifEnv *env, int argc,
				     const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s;
	struct ring *r = get_ring(env, argv, &s);
	if (!r)
		return enif_make_badarg(env);
	return enif_make_tuple3(env,
		enif_make_long(env, atomic_load(&r->batches)),
		enif_make_long(env, atomic_load(&r->dropped)),
		enif_make_long(env, atomic_load(&r->taken)));
}

/*
 * idle(S, W) -> true | false: the worker is about to wait with no timeout.
 * True if the ring is empty and the next event will wake it; false if
 * events came in meanwhile (take them first).
 */
static ERL_NIF_TERM nif_idle(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s;
	struct ring *r = get_ring(env, argv, &s);
	if (!r)
		return enif_make_badarg(env);
	atomic_store_explicit(&r->idle, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&r->tail, memory_order_seq_cst) ==
	    atomic_load_explicit(&r->head, memory_order_relaxed))
		return am_true_;
	/* a tracee may have taken the flag already: then a wake-up is on its
	 * way, which is harmless */
	atomic_store_explicit(&r->idle, 0, memory_order_relaxed);
	return am_false_;
}

/* pending(S, W) -> true if events are claimed and not yet taken. */
static ERL_NIF_TERM nif_pending(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s;
	struct ring *r = get_ring(env, argv, &s);
	if (!r)
		return enif_make_badarg(env);
	return atomic_load_explicit(&r->tail, memory_order_acquire) !=
		atomic_load_explicit(&r->head, memory_order_relaxed) ?
		am_true_ : am_false_;
}

static ERL_NIF_TERM nif_dropped(ErlNifEnv *env, int argc,
				const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s;
	struct ring *r = get_ring(env, argv, &s);
	if (!r)
		return enif_make_badarg(env);
	return enif_make_int64(env, atomic_load_explicit(&r->dropped,
							 memory_order_relaxed));
}

/* ---------------------------------------------------------------------------
 * Library life cycle.  The agent unloads the module before it loads it
 * again, so there is no upgrade; sessions of an earlier copy that are still
 * referenced are taken over (same layout and destructor: the type's name
 * says which layout).
 */

/* 2^256 and -2^256, from their external format (SMALL_BIG_EXT) */
static bool make_consts(void)
{
	unsigned char ext[4 + 33] = { 131, 110, 33, 0 };
	ext[sizeof(ext) - 1] = 1;
	consts_env = enif_alloc_env();
	if (!consts_env ||
	    !enif_binary_to_term(consts_env, ext, sizeof(ext), &big_hi, 0))
		return false;
	ext[3] = 1;   /* the sign byte */
	return enif_binary_to_term(consts_env, ext, sizeof(ext), &big_lo, 0) != 0;
}

static int load(ErlNifEnv *env, void **priv, ERL_NIF_TERM info)
{
	(void)priv;
	(void)info;
#define X(id, text) am_##id = enif_make_atom(env, text);
	ATOMS(X)
#undef X
	/* the layout's version is in the name: a session of another layout
	 * is never taken for one of ours (its tracees get remove) */
	session_type = enif_open_resource_type(env, NULL, "beamscope_session_2",
					       session_dtor, ERL_NIF_RT_CREATE |
					       ERL_NIF_RT_TAKEOVER, NULL);
	if (!session_type || !make_consts()) {
		if (consts_env)
			enif_free_env(consts_env);
		consts_env = NULL;
		return -1;
	}
	return 0;
}

static void unload(ErlNifEnv *env, void *priv)
{
	(void)env;
	(void)priv;
	if (consts_env)
		enif_free_env(consts_env);
	consts_env = NULL;
}

static ErlNifFunc funcs[] = {
	{ "session_new", 4, nif_session_new, 0 },
	{ "session_new", 5, nif_session_new, 0 },
	{ "session_memory", 5, nif_session_memory, 0 },
	{ "discard", 2, nif_discard, 0 },
	{ "worker_stats", 2, nif_worker_stats, 0 },
	{ "counts_take", 1, nif_counts_take, 0 },
	{ "focus", 3, nif_focus, 0 },
	{ "session_limits", 6, nif_session_limits, 0 },
	{ "limits", 1, nif_limits, 0 },
	{ "session_stop", 1, nif_session_stop, 0 },
	{ "take", 3, nif_take, 0 },
	{ "idle", 2, nif_idle, 0 },
	{ "pending", 2, nif_pending, 0 },
	{ "dropped", 2, nif_dropped, 0 },
	{ "enabled", 3, nif_enabled, 0 },
	{ "enabled_send", 3, nif_enabled_send, 0 },
	{ "enabled_receive", 3, nif_enabled_receive, 0 },
	{ "enabled_procs", 3, nif_enabled_procs, 0 },
	{ "enabled_call", 3, nif_enabled_call, 0 },
	{ "enabled_garbage_collection", 3, nif_enabled_gc, 0 },
	{ "enabled_running_procs", 3, nif_enabled_running, 0 },
	{ "enabled_ports", 3, nif_enabled_other, 0 },
	{ "enabled_running_ports", 3, nif_enabled_other, 0 },
	{ "trace", 5, nif_trace, 0 },
	{ "trace_send", 5, nif_trace_send, 0 },
	{ "trace_receive", 5, nif_trace_receive, 0 },
	{ "trace_procs", 5, nif_trace_procs, 0 },
	{ "trace_call", 5, nif_trace_call, 0 },
	{ "trace_garbage_collection", 5, nif_trace_gc, 0 },
	{ "trace_running_procs", 5, nif_trace_running, 0 },
	{ "trace_ports", 5, nif_trace_other, 0 },
	{ "trace_running_ports", 5, nif_trace_other, 0 },
};

ERL_NIF_INIT(beamscope_tracer, funcs, load, NULL, NULL, unload)
