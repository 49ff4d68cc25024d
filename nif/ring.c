/*
 * ring.c: shipping an event into the ring of the tracee's worker (the ring
 * itself is described in tracer.h, by struct ring): a place is reserved,
 * the event encoded, its cells claimed, written and published.  And how
 * big a session's rings are, and where each part of its mapping starts.
 */
#include "tracer.h"

/* 64 MiB of events per worker at most */
#define RING_CELLS_MAX (1ULL << 20)

/* The tracee's worker, if its ring has room for an event; else counted. */
bool reserve(struct session *s, ERL_NIF_TERM tracee, unsigned *w)
{
	/* a tracee is a local pid or a port, an immediate: the same one is
	 * always the same word, so a multiplicative hash of the word keeps
	 * its events with one worker, without a call into the VM (enif_hash
	 * was a tenth of the tracer's time per event) */
	unsigned i = (unsigned)((((uint64_t)tracee * 0x9e3779b97f4a7c15ULL) >> 32) %
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

void ring_read(struct session *s, struct ring *r, size_t off, void *b,
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

void ship(ErlNifEnv *env, struct session *s, unsigned w, ERL_NIF_TERM tag,
	  ERL_NIF_TERM tracee, ERL_NIF_TERM a, ERL_NIF_TERM b, bool cut)
{
	ErlNifSInt64 us = enif_monotonic_time(ERL_NIF_USEC) +
		enif_time_offset(ERL_NIF_USEC);
	struct enc e;
	unsigned char head[3] = { 131, 'h', 6 };

	enc_init(&e);
	enc_put(&e, head, 3);
	/* the tag is an atom and the tracee a local pid or a port: both
	 * straight from the cache, without asking the VM their type */
	enc_cached(env, s, &e, tag);
	enc_cached(env, s, &e, tracee);
	enc_int(&e, us);
	enc_term(env, s, &e, a, 0);
	enc_term(env, s, &e, b, 0);
	enc_cached(env, s, &e, cut ? am_true_ : am_false_);
	if (!e.ok || !ring_push(env, s, w, e.p, e.len))
		atomic_fetch_add_explicit(&s->rings[w].dropped, 1, memory_order_relaxed);
	enc_release(&e);
}

/* ---------------------------------------------------------------------------
 * A session's size: its rings, and the parts of its one mapping.
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
void session_layout(struct layout *l, unsigned n, size_t payload,
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
