/*
 * Unit tests: the external-format validator that guards ei's decoders; and
 * against a plain reference (the first, byte-at-a-time version), on real
 * batches and on those batches cut short and with bytes changed.
 */
#include <ei.h>
#include <stdint.h>

#include "corpus.h"
#include "pidsel.h"
#include "tap.h"
#include "wire.h"

/* The reference: every read through need(), kept as it was written. */
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

static int skip_n(struct rd *r, size_t n)
{
	if (need(r, n) < 0)
		return -1;
	r->p += n;
	return 0;
}

static int ref_check(const char *buf, size_t len)
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
		case 'a': if (skip_n(&r, 1) < 0) return -1; break;           /* small int */
		case 'b': if (skip_n(&r, 4) < 0) return -1; break;           /* int */
		case 'c': if (skip_n(&r, 31) < 0) return -1; break;          /* old float */
		case 'F': if (skip_n(&r, 8) < 0) return -1; break;           /* float */
		case 'd': case 'v': case 's': case 'w':                    /* atoms */
			r.p--;
			if (atom(&r) < 0) return -1;
			break;
		case 'j': break;                                           /* [] */
		case 'k':                                                  /* string */
			if (need(&r, 2) < 0 || skip_n(&r, 2 + (size_t)u16(r.p)) < 0) return -1;
			break;
		case 'm':                                                  /* binary */
			if (need(&r, 4) < 0 || skip_n(&r, 4 + (size_t)u32(r.p)) < 0) return -1;
			break;
		case 'M':                                                  /* bits */
			if (need(&r, 5) < 0 || skip_n(&r, 5 + (size_t)u32(r.p)) < 0) return -1;
			break;
		case 'n':                                                  /* small big */
			if (need(&r, 1) < 0 || skip_n(&r, 2 + (size_t)r.p[0]) < 0) return -1;
			break;
		case 'o':                                                  /* large big */
			if (need(&r, 4) < 0 || skip_n(&r, 5 + (size_t)u32(r.p)) < 0) return -1;
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
			if (atom(&r) < 0 || skip_n(&r, 9) < 0) return -1;
			break;
		case 'X':
			if (atom(&r) < 0 || skip_n(&r, 12) < 0) return -1;
			break;
		case 'f':                                                  /* ports */
			if (atom(&r) < 0 || skip_n(&r, 5) < 0) return -1;
			break;
		case 'Y':
			if (atom(&r) < 0 || skip_n(&r, 8) < 0) return -1;
			break;
		case 'x':
			if (atom(&r) < 0 || skip_n(&r, 12) < 0) return -1;
			break;
		case 'e':                                                  /* refs */
			if (atom(&r) < 0 || skip_n(&r, 5) < 0) return -1;
			break;
		case 'r': case 'Z': {
			if (need(&r, 2) < 0) return -1;
			n = u16(r.p);
			r.p += 2;
			if (n > 5 || atom(&r) < 0 ||
			    skip_n(&r, (tag == 'r' ? 1 : 4) + 4 * (size_t)n) < 0)
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

/* Batches, whole, cut and mutated: how many verdicts differ. */
static long differential(long rounds)
{
	struct corpus c = { 0x853c49e6748fea9bULL, 5, true };
	long bad = 0;
	for (long r = 0; r < rounds; r++) {
		ei_x_buff x;
		ei_x_new(&x);
		corpus_batch(&c, &x, (int)corpus_pick(&c, 12), r);
		size_t len = (size_t)x.index;
		bad += wire_check(x.buff, len) != ref_check(x.buff, len);
		for (int k = 0; k < 16; k++) {
			char *m = malloc(len + 1);
			memcpy(m, x.buff, len);
			size_t mlen = len;
			switch (corpus_pick(&c, 3)) {
			case 0:
				mlen = corpus_pick(&c, (unsigned)len + 1);
				break;
			case 1:
				for (int f = 0; f < 1 + (int)corpus_pick(&c, 3); f++)
					m[corpus_pick(&c, (unsigned)len)] = (char)corpus_next(&c);
				break;
			default: {
				/* a tag or a length byte where a term starts */
				static const char tags[] = "abcFdvswjkmMnohiltgXfYxerZpqu\0\xff";
				size_t at = 1 + corpus_pick(&c, (unsigned)len - 1);
				m[at] = tags[corpus_pick(&c, sizeof(tags) - 1)];
				break;
			}
			}
			bad += wire_check(m, mlen) != ref_check(m, mlen);
			free(m);
		}
		ei_x_free(&x);
	}
	return bad;
}

static ei_x_buff fresh(void)
{
	ei_x_buff x;
	ei_x_new_with_version(&x);
	return x;
}

/*
 * Pids as beamscope sends them: every number, serial and creation a node
 * can have, of this node or another, comes back from ei's decoder as it
 * went in, in NEW_PID_EXT (older releases of ei cut number and serial to
 * 15 and 13 bits, which names another process).
 */
static int pid_round_trips(void)
{
	static const uint32_t nums[] = { 0, 1, 0x7fff, 0x8000, 40000, 99999,
		PIDSEL_NUM_MAX, PIDSEL_NUM_MAX + 1, UINT32_MAX };
	static const uint32_t serials[] = { 0, 0x1fff, 0x2000, 70000, UINT32_MAX };
	static const uint32_t creations[] = { 0, 3, 4, 0x6b04a422, UINT32_MAX };
	static const char *const nodes[] = { "a@b", "bs_node_123@host.example.com",
		"\xc3\xa5\xc3\xa4@h" };
	int bad = 0;
	for (size_t n = 0; n < sizeof(nodes) / sizeof(*nodes); n++)
	for (size_t i = 0; i < sizeof(nums) / sizeof(*nums); i++)
	for (size_t j = 0; j < sizeof(serials) / sizeof(*serials); j++)
	for (size_t k = 0; k < sizeof(creations) / sizeof(*creations); k++) {
		ei_x_buff x = fresh();
		erlang_pid q;
		int idx = 1;
		bad += wire_encode_pid(&x, nodes[n], nums[i], serials[j],
				       creations[k]) != 0;
		bad += wire_check(x.buff, (size_t)x.index) != 0;
		bad += x.buff[1] != ERL_NEW_PID_EXT;
		if (ei_decode_pid(x.buff, &idx, &q) < 0 || idx != x.index ||
			strcmp(q.node, nodes[n]) || q.num != nums[i] ||
			q.serial != serials[j] || q.creation != creations[k]) {
			printf("#   %s %u %u %u: back as %s %u %u %u\n", nodes[n],
			       nums[i], serials[j], creations[k], q.node, q.num,
			       q.serial, q.creation);
			bad++;
		}
		ei_x_free(&x);
	}
	return bad;
}

int main(void)
{
	ei_x_buff x;
	plan(20);

	x = fresh();
	ei_x_encode_tuple_header(&x, 3);
	ei_x_encode_atom(&x, "beamscope_batch");
	ei_x_encode_list_header(&x, 2);
	ei_x_encode_long(&x, 1);
	ei_x_encode_binary(&x, "abc", 3);
	ei_x_encode_empty_list(&x);
	ei_x_encode_map_header(&x, 1);
	ei_x_encode_string(&x, "k");
	ei_x_encode_double(&x, 1.5);
	ok(wire_check(x.buff, (size_t)x.index) == 0, "a valid term passes");
	ok(wire_check(x.buff, (size_t)x.index - 1) < 0, "one byte short fails");
	ok(wire_check(x.buff, (size_t)x.index + 0) == 0 &&
	   wire_check(x.buff, 1) < 0, "the version byte alone fails");
	char longer[512];
	memcpy(longer, x.buff, (size_t)x.index);
	longer[x.index] = 'j';
	ok(wire_check(longer, (size_t)x.index + 1) < 0, "trailing bytes fail");
	ei_x_free(&x);

	erlang_pid p = { .num = 1, .serial = 0, .creation = 2 };
	strcpy(p.node, "a@b");
	erlang_ref ref = { .len = 3, .n = { 1, 2, 3 }, .creation = 2 };
	strcpy(ref.node, "a@b");
	x = fresh();
	ei_x_encode_tuple_header(&x, 3);
	ei_x_encode_pid(&x, &p);
	ei_x_encode_ref(&x, &ref);
	ei_x_encode_longlong(&x, 1LL << 62);
	ok(wire_check(x.buff, (size_t)x.index) == 0, "pids, refs, bignums pass");
	ei_x_free(&x);

	/* a binary that claims more than there is */
	unsigned char bin[] = { 131, 'm', 0xff, 0xff, 0xff, 0xff, 'a' };
	ok(wire_check((char *)bin, sizeof(bin)) < 0, "oversized binary length fails");
	/* a list that claims 4 billion elements */
	unsigned char lst[] = { 131, 'l', 0xff, 0xff, 0xff, 0xff, 'j' };
	ok(wire_check((char *)lst, sizeof(lst)) < 0, "oversized list length fails");
	/* nesting deeper than the limit */
	char deep[WIRE_MAX_DEPTH * 2 + 8];
	size_t n = 0;
	deep[n++] = (char)131;
	for (int i = 0; i < WIRE_MAX_DEPTH + 1; i++) {
		deep[n++] = 'h';
		deep[n++] = 1;
	}
	deep[n++] = 'j';
	ok(wire_check(deep, n) < 0, "nesting beyond the limit fails");
	/* a reference with too many words for ei */
	unsigned char rf[] = { 131, 'Z', 0, 9, 's', 1, 'a', 0, 0, 0, 1 };
	ok(wire_check((char *)rf, sizeof(rf)) < 0, "reference with 9 words fails");
	/* an atom longer than ei holds */
	unsigned char at[4 + 2000] = { 131, 'v', 0x07, 0xd0 };
	memset(at + 4, 'a', 2000);
	ok(wire_check((char *)at, sizeof(at)) < 0, "overlong atom fails");
	/* funs never come from the tracer */
	unsigned char fn[] = { 131, 'q', 's', 1, 'm', 's', 1, 'f', 'a', 1 };
	ok(wire_check((char *)fn, sizeof(fn)) < 0, "funs are refused");
	unsigned char unknown[] = { 131, 'z' };
	ok(wire_check((char *)unknown, sizeof(unknown)) < 0, "unknown tag fails");

	/* event batches: whole terms back to back */
	unsigned char seq[] = { 131, 'a', 1, 131, 'h', 2, 'j', 'a', 7, 131, 'j' };
	ok(wire_check_seq((char *)seq, sizeof(seq)) == 3, "three terms back to back");
	ok(wire_check_seq((char *)seq, 0) == 0, "no terms at all");
	ok(wire_check_seq((char *)seq, sizeof(seq) - 1) < 0 &&
	   wire_check_seq((char *)seq, 4) < 0, "a term cut short, or a version byte alone, fails");
	unsigned char nover[] = { 131, 'a', 1, 'a', 2 };
	ok(wire_check_seq((char *)nover, sizeof(nover)) < 0, "a term without its version byte fails");

	ok(pid_round_trips() == 0, "pids of every number, serial and creation "
	   "round-trip through ei_decode_pid");
	ok(pidsel_fits(25, 0x7fff, 0x1fff) && !pidsel_fits(25, 0x8000, 0) &&
	   !pidsel_fits(25, 99999, 0) && !pidsel_fits(25, 1, 0x2000) &&
	   !pidsel_fits(24, 40000, 0), "OTP 25 and before: 15-bit numbers, "
	   "13-bit serials");
	ok(pidsel_fits(26, 99999, 0) && pidsel_fits(26, PIDSEL_NUM_MAX, UINT32_MAX) &&
	   !pidsel_fits(26, PIDSEL_NUM_MAX + 1, 0), "OTP 26 on: 28-bit "
	   "numbers, 32-bit serials");

	long bad = differential(3000);
	if (!ok(bad == 0, "same verdicts as the reference on 51000 whole, cut and changed batches"))
		printf("#   %ld differ\n", bad);
	return done_testing();
}
