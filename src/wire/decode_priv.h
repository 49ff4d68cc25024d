/*
 * decode_priv: what decode.c and decode_info.c share, for src/wire/ only.
 */
#ifndef BS_DECODE_PRIV_H
#define BS_DECODE_PRIV_H

#include "decode.h"

/* ---- shared by decode.c and decode_info.c ---- */

/*
 * Walk a list of entries: one(d, buf, idx, ctx) decodes an entry and hands
 * it on (0), or fails (-1) and the entry is counted and stepped over.
 * Returns the entries handed on, or -1 when the list itself is malformed.
 */
typedef int (*entry_fn)(struct decoder *d, const char *buf, int *idx,
			void *ctx);


int decode_atom(const char *buf, int *idx, char *out, int outsz);
long each_entry(struct decoder *d, const char *buf, int *idx, entry_fn one,
		void *ctx);
/* A map of atoms to integers at buf[*idx]: the value of each key in keys
 * stored as a long at its offset in into; other keys and values that are
 * no integers skipped.  0, or -1. */
struct long_key {
	const char *key;
	size_t off;
};
int long_map_read(const char *buf, int *idx, const struct long_key *keys,
		  size_t nkeys, void *into);
/* a function's text "m:f/N" (a binary) as the decoder's syntax writes
 * it, appended to scratch (no NUL) */
int prof_frame(struct decoder *d, const char *buf, int *idx);
#endif
