/*
 * beamscope_tracer: the erl_tracer NIF of beamscope (module beamscope_tracer).
 *
 * Owns the module: the session resource, which is the tracer state every
 * traced process holds, the NIFs the agent and the workers call (a
 * session's making, limits, focus, and its rings' taking), the library's
 * loading, and the table of NIFs.  The callbacks ERTS makes into the
 * tracer are in callbacks.c, and what they use in cut.c, encode.c and
 * ring.c (tracer.h lists the files).  The events it sends are described
 * in nif/PROTOCOL.md.
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
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tracer.h"

#define MAX_WORKERS 1024
#define MAX_HIGH_WATER 0x40000000L
#define MAX_PAYLOAD (64u << 20)
/* a session takes at most the smaller of these (PROTOCOL.md, the man page) */
#define SESSION_MEM_CEILING (1ULL << 30)
#define SESSION_MEM_SHARE 8   /* of the target's memory */

#define X(id, text) ERL_NIF_TERM am_##id;
ATOMS(X)
#undef X

ErlNifResourceType *session_type;

/* 2^256 and -2^256 (make_consts), in an environment of their own */
static ErlNifEnv *consts_env;
ERL_NIF_TERM big_hi, big_lo;

/* ---------------------------------------------------------------------------
 * The session, for the agent and the workers.
 */

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
