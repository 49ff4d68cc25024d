/*
 * term_ex: the Elixir syntax of the term walker (term.c), as
 * inspect(T, limit: :infinity, printable_limit: :infinity) prints a term:
 * atoms as Macro.inspect_atom classes them, keyword lists, charlists,
 * structs in their module's field order where the target said it,
 * printable binaries as strings, and #PID<...>, #Reference<...>.
 */
#include <ei.h>
#include <stdio.h>
#include <stdlib.h>

#include "structs.h"
#include "term_priv.h"

/* How Elixir writes an atom: its Macro.inspect_atom classes, less nil,
 * true and false, which the callers look for first. */
enum ex_class {
	EX_IDENT,      /* :foo, foo: and .foo */
	EX_UNQUOTED,   /* :Foo, :foo@bar, :+ ; "Foo" after a dot */
	EX_QUOTED,     /* :"foo bar" */
	EX_OPERATOR,   /* :+ and .+ */
	EX_ALIAS,      /* Elixir.Foo.Bar */
};

/* space-separated words, each ending in a space */
static const char ex_operators[] =
	" & ! ^ not + - ~~~ @ <- \\\\ when :: | = || ||| or && &&& and == != =~"
	" === !== < <= >= > |> <<< >>> <~ ~> <<~ ~>> <~> <|> in ^^^ ++ -- .. <>"
	" +++ --- * / ** . ";
static const char ex_not_callable[] = " % %{} {} <<>> ... .. . ..// -> ";
static const char ex_quoted_ops[] = " :: ^^^ ~~~ <|> ";

static bool ex_word_in(const char *set, const char *a, size_t n)
{
	if (!n || memchr(a, ' ', n))
		return false;
	for (const char *w = set; (w = strchr(w, ' ')) && w[1]; w++)
		if (!strncmp(w + 1, a, n) && w[1 + n] == ' ')
			return true;
	return false;
}

static bool ex_valid_alias(const char *a, size_t n)
{
	if (n < 6 || memcmp(a, "Elixir", 6))
		return false;
	size_t i = 6;
	while (i < n) {
		if (a[i] != '.' || i + 1 >= n || !(a[i + 1] >= 'A' && a[i + 1] <= 'Z'))
			return false;
		for (i += 2; i < n && (bare_char((unsigned char)a[i]) && a[i] != '@'); i++)
			;
	}
	return true;
}

/*
 * A letter as Elixir's tokenizer takes it, for the scripts known here:
 * its script (1 Latin, 2 Greek, 3 Cyrillic), 0 for no letter known; and
 * whether it is upper case.
 */
static int ex_letter(long c, bool *upper)
{
	*upper = (c >= 'A' && c <= 'Z') || (c >= 0xC0 && c <= 0xDE) ||
		 (c >= 0x391 && c <= 0x3A9) || (c >= 0x410 && c <= 0x42F);
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= 0xC0 && c <= 0xFF && c != 0xD7 && c != 0xF7))
		return 1;
	if ((c >= 0x391 && c <= 0x3A9 && c != 0x3A2) || (c >= 0x3B1 && c <= 0x3C9))
		return 2;
	if (c >= 0x410 && c <= 0x44F)
		return 3;
	return 0;
}

static enum ex_class ex_classify(const char *a, size_t n)
{
	const unsigned char *u = (const unsigned char *)a;
	if (n == 0)
		return EX_QUOTED;
	/* the usual: [a-z_][a-zA-Z0-9_]*, which no operator but the words
	 * (and, in, ...) is, and those print the same */
	if ((u[0] >= 'a' && u[0] <= 'z') || u[0] == '_') {
		size_t i = 1;
		while (i < n && bare_char(u[i]) && u[i] != '@')
			i++;
		if (i == n)
			return EX_IDENT;
	}
	if (ex_word_in(ex_not_callable, a, n))
		return EX_UNQUOTED;
	if (ex_word_in(ex_quoted_ops, a, n))
		return EX_QUOTED;
	if (ex_word_in(ex_operators, a, n))
		return EX_OPERATOR;
	if (ex_valid_alias(a, n))
		return EX_ALIAS;
	size_t i = 0;
	bool upper, up;
	long c = utf8_next(u, n, &i);
	int script = ex_letter(c, &upper), sc;
	bool at = false;
	if (!script && c != '_')
		return EX_QUOTED;
	while (i < n) {
		c = utf8_next(u, n, &i);
		if ((c == '?' || c == '!') && i == n)
			break;
		if (c == '@') {
			at = true;
		} else if ((sc = ex_letter(c, &up))) {
			/* one script to an atom, or Elixir quotes it */
			if (script && sc != script)
				return EX_QUOTED;
			script = sc;
		} else if (!(c == '_' || (c >= '0' && c <= '9'))) {
			return EX_QUOTED;
		}
	}
	return upper || at ? EX_UNQUOTED : EX_IDENT;
}

/* The inside of an Elixir string, charlist or quoted atom: Code.Identifier
 * escape/2 with quote q. */
/* What Elixir 1.18 writes as \uXXXX for showing as nothing or a blank */
static bool ex_invisible(long c)
{
	return c == 0xA0 || c == 0x34F || c == 0x61C ||
	       (c >= 0x2000 && c <= 0x200F) || (c >= 0x2028 && c <= 0x202E) ||
	       (c >= 0x205F && c <= 0x2064) || (c >= 0x2066 && c <= 0x2069) ||
	       (c >= 0xFFF9 && c <= 0xFFFC);
}

static void ex_escape(struct rctx *rc, const char *a, size_t n, char q)
{
	static const char named[32] = {
		[7] = 'a', [8] = 'b', [9] = 't', [10] = 'n', [11] = 'v',
		[12] = 'f', [13] = 'r', [27] = 'e',
	};
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *u = (const unsigned char *)a;
	size_t run = 0, i = 0;
	while (i < n && !rc->full) {
		size_t at = i;
		long c = utf8_next(u, n, &i);
		char e[12];
		size_t el = 0;
		if (c < 0) {
			e[0] = '\\', e[1] = 'x', e[2] = hex[u[at] >> 4];
			e[3] = hex[u[at] & 15], el = 4;
		} else if (c == q || c == '\\') {
			e[0] = '\\', e[1] = (char)c, el = 2;
		} else if (c == '#' && i < n && u[i] == '{') {
			e[0] = '\\', e[1] = '#', el = 2;   /* the { goes with the next run */
		} else if (c < 32 && named[c]) {
			e[0] = '\\', e[1] = named[c], el = 2;
		} else if (c == 127) {
			e[0] = '\\', e[1] = 'd', el = 2;
		} else if (c == 0) {
			e[0] = '\\', e[1] = '0', el = 2;
		} else if (c == 0xFEFF ||
			   ((rc->td & TD_EX_ESC_INVISIBLE) && ex_invisible(c))) {
			e[0] = '\\', e[1] = 'u', el = 2;
			for (int sh = 12; sh >= 0; sh -= 4)
				e[el++] = hex[c >> sh & 15];
		} else if ((c >= 0x20 && c <= 0x7E) || (c >= 0xA0 && c <= 0xD7FF) ||
			   (c >= 0xE000 && c <= 0xFFFD) || c >= 0x10000) {
			continue;
		} else {   /* below 0x20, 0x80 to 0x9F, 0xFFFE, 0xFFFF */
			e[el++] = '\\', e[el++] = 'x';
			if (c < 0x100) {
				e[el++] = hex[c >> 4], e[el++] = hex[c & 15];
			} else {
				e[el++] = '{';
				for (int sh = 12; sh >= 0; sh -= 4)
					e[el++] = hex[c >> sh & 15];
				e[el++] = '}';
			}
		}
		emit(rc, a + run, at - run);
		emit(rc, e, el);
		run = i;
	}
	emit(rc, a + run, n - run);
}

static bool ex_special(const char *a, size_t n)
{
	return (n == 3 && !memcmp(a, "nil", 3)) || (n == 4 && !memcmp(a, "true", 4)) ||
	       (n == 5 && !memcmp(a, "false", 5));
}

/* An atom as a value: :ok, nil, Shop.Cache, :"with space" */
void ex_atom(struct rctx *rc, const char *a, size_t n)
{
	if (ex_special(a, n) || (rc->markers && n == 3 && !memcmp(a, "...", 3))) {
		emit(rc, a, n);
		return;
	}
	if (rc->markers && n == 4 && !memcmp(a, "#Fun", 4)) {
		emits(rc, "#Function<...>");
		return;
	}
	switch (ex_classify(a, n)) {
	case EX_ALIAS:
		if (n > 7 && memcmp(a, "Elixir.Elixir.", n < 14 ? n : 14))
			emit(rc, a + 7, n - 7);
		else
			emit(rc, a, n);
		return;
	case EX_QUOTED:
		emit(rc, ":\"", 2);
		ex_escape(rc, a, n, '"');
		emit(rc, "\"", 1);
		return;
	default:
		emit(rc, ":", 1);
		emit(rc, a, n);
		return;
	}
}

/* An atom as a keyword key, colon included: ok:, "Elixir.Foo":, "a b": */
static void ex_key(struct rctx *rc, const char *a, size_t n)
{
	enum ex_class c = ex_special(a, n) ? EX_IDENT : ex_classify(a, n);
	if (c == EX_ALIAS) {
		emit(rc, "\"", 1);
		emit(rc, a, n);
		emit(rc, "\":", 2);
	} else if (c == EX_QUOTED) {
		emit(rc, "\"", 1);
		ex_escape(rc, a, n, '"');
		emit(rc, "\":", 2);
	} else {
		emit(rc, a, n);
		emit(rc, ":", 1);
	}
}

/* A function's name after "Mod.": handle_call, "Foo", "with space" */
static void ex_remote(struct rctx *rc, const char *a, size_t n)
{
	enum ex_class c = ex_classify(a, n);
	bool raw = c == EX_ALIAS || c == EX_UNQUOTED;   /* not callable bare */
	if (n && !ex_word_in(ex_not_callable, a, n) &&
	    (c == EX_IDENT || c == EX_OPERATOR || ex_word_in(ex_quoted_ops, a, n))) {
		emit(rc, a, n);
	} else if (raw) {
		emit(rc, "\"", 1);
		emit(rc, a, n);
		emit(rc, "\"", 1);
	} else {
		emit(rc, "\"", 1);
		ex_escape(rc, a, n, '"');
		emit(rc, "\"", 1);
	}
}

/* Read the atom at *idx (UTF-8, NULs kept) into a[]; its length or -1 */
static long read_atom(struct rctx *rc, char *a, size_t cap)
{
	const unsigned char *p = (const unsigned char *)rc->buf + *rc->idx;
	size_t len = 0, hdr = 0, k = 0;
	int enc = etf_atom_head(p, &len, &hdr);
	if (!enc) {
		/* let ei say what it is: it may still be an atom it knows */
		char tmp[MAXATOMLEN_UTF8];
		if (ei_decode_atom_as(rc->buf, rc->idx, tmp, sizeof(tmp),
				      ERLANG_UTF8, NULL, NULL) < 0)
			return -1;
		k = strlen(tmp);
		if (k >= cap)
			return -1;
		memcpy(a, tmp, k);
		return (long)k;
	}
	for (size_t i = 0; i < len && k + 2 <= cap; i++) {
		unsigned char c = p[hdr + i];
		if (enc == 2 || c < 0x80) {
			a[k++] = (char)c;
		} else {   /* Latin-1 to UTF-8 */
			a[k++] = (char)(0xC0 | c >> 6);
			a[k++] = (char)(0x80 | (c & 0x3F));
		}
	}
	*rc->idx += (int)(hdr + len);
	return (long)k;
}

static bool is_atom_at(const char *buf, int idx)
{
	size_t len, hdr;
	return etf_atom_head((const unsigned char *)buf + idx, &len, &hdr) != 0;
}

/* The atom at idx starts with "Elixir." */
static bool atom_is_aliasish(const char *buf, int idx)
{
	size_t len, hdr;
	const unsigned char *p = (const unsigned char *)buf + idx;
	return etf_atom_head(p, &len, &hdr) && len >= 7 &&
	       !memcmp(p + hdr, "Elixir.", 7);
}

/* Is the list at idx (LIST_EXT) a keyword list?  Reads only. */
static bool ex_keyword_list(const char *buf, int idx)
{
	int arity, type, size;
	if (ei_decode_list_header(buf, &idx, &arity) < 0)
		return false;
	for (int i = 0; i < arity; i++) {
		const unsigned char *p = (const unsigned char *)buf + idx;
		if (p[0] != ERL_SMALL_TUPLE_EXT || p[1] != 2 ||
		    !is_atom_at(buf, idx + 2) || atom_is_aliasish(buf, idx + 2))
			return false;
		if (ei_skip_term(buf, &idx) < 0)
			return false;
	}
	return ei_get_type(buf, &idx, &type, &size) == 0 && type == ERL_NIL_EXT;
}

static inline bool ex_ascii_printable(long c)
{
	return (c >= 7 && c <= 13) || c == 27 || (c >= 32 && c <= 126);
}

/* Is the list at idx (LIST_EXT) a proper list of printable ASCII codes? */
static bool ex_charlist(const char *buf, int idx)
{
	int arity, type, size;
	if (ei_decode_list_header(buf, &idx, &arity) < 0)
		return false;
	for (int i = 0; i < arity; i++) {
		long v;
		if (ei_decode_long(buf, &idx, &v) < 0 || !ex_ascii_printable(v))
			return false;
	}
	return ei_get_type(buf, &idx, &type, &size) == 0 && type == ERL_NIL_EXT;
}

static bool ex_printable_binary(const unsigned char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		long c = utf8_next(s, n, &i);
		if (!((c >= 0x20 && c <= 0x7E) || (c >= 7 && c <= 13) || c == 27 ||
		      c == 127 || (c >= 0xA0 && c <= 0xD7FF) ||
		      (c >= 0xE000 && c <= 0xFFFD) || c >= 0x10000))
			return false;
	}
	return true;
}

void ex_double(struct rctx *rc, double d)
{
	double a = d < 0 ? -d : d;
	if (a >= 1.0 && a < 1.0e16 && d == (double)(long long)d) {
		emitf(rc, "%lld.0", (long long)d);
		return;
	}
	emit_double(rc, d);
}

/* A list of printable characters: 'abc', or ~c"abc" (Elixir 1.15) */
static void ex_chars(struct rctx *rc, const char *s, size_t n)
{
	bool sigil = rc->td & TD_EX_SIGIL_C;
	emits(rc, sigil ? "~c\"" : "'");
	ex_escape(rc, s, n, sigil ? '"' : '\'');
	emit(rc, sigil ? "\"" : "'", 1);
}

int ex_list(struct rctx *rc, int depth)
{
	int arity;
	if (ex_charlist(rc->buf, *rc->idx)) {
		struct sbuf tmp = SBUF_INIT;
		long v;
		if (ei_decode_list_header(rc->buf, rc->idx, &arity) < 0)
			return -1;
		for (int i = 0; i < arity; i++) {
			if (ei_decode_long(rc->buf, rc->idx, &v) < 0) {
				sbuf_release(&tmp);
				return -1;
			}
			sbuf_addch(&tmp, (char)v);
		}
		(*rc->idx)++;   /* the nil */
		ex_chars(rc, tmp.buf, tmp.len);
		sbuf_release(&tmp);
		return 0;
	}
	if (!ex_keyword_list(rc->buf, *rc->idx))
		return term_list(rc, depth);
	if (ei_decode_list_header(rc->buf, rc->idx, &arity) < 0)
		return -1;
	emit(rc, "[", 1);
	for (int i = 0; i < arity; i++) {
		char a[2 * ETF_ATOM_MAX];
		if (i)
			emit(rc, ", ", 2);
		*rc->idx += 2;
		long n = read_atom(rc, a, sizeof(a));
		if (n < 0)
			return -1;
		ex_key(rc, a, (size_t)n);
		emit(rc, " ", 1);
		if (term_walk(rc, depth + 1) < 0)
			return -1;
	}
	if (list_tail(rc, depth, arity) < 0)
		return -1;
	emit(rc, "]", 1);
	return 0;
}

/*
 * The pairs of the map (indexes into off, arity pairs, every key an atom)
 * to print for a struct of def: its fields in the order def gives them,
 * into order; their number, or -1 when the keys are not exactly the
 * fields and __struct__, as Elixir's inspect asks of a struct before it
 * prints one as such.  A map the tracer cut (its '...' => '...' pair)
 * holds some of the fields: those, then the mark.
 */
static int struct_pairs(struct rctx *rc, const struct struct_def *def,
			const int *off, int arity, int *order)
{
	char a[2 * ETF_ATOM_MAX];
	int *pos = order;   /* pos[j]: the pair of field j, built in place */
	int mark = -1;
	/* read once: the stores through rc->idx below could be to it, as
	 * far as the compiler knows */
	const int nf = def->nfields;
	for (int j = 0; j < nf; j++)
		pos[j] = -1;
	for (int i = 0; i < arity; i++) {
		*rc->idx = off[i];
		long n = read_atom(rc, a, sizeof(a));
		if (n < 0)
			return -1;
		if (n == 10 && !memcmp(a, "__struct__", 10))
			continue;
		if (rc->markers && n == 3 && !memcmp(a, "...", 3)) {
			mark = i;
			continue;
		}
		int j = 0;
		while (j < nf && !(def->lens[j] == (size_t)n &&
					    !memcmp(def->fields[j], a, (size_t)n)))
			j++;
		if (j >= nf || pos[j] >= 0)
			return -1;
		pos[j] = i;
	}
	int k = 0;
	for (int j = 0; j < nf; j++) {
		if (pos[j] >= 0)
			order[k++] = pos[j];
		else if (mark < 0)
			return -1;
	}
	if (mark >= 0)
		order[k++] = mark;
	return k;
}

/*
 * What the target said of the module at buf[at] (an atom): NULL when it
 * did not say, then the module is noted to be asked about.
 */
static const struct struct_def *struct_known(struct rctx *rc, int at)
{
	char a[2 * ETF_ATOM_MAX];
	if (!(rc->td & TD_EX_STRUCTS) || !rc->structs)
		return NULL;
	int save = *rc->idx;
	*rc->idx = at;
	long n = read_atom(rc, a, sizeof(a));
	*rc->idx = save;
	if (n < 0)
		return NULL;
	const struct struct_def *def = structs_get(rc->structs, a, (size_t)n);
	if (!def)
		structs_met(rc->structs, a, (size_t)n);
	return def && def->kind != STRUCT_UNKNOWN ? def : NULL;
}

/* A map: %{a: 1}, %{1 => 2}, or a struct %Shop.Order{id: 1} */
int ex_map(struct rctx *rc, int depth)
{
	int arity, flat[MAP_FLAT_MAX], *owned, end, *off;
	if (ei_decode_map_header(rc->buf, rc->idx, &arity) < 0 ||
	    !(off = map_order(rc, arity, flat, &owned, &end)))
		return -1;
	/* look first: keys all plain atoms?  a __struct__ naming a module? */
	bool kw = true;
	int strukt = -1;   /* where the module's atom is */
	for (int i = 0; i < arity; i++) {
		const unsigned char *p = (const unsigned char *)rc->buf + off[i];
		size_t len, hdr;
		if (!etf_atom_head(p, &len, &hdr) || atom_is_aliasish(rc->buf, off[i])) {
			kw = false;
		} else if (len == 10 && !memcmp(p + hdr, "__struct__", 10)) {
			int at = off[i] + (int)(hdr + len);
			if (is_atom_at(rc->buf, at))
				strukt = at;
		}
	}
	int rv = 0;
	char a[2 * ETF_ATOM_MAX];
	/* a struct's fields in the order its module defines them, where the
	 * target said it (else in the order the map holds them) */
	const struct struct_def *def = NULL;
	int *pos = NULL, npos = -1;
	if (strukt >= 0 && kw && (def = struct_known(rc, strukt))) {
		if (def->kind == STRUCT_FIELDS) {
			pos = malloc(((size_t)def->nfields + 1) * sizeof(int));
			if (!pos) {
				rv = -1;
				goto out;
			}
			npos = struct_pairs(rc, def, off, arity, pos);
		}
		if (npos < 0) {
			strukt = -1;   /* a map that only looks like one */
			free(pos);
			pos = NULL;
		}
	}
	if (strukt >= 0 && kw) {
		*rc->idx = strukt;
		long n = read_atom(rc, a, sizeof(a));
		if (n < 0) {
			rv = -1;
			goto out;
		}
		emit(rc, "%", 1);
		ex_atom(rc, a, (size_t)n);
		emit(rc, "{", 1);
	} else {
		strukt = -1;
		emit(rc, "%{", 2);
	}
	bool first = true;
	int npairs = pos ? npos : arity;
	for (int k = 0; k < npairs && !rc->full; k++) {
		int i = pos ? pos[k] : k;
		*rc->idx = off[i];
		if (kw) {
			long n = read_atom(rc, a, sizeof(a));
			if (n < 0) {
				rv = -1;
				goto out;
			}
			if (strukt >= 0 && ((n == 10 && !memcmp(a, "__struct__", 10)) ||
					    (n == 13 && !memcmp(a, "__exception__", 13))))
				continue;
			if (!first)
				emit(rc, ", ", 2);
			ex_key(rc, a, (size_t)n);
			emit(rc, " ", 1);
		} else {
			if (!first)
				emit(rc, ", ", 2);
			if ((rv = term_walk(rc, depth + 1)) < 0)
				goto out;
			emit(rc, " => ", 4);
		}
		first = false;
		if ((rv = term_walk(rc, depth + 1)) < 0)
			goto out;
	}
	emit(rc, "}", 1);
out:
	free(pos);
	free(owned);
	*rc->idx = end;
	return rv;
}

int ex_binary(struct rctx *rc, int size)
{
	const unsigned char *s = (const unsigned char *)rc->buf + *rc->idx + 5;
	*rc->idx += 5 + size;
	size_t look = (size_t)size;
	if (rc->limit && look > rc->limit)
		look = rc->limit;
	if (ex_printable_binary(s, look)) {
		emit(rc, "\"", 1);
		ex_escape(rc, (const char *)s, (size_t)size, '"');
		emit(rc, "\"", 1);
	} else {
		emit(rc, "<<", 2);
		emit_bytes(rc, s, (size_t)size, ", ");
		emit(rc, ">>", 2);
	}
	return 0;
}

int ex_fun(struct rctx *rc)
{
	erlang_fun f;
	if (ei_decode_fun(rc->buf, rc->idx, &f) < 0)
		return -1;
	if (f.type == EI_FUN_EXPORT) {
		emit(rc, "&", 1);
		ex_atom(rc, f.module, strlen(f.module));
		emit(rc, ".", 1);
		ex_remote(rc, f.u.exprt.func, strlen(f.u.exprt.func));
		emitf(rc, "/%ld", f.arity);
	} else {
		emitf(rc, "#Function<%ld.%ld/%ld in ", f.u.closure.index,
		      f.u.closure.uniq, f.arity);
		ex_atom(rc, f.module, strlen(f.module));
		emit(rc, ">", 1);
	}
	free_fun(&f);
	return 0;
}


/* A STRING_EXT: printable ASCII as a charlist, else its codes */
int ex_string(struct rctx *rc, int size)
{
	const char *s = rc->buf + *rc->idx + 3;
	bool ok = true;
	if (rc->buf[*rc->idx] != ERL_STRING_EXT)
		return -1;
	for (int i = 0; i < size && ok; i++)
		ok = ex_ascii_printable((unsigned char)s[i]);
	*rc->idx += 3 + size;
	if (ok) {
		ex_chars(rc, s, (size_t)size);
	} else {
		emit(rc, "[", 1);
		emit_bytes(rc, (const unsigned char *)s, (size_t)size, ", ");
		emit(rc, "]", 1);
	}
	return 0;
}

void ex_mfa(struct rctx *rc, const char *mod, const char *fun)
{
	ex_atom(rc, mod, strlen(mod));
	emit(rc, ".", 1);
	ex_remote(rc, fun, strlen(fun));
}
