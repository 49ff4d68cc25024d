/*
 * hmap: one hash map for every table of the C side: fixed-size keys (a
 * pid, a pair of hashes) to fixed-size values kept in the map itself,
 * by open addressing with linear probing.  A map owns its values or not,
 * as said when it is made: an owning map calls its drop function on a
 * value it removes, overwrites or frees (a pointer to free, say).
 *
 * A map may instead keep its keys outside (hmap_init_outside): in the
 * records its values stand for (a pid in a process record, whose index
 * is the value); key_of says where a value's key is, and the map keeps
 * the values alone.
 *
 * Keys are compared byte for byte: a key struct must have no padding, or
 * be zeroed before it is filled.  Pointers to values stay valid until the
 * next hmap_put (which may grow the map) or removal.
 */
#ifndef BS_HMAP_H
#define BS_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hmap {
	unsigned char *slots;   /* cap slots of stride bytes: a state byte,
				 * the key, the value */
	size_t cap;             /* a power of two, or 0 */
	size_t live, used;      /* keys held; held + removed (tombstones) */
	size_t key_size, val_size, stride, val_off;
	void (*drop)(void *val); /* NULL: the map does not own its values */
	/* keys kept outside: the key of a value; NULL: keys in the slots */
	const void *(*key_of)(const void *ctx, const void *val);
	const void *ctx;
};

#define HMAP_KEY_MAX 32

/* key_size at most HMAP_KEY_MAX; drop NULL for a map that owns nothing. */
void hmap_init(struct hmap *m, size_t key_size, size_t val_size,
	       void (*drop)(void *val));
/* Keys kept outside: key_of(ctx, val) is the key of val.  A value
 * hmap_put returns must be filled at once so that key_of finds its key
 * (the map looks at the keys of its values when it grows).  Owns
 * nothing. */
void hmap_init_outside(struct hmap *m, size_t key_size, size_t val_size,
		       const void *(*key_of)(const void *ctx, const void *val),
		       const void *ctx);
/* Every value dropped (an owning map), the memory freed; the map stays
 * usable, empty. */
void hmap_release(struct hmap *m);
/* Every key removed (values dropped), the room kept. */
void hmap_clear(struct hmap *m);
/* key's value, or NULL. */
void *hmap_get(const struct hmap *m, const void *key);
/* key's value, made (zeroed, *fresh true) when key was not there. */
void *hmap_put(struct hmap *m, const void *key, bool *fresh);
/* key removed (its value dropped); false if it was not there. */
bool hmap_del(struct hmap *m, const void *key);
/* A 64-bit hash of n bytes (FNV-1a), for tables keyed by strings: they
 * key by the hash and chain the records of one hash, compared in full. */
static inline uint64_t hmap_hash_bytes(const void *s, size_t n)
{
	const unsigned char *p = s;
	uint64_t h = 1469598103934665603ULL;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static inline size_t hmap_count(const struct hmap *m)
{
	return m->live;
}
/* Walking: slot i (0 <= i < m->cap) holds a value, or NULL; its key in
 * *key when key is not NULL.  Removing the slot's own key while walking
 * is allowed; putting is not. */
void *hmap_slot(const struct hmap *m, size_t i, const void **key);

#endif
