/*
 * term_priv: what the term walker (term.c) and its two syntaxes
 * (term_erl.c, term_ex.c) share.  One walker reads every term; a syntax
 * is a table (struct syntax) of what it writes differently: atoms,
 * floats, lists, strings, binaries, maps, funs, and the punctuation of
 * tuples, pids and references.  The walker's in-place reading is
 * instantiated once per syntax (the table is a constant there), so a
 * syntax's separators and prefixes cost nothing at run time.
 */
#ifndef BS_TERM_PRIV_H
#define BS_TERM_PRIV_H

#include <stdint.h>
#include <string.h>

#include "etf.h"
#include "term.h"
#include "utf8.h"

#define TERM_MAX_DEPTH 64
/* a map of more than this many pairs is a hash trie on the target */
#define MAP_FLAT_MAX 32
/* "<0.N.S>": at most this long */
#define PID_TEXT_MAX 25

struct rctx;

/* What a syntax writes its own way.  Each function is called with
 * *rc->idx at the term's tag, and leaves it just past the term. */
struct syntax {
	const char *sep;      /* between the elements of a tuple or list */
	size_t sep_len;
	const char *bar;      /* before the tail of an improper list */
	size_t bar_len;
	const char *pid;      /* before a pid: "" or "#PID" */
	size_t pid_len;
	const char *ref;      /* a reference up to its first number */
	bool bare;            /* an atom atom_is_bare() passes is itself */
	void (*atom)(struct rctx *rc, const char *a, size_t n);   /* UTF-8 */
	void (*dbl)(struct rctx *rc, double d);
	int (*list)(struct rctx *rc, int depth);     /* LIST_EXT */
	int (*string)(struct rctx *rc, int size);    /* STRING_EXT */
	int (*binary)(struct rctx *rc, int size);    /* BINARY_EXT */
	int (*map)(struct rctx *rc, int depth);      /* MAP_EXT */
	int (*fun)(struct rctx *rc);                 /* a fun or export */
	/* m:f or M.f, for term_mfa_text */
	void (*mfa)(struct rctx *rc, const char *mod, const char *fun);
};

struct rctx {
	enum term_syntax syn;
	const struct syntax *sx;   /* syn's table */
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
static inline long utf8_next(const unsigned char *s, size_t n, size_t *i)
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


extern const char term_digit_pairs[];

/* Decimal digits of v at p; returns the end. */
static inline char *put_uint(char *p, uint32_t v)
{
	if (v < 10) {
		*p = (char)('0' + v);
		return p + 1;
	}
	if (v < 100) {
		memcpy(p, term_digit_pairs + 2 * v, 2);
		return p + 2;
	}
	size_t n = v < 1000 ? 3 : v < 10000 ? 4 : v < 100000 ? 5 : v < 1000000 ? 6 :
		v < 10000000 ? 7 : v < 100000000 ? 8 : v < 1000000000 ? 9 : 10;
	char *e = p + n;
	while (v >= 100) {
		e -= 2;
		memcpy(e, term_digit_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		e -= 2;
		memcpy(e, term_digit_pairs + 2 * v, 2);
	} else {
		*--e = (char)('0' + v);
	}
	return p + n;
}

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

/* term.c: output */
void emits(struct rctx *rc, const char *s);
void emitf(struct rctx *rc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void emit_long(struct rctx *rc, long v);
void emit_bytes(struct rctx *rc, const unsigned char *s, size_t n,
		const char *sep);

/* term.c: walking */
int term_walk(struct rctx *rc, int depth);      /* any term, depth checked */
int term_skip(struct rctx *rc);
int term_items(struct rctx *rc, int depth, int arity);
int term_list(struct rctx *rc, int depth);      /* [A, B | T] */
int list_tail(struct rctx *rc, int depth, int arity);
int *map_order(struct rctx *rc, int arity, int *off, int **owned, int *end);
int render_bits(struct rctx *rc);

/* term_erl.c: Erlang, as io_lib:format("~0tp", [T]) prints it */
bool atom_is_bare(const char *name, size_t len);
void erl_atom(struct rctx *rc, const char *a, size_t n);
void emit_double(struct rctx *rc, double d);   /* Elixir's too, mostly */
int erl_string(struct rctx *rc, int size);
int erl_binary(struct rctx *rc, int size);
int erl_map(struct rctx *rc, int depth);
int erl_fun(struct rctx *rc);
void erl_mfa(struct rctx *rc, const char *mod, const char *fun);

/* term_ex.c: Elixir, as inspect/2 prints it */
void ex_atom(struct rctx *rc, const char *a, size_t n);
void ex_double(struct rctx *rc, double d);
int ex_list(struct rctx *rc, int depth);
int ex_string(struct rctx *rc, int size);
int ex_binary(struct rctx *rc, int size);
int ex_map(struct rctx *rc, int depth);
int ex_fun(struct rctx *rc);
void ex_mfa(struct rctx *rc, const char *mod, const char *fun);

#endif
