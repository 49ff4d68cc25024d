/* hmap: see hmap.h. */
#include "hmap.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

enum { EMPTY = 0, LIVE = 1, GONE = 2 };

/* Every byte of the key reaches the low bits the table uses.  Keys of 8
 * and 12 bytes (names, pids: looked up on every event) are read without
 * a loop or a call. */
static inline uint64_t hash(const unsigned char *k, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n, w;
	if (n == 8 || n == 12) {
		memcpy(&w, k, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
		if (n == 12) {
			uint32_t u;
			memcpy(&u, k + 8, 4);
			h = (h ^ u) * 0xff51afd7ed558ccdULL;
		}
	} else {
		while (n >= 8) {
			memcpy(&w, k, 8);
			h = (h ^ w) * 0xff51afd7ed558ccdULL;
			h ^= h >> 32;
			k += 8;
			n -= 8;
		}
		if (n) {
			w = 0;
			memcpy(&w, k, n);
			h = (h ^ w) * 0xff51afd7ed558ccdULL;
		}
	}
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

void hmap_init(struct hmap *m, size_t key_size, size_t val_size,
	       void (*drop)(void *val))
{
	memset(m, 0, sizeof(*m));
	if (key_size > HMAP_KEY_MAX)
		abort();
	m->key_size = key_size;
	m->val_size = val_size;
	/* the value aligned for anything a table holds (pointers, 64-bit
	 * numbers) */
	size_t a = _Alignof(uint64_t) > _Alignof(void *) ? _Alignof(uint64_t) :
		_Alignof(void *);
	m->val_off = (1 + key_size + a - 1) / a * a;
	m->stride = (m->val_off + val_size + a - 1) / a * a;
	m->drop = drop;
}

void hmap_init_outside(struct hmap *m, size_t key_size, size_t val_size,
		       const void *(*key_of)(const void *ctx, const void *val),
		       const void *ctx)
{
	hmap_init(m, 0, val_size, NULL);
	/* the state byte, then the value aligned for its size alone: an
	 * index of 4 bytes takes a slot of 8 */
	size_t a = val_size >= 8 ? 8 : val_size >= 4 ? 4 : val_size >= 2 ? 2 : 1;
	m->val_off = a;
	m->stride = (a + val_size + a - 1) / a * a;
	m->key_size = key_size;
	m->key_of = key_of;
	m->ctx = ctx;
}

static unsigned char *slot(const struct hmap *m, size_t i)
{
	return m->slots + i * m->stride;
}

/* The key of the slot s: in it, or where its value says. */
static inline const unsigned char *slot_key(const struct hmap *m,
					    const unsigned char *s)
{
	return m->key_of ? m->key_of(m->ctx, s + m->val_off) : s + 1;
}

void hmap_release(struct hmap *m)
{
	for (size_t i = 0; m->drop && i < m->cap; i++)
		if (*slot(m, i) == LIVE)
			m->drop(slot(m, i) + m->val_off);
	free(m->slots);
	m->slots = NULL;
	m->cap = m->live = m->used = 0;
}

void hmap_clear(struct hmap *m)
{
	for (size_t i = 0; m->drop && i < m->cap; i++)
		if (*slot(m, i) == LIVE)
			m->drop(slot(m, i) + m->val_off);
	for (size_t i = 0; i < m->cap; i++)
		*slot(m, i) = EMPTY;
	m->live = m->used = 0;
}

/* Keys compared: the sizes the tables use (a pid's num and serial, a
 * whole pid) without a call to memcmp, which names are looked up with
 * on every event. */
static inline bool key_eq(const unsigned char *a, const unsigned char *b,
			  size_t n)
{
	uint64_t x, y;
	uint32_t u, v;
	switch (n) {
	case 8:
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		return x == y;
	case 12:
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		memcpy(&u, a + 8, 4);
		memcpy(&v, b + 8, 4);
		return x == y && u == v;
	default:
		return !memcmp(a, b, n);
	}
}

/* The slot of key, or (find_free) the slot a new key would take: the
 * first removed one on its way, else the empty one that ends it.  n is
 * m->key_size and outside whether m keeps its keys outside, given apart
 * so that a caller that knows them has a copy of its own made, the hash
 * and the compare unrolled for its size. */
static inline __attribute__((always_inline)) unsigned char *
find_as(const struct hmap *m, const void *key, bool find_free, size_t n,
	bool outside)
{
	if (!m->cap)
		return NULL;
	unsigned char *gone = NULL;
	size_t mask = m->cap - 1;
	for (size_t i = hash(key, n) & mask;; i = (i + 1) & mask) {
		unsigned char *s = slot(m, i);
		if (*s == EMPTY)
			return find_free ? (gone ? gone : s) : NULL;
		if (*s == LIVE &&
		    key_eq(outside ? m->key_of(m->ctx, s + m->val_off) : s + 1,
			   key, n))
			return s;
		if (*s == GONE && !gone)
			gone = s;
	}
}

static unsigned char *find(const struct hmap *m, const void *key,
			   bool find_free)
{
	return find_as(m, key, find_free, m->key_size, m->key_of != NULL);
}

static void grow(struct hmap *m)
{
	struct hmap old = *m;
	/* twice as big if full of keys, else the same size, swept clean */
	m->cap = old.cap ? (old.live * 2 >= old.cap / 2 ? old.cap * 2 : old.cap)
		: 16;
	m->slots = xcalloc(m->cap, m->stride);
	m->live = m->used = 0;
	for (size_t i = 0; i < old.cap; i++) {
		unsigned char *s = slot(&old, i);
		if (*s != LIVE)
			continue;
		unsigned char *d = find(m, slot_key(&old, s), true);
		memcpy(d, s, m->stride);
		m->live++;
		m->used++;
	}
	free(old.slots);
}

void *hmap_get(const struct hmap *m, const void *key)
{
	unsigned char *s;
	/* the lookups made on every event: names and labels (8-byte keys
	 * in the slots), the store's pids (12 bytes, outside) */
	if (m->key_size == 8 && !m->key_of)
		s = find_as(m, key, false, 8, false);
	else if (m->key_size == 12 && m->key_of)
		s = find_as(m, key, false, 12, true);
	else
		s = find(m, key, false);
	return s ? s + m->val_off : NULL;
}

void *hmap_put(struct hmap *m, const void *key, bool *fresh)
{
	unsigned char *s = find(m, key, false);
	if (s) {
		if (fresh)
			*fresh = false;
		return s + m->val_off;
	}
	if ((m->used + 1) * 2 > m->cap)
		grow(m);
	s = find(m, key, true);
	if (*s == EMPTY)
		m->used++;
	m->live++;
	*s = LIVE;
	if (!m->key_of)
		memcpy(s + 1, key, m->key_size);
	memset(s + m->val_off, 0, m->val_size);
	if (fresh)
		*fresh = true;
	return s + m->val_off;
}

bool hmap_del(struct hmap *m, const void *key)
{
	unsigned char *s = find(m, key, false);
	if (!s)
		return false;
	if (m->drop)
		m->drop(s + m->val_off);
	*s = GONE;
	m->live--;
	return true;
}

void *hmap_slot(const struct hmap *m, size_t i, const void **key)
{
	if (i >= m->cap || *slot(m, i) != LIVE)
		return NULL;
	if (key)
		*key = slot_key(m, slot(m, i));
	return slot(m, i) + m->val_off;
}
