/* Unit tests: the client options of an -ssl_dist_optfile, and what is
 * refused with its line. */
#include <string.h>

#include "distopt.h"
#include "tap.h"

/* text parses (or not: want < 0) into o; err holds the line */
static int parse(const char *text, struct distopt *o, struct sbuf *err)
{
	memset(o, 0, sizeof(*o));
	sbuf_reset(err);
	return distopt_parse(text, "f.conf", o, err);
}

int main(void)
{
	struct distopt o;
	struct sbuf err = SBUF_INIT;
	plan(12);

	ok(parse("%% a comment\n[{server, [{certfile, \"/s.pem\"}, "
		 "{fail_if_no_peer_cert, true}]},\n {client, [{certfile, "
		 "\"/c.pem\"}, {keyfile, \"/c.key\"}, {cacertfile, \"/ca.pem\"}, "
		 "{verify, verify_peer}, {depth, 3}, {versions, ['tlsv1.3']}, "
		 "{password, \"p\\\"w\"}]}].\n", &o, &err) == 0 &&
	   o.on && !strcmp(o.cert, "/c.pem") && !strcmp(o.key, "/c.key") &&
	   !strcmp(o.ca, "/ca.pem") && !strcmp(o.password, "p\"w") &&
	   !o.verify_none && !o.no_host_check,
	   "the client part is read; the rest is skipped");
	ok(parse("[{server, [{certfile, \"/s.pem\"}, {keyfile, \"/s.key\"}, "
		 "{cacertfile, \"/ca.pem\"}]}].", &o, &err) == 0 &&
	   !strcmp(o.cert, "/s.pem") && !strcmp(o.ca, "/ca.pem"),
	   "no client part: the server's");
	ok(parse("[{client, [{verify, verify_none}, "
		 "{server_name_indication, disable}]}]", &o, &err) == 0 &&
	   o.verify_none && o.no_host_check && !o.cert[0],
	   "verify_none and no host check; the final dot may be left out");
	ok(parse("[{client, []}].", &o, &err) == 0 && o.on && !o.cert[0],
	   "an empty client list asks for TLS all the same");

	ok(parse("[{client, [{certfile, \"a\"}\n", &o, &err) < 0 &&
	   !strcmp(sbuf_str(&err), "f.conf, line 2: the file ends inside a term"),
	   "a cut file: where");
	ok(parse("[{client, [{certfile, <<\"a\">>}]}].", &o, &err) < 0 &&
	   strstr(sbuf_str(&err), "line 1: expected a term"), "a binary: refused");
	ok(parse("[{client, [{certfile, a_file}]}].", &o, &err) < 0 &&
	   !strcmp(sbuf_str(&err), "f.conf: {certfile, ...} must hold a file "
		   "name as a string"), "an atom for a file name");
	ok(parse("{client, []}.", &o, &err) < 0 &&
	   strstr(sbuf_str(&err), "expected a list"), "not a list");
	ok(parse("[{other, []}].", &o, &err) < 0 &&
	   strstr(sbuf_str(&err), "no {client, [...]} or {server, [...]}"),
	   "neither part");
	ok(parse("[{client, []}]. [x].", &o, &err) < 0 &&
	   strstr(sbuf_str(&err), "more after the list"), "more after the dot");
	ok(parse("[{client, [{certfile, \"unclosed}]}].", &o, &err) < 0 &&
	   strstr(sbuf_str(&err), "a quote is not closed"), "an open quote");
	{
		char deep[200] = "";
		for (int i = 0; i < 40; i++)
			strcat(deep, "[");
		ok(parse(deep, &o, &err) < 0 &&
		   strstr(sbuf_str(&err), "nested too deep"), "nesting is bounded");
	}
	sbuf_release(&err);
	return done_testing();
}
