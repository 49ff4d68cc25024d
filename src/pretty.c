/*
 * pretty: laying a term's text out on lines.  The text is cut into tokens
 * (text, an opening or closing bracket, a comma between elements), each
 * opening bracket knows its closing one, and the layout walks the tokens:
 * what fits on the rest of the line goes flat, a group that does not is
 * broken, element by element.  Quoted strings and atoms are single tokens,
 * so brackets and commas inside them are never taken for structure.
 */
#include "pretty.h"

#include <stdbool.h>
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
	int width;
	struct sbuf *out;
	int col;        /* where the line being written is */
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

static char closer_of(const struct tok *open)
{
	char c = open->s[open->len - 1];
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

static size_t tokenize(const char *s, struct tok **out)
{
	struct tok *t = NULL;
	size_t n = 0, cap = 0, depth = 0, stack_cap = 0;
	size_t *stack = NULL;   /* the open groups' tokens */
	while (*s) {
		size_t len;
		if (*s == '"' || *s == '\'') {
			len = quoted_len(s);
			push(&t, &n, &cap, TOK_TEXT, s, len);
		} else if ((len = open_len(s))) {
			push(&t, &n, &cap, TOK_OPEN, s, len);
			if (depth == stack_cap) {
				stack_cap = stack_cap ? stack_cap * 2 : 16;
				stack = xrealloc(stack, stack_cap * sizeof(*stack));
			}
			stack[depth++] = n - 1;
		} else if (depth && *s == closer_of(&t[stack[depth - 1]]) &&
			   (*s != '>' || s[1] == '>')) {
			len = *s == '>' ? 2 : 1;
			push(&t, &n, &cap, TOK_CLOSE, s, len);
			t[stack[--depth]].match = n - 1;
		} else if (depth && *s == ',') {
			len = 1;
			push(&t, &n, &cap, TOK_COMMA, s, len);
		} else {
			len = 1;
			push(&t, &n, &cap, TOK_TEXT, s, len);
		}
		s += len;
	}
	while (depth)   /* left open: the text was cut */
		t[stack[--depth]].match = n;
	free(stack);
	*out = t;
	return n;
}

/* Columns of tokens [i, j) laid flat. */
static int flat_cols(const struct layout *L, size_t i, size_t j)
{
	int c = 0;
	for (; i < j; i++)
		c += L->t[i].cols;
	return c;
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
	L->col += flat_cols(L, i, j);
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
	for (; i < j; i++)
		if (L->t[i].kind == TOK_OPEN)
			return false;
	return true;
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
		int need = flat_cols(L, i, e) + (comma ? 1 : close < L->n ?
						      L->t[close].cols : 0);
		if (!first && (!fill || L->col + need > L->width))
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
	if (L->col + flat_cols(L, i, j) <= L->width) {
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

void pretty_term(const char *text, int width, struct sbuf *out)
{
	struct layout L = { .width = width < 8 ? 8 : width, .out = out };
	L.n = tokenize(text ? text : "", &L.t);
	lay_elem(&L, 0, L.n, 0);
	sbuf_addch(out, '\n');
	free(L.t);
}
