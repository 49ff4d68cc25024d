/*
 * encode.c: an event exactly as term_to_binary(Event) gives it on this VM,
 * version byte included, written into a buffer (struct enc, tracer.h).
 * Atoms and local pids, most words of an event, come from the cache;
 * small integers, floats, tuples, lists, strings and binaries are written
 * here, by the rules ERTS encodes them with; anything else (maps,
 * bignums, references, ports, remote pids) is encoded by
 * enif_term_to_binary and spliced in.
 */
#include "tracer.h"

bool enc_grow(struct enc *e, size_t n)
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
void enc_cached(ErlNifEnv *env, struct session *s, struct enc *e,
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
void enc_int(struct enc *e, ErlNifSInt64 v)
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

void enc_term(ErlNifEnv *env, struct session *s, struct enc *e,
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
