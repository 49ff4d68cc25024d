/*
 * term_erl: the Erlang syntax of the term walker (term.c), as
 * io_lib:format("~0tp", [T]) prints a term: atoms quoted where the
 * scanner would not read them bare, strings and binaries as the printer
 * judges them printable, floats in the shortest form that reads back,
 * maps as #{K => V}, funs as fun m:f/N and #Fun<m.I.U>.
 */
#include <ei.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "term_priv.h"

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

static bool latin1_lower(long c)
{
	return c >= 0xDF && c <= 0xFF && c != 0xF7;
}

static bool latin1_letter(long c)
{
	return c >= 0xC0 && c <= 0xFF && c != 0xD7 && c != 0xF7;
}

/* Does name[0..len) print unquoted?  False if it holds a NUL. */
bool atom_is_bare(const char *name, size_t len)
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
void erl_atom(struct rctx *rc, const char *a, size_t n)
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

/*
 * A float as io_lib_format:fwrite_g/1 of OTP 25 prints it: the shortest
 * digits that read back as the same double, laid out fixed or scientific
 * by the rules of erts' float_to_list(F, [short]).
 */
void emit_double(struct rctx *rc, double d)
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

int erl_string(struct rctx *rc, int size)
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

int erl_binary(struct rctx *rc, int size)
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

int erl_fun(struct rctx *rc)
{
	erlang_fun f;
	if (ei_decode_fun(rc->buf, rc->idx, &f) < 0)
		return -1;
	if (f.type == EI_FUN_EXPORT) {
		emits(rc, "fun ");
		erl_atom(rc, f.module, strlen(f.module));
		emit(rc, ":", 1);
		erl_atom(rc, f.u.exprt.func, strlen(f.u.exprt.func));
		emitf(rc, "/%ld", f.arity);
	} else {
		emits(rc, "#Fun<");
		erl_atom(rc, f.module, strlen(f.module));
		emitf(rc, ".%ld.%ld>", f.u.closure.index, f.u.closure.uniq);
	}
	free_fun(&f);
	return 0;
}

/* #{K => V, ...} in the order the target's printer walks the pairs */
int erl_map(struct rctx *rc, int depth)
{
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
		if ((rv = term_walk(rc, depth + 1)) < 0)
			break;
		emit(rc, " => ", 4);
		rv = term_walk(rc, depth + 1);
	}
	free(owned);
	*rc->idx = end;
	emit(rc, "}", 1);
	return rv;
}

void erl_mfa(struct rctx *rc, const char *mod, const char *fun)
{
	erl_atom(rc, mod, strlen(mod));
	emit(rc, ":", 1);
	erl_atom(rc, fun, strlen(fun));
}
