/*
 * cut.c: payloads, measured, and cut when they do not fit their budget.
 * Both walks charge the same estimated costs against one budget and stop
 * once it is spent, so each is O(budget).  Lists are followed along their
 * tail without recursion; recursion only goes into elements, at most
 * DEPTH_MAX deep.  Also what a spawn runs: its {M, F, Arity, Args} and,
 * for a proc_lib spawn, the function it really starts in.
 */
#include "tracer.h"

#define DEPTH_MAX 10
/* whole bytes of a bitstring that is not whole bytes measured at most
 * (bits_measure); a longer one is cut there.  64: their text fits the
 * default payload budget, and measuring costs a few microseconds */
#define BITS_MEASURE_MAX 64
/* spawn fails with system_limit past this, so no spawn event has more */
#define MAX_ARITY 255

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
ERL_NIF_TERM payload(ErlNifEnv *env, ERL_NIF_TERM t, size_t budget,
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
ERL_NIF_TERM spawn_mfa(ErlNifEnv *env, ERL_NIF_TERM mfa, size_t budget,
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

ERL_NIF_TERM initial_call(ErlNifEnv *env, ERL_NIF_TERM mfa)
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
