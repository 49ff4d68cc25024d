/* pretty: a term's text laid out on lines of a width. */
#include "pretty.h"

#include <time.h>

#include "tap.h"

static const char *lay(const char *text, int width)
{
	static struct sbuf out = SBUF_INIT;
	sbuf_reset(&out);
	pretty_term(text, width, &out);
	return sbuf_str(&out);
}

/* every line is at most width columns, and the layout only adds
 * newlines and spaces */
static int keeps(const char *text, int width)
{
	const char *got = lay(text, width);
	int col = 0;
	for (const char *p = got; *p; p++) {
		if (*p == '\n')
			col = 0;
		else if (((unsigned char)*p & 0xC0) != 0x80 && ++col > width)
			return 0;
	}
	char *flat = malloc(strlen(got) + 1), *q = flat;
	char *want = malloc(strlen(text) + 1), *w = want;
	for (const char *p = got; *p; p++)
		if (*p != '\n' && *p != ' ')
			*q++ = *p;
	*q = '\0';
	for (const char *p = text; *p; p++)
		if (*p != ' ')
			*w++ = *p;
	*w = '\0';
	int same = !strcmp(flat, want);
	free(want);
	if (!same)
		printf("# %s\n# became %s\n", text, flat);
	free(flat);
	return same;
}

/* "[" n times, then "]" n times */
static char *nested(size_t n)
{
	char *t = malloc(2 * n + 1);
	memset(t, '[', n);
	memset(t + n, ']', n);
	t[2 * n] = '\0';
	return t;
}

/* a list of n small tuples, nested in d lists */
static char *wide(size_t n, size_t d)
{
	struct sbuf b = SBUF_INIT;
	for (size_t i = 0; i < d; i++)
		sbuf_addch(&b, '[');
	for (size_t i = 0; i < n; i++)
		sbuf_addf(&b, "%s{k%zu,\"v\"}", i ? "," : "", i);
	for (size_t i = 0; i < d; i++)
		sbuf_addch(&b, ']');
	return b.buf;
}

/* the least of three timings of laying text out, in seconds */
static double timed(const char *text, int width)
{
	double best = 1e9;
	for (int k = 0; k < 3; k++) {
		struct timespec a, b;
		struct sbuf out = SBUF_INIT;
		clock_gettime(CLOCK_MONOTONIC, &a);
		pretty_term(text, width, &out);
		clock_gettime(CLOCK_MONOTONIC, &b);
		sbuf_release(&out);
		double t = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
		if (t < best)
			best = t;
	}
	return best;
}

/* does doubling the text four times cost at most ten times as much? (a
 * linear layout takes four times, a quadratic one sixteen) */
static int linear(char *small, char *big, int width)
{
	double ts = timed(small, width), tb = timed(big, width);
	printf("# %zu bytes: %.4f s, %zu bytes: %.4f s\n", strlen(small), ts,
	       strlen(big), tb);
	free(small);
	free(big);
	return tb < 10 * ts + 0.002;
}

int main(void)
{
	plan(20);
	is(lay("{tick,1}", 40), "{tick,1}\n", "what fits stays on one line");
	is(lay("{state,[alpha,beta,gamma],#{key => {1,2}}}", 20),
	   "{state,\n"
	   " [alpha,beta,gamma],\n"
	   " #{key => {1,2}}}\n",
	   "a group that does not fit: one element per line, aligned");
	is(lay("[1,2,3,4,5,6,7,8,9,10,11,12]", 12),
	   "[1,2,3,4,5,\n"
	   " 6,7,8,9,10,\n"
	   " 11,12]\n",
	   "plain elements fill the lines");
	is(lay("{a,\"x,{y}\",b}", 10),
	   "{a,\n"
	   " \"x,{y}\",\n"
	   " b}\n",
	   "brackets and commas in strings are text");
	is(lay("{msg,\"aaaaaaaaaaaaaaaaaaaa\"}", 10),
	   "{msg,\n"
	   " \"aaaaaaaa\n"
	   " aaaaaaaaa\n"
	   " aaa\"}\n",
	   "a string longer than a line is cut across lines");
	is(lay("{abc,[bcd,cde", 8), "{abc,\n [bcd,\n  cde\n",
	   "a cut text leaves its groups open");
	is(lay("<<\"abc\",1>>", 40), "<<\"abc\",1>>\n", "binaries");
	is(lay("%{a: 1}", 40), "%{a: 1}\n", "elixir maps");
	ok(keeps("{state,[alpha,beta,gamma],#{key => {1,2}},<<\"héllo wörld\">>}", 12),
	   "nothing is lost, utf-8 counts as one column");
	ok(keeps("{{{{{{{{{{{{{{{{{{{{deep,1}}}}}}}}}}}}}}}}}}}}", 16),
	   "deep nesting stays within the width");
	ok(keeps("[{k1,\"v1\"},{k2,'quoted, atom'},{k3,[1,2,3]},{k4,%Struct.Name{a: 1}}]", 10),
	   "quoted atoms and structs");
	ok(keeps("'unclosed quote", 8), "a quote left open");
	ok(keeps("", 20), "nothing");

	/* deep nesting (a recording can hold anything): cut at the depth a
	 * live term is cut, without recursing any deeper */
	char *deep = nested(100000);
	struct sbuf out = SBUF_INIT;
	ok(pretty_term(deep, 78, &out), "100000 groups deep: says it cut");
	free(deep);
	struct sbuf flat = SBUF_INIT;
	for (const char *p = sbuf_str(&out); *p; p++)
		if (*p != ' ' && *p != '\n')
			sbuf_addch(&flat, *p);
	char *want = nested(PRETTY_MAX_DEPTH);
	struct sbuf w = SBUF_INIT;
	sbuf_add(&w, want, PRETTY_MAX_DEPTH);
	sbuf_addstr(&w, "...");
	sbuf_addstr(&w, want + PRETTY_MAX_DEPTH);
	is(sbuf_str(&flat), sbuf_str(&w), "the first 64 groups, then ...");
	int longest = 0, col = 0;
	for (const char *p = sbuf_str(&out); *p; p++) {
		col = *p == '\n' ? 0 : col + 1;
		if (col > longest)
			longest = col;
	}
	ok(longest <= 78, "within the width");
	free(want);
	sbuf_release(&w);
	sbuf_release(&flat);
	sbuf_reset(&out);
	ok(!pretty_term("{a,[b,{c}]}", 78, &out), "a shallow term is not cut");
	want = nested(PRETTY_MAX_DEPTH);
	sbuf_reset(&out);
	ok(!pretty_term(want, 20, &out), "64 deep is kept whole");
	free(want);
	sbuf_release(&out);
	ok(linear(nested(50000), nested(200000), 78),
	   "deep nesting: time linear in the text");
	ok(linear(wide(20000, 60), wide(80000, 60), 78),
	   "a wide term 60 deep: time linear in the text");
	return done_testing();
}
