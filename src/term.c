/*
 * term: ei-encoded term -> Erlang text.  See term.h for the contract.
 * Every emit goes through emit(), which enforces the byte limit; once the
 * limit is hit the rest of the term is only skipped, never rendered.
 */
#include "term.h"

#include <ei.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TERM_MAX_DEPTH 64

struct rctx {
	const char *buf;
	int *idx;
	struct sbuf *out;
	size_t limit;      /* absolute length of out we may reach; 0 = none */
	bool full;         /* limit reached: skip, do not render */
	bool cut;
	const char *local;
};

static void emit(struct rctx *rc, const char *s, size_t n)
{
	if (rc->full)
		return;
	if (rc->limit && rc->out->len + n > rc->limit) {
		size_t room = rc->limit - rc->out->len;
		/* do not split a UTF-8 sequence */
		while (room > 0 && ((unsigned char)s[room] & 0xC0) == 0x80)
			room--;
		sbuf_add(rc->out, s, room);
		rc->full = rc->cut = true;
		return;
	}
	sbuf_add(rc->out, s, n);
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

static const char *const reserved[] = {
	"after", "and", "andalso", "band", "begin", "bnot", "bor", "bsl",
	"bsr", "bxor", "case", "catch", "cond", "div", "end", "fun", "if",
	"let", "maybe", "not", "of", "or", "orelse", "receive", "rem", "try",
	"when", "xor", NULL
};

bool term_atom_is_bare(const char *name)
{
	if (!(*name >= 'a' && *name <= 'z'))
		return false;
	for (const char *p = name; *p; p++) {
		char c = *p;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '@'))
			return false;
	}
	/* reserved words are 2 to 7 letters and start with one of these */
	size_t len = strlen(name);
	if (len < 2 || len > 7 || !strchr("abcdefilmnortwx", name[0]))
		return true;
	for (int i = 0; reserved[i]; i++)
		if (!strcmp(name, reserved[i]))
			return false;
	return true;
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

/* "<0.N.S>" or "<node.N.S>" into buf (at least 64 + strlen(node)); length */
static size_t pid_text(char *buf, const char *local_node, const char *node,
		       unsigned num, unsigned serial)
{
	char n1[24], n2[24], *p = buf;
	const char *a = utoa_end(n1 + 23, num), *b = utoa_end(n2 + 23, serial);
	*p++ = '<';
	if (local_node && !strcmp(node, local_node)) {
		*p++ = '0';
	} else {
		size_t l = strlen(node);
		memcpy(p, node, l);
		p += l;
	}
	*p++ = '.';
	p = stpcpy(p, a);
	*p++ = '.';
	p = stpcpy(p, b);
	*p++ = '>';
	*p = '\0';
	return (size_t)(p - buf);
}

void term_pid_text(struct sbuf *out, const char *local_node, const char *node,
		   unsigned num, unsigned serial)
{
	size_t l = strlen(node);
	sbuf_grow(out, l + 64);
	out->len += pid_text(out->buf + out->len, local_node, node, num, serial);
}

static void emit_atom(struct rctx *rc, const char *a)
{
	/* markers the tracer NIF puts where it cut a term */
	if (!strcmp(a, "...") || !strcmp(a, "#Fun")) {
		emits(rc, a);
		return;
	}
	if (term_atom_is_bare(a)) {
		emits(rc, a);
		return;
	}
	emit(rc, "'", 1);
	for (const char *p = a; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c == '\'' || c == '\\') {
			char e[2] = { '\\', (char)c };
			emit(rc, e, 2);
		} else if (c < 0x20 || c == 0x7f) {
			emitf(rc, "\\x{%X}", c);
		} else {
			emit(rc, p, 1);
		}
	}
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
		strcat(tmp, ".0");
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
		emit_atom(rc, f.module);
		emit(rc, ":", 1);
		emit_atom(rc, f.u.exprt.func);
		emitf(rc, "/%ld", f.arity);
	} else {
		emits(rc, "#Fun<");
		emit_atom(rc, f.module);
		emitf(rc, ".%ld.%ld>", f.u.closure.index, f.u.closure.uniq);
	}
	free_fun(&f);
	return 0;
}

static int render(struct rctx *rc, int depth)
{
	int type, size;

	if (rc->full || depth > TERM_MAX_DEPTH) {
		if (!rc->full)
			emit(rc, "...", 3);
		rc->cut = true;
		return skip(rc);
	}
	if (ei_get_type(rc->buf, rc->idx, &type, &size) < 0)
		return -1;

	switch (type) {
	case ERL_SMALL_INTEGER_EXT:
	case ERL_INTEGER_EXT: {
		long v;
		char num[24], *s;
		if (ei_decode_long(rc->buf, rc->idx, &v) < 0)
			return -1;
		s = utoa_end(num + 23, v < 0 ? -(unsigned long long)v : (unsigned long long)v);
		if (v < 0)
			*--s = '-';
		emit(rc, s, (size_t)(num + 23 - s));
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
		if (ei_decode_atom_as(rc->buf, rc->idx, a, sizeof(a),
				      ERLANG_UTF8, NULL, NULL) < 0)
			return -1;
		emit_atom(rc, a);
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

int term_render(const char *buf, int *index, const char *local_node,
		struct sbuf *out, size_t max, bool *cut)
{
	struct rctx rc = {
		.buf = buf, .idx = index, .out = out,
		.limit = max ? out->len + max : 0,
		.local = local_node,
	};
	if (out->buf == NULL)
		sbuf_grow(out, 0);
	int rv = render(&rc, 0);
	if (cut)
		*cut = rc.cut;
	return rv;
}
