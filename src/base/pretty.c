/*
 * pretty: laying a term's text out on lines.  The text is cut into tokens
 * (text, an opening or closing bracket, a comma between elements), each
 * opening bracket knows its closing one, and the layout walks the tokens:
 * what fits on the rest of the line goes flat, a group that does not is
 * broken, element by element.  Quoted strings and atoms are single tokens,
 * so brackets and commas inside them are never taken for structure.
 *
 * The text may come from a file (a recording) and be anything: groups
 * deeper than PRETTY_MAX_DEPTH become one "..." token, as term.c cuts a
 * live term, so the layout recurses at most that deep; the columns of a
 * run of tokens and whether a group holds another are read from arrays
 * made once, so the layout is linear in the text (and in the lines it
 * writes).
 */
#include "pretty.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

enum tok_kind { TOK_TEXT, TOK_OPEN, TOK_CLOSE, TOK_COMMA };

struct tok {
	enum tok_kind kind;
	const char *s;
	size_t len;
	int cols;       /* on screen */
	size_t match;   /* TOK_OPEN: its TOK_CLOSE, or ntok when left open */
};

struct layout {
	struct tok *t;
	size_t n;
	size_t *cols;   /* [i]: the columns of tokens [0, i) laid flat */
	size_t *next_open;   /* [i]: the first TOK_OPEN at or after i, or n */
	int width;
	struct sbuf *out;
	int col;        /* where the line being written is */
};

/* an open group on the way: its token, or SIZE_MAX beyond the depth kept,
 * and the character that closes it */
struct open {
	size_t tok;
	char closer;
};

static int cols_of(const char *s, size_t len)
{
	int c = 0;
	for (size_t i = 0; i < len; i++)
		c += ((unsigned char)s[i] & 0xC0) != 0x80;
	return c;
}

/* The length of the quoted token at s ('"' or '\''), escapes included;
 * to the end of the text when it is never closed (the text was cut). */
static size_t quoted_len(const char *s)
{
	size_t i = 1;
	while (s[i] && s[i] != s[0])
		i += s[i] == '\\' && s[i + 1] ? 2 : 1;
	return s[i] ? i + 1 : i;
}

/* An opening bracket at s: its length, or 0.  "#{" and "%{" are maps,
 * "%Name{" an Elixir struct. */
static size_t open_len(const char *s)
{
	if (*s == '{' || *s == '[' || *s == '(')
		return 1;
	if (s[0] == '<' && s[1] == '<')
		return 2;
	if ((s[0] == '#' || s[0] == '%') && s[1] == '{')
		return 2;
	if (s[0] == '%' && s[1] >= 'A' && s[1] <= 'Z') {
		size_t i = 1;
		while (s[i] && (s[i] == '.' || s[i] == '_' ||
				(s[i] >= 'a' && s[i] <= 'z') ||
				(s[i] >= 'A' && s[i] <= 'Z') ||
				(s[i] >= '0' && s[i] <= '9')))
			i++;
		return s[i] == '{' ? i + 1 : 0;
	}
	return 0;
}

static char closer_of(const char *open, size_t len)
{
	char c = open[len - 1];
	return c == '[' ? ']' : c == '(' ? ')' : c == '<' ? '>' : '}';
}

static void push(struct tok **t, size_t *n, size_t *cap, enum tok_kind kind,
		 const char *s, size_t len)
{
	/* text runs that follow one another are one token */
	if (kind == TOK_TEXT && *n && (*t)[*n - 1].kind == TOK_TEXT &&
	    (*t)[*n - 1].s + (*t)[*n - 1].len == s) {
		(*t)[*n - 1].len += len;
		(*t)[*n - 1].cols += cols_of(s, len);
		return;
	}
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*t = xrealloc(*t, *cap * sizeof(**t));
	}
	(*t)[(*n)++] = (struct tok){ kind, s, len, cols_of(s, len), 0 };
}

/* The tokens of s; *cut is set when groups deeper than PRETTY_MAX_DEPTH
 * were left out. */
static size_t tokenize(const char *s, struct tok **out, bool *cut)
{
	struct tok *t = NULL;
	size_t n = 0, cap = 0, depth = 0, stack_cap = 0;
	struct open *stack = NULL;   /* the open groups */
	while (*s) {
		size_t len;
		/* inside a group left out: only its end is looked for */
		bool kept = depth <= PRETTY_MAX_DEPTH;
		if (*s == '"' || *s == '\'') {
			len = quoted_len(s);
			if (kept)
				push(&t, &n, &cap, TOK_TEXT, s, len);
		} else if ((len = open_len(s))) {
			if (depth == stack_cap) {
				stack_cap = stack_cap ? stack_cap * 2 : 16;
				stack = xrealloc(stack, stack_cap * sizeof(*stack));
			}
			stack[depth].tok = SIZE_MAX;
			stack[depth].closer = closer_of(s, len);
			if (depth < PRETTY_MAX_DEPTH) {
				push(&t, &n, &cap, TOK_OPEN, s, len);
				stack[depth].tok = n - 1;
			} else if (depth == PRETTY_MAX_DEPTH) {
				push(&t, &n, &cap, TOK_TEXT, "...", 3);
				*cut = true;
			}
			depth++;
		} else if (depth && *s == stack[depth - 1].closer &&
			   (*s != '>' || s[1] == '>')) {
			len = *s == '>' ? 2 : 1;
			size_t o = stack[--depth].tok;
			if (o != SIZE_MAX) {
				push(&t, &n, &cap, TOK_CLOSE, s, len);
				t[o].match = n - 1;
			}
		} else if (depth && *s == ',') {
			len = 1;
			if (kept)
				push(&t, &n, &cap, TOK_COMMA, s, len);
		} else {
			len = 1;
			if (kept)
				push(&t, &n, &cap, TOK_TEXT, s, len);
		}
		s += len;
	}
	while (depth)   /* left open: the text was cut */
		if (stack[--depth].tok != SIZE_MAX)
			t[stack[depth].tok].match = n;
	free(stack);
	*out = t;
	return n;
}

/* Columns of tokens [i, j) laid flat (at most INT_MAX). */
static int flat_cols(const struct layout *L, size_t i, size_t j)
{
	size_t c = L->cols[j] - L->cols[i];
	return c < INT_MAX ? (int)c : INT_MAX;
}

static void newline(struct layout *L, int indent)
{
	sbuf_addch(L->out, '\n');
	for (int k = 0; k < indent; k++)
		sbuf_addch(L->out, ' ');
	L->col = indent;
}

/* Text, cut across lines (at indent) where it does not fit. */
static void put_text(struct layout *L, const struct tok *t, int indent)
{
	const char *s = t->s, *end = t->s + t->len;
	while (s < end) {
		if (L->col >= L->width) {
			if (indent >= L->width - 8)
				indent = 0;
			newline(L, indent);
		}
		/* as many columns as are left, whole UTF-8 sequences */
		const char *p = s;
		int room = L->width - L->col;
		while (p < end && room > 0) {
			p++;
			while (p < end && ((unsigned char)*p & 0xC0) == 0x80)
				p++;
			room--;
		}
		sbuf_add(L->out, s, (size_t)(p - s));
		L->col = L->width - room;
		s = p;
	}
}

static void put_flat(struct layout *L, size_t i, size_t j)
{
	L->col += flat_cols(L, i, j);   /* it fits: no overflow */
	for (; i < j; i++)
		sbuf_add(L->out, L->t[i].s, L->t[i].len);
}

static void lay_elem(struct layout *L, size_t i, size_t j, int indent);

/* The end of the element that starts at i, within a group ending at j. */
static size_t elem_end(const struct layout *L, size_t i, size_t j)
{
	while (i < j && L->t[i].kind != TOK_COMMA)
		i = L->t[i].kind == TOK_OPEN ? L->t[i].match + 1 : i + 1;
	return i < j ? i : j;
}

static bool plain(const struct layout *L, size_t i, size_t j)
{
	return L->next_open[i] >= j;
}

/* The group opened at token o: its opener, its elements, its closer. */
static void lay_group(struct layout *L, size_t o, int indent)
{
	size_t close = L->t[o].match;
	put_text(L, &L->t[o], indent);
	int inner = L->col;
	/* deep in: start the elements further left, on a line of their own */
	if (inner > L->width / 2) {
		inner = indent + 2 < L->width / 2 ? indent + 2 : L->width / 2;
		newline(L, inner);
	}
	bool fill = plain(L, o + 1, close);
	bool first = true;
	for (size_t i = o + 1; i < close;) {
		size_t e = elem_end(L, i, close);
		bool comma = e < close;
		int need = flat_cols(L, i, e);
		if (!first && (!fill || need > L->width - L->col -
			       (comma ? 1 : close < L->n ? L->t[close].cols : 0)))
			newline(L, inner);
		L->width -= comma;   /* the comma ends the element's line */
		lay_elem(L, i, e, inner);
		L->width += comma;
		if (comma) {
			sbuf_addch(L->out, ',');
			L->col++;
		}
		first = false;
		i = e + comma;
	}
	if (close < L->n)
		put_text(L, &L->t[close], indent);
}

/* Tokens [i, j): one element (text and groups, no comma at its level). */
static void lay_elem(struct layout *L, size_t i, size_t j, int indent)
{
	if (flat_cols(L, i, j) <= L->width - L->col) {
		put_flat(L, i, j);
		return;
	}
	while (i < j) {
		if (L->t[i].kind == TOK_OPEN) {
			lay_group(L, i, indent);
			i = L->t[i].match + 1;
		} else {
			put_text(L, &L->t[i], indent);
			i++;
		}
	}
}

bool pretty_term(const char *text, int width, struct sbuf *out)
{
	struct layout L = { .width = width < 8 ? 8 : width, .out = out };
	bool cut = false;
	L.n = tokenize(text ? text : "", &L.t, &cut);
	L.cols = xmalloc((L.n + 1) * sizeof(*L.cols));
	L.next_open = xmalloc((L.n + 1) * sizeof(*L.next_open));
	L.cols[0] = 0;
	for (size_t i = 0; i < L.n; i++)
		L.cols[i + 1] = L.cols[i] + (size_t)L.t[i].cols;
	L.next_open[L.n] = L.n;
	for (size_t i = L.n; i-- > 0;)
		L.next_open[i] = L.t[i].kind == TOK_OPEN ? i : L.next_open[i + 1];
	lay_elem(&L, 0, L.n, 0);
	sbuf_addch(out, '\n');
	free(L.t);
	free(L.cols);
	free(L.next_open);
	return cut;
}
