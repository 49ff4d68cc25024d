/* distopt: an -ssl_dist_optfile's client options, for tls.c. */
#include "distopt.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

#define OPTFILE_MAX (1 << 20)   /* a file of options, not of data */
#define DEPTH_MAX 16

/* A term of the file: what these options are made of. */
enum tkind { T_LIST, T_TUPLE, T_ATOM, T_STRING, T_INT };

struct term {
	enum tkind kind;
	char *text;              /* atom, string, integer */
	struct term **items;     /* list, tuple */
	int n;
};

struct parser {
	const char *p, *path;
	struct sbuf *err;
	int line;
};

static void term_free(struct term *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->n; i++)
		term_free(t->items[i]);
	free(t->items);
	free(t->text);
	free(t);
}

static int bad(struct parser *ps, const char *what)
{
	if (!ps->err->len)
		sbuf_addf(ps->err, "%s, line %d: %s", ps->path, ps->line, what);
	return -1;
}

/* blanks and % comments */
static void skip(struct parser *ps)
{
	for (;;) {
		if (*ps->p == '\n')
			ps->line++;
		if (isspace((unsigned char)*ps->p))
			ps->p++;
		else if (*ps->p == '%')
			while (*ps->p && *ps->p != '\n')
				ps->p++;
		else
			return;
	}
}

/* a quoted atom or string up to q: its text, escapes read as C's */
static char *quoted(struct parser *ps, char q)
{
	struct sbuf sb = SBUF_INIT;
	for (ps->p++; *ps->p && *ps->p != q; ps->p++) {
		char c = *ps->p;
		if (c == '\\' && ps->p[1]) {
			c = *++ps->p;
			c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
		}
		sbuf_add(&sb, &c, 1);
	}
	if (*ps->p != q) {
		sbuf_release(&sb);
		bad(ps, "a quote is not closed");
		return NULL;
	}
	ps->p++;
	char *r = xstrdup(sbuf_str(&sb));
	sbuf_release(&sb);
	return r;
}

static struct term *term(struct parser *ps, int depth);

/* the items of a list or tuple, up to close */
static struct term *items(struct parser *ps, enum tkind kind, char close,
			  int depth)
{
	struct term *t = xcalloc(1, sizeof(*t));
	t->kind = kind;
	ps->p++;
	skip(ps);
	if (*ps->p == close) {
		ps->p++;
		return t;
	}
	for (;;) {
		struct term *it = term(ps, depth + 1);
		if (!it)
			break;
		t->items = xrealloc(t->items, (size_t)(t->n + 1) * sizeof(*t->items));
		t->items[t->n++] = it;
		skip(ps);
		if (*ps->p == ',') {
			ps->p++;
			continue;
		}
		if (*ps->p == close) {
			ps->p++;
			return t;
		}
		bad(ps, !*ps->p ? "the file ends inside a term" :
		    close == ']' ? "expected ',' or ']'" : "expected ',' or '}'");
		break;
	}
	term_free(t);
	return NULL;
}

static struct term *term(struct parser *ps, int depth)
{
	skip(ps);
	if (depth > DEPTH_MAX) {
		bad(ps, "terms nested too deep");
		return NULL;
	}
	char c = *ps->p;
	if (c == '[')
		return items(ps, T_LIST, ']', depth);
	if (c == '{')
		return items(ps, T_TUPLE, '}', depth);
	struct term *t = xcalloc(1, sizeof(*t));
	if (c == '"' || c == '\'') {
		t->kind = c == '"' ? T_STRING : T_ATOM;
		t->text = quoted(ps, c);
	} else if (islower((unsigned char)c) || isdigit((unsigned char)c) ||
		   c == '-') {
		const char *s = ps->p;
		t->kind = islower((unsigned char)c) ? T_ATOM : T_INT;
		for (ps->p++; isalnum((unsigned char)*ps->p) || *ps->p == '_' ||
		     *ps->p == '@' || (t->kind == T_INT && *ps->p == '#'); ps->p++)
			;
		t->text = xstrndup(s, (size_t)(ps->p - s));
	} else {
		bad(ps, c ? "expected a term: a list, a tuple, an atom, a string "
		    "or a number" : "the file ends inside a term");
	}
	if (!t->text) {
		free(t);
		return NULL;
	}
	return t;
}

static const struct term *lookup(const struct term *opts, const char *key)
{
	for (int i = 0; opts && i < opts->n; i++) {
		const struct term *kv = opts->items[i];
		if (kv->kind == T_TUPLE && kv->n == 2 &&
		    kv->items[0]->kind == T_ATOM && !strcmp(kv->items[0]->text, key))
			return kv->items[1];
	}
	return NULL;
}

/* a file name: a string (a binary's "<<\"...\">>" is not read) */
static int path_opt(struct parser *ps, const struct term *opts,
		    const char *key, char *out, size_t outsz)
{
	const struct term *v = lookup(opts, key);
	if (!v)
		return 0;
	if (v->kind != T_STRING || strlen(v->text) >= outsz) {
		sbuf_addf(ps->err, "%s: {%s, ...} must hold a file name as a "
			  "string", ps->path, key);
		return -1;
	}
	snprintf(out, outsz, "%s", v->text);
	return 0;
}

int distopt_parse(const char *text, const char *path, struct distopt *o,
		  struct sbuf *err)
{
	struct parser ps = { .p = text, .path = path, .err = err, .line = 1 };
	struct term *top = term(&ps, 0);
	int rc = -1;
	if (!top)
		return -1;
	skip(&ps);
	if (*ps.p == '.')
		ps.p++;
	skip(&ps);
	if (*ps.p) {
		bad(&ps, "more after the list of options and its '.'");
		goto out;
	}
	if (top->kind != T_LIST) {
		bad(&ps, "expected a list: [{server, [...]}, {client, [...]}].");
		goto out;
	}
	/* the client's, as beamscope connects; else the server's, which many
	 * set-ups give both sides alike */
	const struct term *opts = lookup(top, "client");
	if (!opts)
		opts = lookup(top, "server");
	if (!opts || opts->kind != T_LIST) {
		sbuf_addf(err, "%s: no {client, [...]} or {server, [...]} list "
			  "of options", path);
		goto out;
	}
	if (path_opt(&ps, opts, "certfile", o->cert, sizeof(o->cert)) < 0 ||
	    path_opt(&ps, opts, "keyfile", o->key, sizeof(o->key)) < 0 ||
	    path_opt(&ps, opts, "cacertfile", o->ca, sizeof(o->ca)) < 0 ||
	    path_opt(&ps, opts, "password", o->password, sizeof(o->password)) < 0)
		goto out;
	const struct term *v = lookup(opts, "verify");
	if (v && v->kind == T_ATOM)
		o->verify_none = !strcmp(v->text, "verify_none");
	v = lookup(opts, "server_name_indication");
	if (v && v->kind == T_ATOM && !strcmp(v->text, "disable"))
		o->no_host_check = true;
	o->on = true;
	rc = 0;
out:
	term_free(top);
	return rc;
}

int distopt_read_file(const char *path, struct distopt *o, struct sbuf *err)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		sbuf_addf(err, "cannot read --ssl-dist-optfile \"%s\": %s", path,
			  strerror(errno));
		return -1;
	}
	char *text = xmalloc(OPTFILE_MAX + 1);
	size_t n = fread(text, 1, OPTFILE_MAX + 1, f);
	fclose(f);
	if (n > OPTFILE_MAX) {
		free(text);
		sbuf_addf(err, "--ssl-dist-optfile \"%s\" is over 1 MiB: not a "
			  "file of options", path);
		return -1;
	}
	text[n] = '\0';
	int rc = distopt_parse(text, path, o, err);
	free(text);
	return rc;
}
