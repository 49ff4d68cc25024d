/*
 * retext: atoms read back from their text.  Every read is checked by
 * rendering it again (term.c is the one writer), so the readers here can
 * stay simple: a text they get wrong does not render back and is kept.
 */
#include "retext.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The inside of a quoted atom, s[0..n), quote q: only \q and \\ are
 * undone (anything else does not render back the same anyway). */
static bool unquote(const char *s, size_t n, char q, char *out, size_t outsz)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '\\') {
			if (i + 1 >= n || (s[i + 1] != q && s[i + 1] != '\\' &&
					   s[i + 1] != '#'))
				return false;
			c = s[++i];
		} else if (c == q) {
			return false;
		}
		if (k + 1 >= outsz)
			return false;
		out[k++] = c;
	}
	out[k] = '\0';
	return true;
}

static bool copy_n(const char *s, size_t n, char *out, size_t outsz)
{
	if (n + 1 > outsz)
		return false;
	memcpy(out, s, n);
	out[n] = '\0';
	return true;
}

/* An atom as Elixir writes it as a value, s[0..n), not checked. */
static bool ex_atom_read(const char *s, size_t n, char *out, size_t outsz)
{
	if (n >= 3 && s[0] == ':' && s[1] == '"' && s[n - 1] == '"')
		return unquote(s + 2, n - 3, '"', out, outsz);
	if (n >= 2 && s[0] == ':')
		return copy_n(s + 1, n - 1, out, outsz);
	if ((n == 3 && !memcmp(s, "nil", 3)) || (n == 4 && !memcmp(s, "true", 4)) ||
	    (n == 5 && !memcmp(s, "false", 5)))
		return copy_n(s, n, out, outsz);
	if (n && s[0] >= 'A' && s[0] <= 'Z') {
		if (n + 8 > outsz)
			return false;
		memcpy(out, "Elixir.", 7);
		memcpy(out + 7, s, n);
		out[n + 7] = '\0';
		return true;
	}
	return false;
}

/* An atom as Erlang writes it, s[0..n): quoted or bare, not checked. */
static bool erl_atom_read(const char *s, size_t n, char *out, size_t outsz)
{
	if (n >= 2 && s[0] == '\'' && s[n - 1] == '\'')
		return unquote(s + 1, n - 2, '\'', out, outsz);
	return n && copy_n(s, n, out, outsz);
}

/* Shop.Cache, Shop.Cache.Worker: an alias as an Elixir user types it */
static bool looks_alias(const char *s)
{
	if (!(*s >= 'A' && *s <= 'Z'))
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' ||
		      (*s == '.' && s[1] >= 'A' && s[1] <= 'Z')))
			return false;
	return true;
}

bool retext_atom_parse(const char *text, char *out, size_t outsz)
{
	size_t n = strlen(text);
	bool ok = false;
	if (n >= 2 && text[0] == '\'')
		ok = erl_atom_read(text, n, out, outsz);
	else if (n >= 2 && text[0] == ':')
		ok = ex_atom_read(text, n, out, outsz);
	else if (looks_alias(text) && strncmp(text, "Elixir.", 7))
		ok = ex_atom_read(text, n, out, outsz);
	if (!ok && outsz)
		snprintf(out, outsz, "%s", text);
	return ok;
}

/* A registered name shown in syn (see retext.h) back to its atom. */
static bool name_read(enum term_syntax syn, const char *text, char *atom,
		      size_t atomsz)
{
	if (syn == TERM_ERLANG)
		return copy_n(text, strlen(text), atom, atomsz);
	if (!ex_atom_read(text, strlen(text), atom, atomsz))
		return false;
	struct sbuf back = SBUF_INIT;
	term_atom_text(&back, TERM_ELIXIR, atom);
	bool same = !strcmp(sbuf_str(&back), text);
	sbuf_release(&back);
	return same;
}

static void name_write(struct sbuf *out, enum term_syntax syn,
		       const char *atom)
{
	if (syn == TERM_ERLANG)
		sbuf_addstr(out, atom);
	else
		term_atom_text(out, TERM_ELIXIR, atom);
}

bool retext_name(struct sbuf *out, enum term_syntax from,
		 enum term_syntax to, const char *text)
{
	char atom[RETEXT_ATOM_MAX];
	if (!name_read(from, text, atom, sizeof(atom)))
		return false;
	name_write(out, to, atom);
	return true;
}

/* "/N" at the end of s[0..*n): the arity, *n cut before it; -1 if none */
static long arity_read(const char *s, size_t *n)
{
	size_t i = *n;
	while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
		i--;
	if (i == *n || i == 0 || s[i - 1] != '/' || *n - i > 9)
		return -1;
	long a = strtol(s + i, NULL, 10);
	*n = i - 1;
	return a;
}

/* m:f/N or M.f/N, rendered in syn, into its atoms and arity; unchecked */
static bool mfa_read(enum term_syntax syn, const char *text, char *mod,
		     char *fun, size_t sz, long *arity)
{
	size_t n = strlen(text), split;
	*arity = arity_read(text, &n);
	if (syn == TERM_ERLANG) {
		if (text[0] == '\'') {
			split = 1;
			while (split < n && text[split] != '\'')
				split += text[split] == '\\' ? 2 : 1;
			split++;
		} else {
			split = strcspn(text, ":");
		}
		if (split >= n || text[split] != ':')
			return false;
		return erl_atom_read(text, split, mod, sz) &&
			erl_atom_read(text + split + 1, n - split - 1, fun, sz);
	}
	/* the function: the last ."..." or after the last dot */
	const char *f = NULL;
	if (n >= 3 && text[n - 1] == '"') {
		for (size_t i = n - 1; i-- > 1;)
			if (text[i] == '"' && text[i - 1] == '.') {
				f = text + i;
				break;
			}
		if (!f || !unquote(f + 1, (size_t)(text + n - f) - 2, '"', fun, sz))
			return false;
	} else {
		for (size_t i = n; i-- > 0;)
			if (text[i] == '.') {
				f = text + i + 1;
				break;
			}
		if (!f || !copy_n(f, (size_t)(text + n - f), fun, sz))
			return false;
	}
	split = (size_t)(f - text) - 1;
	return ex_atom_read(text, split, mod, sz);
}

bool retext_mfa(struct sbuf *out, enum term_syntax from,
		enum term_syntax to, const char *text)
{
	char mod[RETEXT_ATOM_MAX], fun[RETEXT_ATOM_MAX];
	long arity;
	if (!mfa_read(from, text, mod, fun, sizeof(mod), &arity))
		return false;
	struct sbuf back = SBUF_INIT;
	term_mfa_text(&back, from, mod, fun, arity);
	bool same = !strcmp(sbuf_str(&back), text);
	sbuf_release(&back);
	if (same)
		term_mfa_text(out, to, mod, fun, arity);
	return same;
}

bool retext_label(struct sbuf *out, enum term_syntax to, const char *label)
{
	char mod[RETEXT_ATOM_MAX], fun[RETEXT_ATOM_MAX];
	size_t n = strlen(label);
	long arity = arity_read(label, &n);
	size_t split = strcspn(label, ":");
	if (arity < 0 || split >= n || !copy_n(label, split, mod, sizeof(mod)) ||
	    !copy_n(label + split + 1, n - split - 1, fun, sizeof(fun)) ||
	    !*mod || !*fun)
		return false;
	term_mfa_text(out, to, mod, fun, arity);
	return true;
}
