/*
 * callpat: Elixir-form call patterns -> Erlang form.  See callpat.h.  The
 * text is only rewritten here; the agent still checks and compiles it, and
 * reads a head in Elixir form with the node's own Elixir.
 */
#include "callpat.h"

#include <stdbool.h>
#include <string.h>

static bool upper(char c) { return c >= 'A' && c <= 'Z'; }
static bool lower(char c) { return (c >= 'a' && c <= 'z') || c == '_'; }
static bool word(char c)
{
	return lower(c) || upper(c) || (c >= '0' && c <= '9');
}

static const char *skip_blanks(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

static const char supported[] =
	"; in Elixir form a pattern is Mod.fun, Mod.fun/arity or "
	"Mod.fun/arity -> return|stack (:mod.fun for Erlang modules), or a "
	"head Mod.fun(args) when guard -> return, which the node's own Elixir "
	"reads; anything else takes the Erlang form, e.g. "
	"'Elixir.Shop.Cache':get(K) when K > 3 -> return";

/* The atom a[0..n) quoted for Erlang (the names here need no escapes). */
static void quoted(struct sbuf *out, const char *prefix, const char *a, size_t n)
{
	sbuf_addch(out, '\'');
	sbuf_addstr(out, prefix);
	sbuf_add(out, a, n);
	sbuf_addch(out, '\'');
}

int callpat_erlang(const char *pattern, struct sbuf *out, struct sbuf *err)
{
	const char *p = skip_blanks(pattern), *mod, *fun;
	size_t ml, fl;
	bool erl_mod;

	if (!upper(*p) && *p != ':') {
		sbuf_addstr(out, pattern);
		return CALLPAT_ERLANG;
	}
	/* the module: Alias.Parts or :erlang_module */
	erl_mod = *p == ':';
	mod = erl_mod ? p + 1 : p;
	const char *q = mod, *last_dot = NULL;
	if (erl_mod) {
		if (!lower(*q))
			goto bad;
		while (word(*q) || *q == '@')
			q++;
		if (*q != '.')
			goto bad;
		last_dot = q;
		q++;
	} else {
		/* Parts, then the function after the last dot */
		for (;;) {
			if (!upper(*q))
				break;
			while (word(*q))
				q++;
			if (*q != '.')
				goto bad;
			last_dot = q;
			q++;
		}
	}
	ml = (size_t)(last_dot - mod);
	fun = q;
	if (!lower(*q))
		goto bad;
	while (word(*q))
		q++;
	if (*q == '?' || *q == '!')
		q++;
	fl = (size_t)(q - fun);

	if (erl_mod)
		quoted(out, "", mod, ml);
	else
		quoted(out, "Elixir.", mod, ml);
	sbuf_addch(out, ':');
	if (fl == 1 && *fun == '_')
		sbuf_addch(out, '_');
	else
		quoted(out, "", fun, fl);

	p = skip_blanks(q);
	if (!*p)
		return CALLPAT_REWRITTEN;
	if (*p == '(') {
		/* a head: the target's Elixir reads all of it */
		sbuf_reset(out);
		sbuf_addstr(out, pattern);
		return CALLPAT_ELIXIR_HEAD;
	}
	if (*p != '/')
		goto bad;
	p = skip_blanks(p + 1);
	sbuf_addch(out, '/');
	if (*p == '_') {
		sbuf_addch(out, '_');
		p++;
	} else if (*p >= '0' && *p <= '9') {
		while (*p >= '0' && *p <= '9')
			sbuf_addch(out, *p++);
	} else {
		goto bad;
	}
	p = skip_blanks(p);
	if (!*p)
		return CALLPAT_REWRITTEN;
	if (strncmp(p, "->", 2))
		goto bad;
	/* actions: return and stack, comma separated */
	sbuf_addstr(out, " [{'_',[],[");
	p = skip_blanks(p + 2);
	for (int n = 0;; n++) {
		if (n)
			sbuf_addch(out, ',');
		if (!strncmp(p, "return", 6) && !word(p[6])) {
			sbuf_addstr(out, "{exception_trace}");
			p += 6;
		} else if (!strncmp(p, "stack", 5) && !word(p[5])) {
			sbuf_addstr(out, "{message,{caller}}");
			p += 5;
		} else {
			sbuf_addf(err, "call pattern \"%s\": an action is return or "
				  "stack", pattern);
			return CALLPAT_BAD;
		}
		p = skip_blanks(p);
		if (*p != ',')
			break;
		p = skip_blanks(p + 1);
	}
	if (*p)
		goto bad;
	sbuf_addstr(out, "]}]");
	return CALLPAT_REWRITTEN;
bad:
	sbuf_addf(err, "call pattern \"%s\" is neither Erlang nor Elixir form%s",
		  pattern, supported);
	return CALLPAT_BAD;
}
