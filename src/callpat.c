/*
 * callpat: Elixir-form call patterns -> Erlang form.  See callpat.h.  The
 * text is only rewritten here; the agent still checks and compiles it.
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
	"; in Elixir form a pattern is Mod.fun, Mod.fun/arity, "
	"Mod.fun/arity -> return|stack or Mod.fun(args) when guard -> return "
	"(:mod.fun for Erlang modules), with variables, _, atoms, aliases, "
	"numbers, strings, tuples and lists in the arguments and "
	"== != === !== < <= > >= + - * / and or not and the is_* tests, "
	"abs, length, hd, tl, map_size, tuple_size, byte_size, bit_size, "
	"round, trunc in guards; anything else takes the Erlang form, e.g. "
	"'Elixir.Shop.Cache':get(K) when K > 3 -> return";

/* guard functions with the same name and arguments in both languages */
static const char *const same_bifs[] = {
	"is_atom", "is_binary", "is_bitstring", "is_boolean", "is_float",
	"is_function", "is_integer", "is_list", "is_map", "is_number",
	"is_pid", "is_port", "is_reference", "is_tuple", "abs", "length",
	"hd", "tl", "map_size", "tuple_size", "byte_size", "bit_size",
	"round", "trunc", NULL,
};

/* operators, longest first: Elixir, Erlang */
static const char *const ops[][2] = {
	{ "===", "=:=" }, { "!==", "=/=" }, { "==", "==" }, { "!=", "/=" },
	{ "<=", "=<" }, { ">=", ">=" }, { "<", "<" }, { ">", ">" },
	{ "+", "+" }, { "-", "-" }, { "*", "*" }, { "/", "/" },
	{ "(", "(" }, { ")", ")" }, { "{", "{" }, { "}", "}" },
	{ "[", "[" }, { "]", "]" }, { ",", "," }, { "|", "|" },
};

/*
 * The arguments and guard of an Elixir head, from just past "(" to the
 * end or "->", as Erlang; *end: where it stopped.  -1 on anything outside
 * the subset.
 */
static int head_erlang(const char *p, struct sbuf *out, const char **end)
{
	int depth = 1;
	bool guard = false;
	while (*p) {
		p = skip_blanks(p);
		if (!*p || (depth == 0 && !strncmp(p, "->", 2)))
			break;
		const char *w = p;
		if (lower(*p)) {
			while (word(*p))
				p++;
			if (*p == '?' || *p == '!')
				return -1;
			size_t n = (size_t)(p - w);
			const char *after = skip_blanks(p);
			bool known = false;
			for (int i = 0; same_bifs[i]; i++)
				if (strlen(same_bifs[i]) == n && !strncmp(same_bifs[i], w, n))
					known = true;
			if (known) {
				if (*after != '(' || !guard)
					return -1;
				sbuf_add(out, w, n);
			} else if (n == 4 && !strncmp(w, "when", 4) && depth == 0 && !guard) {
				sbuf_addstr(out, " when ");
				guard = true;
			} else if (n == 3 && !strncmp(w, "and", 3)) {
				sbuf_addstr(out, " andalso ");
			} else if (n == 2 && !strncmp(w, "or", 2)) {
				sbuf_addstr(out, " orelse ");
			} else if (n == 3 && !strncmp(w, "not", 3)) {
				sbuf_addstr(out, "not ");
			} else if ((n == 4 && !strncmp(w, "true", 4)) ||
				   (n == 5 && !strncmp(w, "false", 5)) ||
				   (n == 3 && !strncmp(w, "nil", 3))) {
				sbuf_add(out, w, n);
			} else if (n == 1 && *w == '_') {
				sbuf_addch(out, '_');
			} else if ((n == 2 && !strncmp(w, "in", 2)) || *after == '(') {
				return -1;   /* in, and calls of anything else */
			} else {
				/* a variable: x -> V_x, _x -> _x */
				sbuf_addstr(out, *w == '_' ? "" : "V_");
				sbuf_add(out, w, n);
			}
		} else if (*p == ':' && lower(p[1])) {
			for (w = ++p; word(*p) || *p == '@'; p++)
				;
			if (*p == '?' || *p == '!')
				p++;
			sbuf_addch(out, '\'');
			sbuf_add(out, w, (size_t)(p - w));
			sbuf_addch(out, '\'');
		} else if (upper(*p)) {
			while (upper(*p)) {
				while (word(*p))
					p++;
				if (*p == '.' && upper(p[1]))
					p++;
			}
			sbuf_addstr(out, "'Elixir.");
			sbuf_add(out, w, (size_t)(p - w));
			sbuf_addch(out, '\'');
		} else if (*p >= '0' && *p <= '9') {
			for (; (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' ||
			       *p == 'e' || *p == 'x'; p++)
				if (*p != '_')
					sbuf_addch(out, *p);
		} else if (*p == '"') {
			sbuf_addstr(out, "<<\"");
			for (p++; *p && *p != '"'; p++) {
				if (*p == '\\' && p[1])
					sbuf_addch(out, *p++);
				else if (*p == '#' && p[1] == '{')
					return -1;   /* interpolation */
				sbuf_addch(out, *p);
			}
			if (*p++ != '"')
				return -1;
			sbuf_addstr(out, "\"/utf8>>");
		} else {
			size_t i, nops = sizeof(ops) / sizeof(ops[0]);
			for (i = 0; i < nops; i++)
				if (!strncmp(p, ops[i][0], strlen(ops[i][0])))
					break;
			if (i == nops)
				return -1;
			if (*p == '(' || *p == '{' || *p == '[')
				depth++;
			else if (*p == ')' || *p == '}' || *p == ']')
				depth--;
			if (depth < 0)
				return -1;
			p += strlen(ops[i][0]);
			bool spaced = i < 12;
			if (spaced)
				sbuf_addch(out, ' ');
			sbuf_addstr(out, ops[i][1]);
			if (spaced || *ops[i][1] == ',')
				sbuf_addch(out, ' ');
		}
	}
	*end = p;
	return depth == 0 ? 0 : -1;
}

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
		return 0;
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
		return 1;
	bool head = *p == '(';
	if (head) {
		sbuf_addch(out, '(');
		if (head_erlang(p + 1, out, &p) < 0) {
			sbuf_reset(err);
			sbuf_addf(err, "call pattern \"%s\": outside what the Elixir "
				  "form covers%s", pattern, supported);
			return -1;
		}
		if (!*p)
			return 1;
	} else {
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
			return 1;
	}
	if (strncmp(p, "->", 2))
		goto bad;
	/* actions: return and stack, comma separated */
	sbuf_addstr(out, head ? " -> " : " [{'_',[],[");
	p = skip_blanks(p + 2);
	for (int n = 0;; n++) {
		if (n)
			sbuf_addch(out, ',');
		if (!strncmp(p, "return", 6) && !word(p[6])) {
			sbuf_addstr(out, head ? "return" : "{exception_trace}");
			p += 6;
		} else if (!strncmp(p, "stack", 5) && !word(p[5])) {
			sbuf_addstr(out, head ? "stack" : "{message,{caller}}");
			p += 5;
		} else {
			sbuf_addf(err, "call pattern \"%s\": an action is return or "
				  "stack", pattern);
			return -1;
		}
		p = skip_blanks(p);
		if (*p != ',')
			break;
		p = skip_blanks(p + 1);
	}
	if (*p)
		goto bad;
	if (!head)
		sbuf_addstr(out, "]}]");
	return 1;
bad:
	sbuf_addf(err, "call pattern \"%s\" is neither Erlang nor Elixir form%s",
		  pattern, supported);
	return -1;
}
