/*
 * term: ei-encoded term -> Erlang text.  See term.h for the contract.
 * Every emit goes through emit(), which enforces the byte limit; once the
 * limit is hit the rest of the term is only skipped, never rendered.
 *
 * The types that make up nearly every message (small integers, atoms,
 * pids, tuples, lists, strings, binaries) are read in place by
 * render_fast(); everything else, and everything in reference mode, goes
 * through ei's decoders.  Both give the same text, byte for byte.
 */
#include "term.h"

#include <ei.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etf.h"

#define TERM_MAX_DEPTH 64

struct rctx {
	const char *buf;
	int *idx;
	struct sbuf *out;
	size_t limit;      /* absolute length of out we may reach; 0 = none */
	bool full;         /* limit reached: skip, do not render */
	bool cut;
	bool reference;    /* ei's decoders only */
	const char *local;
	size_t local_len;
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

/* Does name[0..len) print unquoted?  False if it holds a NUL. */
static bool atom_is_bare(const char *name, size_t len)
{
	if (!len || !(*name >= 'a' && *name <= 'z'))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!bare_char((unsigned char)name[i]))
			return false;
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
	if (local) {
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



/* The atom a[0..n), quoted when it must be; a NUL in it shows as
 * \x{0}.  Runs of plain bytes go out whole, so that a cut never splits a
 * UTF-8 character. */
static void emit_atom(struct rctx *rc, const char *a, size_t n)
{
	/* markers the tracer NIF puts where it cut a term */
	if (atom_is_bare(a, n) || (n == 3 && !memcmp(a, "...", 3)) ||
	    (n == 4 && !memcmp(a, "#Fun", 4))) {
		emit(rc, a, n);
		return;
	}
	emit(rc, "'", 1);
	const char *run = a;
	for (const char *p = a; p < a + n; p++) {
		unsigned char c = (unsigned char)*p;
		if (c != '\'' && c != '\\' && c >= 0x20 && c != 0x7f)
			continue;
		emit(rc, run, (size_t)(p - run));
		if (c == '\'' || c == '\\') {
			char e[2] = { '\\', (char)c };
			emit(rc, e, 2);
		} else {
			emitf(rc, "\\x{%X}", c);
		}
		run = p + 1;
	}
	emit(rc, run, (size_t)(a + n - run));
	emit(rc, "'", 1);
}

static bool printable(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = s[i];
		if (!((c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' ||
		      c == '\r'))
			return false;
	}
	return true;
}

/* Emit bytes as the inside of an Erlang string literal (no quotes). */
static void emit_chars(struct rctx *rc, const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n && !rc->full; i++) {
		switch (s[i]) {
		case '"':  emit(rc, "\\\"", 2); break;
		case '\\': emit(rc, "\\\\", 2); break;
		case '\n': emit(rc, "\\n", 2); break;
		case '\t': emit(rc, "\\t", 2); break;
		case '\r': emit(rc, "\\r", 2); break;
		default:   emit(rc, (const char *)s + i, 1); break;
		}
	}
}

static void emit_bytes(struct rctx *rc, const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n && !rc->full; i++)
		emitf(rc, i ? ",%u" : "%u", s[i]);
}

static void emit_double(struct rctx *rc, double d)
{
	char tmp[40];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
		if (strtod(tmp, NULL) == d)
			break;
	}
	if (!strpbrk(tmp, ".eEn"))
		memcpy(tmp + strlen(tmp), ".0", 3);   /* at most 24 + 3 of 40 */
	else if (!strchr(tmp, '.') && strpbrk(tmp, "eE")) {
		/* Erlang wants 1.0e10, not 1e10 */
		char *e = strpbrk(tmp, "eE");
		char rest[40];
		snprintf(rest, sizeof(rest), "%s", e);
		snprintf(e, sizeof(tmp) - (size_t)(e - tmp), ".0%s", rest);
	}
	emits(rc, tmp);
}

static int render(struct rctx *rc, int depth);
static int render_ei(struct rctx *rc, int depth);

static int skip(struct rctx *rc)
{
	return ei_skip_term(rc->buf, rc->idx) < 0 ? -1 : 0;
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
	if (arity > 0) {
		int type, size;
		if (ei_get_type(rc->buf, rc->idx, &type, &size) < 0)
			return -1;
		if (type == ERL_NIL_EXT) {
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
		emit_bytes(rc, s, (size_t)size);
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
	emit(rc, "<<", 2);
	if (size > 0 && printable(s, look)) {
		emit(rc, "\"", 1);
		emit_chars(rc, s, (size_t)size);
		emit(rc, "\"", 1);
	} else {
		emit_bytes(rc, s, (size_t)size);
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
		emits(rc, "#Bignum");
		return skip(rc);
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
		if (ei_decode_map_header(rc->buf, rc->idx, &arity) < 0)
			return -1;
		emit(rc, "#{", 2);
		for (int i = 0; i < arity; i++) {
			if (i)
				emit(rc, ",", 1);
			if (render(rc, depth + 1) < 0)
				return -1;
			emit(rc, " => ", 4);
			if (render(rc, depth + 1) < 0)
				return -1;
		}
		emit(rc, "}", 1);
		return 0;
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
		emits(rc, "<<...>>");
		return skip(rc);
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

static int render_top(const char *buf, int *index, const char *local_node,
		      struct sbuf *out, size_t max, bool *cut, bool reference)
{
	struct rctx rc = {
		.buf = buf, .idx = index, .out = out,
		.limit = max ? out->len + max : 0,
		.reference = reference,
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

int term_render_args(const char *buf, int *index, const char *local_node,
		     struct sbuf *out, size_t max, bool *cut, bool reference)
{
	int type, size;
	if (ei_get_type(buf, index, &type, &size) < 0)
		return -1;
	if (type != ERL_STRING_EXT || buf[*index] != ERL_STRING_EXT)
		return render_top(buf, index, local_node, out, max, cut,
				  reference);
	/* arguments that are all bytes: a list of integers, not a string */
	struct rctx rc = {
		.buf = buf, .idx = index, .out = out,
		.limit = max ? out->len + max : 0,
	};
	if (out->buf == NULL)
		sbuf_grow(out, 0);
	emit(&rc, "[", 1);
	emit_bytes(&rc, (const unsigned char *)buf + *index + 3, (size_t)size);
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
	return render_top(buf, index, local_node, out, max, cut, false);
}

int term_render_reference(const char *buf, int *index, const char *local_node,
			  struct sbuf *out, size_t max, bool *cut)
{
	return render_top(buf, index, local_node, out, max, cut, true);
}
