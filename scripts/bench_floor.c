/*
 * bench_floor: the cheapest tracer there can be, for scripts/bench.  Every
 * event is answered with discard, so ERTS builds nothing and makes no
 * second call: what is left is what the tracepoints themselves cost, the
 * floor under any tracer that is asked about every send and receive.
 */
#include <erl_nif.h>

static ERL_NIF_TERM am_trace, am_discard, am_trace_status;

static int load(ErlNifEnv *env, void **priv, ERL_NIF_TERM info)
{
	(void)priv;
	(void)info;
	am_trace = enif_make_atom(env, "trace");
	am_discard = enif_make_atom(env, "discard");
	am_trace_status = enif_make_atom(env, "trace_status");
	return 0;
}

/* trace_status keeps the flags on; everything else is discarded */
static ERL_NIF_TERM enabled(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
	(void)env;
	(void)argc;
	return argv[0] == am_trace_status ? am_trace : am_discard;
}

static ERL_NIF_TERM trace(ErlNifEnv *env, int argc, const ERL_NIF_TERM argv[])
{
	(void)argc;
	(void)argv;
	return enif_make_atom(env, "ok");
}

static ErlNifFunc funcs[] = {
	{"enabled", 3, enabled, 0},
	{"trace", 5, trace, 0},
};

ERL_NIF_INIT(bench_floor, funcs, load, NULL, NULL, NULL)
