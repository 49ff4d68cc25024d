/*
 * etf: reading the external term format in place, for the few term types
 * that make up nearly every event (atoms, pids, integers).
 *
 * Each reader gives exactly what ei's decoder for that type would give, but
 * copies nothing: an atom or a node name is a pointer into the buffer and a
 * length.  A reader that meets anything it does not handle itself returns
 * 0 and leaves *idx alone, so the caller can hand the term to ei instead;
 * 1 means it read the term and moved *idx past it.  The buffer must have
 * passed wire_check (lengths lie inside it), as for ei's decoders.
 */
#ifndef BS_ETF_H
#define BS_ETF_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ei's limit for an atom in UTF-8, terminator included (MAXATOMLEN_UTF8) */
#define ETF_ATOM_MAX 1021

static inline uint32_t etf_u32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Are the n bytes at p plain ASCII? */
static inline int etf_ascii(const unsigned char *p, size_t n)
{
	uint64_t acc = 0, w;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, 8);
		acc |= w;
	}
	for (; i < n; i++)
		acc |= p[i];
	return !(acc & 0x8080808080808080ULL);
}

/*
 * The header of the atom at p: its length in *len, the header's own in
 * *hdr, 1 if it is Latin-1 (2 if UTF-8); 0 if it is no atom.
 */
static inline int etf_atom_head(const unsigned char *p, size_t *len, size_t *hdr)
{
	switch (p[0]) {
	case 'w': *len = p[1]; *hdr = 2; return 2;
	case 'v': *len = (size_t)p[1] << 8 | p[2]; *hdr = 3; return 2;
	case 's': *len = p[1]; *hdr = 2; return 1;
	case 'd': *len = (size_t)p[1] << 8 | p[2]; *hdr = 3; return 1;
	default: return 0;
	}
}

/*
 * An atom as ei_decode_atom_as(..., ERLANG_UTF8) would copy it: UTF-8
 * atoms byte for byte, Latin-1 atoms only when they are plain ASCII (the
 * others need converting: 0).
 */
static inline int etf_atom(const char *buf, int *idx, const char **s, size_t *n)
{
	const unsigned char *p = (const unsigned char *)buf + *idx;
	size_t len, hdr;
	int enc = etf_atom_head(p, &len, &hdr);
	if (!enc || len >= ETF_ATOM_MAX || (enc == 1 && !etf_ascii(p + hdr, len)))
		return 0;
	*s = (const char *)p + hdr;
	*n = len;
	*idx += (int)(hdr + len);
	return 1;
}

/* The part of an atom a C string would show: up to its first NUL. */
static inline size_t etf_cstr_len(const char *s, size_t n)
{
	const char *z = memchr(s, '\0', n);
	return z ? (size_t)(z - s) : n;
}

/* Are n bytes at a and b the same?  Inline for the short ones. */
static inline int etf_same(const char *a, const char *b, size_t n)
{
	uint64_t x, y, x2, y2;
	uint32_t w, z, w2, z2;
	if (n >= 4 && n < 8) {
		memcpy(&w, a, 4);
		memcpy(&z, b, 4);
		/* the last four of n >= 4 bytes: inside both */
		memcpy(&w2, a + n - 4, 4);
		// cppcheck-suppress pointerOutOfBoundsCond
		memcpy(&z2, b + n - 4, 4);
		return w == z && w2 == z2;
	}
	if (n >= 8 && n <= 16) {
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		memcpy(&x2, a + n - 8, 8);
		memcpy(&y2, b + n - 8, 8);
		return x == y && x2 == y2;
	}
	return !memcmp(a, b, n);
}

/*
 * Is the node name node[0..len), read in place, the node local (of
 * local_len bytes)?  As strcmp would judge the name ei copies out: up to
 * its first NUL.
 */
static inline int etf_node_is(const char *node, size_t len, const char *local,
			      size_t local_len)
{
	if (len == local_len)
		return etf_same(node, local, len);
	return len > local_len && !memcmp(node, local, local_len) &&
		node[local_len] == '\0';
}

/* Is the atom at buf[*idx] the ASCII word w[0..n)?  Then past it. */
static inline int etf_atom_is(const char *buf, int *idx, const char *w, size_t n)
{
	const unsigned char *p = (const unsigned char *)buf + *idx;
	size_t len, hdr;
	if (!etf_atom_head(p, &len, &hdr) || len != n ||
	    !etf_same((const char *)p + hdr, w, n))
		return 0;
	*idx += (int)(hdr + n);
	return 1;
}

/*
 * A pid of the node local[0..local_len), named exactly so (a node name
 * read differently, or another node: 0, for the general path).
 */
static inline int etf_pid_local(const char *buf, int *idx, const char *local,
				size_t local_len, uint32_t *num, uint32_t *serial)
{
	const unsigned char *p = (const unsigned char *)buf + *idx;
	size_t len, hdr;
	int enc;
	if ((p[0] != 'X' && p[0] != 'g') ||
	    !(enc = etf_atom_head(p + 1, &len, &hdr)) || len != local_len ||
	    !etf_same((const char *)p + 1 + hdr, local, len) ||
	    (enc == 1 && !etf_ascii(p + 1 + hdr, len)))
		return 0;
	const unsigned char *q = p + 1 + hdr + len;
	*num = etf_u32(q);
	*serial = etf_u32(q + 4);
	*idx += (int)(1 + hdr + len + (p[0] == 'X' ? 12 : 9));
	return 1;
}

struct etf_pid {
	const char *node;   /* in the buffer, not terminated */
	size_t node_len;
	uint32_t num, serial;
};

/* A pid (NEW_PID_EXT or PID_EXT) whose node name reads in place. */
static inline int etf_pid(const char *buf, int *idx, struct etf_pid *pid)
{
	const unsigned char *p = (const unsigned char *)buf + *idx;
	if (p[0] != 'X' && p[0] != 'g')
		return 0;
	int i = *idx + 1;
	if (!etf_atom(buf, &i, &pid->node, &pid->node_len))
		return 0;
	const unsigned char *q = (const unsigned char *)buf + i;
	pid->num = etf_u32(q);
	pid->serial = etf_u32(q + 4);
	*idx = i + (p[0] == 'X' ? 12 : 9);
	return 1;
}

/* A small integer, an integer, or a bignum of up to 8 bytes that fits. */
static inline int etf_int64(const char *buf, int *idx, int64_t *v)
{
	const unsigned char *p = (const unsigned char *)buf + *idx;
	switch (p[0]) {
	case 'a':
		*v = p[1];
		*idx += 2;
		return 1;
	case 'b':
		*v = (int32_t)etf_u32(p + 1);
		*idx += 5;
		return 1;
	case 'n': {
		unsigned n = p[1];
		uint64_t u = 0;
		if (n > 8)
			return 0;
		for (unsigned i = 0; i < n; i++)
			u |= (uint64_t)p[3 + i] << (8 * i);
		if (p[2]) {
			if (u > (uint64_t)1 << 63)
				return 0;
			*v = (int64_t)(0 - u);
		} else {
			if (u > (uint64_t)INT64_MAX)
				return 0;
			*v = (int64_t)u;
		}
		*idx += 3 + (int)n;
		return 1;
	}
	default:
		return 0;
	}
}

#endif
