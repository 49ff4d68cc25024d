/* pretty: a term's text laid out on lines of a width. */
#include "pretty.h"

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

int main(void)
{
	plan(13);
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
	return done_testing();
}
