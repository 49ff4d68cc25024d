/*
 * beamscope_tracer: the erl_tracer NIF.  Runs inside the traced processes,
 * on their schedulers, so every instruction here is paid by the user's
 * workload.
 *
 * Invariants:
 *  - the hot path takes no lock, never blocks, never sends to the tracee;
 *  - every trace_* returns ok; a session that is gone makes enabled* return
 *    remove, so each tracee drops its flags on its next event;
 *  - a worker never has more than high_water events in flight: past it the
 *    event is dropped and counted (inflight is raised before the event is
 *    built and lowered by the worker's credit/3 once it has shipped them);
 *  - work per event is bounded by the payload budget, never by term size.
 */
#include <erl_nif.h>
#include <stdatomic.h>
#include <string.h>

#define MAX_DEPTH 10            /* deeper subterms become '...' */
#define MAX_WORKERS 1024

/* kinds, as in the protocol: bit values shared with the C side */
enum {
	K_SEND = 1, K_RECEIVE = 2, K_SPAWN = 4, K_EXIT = 8, K_LINK = 16,
	K_REGISTER = 32,
};

#define ATOMS(X) \
	X(ok, "ok") X(trace, "trace") X(discard, "discard") X(remove, "remove") \
	X(trace_status, "trace_status") X(send, "send") \
	X(send_dead, "send_to_non_existing_process") X(receive, "receive") \
	X(spawn, "spawn") X(spawned, "spawned") X(exit, "exit") X(link, "link") \
	X(unlink, "unlink") X(getting_linked, "getting_linked") \
	X(getting_unlinked, "getting_unlinked") X(register_, "register") \
	X(unregister, "unregister") X(extra, "extra") X(true_, "true") \
	X(false_, "false") X(cut, "...") X(fun, "#Fun") X(badarg, "badarg")

#define X(c, s) static ERL_NIF_TERM atom_##c;
ATOMS(X)
#undef X

struct wslot {
	_Atomic long inflight;
	_Atomic unsigned long dropped;
	char pad[64 - sizeof(long) - sizeof(unsigned long)];
};

struct session {
	_Atomic int active;
	int mask;                /* K_* bits */
	long payload;            /* byte budget for message contents */
	long high_water;
	unsigned nworkers;
	ErlNifPid *workers;
	struct wslot *slots;
};

static ErlNifResourceType *session_type;

static void session_dtor(ErlNifEnv *env, void *obj)
{
	struct session *s = obj;
	(void)env;
	enif_free(s->workers);
	enif_free(s->slots);
}

static int open_types(ErlNifEnv *env, ErlNifResourceFlags flags)
{
	ErlNifResourceFlags tried;
	session_type = enif_open_resource_type(env, NULL, "beamscope_session",
					       session_dtor, flags, &tried);
	if (!session_type)
		return -1;
#define X(c, s) atom_##c = enif_make_atom(env, s);
	ATOMS(X)
#undef X
	return 0;
}

static int on_load(ErlNifEnv *env, void **priv, ERL_NIF_TERM info)
{
	(void)priv; (void)info;
	return open_types(env, ERL_NIF_RT_CREATE);
}

static int on_upgrade(ErlNifEnv *env, void **priv, void **old, ERL_NIF_TERM info)
{
	(void)priv; (void)old; (void)info;
	return open_types(env, ERL_NIF_RT_CREATE | ERL_NIF_RT_TAKEOVER);
}

static struct session *get_session(ErlNifEnv *env, ERL_NIF_TERM t)
{
	struct session *s;
	if (!enif_get_resource(env, t, session_type, (void **)&s))
		return NULL;
	return s;
}

static int active(const struct session *s)
{
	return atomic_load_explicit(&s->active, memory_order_relaxed);
}

/* ---- session management (called by the agent and workers) ---- */

static ERL_NIF_TERM session_new(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
	int arity, mask;
	const ERL_NIF_TERM *pids;
	long payload, hw;
	(void)argc;
	if (!enif_get_tuple(env, argv[0], &arity, &pids) || arity < 1 ||
	    arity > MAX_WORKERS || !enif_get_int(env, argv[1], &mask) ||
	    !enif_get_long(env, argv[2], &payload) || payload < 0 ||
	    !enif_get_long(env, argv[3], &hw) || hw < 1)
		return enif_make_badarg(env);

	struct session *s = enif_alloc_resource(session_type, sizeof(*s));
	memset(s, 0, sizeof(*s));
	s->nworkers = (unsigned)arity;
	s->workers = enif_alloc(sizeof(ErlNifPid) * (size_t)arity);
	s->slots = enif_alloc(sizeof(struct wslot) * (size_t)arity);
	memset(s->slots, 0, sizeof(struct wslot) * (size_t)arity);
	for (int i = 0; i < arity; i++)
		if (!enif_get_local_pid(env, pids[i], &s->workers[i])) {
			enif_release_resource(s);
			return enif_make_badarg(env);
		}
	s->mask = mask;
	s->payload = payload;
	s->high_water = hw;
	atomic_store(&s->active, 1);
	ERL_NIF_TERM t = enif_make_resource(env, s);
	enif_release_resource(s);
	return t;
}

static ERL_NIF_TERM session_stop(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
	struct session *s = get_session(env, argv[0]);
	(void)argc;
	if (!s)
		return enif_make_badarg(env);
	atomic_store(&s->active, 0);
	return atom_ok;
}

static struct wslot *slot_arg(ErlNifEnv *env, const ERL_NIF_TERM argv[])
{
	struct session *s = get_session(env, argv[0]);
	unsigned w;
	if (!s || !enif_get_uint(env, argv[1], &w) || w >= s->nworkers)
		return NULL;
	return &s->slots[w];
}

static ERL_NIF_TERM credit(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
	struct wslot *sl = slot_arg(env, argv);
	long n;
	(void)argc;
	if (!sl || !enif_get_long(env, argv[2], &n) || n < 0)
		return enif_make_badarg(env);
	atomic_fetch_sub_explicit(&sl->inflight, n, memory_order_relaxed);
	return atom_ok;
}

static ERL_NIF_TERM dropped(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
	struct wslot *sl = slot_arg(env, argv);
	(void)argc;
	if (!sl)
		return enif_make_badarg(env);
	return enif_make_uint64(env, atomic_load(&sl->dropped));
}

static ERL_NIF_TERM inflight(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
	struct wslot *sl = slot_arg(env, argv);
	(void)argc;
	if (!sl)
		return enif_make_badarg(env);
	return enif_make_long(env, atomic_load(&sl->inflight));
}

/* ---- payload cutting ---- */

/* Estimated text size of t against budget b; negative once it does not fit.
 * Funs never "fit": they are always replaced. */
static long measure(ErlNifEnv *env, ERL_NIF_TERM t, long b, int depth)
{
	if (b < 0 || depth > MAX_DEPTH)
		return -1;
	switch (enif_term_type(env, t)) {
	case ERL_NIF_TERM_TYPE_ATOM: {
		unsigned len;
		if (!enif_get_atom_length(env, t, &len, ERL_NIF_LATIN1))
			len = 16;
		return b - (long)len - 2;
	}
	case ERL_NIF_TERM_TYPE_BITSTRING: {
		ErlNifBinary bin;
		if (!enif_inspect_binary(env, t, &bin))
			return -1;
		return b - (long)bin.size - 6;
	}
	case ERL_NIF_TERM_TYPE_LIST: {
		ERL_NIF_TERM head, tail = t;
		while (enif_get_list_cell(env, tail, &head, &tail)) {
			b = measure(env, head, b - 1, depth + 1);
			if (b < 0)
				return b;
		}
		return enif_is_empty_list(env, tail) ? b - 2 :
			measure(env, tail, b - 1, depth + 1);
	}
	case ERL_NIF_TERM_TYPE_TUPLE: {
		int arity;
		const ERL_NIF_TERM *el;
		enif_get_tuple(env, t, &arity, &el);
		b -= 2;
		for (int i = 0; i < arity && b >= 0; i++)
			b = measure(env, el[i], b - 1, depth + 1);
		return b;
	}
	case ERL_NIF_TERM_TYPE_MAP: {
		size_t size;
		ErlNifMapIterator it;
		ERL_NIF_TERM k, v;
		enif_get_map_size(env, t, &size);
		if ((long)size * 6 > b)
			return -1;
		b -= 3;
		if (!enif_map_iterator_create(env, t, &it, ERL_NIF_MAP_ITERATOR_FIRST))
			return -1;
		while (b >= 0 && enif_map_iterator_get_pair(env, &it, &k, &v)) {
			b = measure(env, k, b - 4, depth + 1);
			b = measure(env, v, b, depth + 1);
			enif_map_iterator_next(env, &it);
		}
		enif_map_iterator_destroy(env, &it);
		return b;
	}
	case ERL_NIF_TERM_TYPE_FUN:
		return -1;
	case ERL_NIF_TERM_TYPE_FLOAT:
		return b - 20;
	case ERL_NIF_TERM_TYPE_INTEGER:
		return b - 8;
	case ERL_NIF_TERM_TYPE_REFERENCE:
		return b - 24;
	default:                 /* pids, ports */
		return b - 14;
	}
}

/* A copy of t cut to budget *b; shortened places hold '...'. */
static ERL_NIF_TERM cut(ErlNifEnv *env, ERL_NIF_TERM t, long *b, int depth)
{
	if (*b <= 0 || depth > MAX_DEPTH)
		return atom_cut;
	switch (enif_term_type(env, t)) {
	case ERL_NIF_TERM_TYPE_BITSTRING: {
		ErlNifBinary bin;
		if (!enif_inspect_binary(env, t, &bin))
			return atom_cut;
		if ((long)bin.size + 6 <= *b) {
			*b -= (long)bin.size + 6;
			return t;
		}
		long n = *b > 6 ? *b - 6 : 0;
		*b = 0;
		return enif_make_sub_binary(env, t, 0, (size_t)n);
	}
	case ERL_NIF_TERM_TYPE_FUN:
		*b -= 5;
		return atom_fun;
	case ERL_NIF_TERM_TYPE_LIST: {
		/* elements are collected first: a list is built from its end */
		ERL_NIF_TERM head, tail = t, stack[256], out, last;
		ERL_NIF_TERM *el = stack;
		long n = 0, cap = 256;
		while (*b > 0 && enif_get_list_cell(env, tail, &head, &tail)) {
			if (n == cap) {
				ERL_NIF_TERM *bigger = enif_alloc(sizeof(*el) * (size_t)cap * 2);
				memcpy(bigger, el, sizeof(*el) * (size_t)cap);
				if (el != stack)
					enif_free(el);
				el = bigger;
				cap *= 2;
			}
			*b -= 1;
			el[n++] = cut(env, head, b, depth + 1);
		}
		if (enif_is_empty_list(env, tail))
			last = tail;
		else if (*b > 0 && !enif_is_list(env, tail))
			last = cut(env, tail, b, depth + 1);   /* improper list */
		else
			last = atom_cut;
		out = last;
		while (n > 0)
			out = enif_make_list_cell(env, el[--n], out);
		if (el != stack)
			enif_free(el);
		return out;
	}
	case ERL_NIF_TERM_TYPE_TUPLE: {
		int arity, k = 0;
		const ERL_NIF_TERM *src;
		ERL_NIF_TERM stack[64], *el = stack;
		enif_get_tuple(env, t, &arity, &src);
		if (arity > 64)
			el = enif_alloc(sizeof(*el) * (size_t)(arity < 4096 ? arity : 4096));
		*b -= 2;
		int limit = arity < 4096 ? arity : 4095;
		for (; k < limit && *b > 0; k++) {
			*b -= 1;
			el[k] = cut(env, src[k], b, depth + 1);
		}
		if (k < arity)
			el[k++] = atom_cut;
		ERL_NIF_TERM out = enif_make_tuple_from_array(env, el, (unsigned)k);
		if (el != stack)
			enif_free(el);
		return out;
	}
	case ERL_NIF_TERM_TYPE_MAP: {
		ErlNifMapIterator it;
		ERL_NIF_TERM k, v, out = enif_make_new_map(env);
		int all = 1;
		*b -= 3;
		if (!enif_map_iterator_create(env, t, &it, ERL_NIF_MAP_ITERATOR_FIRST))
			return atom_cut;
		while (enif_map_iterator_get_pair(env, &it, &k, &v)) {
			if (*b <= 0) {
				all = 0;
				break;
			}
			*b -= 4;
			ERL_NIF_TERM ck = cut(env, k, b, depth + 1);
			ERL_NIF_TERM cv = cut(env, v, b, depth + 1);
			enif_make_map_put(env, out, ck, cv, &out);
			enif_map_iterator_next(env, &it);
		}
		enif_map_iterator_destroy(env, &it);
		if (!all)
			enif_make_map_put(env, out, atom_cut, atom_cut, &out);
		return out;
	}
	default:
		*b = measure(env, t, *b, depth);
		return t;
	}
}

/* The payload as it will travel, and whether it was cut. */
static ERL_NIF_TERM payload(ErlNifEnv *env, const struct session *s,
			    ERL_NIF_TERM t, int *was_cut)
{
	if (s->payload == 0)
		return enif_make_list(env, 0);
	if (measure(env, t, s->payload, 0) >= 0)
		return t;
	long b = s->payload;
	*was_cut = 1;
	return cut(env, t, &b, 0);
}

/* ---- the hot path ---- */

static ERL_NIF_TERM timestamp(ErlNifEnv *env)
{
	return enif_make_int64(env, enif_monotonic_time(ERL_NIF_USEC) +
			       enif_time_offset(ERL_NIF_USEC));
}

/* Reserve room at tracee's worker; NULL when the event must be dropped. */
static struct wslot *reserve(ErlNifEnv *env, struct session *s,
			     ERL_NIF_TERM tracee, unsigned *w)
{
	*w = (unsigned)(enif_hash(ERL_NIF_INTERNAL_HASH, tracee, 0) % s->nworkers);
	struct wslot *sl = &s->slots[*w];
	(void)env;
	if (atomic_fetch_add_explicit(&sl->inflight, 1, memory_order_relaxed) >=
	    s->high_water) {
		atomic_fetch_sub_explicit(&sl->inflight, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&sl->dropped, 1, memory_order_relaxed);
		return NULL;
	}
	return sl;
}

static void ship(ErlNifEnv *env, struct session *s, struct wslot *sl,
		 unsigned w, ERL_NIF_TERM ev)
{
	if (!enif_send(env, &s->workers[w], NULL, ev)) {
		atomic_fetch_sub_explicit(&sl->inflight, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&sl->dropped, 1, memory_order_relaxed);
	}
}

static ERL_NIF_TERM get_extra(ErlNifEnv *env, ERL_NIF_TERM opts)
{
	ERL_NIF_TERM v;
	if (enif_is_map(env, opts) && enif_get_map_value(env, opts, atom_extra, &v))
		return v;
	return enif_make_list(env, 0);
}

static int procs_kind(ERL_NIF_TERM tag)
{
	if (tag == atom_spawn || tag == atom_spawned)
		return K_SPAWN;
	if (tag == atom_exit)
		return K_EXIT;
	if (tag == atom_link || tag == atom_unlink || tag == atom_getting_linked ||
	    tag == atom_getting_unlinked)
		return K_LINK;
	if (tag == atom_register_ || tag == atom_unregister)
		return K_REGISTER;
	return 0;
}

static int tag_kind(ERL_NIF_TERM tag)
{
	if (tag == atom_send || tag == atom_send_dead)
		return K_SEND;
	if (tag == atom_receive)
		return K_RECEIVE;
	return procs_kind(tag);
}

static ERL_NIF_TERM decide(ErlNifEnv *env, ERL_NIF_TERM state, int kind)
{
	struct session *s = get_session(env, state);
	if (!s || !active(s))
		return atom_remove;
	return (s->mask & kind) ? atom_trace : atom_discard;
}

static ERL_NIF_TERM enabled(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
	(void)argc;
	if (argv[0] == atom_trace_status) {
		struct session *s = get_session(env, argv[1]);
		return s && active(s) ? atom_trace : atom_remove;
	}
	return decide(env, argv[1], tag_kind(argv[0]));
}

static ERL_NIF_TERM enabled_send(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
	(void)argc;
	return decide(env, argv[1], K_SEND);
}

static ERL_NIF_TERM enabled_receive(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
	(void)argc;
	return decide(env, argv[1], K_RECEIVE);
}

static ERL_NIF_TERM enabled_procs(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
	(void)argc;
	return decide(env, argv[1], procs_kind(argv[0]));
}

/* Tags we never ask for (call, gc, running, ports): discard, or remove. */
static ERL_NIF_TERM enabled_other(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
	(void)argc;
	return decide(env, argv[1], 0);
}

/* trace_*(Tag, State, Tracee, Msg, Opts) */
static ERL_NIF_TERM trace_any(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
	ERL_NIF_TERM tag = argv[0], tracee = argv[2], msg = argv[3], a, b;
	struct session *s = get_session(env, argv[1]);
	unsigned w;
	int was_cut = 0, kind = tag_kind(tag);
	(void)argc;

	if (!s || !active(s) || !(s->mask & kind))
		return atom_ok;
	struct wslot *sl = reserve(env, s, tracee, &w);
	if (!sl)
		return atom_ok;

	switch (kind) {
	case K_SEND:
		a = get_extra(env, argv[4]);
		b = payload(env, s, msg, &was_cut);
		break;
	case K_RECEIVE:
		a = enif_make_list(env, 0);
		b = payload(env, s, msg, &was_cut);
		break;
	case K_SPAWN: {
		/* Msg is the other pid; extra is {M, F, Args} */
		ERL_NIF_TERM mfa = get_extra(env, argv[4]), args;
		const ERL_NIF_TERM *el;
		int arity;
		unsigned len = 0;
		a = msg;
		if (enif_get_tuple(env, mfa, &arity, &el) && arity == 3) {
			args = el[2];
			enif_get_list_length(env, args, &len);  /* at most 255 */
			b = enif_make_tuple4(env, el[0], el[1], enif_make_uint(env, len),
					     payload(env, s, args, &was_cut));
		} else {
			b = enif_make_tuple4(env, atom_cut, atom_cut,
					     enif_make_uint(env, 0), enif_make_list(env, 0));
		}
		break;
	}
	case K_EXIT:
		a = enif_make_list(env, 0);
		if (s->payload == 0) {
			/* a reason is shown even without payloads, kept short */
			long bud = 64;
			if (measure(env, msg, bud, 0) >= 0) {
				b = msg;
			} else {
				b = cut(env, msg, &bud, 0);
				was_cut = 1;
			}
		} else {
			b = payload(env, s, msg, &was_cut);
		}
		break;
	default:                 /* link family and register family */
		a = msg;
		b = enif_make_list(env, 0);
		break;
	}
	ERL_NIF_TERM ev[6] = { tag, tracee, timestamp(env), a, b,
			       was_cut ? atom_true_ : atom_false_ };
	ship(env, s, sl, w, enif_make_tuple_from_array(env, ev, 6));
	return atom_ok;
}

static ERL_NIF_TERM trace_other(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
	(void)env; (void)argc; (void)argv;
	return atom_ok;
}

static ErlNifFunc funcs[] = {
	{ "session_new", 4, session_new, 0 },
	{ "session_stop", 1, session_stop, 0 },
	{ "credit", 3, credit, 0 },
	{ "dropped", 2, dropped, 0 },
	{ "inflight", 2, inflight, 0 },
	{ "enabled", 3, enabled, 0 },
	{ "enabled_send", 3, enabled_send, 0 },
	{ "enabled_receive", 3, enabled_receive, 0 },
	{ "enabled_procs", 3, enabled_procs, 0 },
	{ "enabled_call", 3, enabled_other, 0 },
	{ "enabled_garbage_collection", 3, enabled_other, 0 },
	{ "enabled_ports", 3, enabled_other, 0 },
	{ "enabled_running_ports", 3, enabled_other, 0 },
	{ "enabled_running_procs", 3, enabled_other, 0 },
	{ "trace", 5, trace_any, 0 },
	{ "trace_send", 5, trace_any, 0 },
	{ "trace_receive", 5, trace_any, 0 },
	{ "trace_procs", 5, trace_any, 0 },
	{ "trace_call", 5, trace_other, 0 },
	{ "trace_garbage_collection", 5, trace_other, 0 },
	{ "trace_ports", 5, trace_other, 0 },
	{ "trace_running_ports", 5, trace_other, 0 },
	{ "trace_running_procs", 5, trace_other, 0 },
};

ERL_NIF_INIT(beamscope_tracer, funcs, on_load, NULL, on_upgrade, NULL)
