/*
 * term: ei-encoded term -> Erlang or Elixir text.  See term.h for the
 * contract.  Every emit goes through emit(), which enforces the byte
 * limit; once the limit is hit the rest of the term is only skipped, never
 * rendered.
 *
 * One walker reads every term, in either syntax; what a syntax writes its
 * own way is in its table (struct syntax: term_erl.c, term_ex.c).  The
 * types that make up nearly every message (small integers, atoms, pids,
 * tuples, lists, strings, binaries) are read in place by walk_fast(),
 * compiled once per syntax; everything else, and everything in reference
 * mode, goes through ei's decoders in walk_ei().  Both give the same
 * text, byte for byte.  What each syntax prints was taken from the
 * printers themselves (io_lib_pretty, erts' float_to_list short form,
 * Elixir's Inspect) and is checked against them on a live node by
 * test/t0360-render.sh and test/t0365-elixir.sh.
 */
#include "term.h"

#include <ei.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "term_priv.h"

static const struct syntax erl_sx = {
	.sep = ",", .sep_len = 1, .bar = "|", .bar_len = 1,
	.pid = "", .pid_len = 0, .ref = "#Ref<0", .bare = true,
	.atom = erl_atom, .dbl = emit_double, .list = term_list,
	.string = erl_string, .binary = erl_binary, .map = erl_map,
	.fun = erl_fun, .mfa = erl_mfa,
};

static const struct syntax ex_sx = {
	.sep = ", ", .sep_len = 2, .bar = " | ", .bar_len = 3,
	.pid = "#PID", .pid_len = 4, .ref = "#Reference<0",
	.atom = ex_atom, .dbl = ex_double, .list = ex_list,
	.string = ex_string, .binary = ex_binary, .map = ex_map,
	.fun = ex_fun, .mfa = ex_mfa,
};

static const struct syntax *syntax_of(enum term_syntax syn)
{
	return syn == TERM_ELIXIR ? &ex_sx : &erl_sx;
}

void emits(struct rctx *rc, const char *s)
{
	emit(rc, s, strlen(s));
}

void emitf(struct rctx *rc, const char *fmt, ...)
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

const char term_digit_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";


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

void emit_bytes(struct rctx *rc, const unsigned char *s, size_t n,
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

void emit_long(struct rctx *rc, long v)
{
	char num[24], *s;
	s = utoa_end(num + 23, v < 0 ? -(unsigned long long)v : (unsigned long long)v);
	if (v < 0)
		*--s = '-';
	emit(rc, s, (size_t)(num + 23 - s));
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
	if (term_skip(rc) < 0)
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

/*
 * Where the key of each pair of a map starts, in the order the target's
 * printer walks them: as encoded, except that a map larger than a flat
 * one (a hash trie) is walked the other way round by io_lib, and by
 * Elixir where the target's maps iterate so (TD_EX_MAP_BACK).  off has room for
 * MAP_FLAT_MAX; a larger map gets an array to free (*owned).  *end is
 * just past the map.  NULL when malformed.
 */
int *map_order(struct rctx *rc, int arity, int *off, int **owned, int *end)
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

int term_skip(struct rctx *rc)
{
	return ei_skip_term(rc->buf, rc->idx) < 0 ? -1 : 0;
}

/* BIT_BINARY_EXT: 'M', 4-byte length, bits used in the last byte, bytes */
int render_bits(struct rctx *rc)
{
	const unsigned char *p = (const unsigned char *)rc->buf + *rc->idx;
	size_t n = etf_u32(p + 1);
	unsigned bits = p[5];
	const unsigned char *s = p + 6;
	bool ex = rc->syn == TERM_ELIXIR;
	char num[8];
	if (term_skip(rc) < 0)
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

/* ---- the walker ---- */

/* Elements of a tuple or list, separated as the syntax separates them. */
static inline __attribute__((always_inline)) int
items(struct rctx *rc, int depth, int arity, const struct syntax *sx)
{
	for (int i = 0; i < arity; i++) {
		if (i)
			emit(rc, sx->sep, sx->sep_len);
		if (term_walk(rc, depth + 1) < 0)
			return -1;
	}
	return 0;
}

int term_items(struct rctx *rc, int depth, int arity)
{
	return items(rc, depth, arity, rc->sx);
}

/* After the elements of a list of arity elements: nothing for a proper
 * list, else the syntax's bar and the tail of an improper one. */
int list_tail(struct rctx *rc, int depth, int arity)
{
	if (arity <= 0)
		return 0;
	if (rc->buf[*rc->idx] == ERL_NIL_EXT) {
		(*rc->idx)++;
		return 0;
	}
	emit(rc, rc->sx->bar, rc->sx->bar_len);
	return term_walk(rc, depth + 1);
}

/* A LIST_EXT as [A, B | T]. */
int term_list(struct rctx *rc, int depth)
{
	const unsigned char *p = (const unsigned char *)rc->buf + *rc->idx;
	if (p[0] != ERL_LIST_EXT)
		return -1;
	int arity = (int)etf_u32(p + 1);
	*rc->idx += 5;
	emit(rc, "[", 1);
	if (term_items(rc, depth, arity) < 0 || list_tail(rc, depth, arity) < 0)
		return -1;
	emit(rc, "]", 1);
	return 0;
}

/* A pid after the syntax's prefix: <0.N.S> when local, else <node.N.S>
 * (the node up to a NUL, as a C string would show it). */
static __attribute__((noinline)) void emit_pid(struct rctx *rc,
					       const struct syntax *sx,
					       bool local, const char *node,
					       size_t node_len, unsigned num,
					       unsigned serial)
{
	char text[2 * ETF_ATOM_MAX + 40];
	size_t l = node ? etf_cstr_len(node, node_len) : 0;
	if (l > 2 * ETF_ATOM_MAX)
		l = 2 * ETF_ATOM_MAX;
	emit(rc, sx->pid, sx->pid_len);
	emit(rc, text, pid_text_n(text, local, node, l, num, serial));
}

enum { FAST_NO = 1 };

/* A pid read in place: FAST_NO when it is left to ei. */
static inline __attribute__((always_inline)) int
walk_pid(struct rctx *rc, const struct syntax *sx)
{
	struct etf_pid pid;
	struct sbuf *o = rc->out;
	if (rc->local && etf_pid_local(rc->buf, rc->idx, rc->local,
				       rc->local_len, &pid.num, &pid.serial)) {
		/* the usual: a pid of the target */
	} else if (!etf_pid(rc->buf, rc->idx, &pid)) {
		return FAST_NO;
	} else if (!rc->local || !etf_node_is(pid.node, pid.node_len,
					      rc->local, rc->local_len)) {
		emit_pid(rc, sx, false, pid.node, pid.node_len, pid.num,
			 pid.serial);
		return 0;
	}
	size_t most = sx->pid_len + PID_TEXT_MAX;
	if (rc->full || (rc->limit && o->len + most > rc->limit)) {
		emit_pid(rc, sx, true, NULL, 0, pid.num, pid.serial);
		return 0;
	}
	/* fits whatever its digits: written in place */
	if (o->len + most >= o->cap)
		sbuf_grow(o, most);
	memcpy(o->buf + o->len, sx->pid, sx->pid_len);
	o->len += sx->pid_len;
	o->len += pid_text_n(o->buf + o->len, true, NULL, 0, pid.num,
			     pid.serial);
	return 0;
}

/*
 * The common types, read in place: 0 rendered, -1 malformed, FAST_NO when
 * the term is left to ei (nothing read, nothing emitted).  Inlined with a
 * constant sx, once per syntax.
 */
static inline __attribute__((always_inline)) int
walk_fast(struct rctx *rc, int depth, const struct syntax *sx)
{
	const unsigned char *p = (const unsigned char *)rc->buf + *rc->idx;
	int64_t v = 0;
	const char *a;
	size_t n;
	switch (p[0]) {
	case 'a': case 'b':
		if (!etf_int64(rc->buf, rc->idx, &v))
			return FAST_NO;
		emit_long(rc, (long)v);
		return 0;
	case 'w': case 'v': case 's': case 'd': {
		size_t hdr = 0;
		/* a bare atom is ASCII in either encoding: no need to look */
		if (sx->bare && etf_atom_head(p, &n, &hdr) && n < ETF_ATOM_MAX &&
		    atom_is_bare((const char *)p + hdr, n)) {
			*rc->idx += (int)(hdr + n);
			emit(rc, (const char *)p + hdr, n);
			return 0;
		}
		if (!etf_atom(rc->buf, rc->idx, &a, &n))
			return FAST_NO;
		sx->atom(rc, a, n);
		return 0;
	}
	case 'X': case 'g':
		return walk_pid(rc, sx);
	case 'h':
		*rc->idx += 2;
		emit(rc, "{", 1);
		if (items(rc, depth, p[1], sx) < 0)
			return -1;
		emit(rc, "}", 1);
		return 0;
	case 'j':
		(*rc->idx)++;
		emit(rc, "[]", 2);
		return 0;
	case 'l':
		return sx->list(rc, depth);
	case 'k':
		return sx->string(rc, (int)(p[1] << 8 | p[2]));
	case 'm':
		return sx->binary(rc, (int)etf_u32(p + 1));
	default:
		return FAST_NO;
	}
}

/* An atom through ei, as UTF-8 whole: ei stops at a NUL, so such an
 * atom is read again from its bytes. */
static int walk_atom(struct rctx *rc, const struct syntax *sx)
{
	char a[MAXATOMLEN_UTF8];
	int at = *rc->idx;
	if (ei_decode_atom_as(rc->buf, rc->idx, a, sizeof(a),
			      ERLANG_UTF8, NULL, NULL) < 0)
		return -1;
	const unsigned char *p = (const unsigned char *)rc->buf + at;
	size_t len = 0, hdr = 0, k = 0;
	int enc = etf_atom_head(p, &len, &hdr);
	if (!enc || !memchr(p + hdr, '\0', len)) {
		sx->atom(rc, a, strlen(a));
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
	sx->atom(rc, whole, k);
	return 0;
}

/* SMALL_BIG_EXT, LARGE_BIG_EXT */
static int walk_big(struct rctx *rc)
{
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

/* Pids, ports and references through ei */
static int walk_ids(struct rctx *rc, const struct syntax *sx, int type)
{
	erlang_pid p;
	erlang_port port;
	erlang_ref r;
	switch (type) {
	case ERL_PID_EXT:
	case ERL_NEW_PID_EXT:
		if (ei_decode_pid(rc->buf, rc->idx, &p) < 0)
			return -1;
		emit_pid(rc, sx, rc->local && !strcmp(p.node, rc->local), p.node,
			 strlen(p.node), p.num, p.serial);
		return 0;
	case ERL_PORT_EXT:
	case ERL_NEW_PORT_EXT:
	case ERL_V4_PORT_EXT:
		if (ei_decode_port(rc->buf, rc->idx, &port) < 0)
			return -1;
		if (rc->local && !strcmp(port.node, rc->local))
			emitf(rc, "#Port<0.%llu>", (unsigned long long)port.id);
		else
			emitf(rc, "#Port<%s.%llu>", port.node,
			      (unsigned long long)port.id);
		return 0;
	default:
		if (ei_decode_ref(rc->buf, rc->idx, &r) < 0)
			return -1;
		emits(rc, sx->ref);
		for (int i = r.len - 1; i >= 0; i--)
			emitf(rc, ".%u", r.n[i]);
		emit(rc, ">", 1);
		return 0;
	}
}

/* Any term, through ei's decoders. */
static __attribute__((noinline)) int walk_ei(struct rctx *rc, int depth,
					     const struct syntax *sx)
{
	int type, size, arity;
	long v;
	double d;

	if (ei_get_type(rc->buf, rc->idx, &type, &size) < 0)
		return -1;
	switch (type) {
	case ERL_SMALL_INTEGER_EXT:
	case ERL_INTEGER_EXT:
		if (ei_decode_long(rc->buf, rc->idx, &v) < 0)
			return -1;
		emit_long(rc, v);
		return 0;
	case ERL_SMALL_BIG_EXT:
	case ERL_LARGE_BIG_EXT:
		return walk_big(rc);
	case ERL_FLOAT_EXT:
	case NEW_FLOAT_EXT:
		if (ei_decode_double(rc->buf, rc->idx, &d) < 0)
			return -1;
		sx->dbl(rc, d);
		return 0;
	case ERL_ATOM_EXT:
	case ERL_SMALL_ATOM_EXT:
	case ERL_ATOM_UTF8_EXT:
	case ERL_SMALL_ATOM_UTF8_EXT:
		return walk_atom(rc, sx);
	case ERL_SMALL_TUPLE_EXT:
	case ERL_LARGE_TUPLE_EXT:
		if (ei_decode_tuple_header(rc->buf, rc->idx, &arity) < 0)
			return -1;
		emit(rc, "{", 1);
		if (items(rc, depth, arity, sx) < 0)
			return -1;
		emit(rc, "}", 1);
		return 0;
	case ERL_MAP_EXT:
		return sx->map(rc, depth);
	case ERL_NIL_EXT:
		(*rc->idx)++;
		emit(rc, "[]", 2);
		return 0;
	case ERL_LIST_EXT:
		return sx->list(rc, depth);
	case ERL_STRING_EXT:
		return sx->string(rc, size);
	case ERL_BINARY_EXT:
		if (rc->buf[*rc->idx] != ERL_BINARY_EXT)
			return -1;
		return sx->binary(rc, size);
	case ERL_BIT_BINARY_EXT:
		return render_bits(rc);
	case ERL_PID_EXT: case ERL_NEW_PID_EXT:
	case ERL_PORT_EXT: case ERL_NEW_PORT_EXT: case ERL_V4_PORT_EXT:
	case ERL_REFERENCE_EXT: case ERL_NEW_REFERENCE_EXT:
	case ERL_NEWER_REFERENCE_EXT:
		return walk_ids(rc, sx, type);
	case ERL_NEW_FUN_EXT:
	case ERL_FUN_EXT:
	case ERL_EXPORT_EXT:
		return sx->fun(rc);
	default:
		return -1;
	}
}

/* Past the depth limit or the byte limit: skip what is left. */
static __attribute__((noinline)) int walk_rest(struct rctx *rc)
{
	if (!rc->full)
		emit(rc, "...", 3);
	rc->cut = true;
	return term_skip(rc);
}

static inline __attribute__((always_inline)) int
walk(struct rctx *rc, int depth, const struct syntax *sx)
{
	if (!rc->reference) {
		int r = walk_fast(rc, depth, sx);
		if (r != FAST_NO)
			return r;
	}
	return walk_ei(rc, depth, sx);
}

static __attribute__((noinline)) int walk_ex(struct rctx *rc, int depth)
{
	return walk(rc, depth, &ex_sx);
}

int term_walk(struct rctx *rc, int depth)
{
	if (rc->full || depth > TERM_MAX_DEPTH)
		return walk_rest(rc);
	if (__builtin_expect(rc->syn == TERM_ELIXIR, 0))
		return walk_ex(rc, depth);
	return walk(rc, depth, &erl_sx);
}

/* ---- the interface ---- */

static int render_top(enum term_syntax syn, const struct term_dialect *dia,
		      const char *buf, int *index, const char *local_node,
		      struct sbuf *out, size_t max, bool *cut, bool reference)
{
	struct rctx rc = {
		.syn = syn,
		.sx = syntax_of(syn),
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
	int rv = term_walk(&rc, 0);
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
		.sx = syntax_of(syn),
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
	struct rctx rc = { .syn = syn, .sx = syntax_of(syn), .out = out };
	if (out->buf == NULL)
		sbuf_grow(out, 0);
	rc.sx->atom(&rc, name, strlen(name));
}

void term_mfa_text(struct sbuf *out, enum term_syntax syn, const char *mod,
		   const char *fun, long arity)
{
	struct rctx rc = { .syn = syn, .sx = syntax_of(syn), .out = out };
	if (out->buf == NULL)
		sbuf_grow(out, 0);
	rc.sx->mfa(&rc, mod, fun);
	if (arity >= 0)
		emitf(&rc, "/%ld", arity);
}
