/*
 * callbacks.c: the erl_tracer callbacks ERTS makes in the traced process
 * (enabled* and trace*: PROTOCOL.md says what each event becomes), and
 * what they decide before anything is built: the count tier, which counts
 * sends and receives in place of shipping them, and the limits.
 */
#include "tracer.h"

/* exit reasons are shown even with payloads off (PROTOCOL.md) */
#define EXIT_BUDGET_OFF 64

/* The kind of an event from its tag: K_SEND, a K_* of procs, or 0. */
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

ERL_NIF_TERM nif_enabled_gc(ErlNifEnv *env, int argc,
			    const ERL_NIF_TERM argv[])
{
	(void)argc;
	return gate(live_session(env, argv[1]), K_GC);
}

ERL_NIF_TERM nif_enabled_running(ErlNifEnv *env, int argc,
				 const ERL_NIF_TERM argv[])
{
	(void)argc;
	return gate(live_session(env, argv[1]), K_RUNNING);
}

ERL_NIF_TERM nif_trace_gc(ErlNifEnv *env, int argc,
			  const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s = live_session(env, argv[1]);
	if (s)
		do_gc(env, s, argv);
	return am_ok;
}

ERL_NIF_TERM nif_trace_running(ErlNifEnv *env, int argc,
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

ERL_NIF_TERM nif_enabled(ErlNifEnv *env, int argc,
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
ERL_NIF_TERM nif_enabled_send(ErlNifEnv *env, int argc,
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

ERL_NIF_TERM nif_enabled_receive(ErlNifEnv *env, int argc,
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

ERL_NIF_TERM nif_enabled_procs(ErlNifEnv *env, int argc,
			       const ERL_NIF_TERM argv[])
{
	(void)argc;
	return gate(live_session(env, argv[1]), procs_kind(argv[0]));
}

ERL_NIF_TERM nif_enabled_call(ErlNifEnv *env, int argc,
			      const ERL_NIF_TERM argv[])
{
	(void)argc;
	return gate(live_session(env, argv[1]), K_CALL);
}

ERL_NIF_TERM nif_trace_call(ErlNifEnv *env, int argc,
			    const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s = live_session(env, argv[1]);
	if (s)
		do_call(env, s, argv);
	return am_ok;
}

/* garbage_collection, running_procs, ports, running_ports: never set */
ERL_NIF_TERM nif_enabled_other(ErlNifEnv *env, int argc,
			       const ERL_NIF_TERM argv[])
{
	(void)argc;
	return gate(live_session(env, argv[1]), 0);
}

ERL_NIF_TERM nif_trace(ErlNifEnv *env, int argc,
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

ERL_NIF_TERM nif_trace_send(ErlNifEnv *env, int argc,
			    const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s = live_session(env, argv[1]);
	if (s)
		do_send(env, s, argv);
	return am_ok;
}

ERL_NIF_TERM nif_trace_receive(ErlNifEnv *env, int argc,
			       const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s = live_session(env, argv[1]);
	if (s)
		do_receive(env, s, argv);
	return am_ok;
}

ERL_NIF_TERM nif_trace_procs(ErlNifEnv *env, int argc,
			     const ERL_NIF_TERM argv[])
{
	(void)argc;
	struct session *s = live_session(env, argv[1]);
	if (s)
		do_procs(env, s, argv);
	return am_ok;
}

ERL_NIF_TERM nif_trace_other(ErlNifEnv *env, int argc,
			     const ERL_NIF_TERM argv[])
{
	(void)env;
	(void)argc;
	(void)argv;
	return am_ok;
}
