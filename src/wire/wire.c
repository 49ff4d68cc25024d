/*
 * wire: an iterative validator of the external term format.  It keeps a
 * stack of "terms still to read" per open container, so it never recurses
 * and bounds the depth; every length is checked against what is left.
 * Scalars end their loop turn at once (continue); only containers reach
 * the bottom, where a new level is opened.
 */
#include "wire.h"

#include <stdint.h>

typedef const unsigned char *cp;

static inline uint32_t u32(cp p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline size_t u16(cp p)
{
	return (size_t)p[0] << 8 | p[1];
}

/* Past the atom at p, as found inside pids, ports and references; NULL if
 * it is not one or does not fit. */
static inline cp atom(cp p, cp end)
{
	size_t n;
	if (p >= end)
		return NULL;
	/* how node names come: over distribution, and from term_to_binary */
	if (*p == 'w') {
		if (end - p < 2 || (size_t)(end - p) - 2 < (n = p[1]))
			return NULL;
		return p + 2 + n;
	}
	if (*p == 'd') {
		if (end - p < 3 || (n = u16(p + 1)) > 1020 || (size_t)(end - p) - 3 < n)
			return NULL;
		return p + 3 + n;
	}
	switch (*p) {
	case 'd': case 'v':
		if (end - p < 3)
			return NULL;
		n = u16(p + 1);
		p += 3;
		break;
	case 's': case 'w':
		if (end - p < 2)
			return NULL;
		n = p[1];
		p += 2;
		break;
	default:
		return NULL;
	}
	/* at most 255 characters of up to 4 bytes, as ei's buffers hold */
	if (n > 1020 || (size_t)(end - p) < n)
		return NULL;
	return p + n;
}

/* An atom, then fixed bytes: pids, ports, references. */
static inline cp atom_and(cp p, cp end, size_t fixed)
{
	p = atom(p, end);
	return p && (size_t)(end - p) >= fixed ? p + fixed : NULL;
}

/*
 * The tag at p (p < end): past a scalar whole, with *kids 0, or past a
 * container's header, with *kids its elements; NULL if malformed.
 */
static inline __attribute__((always_inline)) cp check_one(cp p, cp end,
							  uint64_t *kids)
{
	/* room: the bytes after the tag */
	size_t room = (size_t)(end - p) - 1, n;
	*kids = 0;
	switch (*p) {
	case 'a':                                          /* small int */
		if (room < 1) return NULL;
		return p + 2;
	case 'b':                                          /* int */
		if (room < 4) return NULL;
		return p + 5;
	case 'c':                                          /* old float */
		if (room < 31) return NULL;
		return p + 32;
	case 'F':                                          /* float */
		if (room < 8) return NULL;
		return p + 9;
	case 's': case 'w':                                /* atoms */
		if (room < 1 || room - 1 < (n = p[1])) return NULL;
		return p + 2 + n;
	case 'd': case 'v':
		if (room < 2 || (n = u16(p + 1)) > 1020 || room - 2 < n) return NULL;
		return p + 3 + n;
	case 'j':                                          /* [] */
		return p + 1;
	case 'k':                                          /* string */
		if (room < 2 || room - 2 < (n = u16(p + 1))) return NULL;
		return p + 3 + n;
	case 'm':                                          /* binary */
		if (room < 4 || room - 4 < (n = u32(p + 1))) return NULL;
		return p + 5 + n;
	case 'M':                                          /* bits */
		if (room < 5 || room - 5 < (n = u32(p + 1))) return NULL;
		return p + 6 + n;
	case 'n':                                          /* small big */
		if (room < 1 || room - 1 < 1 + (n = p[1])) return NULL;
		return p + 3 + n;
	case 'o':                                          /* large big */
		if (room < 4 || room - 4 < 1 + (n = u32(p + 1))) return NULL;
		return p + 6 + n;
	case 'g':                                          /* pids */
		return atom_and(p + 1, end, 9);
	case 'X':
		return atom_and(p + 1, end, 12);
	case 'f':                                          /* ports */
		return atom_and(p + 1, end, 5);
	case 'Y':
		return atom_and(p + 1, end, 8);
	case 'x':
		return atom_and(p + 1, end, 12);
	case 'e':                                          /* refs */
		return atom_and(p + 1, end, 5);
	case 'r': case 'Z':
		if (room < 2 || (n = u16(p + 1)) > 5)
			return NULL;
		return atom_and(p + 3, end, (*p == 'r' ? 1 : 4) + 4 * n);
	case 'h':                                          /* tuples */
		if (room < 1) return NULL;
		*kids = p[1];
		return p + 2;
	case 'i':
		if (room < 4) return NULL;
		*kids = u32(p + 1);
		return p + 5;
	case 'l':                                          /* list + tail */
		if (room < 4) return NULL;
		*kids = (uint64_t)u32(p + 1) + 1;
		return p + 5;
	case 't':                                          /* map */
		if (room < 4) return NULL;
		*kids = 2 * (uint64_t)u32(p + 1);
		return p + 5;
	default:
		/* funs ('p', 'q', 'u') never come from the tracer, which
		 * replaces them by '#Fun'; compressed terms ('P') neither */
		return NULL;
	}
}

/* Past the one term at p, or NULL if it is not one, whole, within end. */
static cp check_term(cp p, cp end)
{
	uint64_t up[WIRE_MAX_DEPTH];  /* terms still to read in the levels above */
	uint64_t left = 1;            /* ... and in this one */
	int depth = 0;

	for (;;) {
		while (left == 0) {
			if (depth == 0)
				return p;
			left = up[--depth];
		}
		left--;
		if (p >= end)
			return NULL;
		uint64_t kids;
		if (!(p = check_one(p, end, &kids)))
			return NULL;
		/* a container: its elements become this level */
		if (kids == 0)
			continue;
		/* every term takes at least a byte */
		if (kids > (uint64_t)(end - p) || depth == WIRE_MAX_DEPTH)
			return NULL;
		up[depth++] = left;
		left = kids;
	}
}

int wire_check(const char *buf, size_t len)
{
	cp p = (cp)buf, end = p + len;
	if (len < 1 || *p++ != 131)
		return -1;
	return check_term(p, end) == end ? 0 : -1;
}

long wire_check_seq(const char *buf, size_t len)
{
	cp p = (cp)buf, end = p + len;
	long n = 0;
	while (p < end) {
		if (*p++ != 131 || !(p = check_term(p, end)))
			return -1;
		n++;
	}
	return n;
}

int wire_encode_pid(ei_x_buff *x, const char *node, uint32_t num,
		    uint32_t serial, uint32_t creation)
{
	char tag = (char)ERL_NEW_PID_EXT;
	char ints[12];
	uint32_t v[3] = { num, serial, creation };
	for (int i = 0; i < 3; i++) {
		ints[4 * i] = (char)(v[i] >> 24);
		ints[4 * i + 1] = (char)(v[i] >> 16);
		ints[4 * i + 2] = (char)(v[i] >> 8);
		ints[4 * i + 3] = (char)v[i];
	}
	if (ei_x_append_buf(x, &tag, 1) < 0 ||
	    ei_x_encode_atom_as(x, node, ERLANG_UTF8, ERLANG_UTF8) < 0 ||
	    ei_x_append_buf(x, ints, (int)sizeof(ints)) < 0)
		return -1;
	return 0;
}
