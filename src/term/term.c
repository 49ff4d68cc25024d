/*
 * term: ei-encoded term -> Erlang or Elixir text.  See term.h for the
 * contract.  Every emit goes through emit(), which enforces the byte
 * limit; once the limit is hit the rest of the term is only skipped, never
 * rendered.
 *
 * The types that make up nearly every message (small integers, atoms,
 * pids, tuples, lists, strings, binaries) are read in place by
 * render_fast() (Erlang) and the head of render_ex() (Elixir); everything
 * else, and everything in reference mode, goes through ei's decoders.
 * Both give the same text, byte for byte.  What each syntax prints was
 * taken from the printers themselves (io_lib_pretty, erts' float_to_list
 * short form, Elixir's Inspect) and is checked against them on a live
 * node by test/t0360-render.sh.
 */
#include "term.h"

#include <ei.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etf.h"
#include "structs.h"
#include "utf8.h"

#define TERM_MAX_DEPTH 64

struct rctx {
	enum term_syntax syn;
	const char *buf;
	int *idx;
	struct sbuf *out;
	size_t limit;      /* absolute length of out we may reach; 0 = none */
	bool full;         /* limit reached: skip, do not render */
	bool cut;
	bool reference;    /* ei's decoders only */
	bool markers;      /* '...' and '#Fun' are the tracer's cut marks */
	const char *local;
	size_t local_len;
	unsigned td;       /* the target's printers: TD_* */
	struct structs *structs;   /* with TD_EX_STRUCTS */
};

static inline void emit(struct rctx *rc, const char *s, size_t n)
{
	struct sbuf *o = rc->out;
	if (rc->full)
		return;
	if (rc->limit && o->len + n > rc->limit) {
		size_t room = rc->limit - o->len;
		/* do not split a UTF-8 sequence */
		while (room > 0 && ((unsigned char)s[room] & 0xC0) == 0x80)
			room--;
		sbuf_add(o, s, room);
		rc->full = rc->cut = true;
		return;
	}
	if (o->len + n >= o->cap)
		sbuf_grow(o, n);
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static void emits(struct rctx *rc, const char *s)
{
	emit(rc, s, strlen(s));
}

static void emitf(struct rctx *rc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void emitf(struct rctx *rc, const char *fmt, ...)
{
	char tmp[1200];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(tmp))
		n = sizeof(tmp) - 1;
	emit(rc, tmp, (size_t)n);
}

/* reserved words by first letter, each list ending in an empty word */
static const char *const reserved[26] = {
	['a' - 'a'] = "after\0and\0andalso\0",
	['b' - 'a'] = "band\0begin\0bnot\0bor\0bsl\0bsr\0bxor\0",
	['c' - 'a'] = "case\0catch\0cond\0",
	['d' - 'a'] = "div\0",
	['e' - 'a'] = "end\0",
	['f' - 'a'] = "fun\0",
	['i' - 'a'] = "if\0",
	['l' - 'a'] = "let\0",
	['m' - 'a'] = "maybe\0",
	['n' - 'a'] = "not\0",
	['o' - 'a'] = "of\0or\0orelse\0",
	['r' - 'a'] = "receive\0rem\0",
	['t' - 'a'] = "try\0",
	['w' - 'a'] = "when\0",
	['x' - 'a'] = "xor\0",
};

/* Letters, digits, _ and @: what an unquoted atom is made of, as bits. */
#define BARE_LO 0x03ff000000000000ULL    /* characters 0 to 63 */
#define BARE_HI 0x07fffffe87ffffffULL    /* characters 64 to 127 */

static inline bool bare_char(unsigned char c)
{
	return c < 64 ? (BARE_LO >> c) & 1 : c < 128 ? (BARE_HI >> (c - 64)) & 1 : 0;
}

/*
 * The next character of UTF-8 text s[*i..n): its code point, or -1 for a
 * byte that starts no well-formed character (then one byte is taken).
 */
static long utf8_next(const unsigned char *s, size_t n, size_t *i)
{
	uint32_t cp;
	int len = utf8_decode(s + *i, n - *i, &cp);
	if (!len) {
		(*i)++;
		return -1;
	}
	*i += (size_t)len;
	return (long)cp;
}

/* Latin-1 letters past ASCII, as Erlang's scanner reads them */
static bool latin1_lower(long c)
{
	return c >= 0xDF && c <= 0xFF && c != 0xF7;
}

static bool latin1_letter(long c)
{
	return c >= 0xC0 && c <= 0xFF && c != 0xD7 && c != 0xF7;
}

/* Does name[0..len) print unquoted?  False if it holds a NUL. */
static bool atom_is_bare(const char *name, size_t len)
{
	const unsigned char *u = (const unsigned char *)name;
	if (!len)
		return false;
	if (!(*name >= 'a' && *name <= 'z')) {
		size_t i = 0;
		if (u[0] < 0x80 || !latin1_lower(utf8_next(u, len, &i)))
			return false;
	}
	for (size_t i = 1; i < len; i++) {
		if (bare_char(u[i]))
			continue;
		if (u[i] < 0x80)
			return false;
		/* past ASCII: the slow way, from the start */
		size_t j = 0;
		utf8_next(u, len, &j);
		while (j < len) {
			long c = utf8_next(u, len, &j);
			if (c < 0x80 ? !bare_char((unsigned char)c) : !latin1_letter(c))
				return false;
		}
		return true;
	}
	/* reserved words are 2 to 7 letters */
	const char *w = reserved[name[0] - 'a'];
	if (len < 2 || len > 7 || !w)
		return true;
	for (; *w; w += strlen(w) + 1)
		if (!strncmp(name, w, len) && w[len] == '\0')
			return false;
	return true;
}

bool term_atom_is_bare(const char *name)
{
	return atom_is_bare(name, strlen(name));
}

/* Decimal digits of v at the end of buf[24]; returns where they start. */
static char *utoa_end(char *end, unsigned long long v)
{
	*end = '\0';
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Decimal digits of v at p; returns the end. */
static inline char *put_uint(char *p, uint32_t v)
{
	if (v < 10) {
		*p = (char)('0' + v);
		return p + 1;
	}
	if (v < 100) {
		memcpy(p, digit_pairs + 2 * v, 2);
		return p + 2;
	}
	size_t n = v < 1000 ? 3 : v < 10000 ? 4 : v < 100000 ? 5 : v < 1000000 ? 6 :
		v < 10000000 ? 7 : v < 100000000 ? 8 : v < 1000000000 ? 9 : 10;
	char *e = p + n;
	while (v >= 100) {
		e -= 2;
		memcpy(e, digit_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		e -= 2;
		memcpy(e, digit_pairs + 2 * v, 2);
	} else {
		*--e = (char)('0' + v);
	}
	return p + n;
}

/* "<0.N.S>": at most this long */
#define PID_TEXT_MAX 25

/* "<0.N.S>" or "<node.N.S>" into buf (at least 32 + node_len); length */
static inline size_t pid_text_n(char *buf, bool local, const char *node,
			 size_t node_len, unsigned num, unsigned serial)
{
	char *p = buf;
	*p++ = '<';
	if (local || !node) {
		*p++ = '0';
	} else {
		memcpy(p, node, node_len);
		p += node_len;
	}
	*p++ = '.';
	p = put_uint(p, num);
	*p++ = '.';
	p = put_uint(p, serial);
	*p++ = '>';
	*p = '\0';
	return (size_t)(p - buf);
}

static size_t pid_text(char *buf, const char *local_node, const char *node,
		       unsigned num, unsigned serial)
{
	return pid_text_n(buf, local_node && !strcmp(node, local_node), node,
			  strlen(node), num, serial);
}

void term_pid_text(struct sbuf *out, const char *local_node, const char *node,
		   unsigned num, unsigned serial)
{
	size_t l = strlen(node);
	sbuf_grow(out, l + 32);
	out->len += pid_text(out->buf + out->len, local_node, node, num, serial);
}

void term_pid_text_local(struct sbuf *out, unsigned num, unsigned serial)
{
	if (out->len + PID_TEXT_MAX >= out->cap)
		sbuf_grow(out, PID_TEXT_MAX);
	out->len += pid_text_n(out->buf + out->len, true, NULL, 0, num, serial);
}



static int skip(struct rctx *rc);
static int render(struct rctx *rc, int depth);
static int render_ei(struct rctx *rc, int depth);
static int render_ex(struct rctx *rc, int depth);

/* Erlang's escape for the character c inside quotes; false if it needs none */
static bool erl_escape(struct rctx *rc, long c, char quote)
{
	static const char named[32] = {
		[8] = 'b', [9] = 't', [10] = 'n', [11] = 'v', [12] = 'f',
		[13] = 'r', [27] = 'e',
	};
	char e[8];
	if (c == quote || c == '\\') {
		e[0] = '\\', e[1] = (char)c;
		emit(rc, e, 2);
	} else if (c >= 0 && c < 32 && named[c]) {
		e[0] = '\\', e[1] = named[c];
		emit(rc, e, 2);
	} else if (c == 127) {
		emit(rc, "\\d", 2);
	} else if ((c >= 0 && c < 32) || (c >= 128 && c < 160)) {
		e[0] = '\\';
		e[1] = (char)('0' + (c >> 6));
		e[2] = (char)('0' + (c >> 3 & 7));
		e[3] = (char)('0' + (c & 7));
		emit(rc, e, 4);
	} else {
		return false;
	}
	return true;
}

/* The code point c as UTF-8 */
static void emit_cp(struct rctx *rc, unsigned long c)
{
	char u[4];
	size_t n;
	if (c < 0x80) {
		u[0] = (char)c, n = 1;
	} else if (c < 0x800) {
		u[0] = (char)(0xC0 | c >> 6), u[1] = (char)(0x80 | (c & 0x3F)), n = 2;
	} else if (c < 0x10000) {
		u[0] = (char)(0xE0 | c >> 12), u[1] = (char)(0x80 | (c >> 6 & 0x3F));
		u[2] = (char)(0x80 | (c & 0x3F)), n = 3;
	} else {
		u[0] = (char)(0xF0 | c >> 18), u[1] = (char)(0x80 | (c >> 12 & 0x3F));
		u[2] = (char)(0x80 | (c >> 6 & 0x3F)), u[3] = (char)(0x80 | (c & 0x3F));
		n = 4;
	}
	emit(rc, u, n);
}

/*
 * The atom a[0..n) (UTF-8), quoted when it must be.  Runs of plain bytes
 * go out whole, so that a cut never splits a UTF-8 character.
 */
static void emit_atom(struct rctx *rc, const char *a, size_t n)
{
	/* markers the tracer NIF puts where it cut a term */
	if (atom_is_bare(a, n) || (rc->markers && ((n == 3 && !memcmp(a, "...", 3)) ||
						   (n == 4 && !memcmp(a, "#Fun", 4))))) {
		emit(rc, a, n);
		return;
	}
	const unsigned char *u = (const unsigned char *)a;
	emit(rc, "'", 1);
	size_t run = 0, i = 0;
	while (i < n) {
		size_t at = i;
		long c = utf8_next(u, n, &i);
		if (c < 0)
			c = u[at];
		else if (c >= 0x80)
			continue;
		emit(rc, a + run, at - run);
		if (!erl_escape(rc, c, '\''))
			emit(rc, a + at, 1);
		run = i;
	}
	emit(rc, a + run, n - run);
	emit(rc, "'", 1);
}

/* Printable as Erlang prints strings: Latin-1, and the escapes it knows */
static inline bool latin1_printable(unsigned long c)
{
	return (c >= 0x20 && c < 0x7f) || (c >= 0xA0 && c <= 0xFF) ||
	       (c >= 8 && c <= 13) || c == 27;
}

static bool printable(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!latin1_printable(s[i]))
			return false;
	return true;
}

/*
 * s[0..n) as UTF-8: 1 if it is printable Latin-1 characters (*wide: some
 * past ASCII), 0 if it holds others, -1 if it is no UTF-8.  With lead, as
 * OTP 29's ~tp reads a binary: 0 at the first character that is not
 * printable, -1 only when a byte that is no UTF-8 comes before one.
 */
static int printable_utf8(const unsigned char *s, size_t n, bool *wide,
			  bool lead)
{
	size_t i = 0;
	int r = 1;
	*wide = false;
	while (i < n) {
		long c = utf8_next(s, n, &i);
		if (c < 0)
			return -1;
		if (!latin1_printable((unsigned long)c)) {
			if (lead)
				return 0;
			r = 0;
		}
		if (c >= 0x80)
			*wide = true;
	}
	return r;
}

/* Latin-1 bytes as the inside of an Erlang string literal (no quotes). */
static void emit_chars(struct rctx *rc, const unsigned char *s, size_t n)
{
	size_t run = 0;
	for (size_t i = 0; i < n && !rc->full; i++) {
		unsigned char c = s[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			continue;
		emit(rc, (const char *)s + run, i - run);
		if (c >= 0x80)
			emit_cp(rc, c);
		else
			erl_escape(rc, c, '"');
		run = i + 1;
	}
	emit(rc, (const char *)s + run, n - run);
}

/* UTF-8 text, printable, as the inside of an Erlang string literal. */
static void emit_chars_utf8(struct rctx *rc, const unsigned char *s, size_t n)
{
	size_t run = 0;
	for (size_t i = 0; i < n && !rc->full; i++) {
		unsigned char c = s[i];
		if ((c >= 0x20 && c < 0x7f && c != '"' && c != '\\') || c >= 0x80)
			continue;
		emit(rc, (const char *)s + run, i - run);
		erl_escape(rc, c, '"');
		run = i + 1;
	}
	emit(rc, (const char *)s + run, n - run);
}

static void emit_bytes(struct rctx *rc, const unsigned char *s, size_t n,
		       const char *sep)
{
	size_t sl = strlen(sep);
	char num[8];
	for (size_t i = 0; i < n && !rc->full; i++) {
		if (i)
			emit(rc, sep, sl);
		emit(rc, num, (size_t)(put_uint(num, s[i]) - num));
	}
}

/*
 * A float as io_lib_format:fwrite_g/1 of OTP 25 prints it: the shortest
 * digits that read back as the same double, laid out fixed or scientific
 * by the rules of erts' float_to_list(F, [short]).
 */
static void emit_double(struct rctx *rc, double d)
{
	char out[48], tmp[40], dig[24];
	size_t nd = 0;
	int sciexp = 0;
	char *o = out;

	if (d != d || d - d != 0) {   /* no such float travels; say so anyway */
		emits(rc, d != d ? "nan" : d < 0 ? "-inf" : "inf");
		return;
	}
	if (signbit(d))
		*o++ = '-', d = -d;
	if (d == 0) {
		memcpy(o, "0.0", 4);
		emits(rc, out);
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*e", prec - 1, d);
		if (strtod(tmp, NULL) == d)
			break;
	}
	/* tmp: D[.DDD]e[+-]XX */
	char *e = strchr(tmp, 'e');
	if (!e) {   /* not from printf's %e */
		emits(rc, tmp);
		return;
	}
	sciexp = atoi(e + 1);
	for (char *p = tmp; p < e && nd < sizeof(dig); p++)
		if (*p != '.')
			dig[nd++] = *p;
	if (nd == 0)
		dig[nd++] = '0';
	while (nd > 1 && dig[nd - 1] == '0')
		nd--;
	int rexp = sciexp - (int)nd + 1;   /* value = digits * 10^rexp */
	int lo = -(int)nd - 2, hi = sciexp >= 10 ? 2 : 1;
	if (nd == 1)
		lo = -4, hi = 2;
	bool fixed = rexp >= lo && rexp <= hi;
	if (fixed) {
		uint64_t m = 0;
		for (size_t i = 0; i < nd; i++)
			m = m * 10 + (uint64_t)(dig[i] - '0');
		if ((rexp == 0 && m >= (1ULL << 53)) ||
		    (rexp == 1 && m > (1ULL << 52) / 5) ||
		    (rexp == 2 && m > (1ULL << 51) / 25))
			fixed = false;
	}
	if (fixed) {
		int whole = (int)nd + rexp;
		if (rexp >= 0) {
			memcpy(o, dig, nd), o += nd;
			memset(o, '0', (size_t)rexp), o += rexp;
			memcpy(o, ".0", 2), o += 2;
		} else if (whole > 0) {
			memcpy(o, dig, (size_t)whole), o += whole;
			*o++ = '.';
			memcpy(o, dig + whole, nd - (size_t)whole), o += nd - (size_t)whole;
		} else {
			memcpy(o, "0.", 2), o += 2;
			memset(o, '0', (size_t)-whole), o += -whole;
			memcpy(o, dig, nd), o += nd;
		}
		*o = '\0';
	} else {
		*o++ = dig[0];
		*o++ = '.';
		if (nd == 1)
			*o++ = '0';
		else
			memcpy(o, dig + 1, nd - 1), o += nd - 1;
		snprintf(o, sizeof(out) - (size_t)(o - out), "e%d", sciexp);
	}
	emits(rc, out);
}

/*
 * An integer of any size (SMALL_BIG_EXT, LARGE_BIG_EXT) in decimal; -1 if
 * it is malformed.
 */
static int render_bignum(struct rctx *rc)
{
	const unsigned char *p = (const unsigned char *)rc->buf + *rc->idx;
	size_t n, hdr;
	if (p[0] == ERL_SMALL_BIG_EXT)
		n = p[1], hdr = 3;
	else
		n = etf_u32(p + 1), hdr = 6;
	bool neg = p[hdr - 1] != 0;
	const unsigned char *mag = p + hdr;
	if (skip(rc) < 0)
		return -1;
	/* little-endian bytes into 32-bit limbs, most significant last */
	size_t nl = (n + 3) / 4;
	uint32_t *limb = calloc(nl ? nl : 1, sizeof(*limb));
	char *txt = malloc(nl * 10 + 3);
	if (!limb || !txt) {
		free(limb);
		free(txt);
		emits(rc, "#Bignum");
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		limb[i / 4] |= (uint32_t)mag[i] << (8 * (i % 4));
	char *end = txt + nl * 10 + 2, *q = end;
	while (nl && !limb[nl - 1])
		nl--;
	while (nl) {
		uint64_t r = 0;
		for (size_t i = nl; i-- > 0;) {
			uint64_t cur = r << 32 | limb[i];
			limb[i] = (uint32_t)(cur / 1000000000u);
			r = cur % 1000000000u;
		}
		while (nl && !limb[nl - 1])
			nl--;
		for (int k = 0; k < 9 && (nl || r); k++) {
			*--q = (char)('0' + r % 10);
			r /= 10;
		}
	}
	if (q == end)
		*--q = '0';
	if (neg)
		*--q = '-';
	emit(rc, q, (size_t)(end - q));
	free(limb);
	free(txt);
	return 0;
}

/* a map of more than this many pairs is a hash trie on the target */
#define MAP_FLAT_MAX 32

/*
 * Where the key of each pair of a map starts, in the order the target's
 * printer walks them: as encoded, except that a map larger than a flat
 * one (a hash trie) is walked the other way round by io_lib, and by
 * Elixir where the target's maps iterate so (TD_EX_MAP_BACK).  off has room for
 * MAP_FLAT_MAX; a larger map gets an array to free (*owned).  *end is
 * just past the map.  NULL when malformed.
 */
static int *map_order(struct rctx *rc, int arity, int *off, int **owned,
		      int *end)
{
	bool back = arity > MAP_FLAT_MAX &&
		    (rc->syn == TERM_ERLANG ? !(rc->td & TD_ERL_MAP_AS_SENT) :
		     (rc->td & TD_EX_MAP_BACK) != 0);
	int at = *rc->idx;
	*owned = NULL;
	if (arity > MAP_FLAT_MAX) {
		if ((size_t)arity > (size_t)INT_MAX / sizeof(int))
			return NULL;
		off = *owned = malloc((size_t)arity * sizeof(int));
		if (!off)
			return NULL;
	}
	for (int i = 0; i < arity; i++) {
		off[back ? arity - 1 - i : i] = at;
		if (ei_skip_term(rc->buf, &at) < 0 || ei_skip_term(rc->buf, &at) < 0) {
			free(*owned);
			*owned = NULL;
			return NULL;
		}
	}
	*end = at;
	return off;
}

static int render(struct rctx *rc, int depth);
static int render_ei(struct rctx *rc, int depth);

static int skip(struct rctx *rc)
{
	return ei_skip_term(rc->buf, rc->idx) < 0 ? -1 : 0;
}

/* After the elements of a list of arity elements: nothing for a proper
 * list, else bar and the tail of an improper one. */
static int list_tail(struct rctx *rc, int depth, int arity, const char *bar)
{
	int type, size;
	if (arity == 0)
		return 0;
	if (ei_get_type(rc->buf, rc->idx, &type, &size) < 0)
		return -1;
	if (type == ERL_NIL_EXT) {
		(*rc->idx)++;
		return 0;
	}
	emit(rc, bar, strlen(bar));
	return render(rc, depth + 1);
}

static int render_list(struct rctx *rc, int depth)
{
	int arity;
	if (ei_decode_list_header(rc->buf, rc->idx, &arity) < 0)
		return -1;
	emit(rc, "[", 1);
	for (int i = 0; i < arity; i++) {
		if (i)
			emit(rc, ",", 1);
		if (render(rc, depth + 1) < 0)
			return -1;
	}
	if (list_tail(rc, depth, arity, "|") < 0)
		return -1;
	emit(rc, "]", 1);
	return 0;
}

static int render_string(struct rctx *rc, int size)
{
	/* STRING_EXT: 'k', 2-byte length, bytes */
	const unsigned char *s = (const unsigned char *)rc->buf + *rc->idx + 3;
	if (rc->buf[*rc->idx] != ERL_STRING_EXT)
		return -1;
	*rc->idx += 3 + size;
	if (printable(s, (size_t)size)) {
		emit(rc, "\"", 1);
		emit_chars(rc, s, (size_t)size);
		emit(rc, "\"", 1);
	} else {
		emit(rc, "[", 1);
		emit_bytes(rc, s, (size_t)size, ",");
		emit(rc, "]", 1);
	}
	return 0;
}

static int render_binary(struct rctx *rc, int size)
{
	/* BINARY_EXT: 'm', 4-byte length, bytes */
	const unsigned char *s = (const unsigned char *)rc->buf + *rc->idx + 5;
	*rc->idx += 5 + size;
	/* judge printability on what can be shown, not on what is cut away */
	size_t look = (size_t)size;
	if (rc->limit && look > rc->limit)
		look = rc->limit;
	bool wide;
	int u = size <= 0 ? 0 : printable_utf8(s, look, &wide,
					       rc->td & TD_BIN_UTF8_LEAD);
	emit(rc, "<<", 2);
	if (u > 0) {
		emit(rc, "\"", 1);
		emit_chars_utf8(rc, s, (size_t)size);
		emit(rc, wide ? "\"/utf8" : "\"", wide ? 6 : 1);
	} else if (u < 0 && printable(s, look)) {
		emit(rc, "\"", 1);
		emit_chars(rc, s, (size_t)size);
		emit(rc, "\"", 1);
	} else {
		emit_bytes(rc, s, (size_t)size, ",");
	}
	emit(rc, ">>", 2);
	return 0;
}

/* BIT_BINARY_EXT: 'M', 4-byte length, bits used in the last byte, bytes */
static int render_bits(struct rctx *rc)
{
	const unsigned char *p = (const unsigned char *)rc->buf + *rc->idx;
	size_t n = etf_u32(p + 1);
	unsigned bits = p[5];
	const unsigned char *s = p + 6;
	bool ex = rc->syn == TERM_ELIXIR;
	char num[8];
	if (skip(rc) < 0)
		return -1;
	if (n == 0 || bits == 0 || bits > 8) {   /* not made by a real node */
		emit(rc, "<<>>", 4);
		return 0;
	}
	emit(rc, "<<", 2);
	emit_bytes(rc, s, n - 1, ex ? ", " : ",");
	if (n > 1)
		emit(rc, ex ? ", " : ",", ex ? 2 : 1);
	emit(rc, num, (size_t)(put_uint(num, s[n - 1] >> (8 - bits)) - num));
	if (ex) {
		emit(rc, "::size(", 7);
		emit(rc, num, (size_t)(put_uint(num, bits) - num));
		emit(rc, ")", 1);
	} else {
		emit(rc, ":", 1);
		emit(rc, num, (size_t)(put_uint(num, bits) - num));
	}
	emit(rc, ">>", 2);
	return 0;
}

static int render_fun(struct rctx *rc)
{
	erlang_fun f;
	if (ei_decode_fun(rc->buf, rc->idx, &f) < 0)
		return -1;
	if (f.type == EI_FUN_EXPORT) {
		emits(rc, "fun ");
		emit_atom(rc, f.module, strlen(f.module));
		emit(rc, ":", 1);
		emit_atom(rc, f.u.exprt.func, strlen(f.u.exprt.func));
		emitf(rc, "/%ld", f.arity);
	} else {
		emits(rc, "#Fun<");
		emit_atom(rc, f.module, strlen(f.module));
		emitf(rc, ".%ld.%ld>", f.u.closure.index, f.u.closure.uniq);
	}
	free_fun(&f);
	return 0;
}

static void emit_long(struct rctx *rc, long v)
{
	char num[24], *s;
	s = utoa_end(num + 23, v < 0 ? -(unsigned long long)v : (unsigned long long)v);
	if (v < 0)
		*--s = '-';
	emit(rc, s, (size_t)(num + 23 - s));
}

enum { FAST_NO = 1 };

static __attribute__((noinline)) void emit_remote_pid(struct rctx *rc,
						      const struct etf_pid *pid)
{
	char text[ETF_ATOM_MAX + 32];
	size_t l = etf_cstr_len(pid->node, pid->node_len);
	emit(rc, text, pid_text_n(text, false, pid->node, l, pid->num, pid->serial));
}

/*
 * The common types, read in place: 0 rendered, -1 malformed, FAST_NO when
 * the term is left to ei (nothing read, nothing emitted).
 */
static int render_fast(struct rctx *rc, int depth)
{
	const unsigned char *p = (const unsigned char *)rc->buf + *rc->idx;
	int64_t v = 0;
	switch (p[0]) {
	case 'a':
	case 'b':
		if (!etf_int64(rc->buf, rc->idx, &v))
			return FAST_NO;
		emit_long(rc, (long)v);
		return 0;
	case 'w': case 'v': case 's': case 'd': {
		const char *a;
		size_t n = 0, hdr = 0;
		/* a bare atom is ASCII in either encoding: no need to look */
		if (!etf_atom_head(p, &n, &hdr))
			return FAST_NO;
		if (n < ETF_ATOM_MAX && atom_is_bare((const char *)p + hdr, n)) {
			*rc->idx += (int)(hdr + n);
			emit(rc, (const char *)p + hdr, n);
			return 0;
		}
		if (!etf_atom(rc->buf, rc->idx, &a, &n))
			return FAST_NO;
		emit_atom(rc, a, n);
		return 0;
	}
	case 'X': case 'g': {
		struct etf_pid pid;
		struct sbuf *o = rc->out;
		if (rc->local && etf_pid_local(rc->buf, rc->idx, rc->local,
					       rc->local_len, &pid.num, &pid.serial)) {
			/* the usual: a pid of the target */
		} else if (!etf_pid(rc->buf, rc->idx, &pid)) {
			return FAST_NO;
		} else if (!rc->local || !etf_node_is(pid.node, pid.node_len,
						      rc->local, rc->local_len)) {
			emit_remote_pid(rc, &pid);
			return 0;
		}
		if (!rc->full && (!rc->limit || o->len + PID_TEXT_MAX <= rc->limit)) {
			/* fits whatever its digits: written in place */
			if (o->len + PID_TEXT_MAX >= o->cap)
				sbuf_grow(o, PID_TEXT_MAX);
			o->len += pid_text_n(o->buf + o->len, true, NULL, 0, pid.num,
					     pid.serial);
		} else {
			char text[PID_TEXT_MAX + 1];
			emit(rc, text, pid_text_n(text, true, NULL, 0, pid.num,
						  pid.serial));
		}
		return 0;
	}
	case 'h': {
		int arity = p[1];
		*rc->idx += 2;
		emit(rc, "{", 1);
		for (int i = 0; i < arity; i++) {
			if (i)
				emit(rc, ",", 1);
			if (render(rc, depth + 1) < 0)
				return -1;
		}
		emit(rc, "}", 1);
		return 0;
	}
	case 'j':
		(*rc->idx)++;
		emit(rc, "[]", 2);
		return 0;
	case 'l': {
		int arity = (int)etf_u32(p + 1);
		*rc->idx += 5;
		emit(rc, "[", 1);
		for (int i = 0; i < arity; i++) {
			if (i)
				emit(rc, ",", 1);
			if (render(rc, depth + 1) < 0)
				return -1;
		}
		if (arity > 0) {
			if (rc->buf[*rc->idx] == 'j') {
				(*rc->idx)++;
			} else {
				emit(rc, "|", 1);
				if (render(rc, depth + 1) < 0)
					return -1;
			}
		}
		emit(rc, "]", 1);
		return 0;
	}
	case 'k':
		return render_string(rc, (int)(p[1] << 8 | p[2]));
	case 'm':
		return render_binary(rc, (int)etf_u32(p + 1));
	default:
		return FAST_NO;
	}
}

/* Past the depth limit or the byte limit: skip what is left. */
static __attribute__((noinline)) int render_rest(struct rctx *rc)
{
	if (!rc->full)
		emit(rc, "...", 3);
	rc->cut = true;
	return skip(rc);
}

static int render(struct rctx *rc, int depth)
{
	if (rc->full || depth > TERM_MAX_DEPTH)
		return render_rest(rc);
	if (__builtin_expect(rc->syn == TERM_ELIXIR, 0))
		return render_ex(rc, depth);
	if (!rc->reference) {
		int r = render_fast(rc, depth);
		if (r != FAST_NO)
			return r;
	}
	return render_ei(rc, depth);
}

/* Any term, through ei's decoders. */
static __attribute__((noinline)) int render_ei(struct rctx *rc, int depth)
{
	int type, size;

	if (ei_get_type(rc->buf, rc->idx, &type, &size) < 0)
		return -1;

	switch (type) {
	case ERL_SMALL_INTEGER_EXT:
	case ERL_INTEGER_EXT: {
		long v;
		if (ei_decode_long(rc->buf, rc->idx, &v) < 0)
			return -1;
		emit_long(rc, v);
		return 0;
	}
	case ERL_SMALL_BIG_EXT:
	case ERL_LARGE_BIG_EXT: {
		long long v;
		unsigned long long u;
		int save = *rc->idx;
		if (ei_decode_longlong(rc->buf, rc->idx, &v) == 0) {
			emitf(rc, "%lld", v);
			return 0;
		}
		*rc->idx = save;
		if (ei_decode_ulonglong(rc->buf, rc->idx, &u) == 0) {
			emitf(rc, "%llu", u);
			return 0;
		}
		*rc->idx = save;
		return render_bignum(rc);
	}
	case ERL_FLOAT_EXT:
	case NEW_FLOAT_EXT: {
		double d;
		if (ei_decode_double(rc->buf, rc->idx, &d) < 0)
			return -1;
		emit_double(rc, d);
		return 0;
	}
	case ERL_ATOM_EXT:
	case ERL_SMALL_ATOM_EXT:
	case ERL_ATOM_UTF8_EXT:
	case ERL_SMALL_ATOM_UTF8_EXT: {
		char a[MAXATOMLEN_UTF8];
		int at = *rc->idx;
		if (ei_decode_atom_as(rc->buf, rc->idx, a, sizeof(a),
				      ERLANG_UTF8, NULL, NULL) < 0)
			return -1;
		/* ei stops at a NUL: read such an atom again, whole */
		const unsigned char *p = (const unsigned char *)rc->buf + at;
		size_t len = 0, hdr = 0, k = 0;
		int enc = etf_atom_head(p, &len, &hdr);
		if (!enc || !memchr(p + hdr, '\0', len)) {
			emit_atom(rc, a, strlen(a));
			return 0;
		}
		char whole[2 * ETF_ATOM_MAX];
		for (size_t i = 0; i < len && k + 2 <= sizeof(whole); i++) {
			unsigned char c = p[hdr + i];
			if (enc == 2 || c < 0x80) {
				whole[k++] = (char)c;
			} else {   /* Latin-1 to UTF-8 */
				whole[k++] = (char)(0xC0 | c >> 6);
				whole[k++] = (char)(0x80 | (c & 0x3F));
			}
		}
		emit_atom(rc, whole, k);
		return 0;
	}
	case ERL_SMALL_TUPLE_EXT:
	case ERL_LARGE_TUPLE_EXT: {
		int arity;
		if (ei_decode_tuple_header(rc->buf, rc->idx, &arity) < 0)
			return -1;
		emit(rc, "{", 1);
		for (int i = 0; i < arity; i++) {
			if (i)
				emit(rc, ",", 1);
			if (render(rc, depth + 1) < 0)
				return -1;
		}
		emit(rc, "}", 1);
		return 0;
	}
	case ERL_MAP_EXT: {
		int arity;
		int flat[MAP_FLAT_MAX], *owned, end, *off;
		if (ei_decode_map_header(rc->buf, rc->idx, &arity) < 0 ||
		    !(off = map_order(rc, arity, flat, &owned, &end)))
			return -1;
		emit(rc, "#{", 2);
		int rv = 0;
		for (int i = 0; i < arity && rv == 0; i++) {
			if (i)
				emit(rc, ",", 1);
			*rc->idx = off[i];
			if ((rv = render(rc, depth + 1)) < 0)
				break;
			emit(rc, " => ", 4);
			rv = render(rc, depth + 1);
		}
		free(owned);
		*rc->idx = end;
		emit(rc, "}", 1);
		return rv;
	}
	case ERL_NIL_EXT:
		(*rc->idx)++;
		emit(rc, "[]", 2);
		return 0;
	case ERL_LIST_EXT:
		return render_list(rc, depth);
	case ERL_STRING_EXT:
		return render_string(rc, size);
	case ERL_BINARY_EXT:
		if (rc->buf[*rc->idx] != ERL_BINARY_EXT)
			return -1;
		return render_binary(rc, size);
	case ERL_BIT_BINARY_EXT:
		return render_bits(rc);
	case ERL_PID_EXT:
	case ERL_NEW_PID_EXT: {
		erlang_pid p;
		char text[MAXATOMLEN_UTF8 + 64];
		if (ei_decode_pid(rc->buf, rc->idx, &p) < 0)
			return -1;
		emit(rc, text, pid_text(text, rc->local, p.node, p.num, p.serial));
		return 0;
	}
	case ERL_PORT_EXT:
	case ERL_NEW_PORT_EXT:
	case ERL_V4_PORT_EXT: {
		erlang_port p;
		if (ei_decode_port(rc->buf, rc->idx, &p) < 0)
			return -1;
		if (rc->local && !strcmp(p.node, rc->local))
			emitf(rc, "#Port<0.%llu>", (unsigned long long)p.id);
		else
			emitf(rc, "#Port<%s.%llu>", p.node,
			      (unsigned long long)p.id);
		return 0;
	}
	case ERL_REFERENCE_EXT:
	case ERL_NEW_REFERENCE_EXT:
	case ERL_NEWER_REFERENCE_EXT: {
		erlang_ref r;
		if (ei_decode_ref(rc->buf, rc->idx, &r) < 0)
			return -1;
		emits(rc, "#Ref<0");
		for (int i = r.len - 1; i >= 0; i--)
			emitf(rc, ".%u", r.n[i]);
		emit(rc, ">", 1);
		return 0;
	}
	case ERL_NEW_FUN_EXT:
	case ERL_FUN_EXT:
	case ERL_EXPORT_EXT:
		return render_fun(rc);
	default:
		return -1;
	}
}

/* ---- Elixir ---- */

/* How Elixir writes an atom: its Macro.inspect_atom classes, less nil,
 * true and false, which the callers look for first. */
enum ex_class {
	EX_IDENT,      /* :foo, foo: and .foo */
	EX_UNQUOTED,   /* :Foo, :foo@bar, :+ ; "Foo" after a dot */
	EX_QUOTED,     /* :"foo bar" */
	EX_OPERATOR,   /* :+ and .+ */
	EX_ALIAS,      /* Elixir.Foo.Bar */
};

/* space-separated words, each ending in a space */
static const char ex_operators[] =
	" & ! ^ not + - ~~~ @ <- \\\\ when :: | = || ||| or && &&& and == != =~"
	" === !== < <= >= > |> <<< >>> <~ ~> <<~ ~>> <~> <|> in ^^^ ++ -- .. <>"
	" +++ --- * / ** . ";
static const char ex_not_callable[] = " % %{} {} <<>> ... .. . ..// -> ";
static const char ex_quoted_ops[] = " :: ^^^ ~~~ <|> ";

static bool ex_word_in(const char *set, const char *a, size_t n)
{
	if (!n || memchr(a, ' ', n))
		return false;
	for (const char *w = set; (w = strchr(w, ' ')) && w[1]; w++)
		if (!strncmp(w + 1, a, n) && w[1 + n] == ' ')
			return true;
	return false;
}

static bool ex_valid_alias(const char *a, size_t n)
{
	if (n < 6 || memcmp(a, "Elixir", 6))
		return false;
	size_t i = 6;
	while (i < n) {
		if (a[i] != '.' || i + 1 >= n || !(a[i + 1] >= 'A' && a[i + 1] <= 'Z'))
			return false;
		for (i += 2; i < n && (bare_char((unsigned char)a[i]) && a[i] != '@'); i++)
			;
	}
	return true;
}

/*
 * A letter as Elixir's tokenizer takes it, for the scripts known here:
 * its script (1 Latin, 2 Greek, 3 Cyrillic), 0 for no letter known; and
 * whether it is upper case.
 */
static int ex_letter(long c, bool *upper)
{
	*upper = (c >= 'A' && c <= 'Z') || (c >= 0xC0 && c <= 0xDE) ||
		 (c >= 0x391 && c <= 0x3A9) || (c >= 0x410 && c <= 0x42F);
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= 0xC0 && c <= 0xFF && c != 0xD7 && c != 0xF7))
		return 1;
	if ((c >= 0x391 && c <= 0x3A9 && c != 0x3A2) || (c >= 0x3B1 && c <= 0x3C9))
		return 2;
	if (c >= 0x410 && c <= 0x44F)
		return 3;
	return 0;
}

static enum ex_class ex_classify(const char *a, size_t n)
{
	const unsigned char *u = (const unsigned char *)a;
	if (n == 0)
		return EX_QUOTED;
	/* the usual: [a-z_][a-zA-Z0-9_]*, which no operator but the words
	 * (and, in, ...) is, and those print the same */
	if ((u[0] >= 'a' && u[0] <= 'z') || u[0] == '_') {
		size_t i = 1;
		while (i < n && bare_char(u[i]) && u[i] != '@')
			i++;
		if (i == n)
			return EX_IDENT;
	}
	if (ex_word_in(ex_not_callable, a, n))
		return EX_UNQUOTED;
	if (ex_word_in(ex_quoted_ops, a, n))
		return EX_QUOTED;
	if (ex_word_in(ex_operators, a, n))
		return EX_OPERATOR;
	if (ex_valid_alias(a, n))
		return EX_ALIAS;
	size_t i = 0;
	bool upper, up;
	long c = utf8_next(u, n, &i);
	int script = ex_letter(c, &upper), sc;
	bool at = false;
	if (!script && c != '_')
		return EX_QUOTED;
	while (i < n) {
		c = utf8_next(u, n, &i);
		if ((c == '?' || c == '!') && i == n)
			break;
		if (c == '@') {
			at = true;
		} else if ((sc = ex_letter(c, &up))) {
			/* one script to an atom, or Elixir quotes it */
			if (script && sc != script)
				return EX_QUOTED;
			script = sc;
		} else if (!(c == '_' || (c >= '0' && c <= '9'))) {
			return EX_QUOTED;
		}
	}
	return upper || at ? EX_UNQUOTED : EX_IDENT;
}

/* The inside of an Elixir string, charlist or quoted atom: Code.Identifier
 * escape/2 with quote q. */
/* What Elixir 1.18 writes as \uXXXX for showing as nothing or a blank */
static bool ex_invisible(long c)
{
	return c == 0xA0 || c == 0x34F || c == 0x61C ||
	       (c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202E) ||
	       (c >= 0x205F && c <= 0x2064) || (c >= 0x2066 && c <= 0x2069) ||
	       (c >= 0xFFF9 && c <= 0xFFFC);
}

static void ex_escape(struct rctx *rc, const char *a, size_t n, char q)
{
	static const char named[32] = {
		[7] = 'a', [8] = 'b', [9] = 't', [10] = 'n', [11] = 'v',
		[12] = 'f', [13] = 'r', [27] = 'e',
	};
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *u = (const unsigned char *)a;
	size_t run = 0, i = 0;
	while (i < n && !rc->full) {
		size_t at = i;
		long c = utf8_next(u, n, &i);
		char e[12];
		size_t el = 0;
		if (c < 0) {
			e[0] = '\\', e[1] = 'x', e[2] = hex[u[at] >> 4];
			e[3] = hex[u[at] & 15], el = 4;
		} else if (c == q || c == '\\') {
			e[0] = '\\', e[1] = (char)c, el = 2;
		} else if (c == '#' && i < n && u[i] == '{') {
			e[0] = '\\', e[1] = '#', el = 2;   /* the { goes with the next run */
		} else if (c < 32 && named[c]) {
			e[0] = '\\', e[1] = named[c], el = 2;
		} else if (c == 127) {
			e[0] = '\\', e[1] = 'd', el = 2;
		} else if (c == 0) {
			e[0] = '\\', e[1] = '0', el = 2;
		} else if (c == 0xFEFF ||
			   ((rc->td & TD_EX_ESC_INVISIBLE) && ex_invisible(c))) {
			e[0] = '\\', e[1] = 'u', el = 2;
			for (int sh = 12; sh >= 0; sh -= 4)
				e[el++] = hex[c >> sh & 15];
		} else if ((c >= 0x20 && c <= 0x7E) || (c >= 0xA0 && c <= 0xD7FF) ||
			   (c >= 0xE000 && c <= 0xFFFD) || c >= 0x10000) {
			continue;
		} else {   /* below 0x20, 0x80 to 0x9F, 0xFFFE, 0xFFFF */
			e[el++] = '\\', e[el++] = 'x';
			if (c < 0x100) {
				e[el++] = hex[c >> 4], e[el++] = hex[c & 15];
			} else {
				e[el++] = '{';
				for (int sh = 12; sh >= 0; sh -= 4)
					e[el++] = hex[c >> sh & 15];
				e[el++] = '}';
			}
		}
		emit(rc, a + run, at - run);
		emit(rc, e, el);
		run = i;
	}
	emit(rc, a + run, n - run);
}

static bool ex_special(const char *a, size_t n)
{
	return (n == 3 && !memcmp(a, "nil", 3)) || (n == 4 && !memcmp(a, "true", 4)) ||
	       (n == 5 && !memcmp(a, "false", 5));
}

/* An atom as a value: :ok, nil, Shop.Cache, :"with space" */
static void ex_atom(struct rctx *rc, const char *a, size_t n)
{
	if (ex_special(a, n) || (rc->markers && n == 3 && !memcmp(a, "...", 3))) {
		emit(rc, a, n);
		return;
	}
	if (rc->markers && n == 4 && !memcmp(a, "#Fun", 4)) {
		emits(rc, "#Function<...>");
		return;
	}
	switch (ex_classify(a, n)) {
	case EX_ALIAS:
		if (n > 7 && memcmp(a, "Elixir.Elixir.", n < 14 ? n : 14))
			emit(rc, a + 7, n - 7);
		else
			emit(rc, a, n);
		return;
	case EX_QUOTED:
		emit(rc, ":\"", 2);
		ex_escape(rc, a, n, '"');
		emit(rc, "\"", 1);
		return;
	default:
		emit(rc, ":", 1);
		emit(rc, a, n);
		return;
	}
}

/* An atom as a keyword key, colon included: ok:, "Elixir.Foo":, "a b": */
static void ex_key(struct rctx *rc, const char *a, size_t n)
{
	enum ex_class c = ex_special(a, n) ? EX_IDENT : ex_classify(a, n);
	if (c == EX_ALIAS) {
		emit(rc, "\"", 1);
		emit(rc, a, n);
		emit(rc, "\":", 2);
	} else if (c == EX_QUOTED) {
		emit(rc, "\"", 1);
		ex_escape(rc, a, n, '"');
		emit(rc, "\":", 2);
	} else {
		emit(rc, a, n);
		emit(rc, ":", 1);
	}
}

/* A function's name after "Mod.": handle_call, "Foo", "with space" */
static void ex_remote(struct rctx *rc, const char *a, size_t n)
{
	enum ex_class c = ex_classify(a, n);
	bool raw = c == EX_ALIAS || c == EX_UNQUOTED;   /* not callable bare */
	if (n && !ex_word_in(ex_not_callable, a, n) &&
	    (c == EX_IDENT || c == EX_OPERATOR || ex_word_in(ex_quoted_ops, a, n))) {
		emit(rc, a, n);
	} else if (raw) {
		emit(rc, "\"", 1);
		emit(rc, a, n);
		emit(rc, "\"", 1);
	} else {
		emit(rc, "\"", 1);
		ex_escape(rc, a, n, '"');
		emit(rc, "\"", 1);
	}
}

/* Read the atom at *idx (UTF-8, NULs kept) into a[]; its length or -1 */
static long read_atom(struct rctx *rc, char *a, size_t cap)
{
	const unsigned char *p = (const unsigned char *)rc->buf + *rc->idx;
	size_t len = 0, hdr = 0, k = 0;
	int enc = etf_atom_head(p, &len, &hdr);
	if (!enc) {
		/* let ei say what it is: it may still be an atom it knows */
		char tmp[MAXATOMLEN_UTF8];
		if (ei_decode_atom_as(rc->buf, rc->idx, tmp, sizeof(tmp),
				      ERLANG_UTF8, NULL, NULL) < 0)
			return -1;
		k = strlen(tmp);
		if (k >= cap)
			return -1;
		memcpy(a, tmp, k);
		return (long)k;
	}
	for (size_t i = 0; i < len && k + 2 <= cap; i++) {
		unsigned char c = p[hdr + i];
		if (enc == 2 || c < 0x80) {
			a[k++] = (char)c;
		} else {   /* Latin-1 to UTF-8 */
			a[k++] = (char)(0xC0 | c >> 6);
			a[k++] = (char)(0x80 | (c & 0x3F));
		}
	}
	*rc->idx += (int)(hdr + len);
	return (long)k;
}

static bool is_atom_at(const char *buf, int idx)
{
	size_t len, hdr;
	return etf_atom_head((const unsigned char *)buf + idx, &len, &hdr) != 0;
}

/* The atom at idx starts with "Elixir." */
static bool atom_is_aliasish(const char *buf, int idx)
{
	size_t len, hdr;
	const unsigned char *p = (const unsigned char *)buf + idx;
	return etf_atom_head(p, &len, &hdr) && len >= 7 &&
	       !memcmp(p + hdr, "Elixir.", 7);
}

/* Is the list at idx (LIST_EXT) a keyword list?  Reads only. */
static bool ex_keyword_list(const char *buf, int idx)
{
	int arity, type, size;
	if (ei_decode_list_header(buf, &idx, &arity) < 0)
		return false;
	for (int i = 0; i < arity; i++) {
		const unsigned char *p = (const unsigned char *)buf + idx;
		if (p[0] != ERL_SMALL_TUPLE_EXT || p[1] != 2 ||
		    !is_atom_at(buf, idx + 2) || atom_is_aliasish(buf, idx + 2))
			return false;
		if (ei_skip_term(buf, &idx) < 0)
			return false;
	}
	return ei_get_type(buf, &idx, &type, &size) == 0 && type == ERL_NIL_EXT;
}

static inline bool ex_ascii_printable(long c)
{
	return (c >= 7 && c <= 13) || c == 27 || (c >= 32 && c <= 126);
}

/* Is the list at idx (LIST_EXT) a proper list of printable ASCII codes? */
static bool ex_charlist(const char *buf, int idx)
{
	int arity, type, size;
	if (ei_decode_list_header(buf, &idx, &arity) < 0)
		return false;
	for (int i = 0; i < arity; i++) {
		long v;
		if (ei_decode_long(buf, &idx, &v) < 0 || !ex_ascii_printable(v))
			return false;
	}
	return ei_get_type(buf, &idx, &type, &size) == 0 && type == ERL_NIL_EXT;
}

static bool ex_printable_binary(const unsigned char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		long c = utf8_next(s, n, &i);
		if (!((c >= 0x20 && c <= 0x7E) || (c >= 7 && c <= 13) || c == 27 ||
		      c == 127 || (c >= 0xA0 && c <= 0xD7FF) ||
		      (c >= 0xE000 && c <= 0xFFFD) || c >= 0x10000))
			return false;
	}
	return true;
}

static void ex_double(struct rctx *rc, double d)
{
	double a = d < 0 ? -d : d;
	if (a >= 1.0 && a < 1.0e16 && d == (double)(long long)d) {
		emitf(rc, "%lld.0", (long long)d);
		return;
	}
	emit_double(rc, d);
}

static int render_ex(struct rctx *rc, int depth);

/* A list of printable characters: 'abc', or ~c"abc" (Elixir 1.15) */
static void ex_chars(struct rctx *rc, const char *s, size_t n)
{
	bool sigil = rc->td & TD_EX_SIGIL_C;
	emits(rc, sigil ? "~c\"" : "'");
	ex_escape(rc, s, n, sigil ? '"' : '\'');
	emit(rc, sigil ? "\"" : "'", 1);
}

/* Elements of a list or tuple, separated by ", " */
static int ex_items(struct rctx *rc, int depth, int arity)
{
	for (int i = 0; i < arity; i++) {
		if (i)
			emit(rc, ", ", 2);
		if (render(rc, depth + 1) < 0)
			return -1;
	}
	return 0;
}

static int ex_list(struct rctx *rc, int depth)
{
	int arity;
	if (ex_charlist(rc->buf, *rc->idx)) {
		struct sbuf tmp = SBUF_INIT;
		long v;
		if (ei_decode_list_header(rc->buf, rc->idx, &arity) < 0)
			return -1;
		for (int i = 0; i < arity; i++) {
			if (ei_decode_long(rc->buf, rc->idx, &v) < 0) {
				sbuf_release(&tmp);
				return -1;
			}
			sbuf_addch(&tmp, (char)v);
		}
		(*rc->idx)++;   /* the nil */
		ex_chars(rc, tmp.buf, tmp.len);
		sbuf_release(&tmp);
		return 0;
	}
	bool kw = ex_keyword_list(rc->buf, *rc->idx);
	if (ei_decode_list_header(rc->buf, rc->idx, &arity) < 0)
		return -1;
	emit(rc, "[", 1);
	if (kw) {
		for (int i = 0; i < arity; i++) {
			char a[2 * ETF_ATOM_MAX];
			if (i)
				emit(rc, ", ", 2);
			*rc->idx += 2;
			long n = read_atom(rc, a, sizeof(a));
			if (n < 0)
				return -1;
			ex_key(rc, a, (size_t)n);
			emit(rc, " ", 1);
			if (render(rc, depth + 1) < 0)
				return -1;
		}
	} else if (ex_items(rc, depth, arity) < 0) {
		return -1;
	}
	if (list_tail(rc, depth, arity, " | ") < 0)
		return -1;
	emit(rc, "]", 1);
	return 0;
}

/*
 * The pairs of the map (indexes into off, arity pairs, every key an atom)
 * to print for a struct of def: its fields in the order def gives them,
 * into order; their number, or -1 when the keys are not exactly the
 * fields and __struct__, as Elixir's inspect asks of a struct before it
 * prints one as such.  A map the tracer cut (its '...' => '...' pair)
 * holds some of the fields: those, then the mark.
 */
static int struct_pairs(struct rctx *rc, const struct struct_def *def,
			const int *off, int arity, int *order)
{
	char a[2 * ETF_ATOM_MAX];
	int *pos = order;   /* pos[j]: the pair of field j, built in place */
	int mark = -1;
	for (int j = 0; j < def->nfields; j++)
		pos[j] = -1;
	for (int i = 0; i < arity; i++) {
		*rc->idx = off[i];
		long n = read_atom(rc, a, sizeof(a));
		if (n < 0)
			return -1;
		if (n == 10 && !memcmp(a, "__struct__", 10))
			continue;
		if (rc->markers && n == 3 && !memcmp(a, "...", 3)) {
			mark = i;
			continue;
		}
		int j = 0;
		while (j < def->nfields && !(def->lens[j] == (size_t)n &&
					    !memcmp(def->fields[j], a, (size_t)n)))
			j++;
		if (j == def->nfields || pos[j] >= 0)
			return -1;
		pos[j] = i;
	}
	int k = 0;
	for (int j = 0; j < def->nfields; j++) {
		if (pos[j] >= 0)
			order[k++] = pos[j];
		else if (mark < 0)
			return -1;
	}
	if (mark >= 0)
		order[k++] = mark;
	return k;
}

/*
 * What the target said of the module at buf[at] (an atom): NULL when it
 * did not say, then the module is noted to be asked about.
 */
static const struct struct_def *struct_known(struct rctx *rc, int at)
{
	char a[2 * ETF_ATOM_MAX];
	if (!(rc->td & TD_EX_STRUCTS) || !rc->structs)
		return NULL;
	int save = *rc->idx;
	*rc->idx = at;
	long n = read_atom(rc, a, sizeof(a));
	*rc->idx = save;
	if (n < 0)
		return NULL;
	const struct struct_def *def = structs_get(rc->structs, a, (size_t)n);
	if (!def)
		structs_met(rc->structs, a, (size_t)n);
	return def && def->kind != STRUCT_UNKNOWN ? def : NULL;
}

/* A map: %{a: 1}, %{1 => 2}, or a struct %Shop.Order{id: 1} */
static int ex_map(struct rctx *rc, int depth)
{
	int arity, flat[MAP_FLAT_MAX], *owned, end, *off;
	if (ei_decode_map_header(rc->buf, rc->idx, &arity) < 0 ||
	    !(off = map_order(rc, arity, flat, &owned, &end)))
		return -1;
	/* look first: keys all plain atoms?  a __struct__ naming a module? */
	bool kw = true;
	int strukt = -1;   /* where the module's atom is */
	for (int i = 0; i < arity; i++) {
		const unsigned char *p = (const unsigned char *)rc->buf + off[i];
		size_t len, hdr;
		if (!etf_atom_head(p, &len, &hdr) || atom_is_aliasish(rc->buf, off[i])) {
			kw = false;
		} else if (len == 10 && !memcmp(p + hdr, "__struct__", 10)) {
			int at = off[i] + (int)(hdr + len);
			if (is_atom_at(rc->buf, at))
				strukt = at;
		}
	}
	int rv = 0;
	char a[2 * ETF_ATOM_MAX];
	/* a struct's fields in the order its module defines them, where the
	 * target said it (else in the order the map holds them) */
	const struct struct_def *def = NULL;
	int *pos = NULL, npos = -1;
	if (strukt >= 0 && kw && (def = struct_known(rc, strukt))) {
		if (def->kind == STRUCT_FIELDS) {
			pos = malloc(((size_t)def->nfields + 1) * sizeof(int));
			if (!pos) {
				rv = -1;
				goto out;
			}
			npos = struct_pairs(rc, def, off, arity, pos);
		}
		if (npos < 0) {
			strukt = -1;   /* a map that only looks like one */
			free(pos);
			pos = NULL;
		}
	}
	if (strukt >= 0 && kw) {
		*rc->idx = strukt;
		long n = read_atom(rc, a, sizeof(a));
		if (n < 0) {
			rv = -1;
			goto out;
		}
		emit(rc, "%", 1);
		ex_atom(rc, a, (size_t)n);
		emit(rc, "{", 1);
	} else {
		strukt = -1;
		emit(rc, "%{", 2);
	}
	bool first = true;
	int npairs = pos ? npos : arity;
	for (int k = 0; k < npairs && !rc->full; k++) {
		int i = pos ? pos[k] : k;
		*rc->idx = off[i];
		if (kw) {
			long n = read_atom(rc, a, sizeof(a));
			if (n < 0) {
				rv = -1;
				goto out;
			}
			if (strukt >= 0 && ((n == 10 && !memcmp(a, "__struct__", 10)) ||
					    (n == 13 && !memcmp(a, "__exception__", 13))))
				continue;
			if (!first)
				emit(rc, ", ", 2);
			ex_key(rc, a, (size_t)n);
			emit(rc, " ", 1);
		} else {
			if (!first)
				emit(rc, ", ", 2);
			if ((rv = render(rc, depth + 1)) < 0)
				goto out;
			emit(rc, " => ", 4);
		}
		first = false;
		if ((rv = render(rc, depth + 1)) < 0)
			goto out;
	}
	emit(rc, "}", 1);
out:
	free(pos);
	free(owned);
	*rc->idx = end;
	return rv;
}

static int ex_binary(struct rctx *rc, int size)
{
	const unsigned char *s = (const unsigned char *)rc->buf + *rc->idx + 5;
	*rc->idx += 5 + size;
	size_t look = (size_t)size;
	if (rc->limit && look > rc->limit)
		look = rc->limit;
	if (ex_printable_binary(s, look)) {
		emit(rc, "\"", 1);
		ex_escape(rc, (const char *)s, (size_t)size, '"');
		emit(rc, "\"", 1);
	} else {
		emit(rc, "<<", 2);
		emit_bytes(rc, s, (size_t)size, ", ");
		emit(rc, ">>", 2);
	}
	return 0;
}

static int ex_fun(struct rctx *rc)
{
	erlang_fun f;
	if (ei_decode_fun(rc->buf, rc->idx, &f) < 0)
		return -1;
	if (f.type == EI_FUN_EXPORT) {
		emit(rc, "&", 1);
		ex_atom(rc, f.module, strlen(f.module));
		emit(rc, ".", 1);
		ex_remote(rc, f.u.exprt.func, strlen(f.u.exprt.func));
		emitf(rc, "/%ld", f.arity);
	} else {
		emitf(rc, "#Function<%ld.%ld/%ld in ", f.u.closure.index,
		      f.u.closure.uniq, f.arity);
		ex_atom(rc, f.module, strlen(f.module));
		emit(rc, ">", 1);
	}
	free_fun(&f);
	return 0;
}

/* Any term, in Elixir syntax. */
static int render_ex(struct rctx *rc, int depth)
{
	const unsigned char *p = (const unsigned char *)rc->buf + *rc->idx;
	int type, size;

	if (!rc->reference) {   /* the common types, read in place */
		int64_t v;
		const char *a;
		size_t n;
		struct etf_pid pid;
		switch (p[0]) {
		case 'a': case 'b':
			if (etf_int64(rc->buf, rc->idx, &v)) {
				emit_long(rc, (long)v);
				return 0;
			}
			break;
		case 'w': case 'v': case 's': case 'd':
			if (etf_atom(rc->buf, rc->idx, &a, &n)) {
				ex_atom(rc, a, n);
				return 0;
			}
			break;
		case 'X': case 'g':
			if (rc->local && etf_pid_local(rc->buf, rc->idx, rc->local,
						       rc->local_len, &pid.num,
						       &pid.serial)) {
				char text[PID_TEXT_MAX + 5];
				text[0] = '#', text[1] = 'P', text[2] = 'I',
					text[3] = 'D';
				emit(rc, text, 4 + pid_text_n(text + 4, true, NULL, 0,
							      pid.num, pid.serial));
				return 0;
			}
			break;
		case 'h':
			*rc->idx += 2;
			emit(rc, "{", 1);
			if (ex_items(rc, depth, p[1]) < 0)
				return -1;
			emit(rc, "}", 1);
			return 0;
		}
	}
	if (ei_get_type(rc->buf, rc->idx, &type, &size) < 0)
		return -1;
	switch (type) {
	case ERL_FLOAT_EXT:
	case NEW_FLOAT_EXT: {
		double d;
		if (ei_decode_double(rc->buf, rc->idx, &d) < 0)
			return -1;
		ex_double(rc, d);
		return 0;
	}
	case ERL_ATOM_EXT:
	case ERL_SMALL_ATOM_EXT:
	case ERL_ATOM_UTF8_EXT:
	case ERL_SMALL_ATOM_UTF8_EXT: {
		char a[2 * ETF_ATOM_MAX];
		long n = read_atom(rc, a, sizeof(a));
		if (n < 0)
			return -1;
		ex_atom(rc, a, (size_t)n);
		return 0;
	}
	case ERL_SMALL_TUPLE_EXT:
	case ERL_LARGE_TUPLE_EXT: {
		int arity;
		if (ei_decode_tuple_header(rc->buf, rc->idx, &arity) < 0)
			return -1;
		emit(rc, "{", 1);
		if (ex_items(rc, depth, arity) < 0)
			return -1;
		emit(rc, "}", 1);
		return 0;
	}
	case ERL_MAP_EXT:
		return ex_map(rc, depth);
	case ERL_NIL_EXT:
		(*rc->idx)++;
		emit(rc, "[]", 2);
		return 0;
	case ERL_LIST_EXT:
		return ex_list(rc, depth);
	case ERL_STRING_EXT: {
		const char *s = rc->buf + *rc->idx + 3;
		bool ok = true;
		if (rc->buf[*rc->idx] != ERL_STRING_EXT)
			return -1;
		for (int i = 0; i < size && ok; i++)
			ok = ex_ascii_printable((unsigned char)s[i]);
		*rc->idx += 3 + size;
		if (ok) {
			ex_chars(rc, s, (size_t)size);
		} else {
			emit(rc, "[", 1);
			emit_bytes(rc, (const unsigned char *)s, (size_t)size, ", ");
			emit(rc, "]", 1);
		}
		return 0;
	}
	case ERL_BINARY_EXT:
		if (rc->buf[*rc->idx] != ERL_BINARY_EXT)
			return -1;
		return ex_binary(rc, size);
	case ERL_BIT_BINARY_EXT:
		return render_bits(rc);
	case ERL_PID_EXT:
	case ERL_NEW_PID_EXT: {
		erlang_pid pid;
		char text[MAXATOMLEN_UTF8 + 64];
		if (ei_decode_pid(rc->buf, rc->idx, &pid) < 0)
			return -1;
		emit(rc, "#PID", 4);
		emit(rc, text, pid_text(text, rc->local, pid.node, pid.num, pid.serial));
		return 0;
	}
	case ERL_NEW_FUN_EXT:
	case ERL_FUN_EXT:
	case ERL_EXPORT_EXT:
		return ex_fun(rc);
	case ERL_REFERENCE_EXT:
	case ERL_NEW_REFERENCE_EXT:
	case ERL_NEWER_REFERENCE_EXT: {
		erlang_ref r;
		if (ei_decode_ref(rc->buf, rc->idx, &r) < 0)
			return -1;
		emits(rc, "#Reference<0");
		for (int i = r.len - 1; i >= 0; i--)
			emitf(rc, ".%u", r.n[i]);
		emit(rc, ">", 1);
		return 0;
	}
	default:
		/* integers, bignums and ports print as in Erlang */
		return render_ei(rc, depth);
	}
}

static int render_top(enum term_syntax syn, const struct term_dialect *dia,
		      const char *buf, int *index, const char *local_node,
		      struct sbuf *out, size_t max, bool *cut, bool reference)
{
	struct rctx rc = {
		.syn = syn,
		.td = dia ? dia->flags : 0,
		.structs = dia ? dia->structs : NULL,
		.buf = buf, .idx = index, .out = out,
		.limit = max ? out->len + max : 0,
		.reference = reference,
		.markers = true,
		.local = local_node,
		.local_len = local_node ? strlen(local_node) : 0,
	};
	if (out->buf == NULL)
		sbuf_grow(out, 0);
	int rv = render(&rc, 0);
	if (cut)
		*cut = rc.cut;
	return rv;
}

int term_render_args(enum term_syntax syn, const char *buf, int *index,
		     const char *local_node, struct sbuf *out, size_t max,
		     bool *cut, bool reference)
{
	return term_render_args_dia(syn, NULL, buf, index, local_node, out, max,
				    cut, reference);
}

int term_render_args_dia(enum term_syntax syn, const struct term_dialect *dia,
			 const char *buf, int *index, const char *local_node,
			 struct sbuf *out, size_t max, bool *cut,
			 bool reference)
{
	int type, size;
	if (ei_get_type(buf, index, &type, &size) < 0)
		return -1;
	if (type != ERL_STRING_EXT || buf[*index] != ERL_STRING_EXT)
		return render_top(syn, dia, buf, index, local_node, out, max,
				  cut, reference);
	/* arguments that are all bytes: a list of integers, not a string */
	struct rctx rc = {
		.syn = syn,
		.buf = buf, .idx = index, .out = out,
		.limit = max ? out->len + max : 0,
	};
	if (out->buf == NULL)
		sbuf_grow(out, 0);
	emit(&rc, "[", 1);
	emit_bytes(&rc, (const unsigned char *)buf + *index + 3, (size_t)size,
		   syn == TERM_ELIXIR ? ", " : ",");
	emit(&rc, "]", 1);
	*index += 3 + size;
	if (cut)
		*cut = rc.cut;
	return 0;
}

void term_call_text(struct sbuf *out, const char *mfa, const char *args,
		    bool cut)
{
	const char *slash = mfa ? strrchr(mfa, '/') : NULL;
	size_t n = args ? strlen(args) : 0;
	if (!slash || n < 1 || args[0] != '[' || (!cut && args[n - 1] != ']')) {
		sbuf_addstr(out, mfa ? mfa : "");
		return;
	}
	sbuf_add(out, mfa, (size_t)(slash - mfa));
	sbuf_addch(out, '(');
	sbuf_add(out, args + 1, n - (cut ? 1 : 2));
	sbuf_addstr(out, cut ? " ...)" : ")");
}

int term_render(const char *buf, int *index, const char *local_node,
		struct sbuf *out, size_t max, bool *cut)
{
	return render_top(TERM_ERLANG, NULL, buf, index, local_node, out, max,
			  cut, false);
}

int term_render_in(enum term_syntax syn, const char *buf, int *index,
		   const char *local_node, struct sbuf *out, size_t max,
		   bool *cut)
{
	return render_top(syn, NULL, buf, index, local_node, out, max, cut,
			  false);
}

int term_render_dia(enum term_syntax syn, const struct term_dialect *dia,
		    const char *buf, int *index, const char *local_node,
		    struct sbuf *out, size_t max, bool *cut, bool reference)
{
	return render_top(syn, dia, buf, index, local_node, out, max, cut,
			  reference);
}

int term_render_reference(const char *buf, int *index, const char *local_node,
			  struct sbuf *out, size_t max, bool *cut)
{
	return render_top(TERM_ERLANG, NULL, buf, index, local_node, out, max,
			  cut, true);
}

int term_render_reference_in(enum term_syntax syn, const char *buf, int *index,
			     const char *local_node, struct sbuf *out,
			     size_t max, bool *cut)
{
	return render_top(syn, NULL, buf, index, local_node, out, max, cut,
			  true);
}

const char *term_syntax_name(enum term_syntax syn)
{
	return syn == TERM_ELIXIR ? "elixir" : "erlang";
}

void term_atom_text(struct sbuf *out, enum term_syntax syn, const char *name)
{
	struct rctx rc = { .syn = syn, .out = out };
	if (out->buf == NULL)
		sbuf_grow(out, 0);
	if (syn == TERM_ELIXIR)
		ex_atom(&rc, name, strlen(name));
	else
		emit_atom(&rc, name, strlen(name));
}

void term_mfa_text(struct sbuf *out, enum term_syntax syn, const char *mod,
		   const char *fun, long arity)
{
	struct rctx rc = { .syn = syn, .out = out };
	if (out->buf == NULL)
		sbuf_grow(out, 0);
	if (syn == TERM_ELIXIR) {
		ex_atom(&rc, mod, strlen(mod));
		emit(&rc, ".", 1);
		ex_remote(&rc, fun, strlen(fun));
	} else {
		emit_atom(&rc, mod, strlen(mod));
		emit(&rc, ":", 1);
		emit_atom(&rc, fun, strlen(fun));
	}
	if (arity >= 0)
		emitf(&rc, "/%ld", arity);
}
