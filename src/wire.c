/*
 * wire: an iterative validator of the external term format.  It keeps a
 * stack of "terms still to read" per open container, so it never recurses
 * and bounds the depth; every length is checked against what is left.
 */
#include "wire.h"

#include <stdint.h>

struct rd {
	const unsigned char *p, *end;
};

static int need(struct rd *r, size_t n)
{
	return (size_t)(r->end - r->p) >= n ? 0 : -1;
}

static uint32_t u32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t u16(const unsigned char *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* An atom, as found inside pids, ports and references. */
static int atom(struct rd *r)
{
	if (need(r, 1) < 0)
		return -1;
	unsigned char tag = *r->p++;
	size_t n;
	switch (tag) {
	case 'd': case 'v':
		if (need(r, 2) < 0)
			return -1;
		n = u16(r->p);
		r->p += 2;
		break;
	case 's': case 'w':
		if (need(r, 1) < 0)
			return -1;
		n = *r->p++;
		break;
	default:
		return -1;
	}
	/* at most 255 characters of up to 4 bytes, as ei's buffers hold */
	if (n > 1020 || need(r, n) < 0)
		return -1;
	r->p += n;
	return 0;
}

static int skip(struct rd *r, size_t n)
{
	if (need(r, n) < 0)
		return -1;
	r->p += n;
	return 0;
}

int wire_check(const char *buf, size_t len)
{
	struct rd r = { (const unsigned char *)buf, (const unsigned char *)buf + len };
	uint64_t left[WIRE_MAX_DEPTH + 1];  /* terms still to read, per level */
	int depth = 0;

	if (need(&r, 1) < 0 || *r.p++ != 131)
		return -1;
	left[0] = 1;
	while (depth >= 0) {
		if (left[depth] == 0) {
			depth--;
			continue;
		}
		left[depth]--;
		if (need(&r, 1) < 0)
			return -1;
		unsigned char tag = *r.p++;
		uint64_t kids = 0;
		uint32_t n;
		switch (tag) {
		case 'a': if (skip(&r, 1) < 0) return -1; break;           /* small int */
		case 'b': if (skip(&r, 4) < 0) return -1; break;           /* int */
		case 'c': if (skip(&r, 31) < 0) return -1; break;          /* old float */
		case 'F': if (skip(&r, 8) < 0) return -1; break;           /* float */
		case 'd': case 'v': case 's': case 'w':                    /* atoms */
			r.p--;
			if (atom(&r) < 0) return -1;
			break;
		case 'j': break;                                           /* [] */
		case 'k':                                                  /* string */
			if (need(&r, 2) < 0 || skip(&r, 2 + (size_t)u16(r.p)) < 0) return -1;
			break;
		case 'm':                                                  /* binary */
			if (need(&r, 4) < 0 || skip(&r, 4 + (size_t)u32(r.p)) < 0) return -1;
			break;
		case 'M':                                                  /* bits */
			if (need(&r, 5) < 0 || skip(&r, 5 + (size_t)u32(r.p)) < 0) return -1;
			break;
		case 'n':                                                  /* small big */
			if (need(&r, 1) < 0 || skip(&r, 2 + (size_t)r.p[0]) < 0) return -1;
			break;
		case 'o':                                                  /* large big */
			if (need(&r, 4) < 0 || skip(&r, 5 + (size_t)u32(r.p)) < 0) return -1;
			break;
		case 'h':                                                  /* tuples */
			if (need(&r, 1) < 0) return -1;
			kids = *r.p++;
			break;
		case 'i':
			if (need(&r, 4) < 0) return -1;
			kids = u32(r.p);
			r.p += 4;
			break;
		case 'l':                                                  /* list + tail */
			if (need(&r, 4) < 0) return -1;
			kids = (uint64_t)u32(r.p) + 1;
			r.p += 4;
			break;
		case 't':                                                  /* map */
			if (need(&r, 4) < 0) return -1;
			kids = 2 * (uint64_t)u32(r.p);
			r.p += 4;
			break;
		case 'g':                                                  /* pids */
			if (atom(&r) < 0 || skip(&r, 9) < 0) return -1;
			break;
		case 'X':
			if (atom(&r) < 0 || skip(&r, 12) < 0) return -1;
			break;
		case 'f':                                                  /* ports */
			if (atom(&r) < 0 || skip(&r, 5) < 0) return -1;
			break;
		case 'Y':
			if (atom(&r) < 0 || skip(&r, 8) < 0) return -1;
			break;
		case 'x':
			if (atom(&r) < 0 || skip(&r, 12) < 0) return -1;
			break;
		case 'e':                                                  /* refs */
			if (atom(&r) < 0 || skip(&r, 5) < 0) return -1;
			break;
		case 'r': case 'Z': {
			if (need(&r, 2) < 0) return -1;
			n = u16(r.p);
			r.p += 2;
			if (n > 5 || atom(&r) < 0 ||
			    skip(&r, (tag == 'r' ? 1 : 4) + 4 * (size_t)n) < 0)
				return -1;
			break;
		}
		default:
			/* funs ('p', 'q', 'u') never come from the tracer, which
			 * replaces them by '#Fun'; compressed terms ('P') neither */
			return -1;
		}
		if (kids) {
			/* every term takes at least a byte */
			if (kids > (uint64_t)(r.end - r.p) || depth == WIRE_MAX_DEPTH)
				return -1;
			left[++depth] = kids;
		}
	}
	return r.p == r.end ? 0 : -1;
}
