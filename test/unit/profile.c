/*
 * Unit tests for profile: samples folded into a tree, self and total per
 * function (recursion counted once a sample), callers and callees, the
 * collapsed text, speedscope's JSON, the window and its ring, deep stacks
 * cut; and random stacks against a plain count of the same samples.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "tap.h"

/* a sample from a ';'-separated text, at t_ms, count times */
static void add_text(struct profile *p, const char *stack, int64_t t_ms,
		     int count)
{
	char buf[256];
	const char *frames[64];
	int n = 0;
	snprintf(buf, sizeof(buf), "%s", stack);
	for (char *s = strtok(buf, ";"); s && n < 64; s = strtok(NULL, ";"))
		frames[n++] = s;
	for (int i = 0; i < count; i++)
		profile_add(p, frames, n, t_ms);
}

static const struct profile_node *child_named(const struct profile_node *v,
					      const char *name)
{
	for (v = v->child; v; v = v->next)
		if (!strcmp(v->name, name))
			return v;
	return NULL;
}

static int children(const struct profile_node *v)
{
	int n = 0;
	for (v = v->child; v; v = v->next)
		n++;
	return n;
}

static const struct profile_fn *fn_named(const struct profile_fn *f, size_t n,
					 const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(f[i].name, name))
			return &f[i];
	return NULL;
}

/* "name samples,name samples" of edges, for one is() */
static void edges_text(const struct profile_edge *e, size_t n, char *out,
		       size_t size)
{
	size_t len = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n && len < size; i++)
		len += (size_t)snprintf(out + len, size - len, "%s%s %lu",
					i ? "," : "", e[i].name, e[i].samples);
}

static void self_and_total(void)
{
	struct profile *p = profile_new();
	struct profile_fn *f;
	add_text(p, "main;a", 1, 80);
	add_text(p, "main;b", 2, 20);
	size_t n = profile_functions(profile_tree(p), &f);
	is_num(n, 3, "80/20: three functions");
	ok(n == 3 && !strcmp(f[0].name, "a") && !strcmp(f[1].name, "b") &&
	   !strcmp(f[2].name, "main"), "sorted by self");
	is_num(f[0].self, 80, "a: self 80");
	is_num(f[0].total, 80, "a: total 80");
	is_num(f[1].self, 20, "b: self 20");
	is_num(f[2].self, 0, "main: self 0");
	is_num(f[2].total, 100, "main: total 100");
	is_num(profile_tree(p)->total, 100, "the root's total: every sample");
	is_num(profile_samples(p), 100, "samples counted");
	free(f);
	profile_free(p);
}

static void recursion(void)
{
	struct profile *p = profile_new();
	const char *frames[31];
	struct profile_fn *f;
	frames[0] = "init";
	for (int i = 1; i <= 30; i++)
		frames[i] = "loop";
	for (int i = 0; i < 50; i++)
		profile_add(p, frames, 31, i);
	add_text(p, "init;other", 60, 10);
	size_t n = profile_functions(profile_tree(p), &f);
	const struct profile_fn *loop = fn_named(f, n, "loop");
	const struct profile_fn *init = fn_named(f, n, "init");
	is_num(n, 3, "recursion: three functions");
	ok(loop && loop->self == 50, "recursion: self of the leaf");
	if (!ok(loop && loop->total == 50,
		"recursion 30 deep: total once a sample"))
		printf("#   total %lu\n", loop ? loop->total : 0);
	ok(init && init->total == 60 && init->total == profile_tree(p)->total,
	   "the first frame's total is every sample");
	free(f);

	struct profile_edge *e;
	char text[256];
	n = profile_callees(profile_tree(p), "loop", &e);
	edges_text(e, n, text, sizeof(text));
	is(text, "loop 1450", "loop calls itself: 29 levels of 50");
	free(e);
	n = profile_callers(profile_tree(p), "loop", &e);
	edges_text(e, n, text, sizeof(text));
	is(text, "loop 1450,init 50", "loop's callers: itself and init");
	free(e);
	profile_free(p);
}

/* main;a;b x3, main;a;c x2, main;b x4, main;a;a;b x1 */
static struct profile *small_tree(void)
{
	struct profile *p = profile_new();
	add_text(p, "main;a;b", 1, 3);
	add_text(p, "main;a;c", 2, 2);
	add_text(p, "main;b", 3, 4);
	add_text(p, "main;a;a;b", 4, 1);
	return p;
}

static void callers_callees(void)
{
	struct profile *p = small_tree();
	const struct profile_node *root = profile_tree(p);
	struct profile_edge *e;
	char text[256];
	size_t n;

	n = profile_callees(root, "a", &e);
	edges_text(e, n, text, sizeof(text));
	is(text, "b 4,c 2,a 1", "callees of a, over both places");
	free(e);
	n = profile_callers(root, "b", &e);
	edges_text(e, n, text, sizeof(text));
	is(text, "a 4,main 4", "callers of b, ties by name");
	free(e);
	n = profile_callers(root, "a", &e);
	edges_text(e, n, text, sizeof(text));
	is(text, "main 6,a 1", "callers of a, itself included");
	free(e);
	n = profile_callers(root, "main", &e);
	is_num(n, 0, "the first frame has no caller");
	free(e);
	n = profile_callees(root, "c", &e);
	is_num(n, 0, "a leaf calls nothing");
	free(e);
	n = profile_callees(root, "nowhere", &e);
	is_num(n, 0, "an unknown name: nothing");
	free(e);
	profile_free(p);
}

static void collapsed(void)
{
	struct profile *p = small_tree();
	struct sbuf sb = SBUF_INIT;
	profile_collapsed(profile_tree(p), &sb);
	is(sbuf_str(&sb), "main;a;b 3\nmain;a;c 2\nmain;a;a;b 1\nmain;b 4\n",
	   "collapsed: a line a stack, in tree order");
	unsigned long sum = 0;
	for (const char *l = sbuf_str(&sb); *l; l = strchr(l, '\n') + 1)
		sum += strtoul(strchr(l, ' ') + 1, NULL, 10);
	is_num(sum, profile_samples(p), "collapsed: counts sum to the samples");
	profile_free(p);

	p = profile_new();
	const char *odd[] = { "m:f/1", "x y;z\tw\nv", "g" };
	profile_add(p, odd, 1, 0);
	profile_add(p, odd, 3, 0);
	profile_add(p, odd, 3, 0);
	sbuf_reset(&sb);
	profile_collapsed(profile_tree(p), &sb);
	is(sbuf_str(&sb), "m:f/1 1\nm:f/1;x_y_z_w_v;g 2\n",
	   "collapsed: separators in a frame as '_', an inner stack first");
	profile_free(p);

	p = profile_new();
	sbuf_reset(&sb);
	profile_collapsed(profile_tree(p), &sb);
	is(sbuf_str(&sb), "", "collapsed: nothing for no samples");
	sbuf_release(&sb);
	profile_free(p);
}

/* ---------------------------------------------------------------------------
 * A small JSON reader that says whether a text is one well-formed value.
 */

static const char *js_value(const char *s, int depth);

static const char *js_ws(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	return s;
}

static const char *js_string(const char *s)
{
	if (*s != '"')
		return NULL;
	for (s++; *s != '"'; s++) {
		if (!*s || (unsigned char)*s < 0x20)
			return NULL;
		if (*s != '\\')
			continue;
		s++;
		if (*s == 'u') {
			for (int i = 1; i <= 4; i++)
				if (!strchr("0123456789abcdefABCDEF", s[i]) ||
				    !s[i])
					return NULL;
			s += 4;
		} else if (!*s || !strchr("\"\\/bfnrt", *s)) {
			return NULL;
		}
	}
	return s + 1;
}

static const char *js_digits(const char *s)
{
	if (*s < '0' || *s > '9')
		return NULL;
	while (*s >= '0' && *s <= '9')
		s++;
	return s;
}

static const char *js_number(const char *s)
{
	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (!(s = js_digits(s)))
		return NULL;
	if (*s == '.' && !(s = js_digits(s + 1)))
		return NULL;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		s = js_digits(s);
	}
	return s;
}

/* [ v, ... ] or { "k": v, ... } */
static const char *js_list(const char *s, int depth, char close)
{
	s = js_ws(s + 1);
	if (*s == close)
		return s + 1;
	for (;;) {
		if (close == '}') {
			if (!(s = js_string(s)))
				return NULL;
			s = js_ws(s);
			if (*s != ':')
				return NULL;
			s = js_ws(s + 1);
		}
		if (!(s = js_value(s, depth + 1)))
			return NULL;
		s = js_ws(s);
		if (*s == close)
			return s + 1;
		if (*s != ',')
			return NULL;
		s = js_ws(s + 1);
	}
}

static const char *js_value(const char *s, int depth)
{
	if (depth > 64)
		return NULL;
	s = js_ws(s);
	switch (*s) {
	case '{': return js_list(s, depth, '}');
	case '[': return js_list(s, depth, ']');
	case '"': return js_string(s);
	case 't': return strncmp(s, "true", 4) ? NULL : s + 4;
	case 'f': return strncmp(s, "false", 5) ? NULL : s + 5;
	case 'n': return strncmp(s, "null", 4) ? NULL : s + 4;
	default: return js_number(s);
	}
}

static bool json_valid(const char *s)
{
	s = js_value(s, 0);
	return s && !*js_ws(s);
}

/* the sum of the numbers of the array after key */
static unsigned long json_sum(const char *s, const char *key)
{
	unsigned long sum = 0;
	s = strstr(s, key);
	if (!s)
		return 0;
	s += strlen(key);
	while (*s && *s != ']') {
		char *end;
		sum += strtoul(s, &end, 10);
		s = *end == ',' ? end + 1 : end;
	}
	return sum;
}

static void speedscope(void)
{
	struct profile *p = profile_new();
	struct sbuf sb = SBUF_INIT;
	const char *qx[] = { "main", "q\"x" };
	add_text(p, "main;a", 0, 2);
	profile_add(p, qx, 2, 0);
	profile_speedscope(profile_tree(p), "node@host", &sb);
	is(sbuf_str(&sb), "{\"$schema\":\"https://www.speedscope.app/"
	   "file-format-schema.json\",\"shared\":{\"frames\":[{\"name\":"
	   "\"main\"},{\"name\":\"a\"},{\"name\":\"q\\\"x\"}]},\"profiles\":"
	   "[{\"type\":\"sampled\",\"name\":\"node@host\",\"unit\":\"none\","
	   "\"startValue\":0,\"endValue\":3,\"samples\":[[0,1],[0,2]],"
	   "\"weights\":[2,1]}],\"name\":\"node@host\","
	   "\"exporter\":\"beamscope\"}\n", "speedscope: the whole text");
	ok(json_valid(sbuf_str(&sb)), "speedscope: well-formed JSON");
	profile_free(p);

	p = small_tree();
	sbuf_reset(&sb);
	profile_speedscope(profile_tree(p), "small", &sb);
	ok(strstr(sbuf_str(&sb), "\"frames\":[{\"name\":\"main\"},{\"name\":"
		  "\"a\"},{\"name\":\"b\"},{\"name\":\"c\"}]}"),
	   "speedscope: a frame a name, however often it is met");
	if (!ok(strstr(sbuf_str(&sb), "\"samples\":[[0,1,2],[0,1,3],"
		       "[0,1,1,2],[0,2]],\"weights\":[3,2,1,4]"),
		"speedscope: a sample a stack, root first, weighed by self"))
		printf("#   %s", sbuf_str(&sb));
	profile_free(p);

	p = profile_new();
	const char *odd[] = { "b\\s\x01\xff\xc3\xa9\t" };
	profile_add(p, odd, 1, 0);
	sbuf_reset(&sb);
	profile_speedscope(profile_tree(p), "tab\there", &sb);
	ok(strstr(sbuf_str(&sb), "{\"name\":\"b\\\\s\\u0001\\ufffd\xc3\xa9"
		  "\\u0009\"}"), "speedscope: a frame escaped");
	ok(strstr(sbuf_str(&sb), "\"name\":\"tab\\u0009here\""),
	   "speedscope: the profile's name escaped");
	ok(json_valid(sbuf_str(&sb)), "speedscope: still well-formed");
	profile_free(p);

	p = profile_new();
	sbuf_reset(&sb);
	profile_speedscope(profile_tree(p), "none", &sb);
	ok(json_valid(sbuf_str(&sb)) &&
	   strstr(sbuf_str(&sb), "\"frames\":[]") &&
	   strstr(sbuf_str(&sb), "\"endValue\":0,\"samples\":[],"
		  "\"weights\":[]"), "speedscope: no samples, empty arrays");
	profile_free(p);
	sbuf_release(&sb);
}

/* ---------------------------------------------------------------------------
 * The window, its ring, deep and wide trees, clearing.
 */

static void window(void)
{
	struct profile *p = profile_new();
	const struct profile_node *w, *c;
	for (int t = 0; t < 10; t++)
		add_text(p, "old", t, 1);
	for (int t = 100; t < 105; t++)
		add_text(p, "new;x", t, 1);

	w = profile_window(p, 100);
	ok(w != profile_tree(p), "the window is a tree of its own");
	is_num(w->total, 5, "window from 100: the five recent samples");
	c = child_named(w, "new");
	ok(children(w) == 1 && c && c->total == 5 && !strcmp(c->child->name, "x")
	   && c->child->self == 5, "window from 100: only the new stack");
	is_num(profile_window(p, 0)->total, 15, "window from 0: all");
	w = profile_window(p, 105);
	ok(w->total == 0 && !w->child, "window from 105: empty");
	is_num(profile_window(p, INT64_MIN)->total, 15, "window from ever");
	is_num(profile_tree(p)->total, 15, "the cumulative tree unchanged");

	add_text(p, "old;y", 200, 2);
	w = profile_window(p, 100);
	c = child_named(w, "old");
	ok(w->total == 7 && children(w) == 2 && !strcmp(w->child->name, "new")
	   && c && c->total == 2 && c->self == 0 && c->child->self == 2,
	   "window again: children as first seen in it, totals summed");

	profile_clear(p);
	ok(profile_samples(p) == 0 && profile_tree(p)->total == 0 &&
	   !profile_tree(p)->child, "cleared: no samples");
	w = profile_window(p, INT64_MIN);
	ok(w->total == 0 && !w->child, "cleared: the window empty");
	add_text(p, "new;z", 300, 1);
	w = profile_window(p, 0);
	ok(w->total == 1 && !strcmp(w->child->child->name, "z"),
	   "cleared: samples taken again");
	profile_free(p);
}

static void ring(void)
{
	struct profile *p = profile_new();
	const char *old[] = { "old" }, *young[] = { "young" };
	for (int i = 0; i < 10; i++)
		profile_add(p, old, 1, 0);
	for (long i = 0; i < PROFILE_SAMPLES_MAX; i++)
		profile_add(p, young, 1, 1);
	const struct profile_node *w = profile_window(p, INT64_MIN);
	is_num(w->total, PROFILE_SAMPLES_MAX, "the ring keeps the newest");
	ok(children(w) == 1 && !strcmp(w->child->name, "young"),
	   "the ring forgot the oldest");
	is_num(profile_samples(p), PROFILE_SAMPLES_MAX + 10L,
	       "samples: cumulative");
	ok(profile_tree(p)->total == PROFILE_SAMPLES_MAX + 10UL &&
	   child_named(profile_tree(p), "old"),
	   "the cumulative tree forgets nothing");
	profile_free(p);
}

static void deep(void)
{
	struct profile *p = profile_new();
	static char names[600][16];
	const char *frames[600];
	for (int i = 0; i < 600; i++) {
		snprintf(names[i], sizeof(names[i]), "f%d", i);
		frames[i] = names[i];
	}
	profile_add(p, frames, 600, 0);
	profile_add(p, frames, PROFILE_DEPTH_MAX, 0);
	const struct profile_node *v = profile_tree(p), *cut = NULL;
	int depth = 0;
	while (v->child) {
		v = v->child;
		depth++;
		if (depth == PROFILE_DEPTH_MAX - 1)
			cut = v;
	}
	is_num(depth, PROFILE_DEPTH_MAX, "a deep stack cut to the most");
	ok(cut && !strcmp(cut->name, "f510") && children(cut) == 2 &&
	   !strcmp(cut->child->name, "...") && cut->child->self == 1 &&
	   !strcmp(cut->child->next->name, "f511") &&
	   cut->child->next->self == 1, "its last frame \"...\"; a stack "
	   "of the most depth kept whole");
	profile_free(p);
}

static void wide(void)
{
	struct profile *p = profile_new();
	char name[16];
	const char *frames[2] = { "main", name };
	for (int i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "c%d", i);
		profile_add(p, frames, 2, 0);
	}
	for (int i = 4999; i >= 0; i--) {
		snprintf(name, sizeof(name), "c%d", i);
		profile_add(p, frames, 2, 0);
	}
	const struct profile_node *m = profile_tree(p)->child, *v;
	bool each = true;
	for (v = m->child; v; v = v->next)
		each = each && v->total == 2 && v->self == 2;
	ok(children(m) == 5000 && each, "5000 children, each found again");
	for (v = m->child; v && v->next; v = v->next)
		;
	ok(!strcmp(m->child->name, "c0") && v && !strcmp(v->name, "c4999"),
	   "children in the order first seen");
	is_num(m->total, 10000, "their caller's total");
	profile_free(p);
}

/* ---------------------------------------------------------------------------
 * Random stacks over a few names (recursion often), against plain counts
 * of the same samples.
 */

#define R_NAMES 6
#define R_SAMPLES 3000
#define R_DEPTH 12

static const char *const r_name[R_NAMES] = { "a", "b", "c", "d", "e", "f" };

struct ref {
	unsigned long self[R_NAMES], total[R_NAMES];
	unsigned long callers[R_NAMES], callees[R_NAMES];   /* of "a" */
	unsigned long samples;
};

static void ref_add(struct ref *r, const int *st, int n)
{
	bool seen[R_NAMES] = { false };
	r->samples++;
	r->self[st[n - 1]]++;
	for (int i = 0; i < n; i++) {
		if (!seen[st[i]])
			r->total[st[i]]++;
		seen[st[i]] = true;
		if (st[i] != 0)
			continue;
		if (i > 0)
			r->callers[st[i - 1]]++;
		if (i + 1 < n)
			r->callees[st[i + 1]]++;
	}
}

static int name_index(const char *name)
{
	for (int i = 0; i < R_NAMES; i++)
		if (!strcmp(r_name[i], name))
			return i;
	return -1;
}

static bool fns_match(const struct profile_node *root, const struct ref *r,
		      const char *what)
{
	struct profile_fn *f;
	size_t n = profile_functions(root, &f);
	size_t want = 0;
	bool same = true;
	for (int i = 0; i < R_NAMES; i++)
		want += r->total[i] > 0;
	if (n != want) {
		printf("#   %s: %zu functions, expected %zu\n", what, n, want);
		same = false;
	}
	for (size_t i = 0; i < n; i++) {
		int k = name_index(f[i].name);
		if (k < 0 || f[i].self != r->self[k] ||
		    f[i].total != r->total[k]) {
			printf("#   %s: %s self %lu total %lu, expected %lu %lu\n",
			       what, f[i].name, f[i].self, f[i].total,
			       k < 0 ? 0 : r->self[k], k < 0 ? 0 : r->total[k]);
			same = false;
		}
		if (i > 0 && (f[i].self > f[i - 1].self ||
			      (f[i].self == f[i - 1].self &&
			       f[i].total > f[i - 1].total))) {
			printf("#   %s: row %zu out of order\n", what, i);
			same = false;
		}
	}
	free(f);
	return same;
}

static bool edges_match(const struct profile_node *root, bool callers,
			const unsigned long *want)
{
	struct profile_edge *e;
	size_t n = callers ? profile_callers(root, "a", &e)
			   : profile_callees(root, "a", &e);
	size_t nwant = 0;
	bool same = true;
	for (int i = 0; i < R_NAMES; i++)
		nwant += want[i] > 0;
	same = n == nwant;
	for (size_t i = 0; i < n; i++) {
		int k = name_index(e[i].name);
		if (k < 0 || e[i].samples != want[k] ||
		    (i > 0 && e[i].samples > e[i - 1].samples)) {
			printf("#   %s of a: %s %lu, expected %lu\n",
			       callers ? "callers" : "callees", e[i].name,
			       e[i].samples, k < 0 ? 0 : want[k]);
			same = false;
		}
	}
	free(e);
	return same;
}

static void random_stacks(void)
{
	static struct ref all, recent;
	struct profile *p = profile_new();
	struct sbuf sb = SBUF_INIT;
	for (int s = 0; s < R_SAMPLES; s++) {
		int st[R_DEPTH], n = 1 + (int)(rnd() % R_DEPTH);
		const char *frames[R_DEPTH];
		for (int i = 0; i < n; i++) {
			st[i] = (int)(rnd() % R_NAMES);
			frames[i] = r_name[st[i]];
		}
		profile_add(p, frames, n, s);
		ref_add(&all, st, n);
		if (s >= 2000)
			ref_add(&recent, st, n);
	}
	ok(fns_match(profile_tree(p), &all, "cumulative"),
	   "random: functions, cumulative");
	ok(edges_match(profile_tree(p), true, all.callers),
	   "random: callers, cumulative");
	ok(edges_match(profile_tree(p), false, all.callees),
	   "random: callees, cumulative");
	const struct profile_node *w = profile_window(p, 2000);
	is_num(w->total, recent.samples, "random: the window's samples");
	ok(fns_match(w, &recent, "window"), "random: functions, window");
	ok(edges_match(w, true, recent.callers) &&
	   edges_match(w, false, recent.callees),
	   "random: callers and callees, window");

	profile_collapsed(profile_tree(p), &sb);
	unsigned long sum = 0;
	for (const char *l = sbuf_str(&sb); *l; l = strchr(l, '\n') + 1)
		sum += strtoul(strchr(l, ' ') + 1, NULL, 10);
	is_num(sum, R_SAMPLES, "random: collapsed counts sum to the samples");
	sbuf_reset(&sb);
	profile_speedscope(w, "window", &sb);
	ok(json_valid(sbuf_str(&sb)), "random: speedscope well-formed");
	is_num(json_sum(sbuf_str(&sb), "\"weights\":["), recent.samples,
	       "random: speedscope weights sum to the samples");
	sbuf_release(&sb);
	profile_free(p);
}

int main(void)
{
	plan(62);
	self_and_total();
	recursion();
	callers_callees();
	collapsed();
	speedscope();
	window();
	ring();
	deep();
	wide();
	random_stacks();
	return done_testing();
}
