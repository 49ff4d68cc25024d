/* Unit tests: rendering ei-encoded terms as Erlang text. */
#include <ei.h>

#include "tap.h"
#include "term.h"

static char text[4096];

/* Render x (version byte first) with a limit; returns the text. */
static const char *render_in(enum term_syntax syn, ei_x_buff *x, size_t max,
			     int *cut_out)
{
	struct sbuf sb = SBUF_INIT;
	int idx = 1;
	bool cut = false;
	int rv = term_render_in(syn, x->buff, &idx, "t@h", &sb, max, &cut);
	snprintf(text, sizeof(text), "%s", rv < 0 ? "(error)" : sbuf_str(&sb));
	if (rv == 0 && idx != x->index)
		snprintf(text, sizeof(text), "(index %d, want %d)", idx, x->index);
	if (cut_out)
		*cut_out = cut;
	sbuf_release(&sb);
	ei_x_free(x);
	return text;
}

static const char *render(ei_x_buff *x, size_t max, int *cut_out)
{
	return render_in(TERM_ERLANG, x, max, cut_out);
}

static ei_x_buff fresh(void)
{
	ei_x_buff x;
	ei_x_new_with_version(&x);
	return x;
}

int main(void)
{
	ei_x_buff x;
	int cut;

	plan(35);

	x = fresh(); ei_x_encode_atom(&x, "hello");
	is(render(&x, 0, NULL), "hello", "bare atom");
	x = fresh(); ei_x_encode_atom(&x, "Hello world");
	is(render(&x, 0, NULL), "'Hello world'", "atom needing quotes");
	x = fresh(); ei_x_encode_atom(&x, "receive");
	is(render(&x, 0, NULL), "'receive'", "reserved word is quoted");
	x = fresh(); ei_x_encode_atom(&x, "it's");
	is(render(&x, 0, NULL), "'it\\'s'", "quote inside atom escaped");
	x = fresh(); ei_x_encode_long(&x, -42);
	is(render(&x, 0, NULL), "-42", "small integer");
	x = fresh(); ei_x_encode_longlong(&x, 1234567890123LL);
	is(render(&x, 0, NULL), "1234567890123", "big integer");
	x = fresh(); ei_x_encode_double(&x, 1.5);
	is(render(&x, 0, NULL), "1.5", "float");
	x = fresh(); ei_x_encode_double(&x, 3.0);
	is(render(&x, 0, NULL), "3.0", "whole float keeps .0");
	x = fresh(); ei_x_encode_string(&x, "abc");
	is(render(&x, 0, NULL), "\"abc\"", "printable string");
	x = fresh(); ei_x_encode_string(&x, "\x01\x02");
	is(render(&x, 0, NULL), "[1,2]", "unprintable string is a list");
	x = fresh(); ei_x_encode_binary(&x, "hi\n", 3);
	is(render(&x, 0, NULL), "<<\"hi\\n\">>", "printable binary");
	x = fresh(); ei_x_encode_binary(&x, "\x00\xff\x1b", 3);
	is(render(&x, 0, NULL), "<<0,255,27>>", "binary with escape byte stays bytes");
	/* bitstrings that are not whole bytes: the last byte's high bits */
	x = fresh(); ei_x_encode_bitstring(&x, "\x20", 0, 3);
	is(render(&x, 0, NULL), "<<1:3>>", "bitstring of 3 bits");
	x = fresh(); ei_x_encode_bitstring(&x, "\x01\x02\x30", 0, 20);
	is(render(&x, 0, NULL), "<<1,2,3:4>>", "bitstring of 20 bits");
	x = fresh(); ei_x_encode_bitstring(&x, "\x20", 0, 3);
	is(render_in(TERM_ELIXIR, &x, 0, NULL), "<<1::size(3)>>",
	   "bitstring of 3 bits, Elixir");
	x = fresh(); ei_x_encode_bitstring(&x, "\x01\x02\x30", 0, 20);
	is(render_in(TERM_ELIXIR, &x, 0, NULL), "<<1, 2, 3::size(4)>>",
	   "bitstring of 20 bits, Elixir");

	x = fresh();
	ei_x_encode_tuple_header(&x, 3);
	ei_x_encode_atom(&x, "ok");
	ei_x_encode_list_header(&x, 2);
	ei_x_encode_long(&x, 1);
	ei_x_encode_long(&x, 2);
	ei_x_encode_empty_list(&x);
	ei_x_encode_map_header(&x, 1);
	ei_x_encode_atom(&x, "k");
	ei_x_encode_atom(&x, "v");
	is(render(&x, 0, NULL), "{ok,[1,2],#{k => v}}", "tuple, list, map");

	x = fresh();
	ei_x_encode_list_header(&x, 1);
	ei_x_encode_atom(&x, "a");
	ei_x_encode_atom(&x, "...");
	is(render(&x, 0, NULL), "[a|...]", "cut marker as list tail");

	erlang_pid p = { .num = 85, .serial = 0, .creation = 1 };
	strcpy(p.node, "t@h");
	x = fresh(); ei_x_encode_pid(&x, &p);
	is(render(&x, 0, NULL), "<0.85.0>", "local pid as the shell prints it");
	strcpy(p.node, "other@h");
	x = fresh(); ei_x_encode_pid(&x, &p);
	is(render(&x, 0, NULL), "<other@h.85.0>", "remote pid names its node");

	x = fresh(); ei_x_encode_binary(&x, "abcdefghij", 10);
	is(render(&x, 6, &cut), "<<\"abc", "limit cuts the text");
	ok(cut, "and says so");

	x = fresh(); ei_x_encode_binary(&x, "abc", 3);
	render(&x, 100, &cut);
	ok(!cut, "no cut when it fits");

	/* deep nesting: bounded depth, index still right */
	x = fresh();
	for (int i = 0; i < 200; i++)
		ei_x_encode_tuple_header(&x, 1);
	ei_x_encode_atom(&x, "core");
	const char *s = render(&x, 0, &cut);
	ok(strstr(s, "...") && s[0] == '{', "deep nesting stops at a fixed depth");
	ok(cut, "deep nesting reports a cut");

	/* malformed input is reported, not crashed on */
	char bad[] = { (char)131, 'z', 0, 0 };
	struct sbuf sb = SBUF_INIT;
	int idx = 1;
	ok(term_render(bad, &idx, "t@h", &sb, 0, NULL) < 0, "unknown tag is an error");
	sbuf_release(&sb);

	/* arguments: each on its own, the list never a string */
	for (int ref = 0; ref < 2; ref++) {
		bool c = false;
		x = fresh();
		ei_x_encode_string(&x, "\t\n");
		idx = 1;
		ok(term_render_args(TERM_ERLANG, x.buff, &idx, "t@h", &sb, 0, &c, ref) == 0 &&
		   idx == x.index && !strcmp(sbuf_str(&sb), "[9,10]") && !c,
		   ref ? "[9,10] as arguments, through ei: [9,10]" :
		   "[9,10] as arguments: [9,10], not \"\\t\\n\"");
		sbuf_release(&sb);
		ei_x_free(&x);
	}
	x = fresh();
	ei_x_encode_string(&x, "\t\n");
	idx = 1;
	ok(term_render_args(TERM_ELIXIR, x.buff, &idx, "t@h", &sb, 0, NULL, false) == 0 &&
	   !strcmp(sbuf_str(&sb), "[9, 10]"), "in Elixir, arguments are [9, 10]");
	sbuf_release(&sb);
	ei_x_free(&x);
	x = fresh();
	ei_x_encode_list_header(&x, 2);
	ei_x_encode_string(&x, "hi");
	ei_x_encode_long(&x, 9);
	ei_x_encode_empty_list(&x);
	idx = 1;
	ok(term_render_args(TERM_ERLANG, x.buff, &idx, "t@h", &sb, 0, NULL, false) == 0 &&
	   !strcmp(sbuf_str(&sb), "[\"hi\",9]"), "a string argument stays a string");
	sbuf_release(&sb);
	ei_x_free(&x);
	x = fresh();
	ei_x_encode_string(&x, "abcdefghijklmnopqrstuvwxyz");
	idx = 1;
	bool c = false;
	ok(term_render_args(TERM_ERLANG, x.buff, &idx, "t@h", &sb, 10, &c, false) == 0 &&
	   idx == x.index && c && sb.len == 10, "arguments cut to size");
	sbuf_release(&sb);
	ei_x_free(&x);

	term_call_text(&sb, "m:f/1", "[9]", false);
	is(sbuf_str(&sb), "m:f(9)", "a call as the code reads");
	sbuf_reset(&sb);
	term_call_text(&sb, "m:f/0", "[]", false);
	is(sbuf_str(&sb), "m:f()", "no arguments");
	sbuf_reset(&sb);
	term_call_text(&sb, "m:f/3", "[1,{a,b", true);
	is(sbuf_str(&sb), "m:f(1,{a,b ...)", "cut arguments");
	sbuf_reset(&sb);
	term_call_text(&sb, "m:f/2", NULL, false);
	is(sbuf_str(&sb), "m:f/2", "no arguments shipped: m:f/N");
	sbuf_release(&sb);
	return done_testing();
}
