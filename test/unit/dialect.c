/*
 * Unit tests: terms rendered as one release's printers print them (the
 * TD_* flags a target's agent reports), and the table of Elixir structs
 * that says how a struct's fields are ordered.  The texts expected here
 * are what OTP 25, 27 and 29 and Elixir 1.14, 1.18 and 1.20 printed for
 * the same terms (test/t0360-render.sh compares with the printers
 * themselves on each release).
 */
#include <ei.h>
#include <stdlib.h>
#include <string.h>

#include "structs.h"
#include "tap.h"
#include "term.h"

static char text[4096];

static const char *render(enum term_syntax syn, const struct term_dialect *d,
			  ei_x_buff *x)
{
	struct sbuf sb = SBUF_INIT;
	int idx = 1;
	int rv = term_render_dia(syn, d, x->buff, &idx, "t@h", &sb, 0, NULL,
				 false);
	snprintf(text, sizeof(text), "%s", rv < 0 ? "(error)" : sbuf_str(&sb));
	if (rv == 0 && idx != x->index)
		snprintf(text, sizeof(text), "(index %d, want %d)", idx, x->index);
	sbuf_release(&sb);
	return text;
}

static ei_x_buff fresh(void)
{
	ei_x_buff x;
	ei_x_new_with_version(&x);
	return x;
}

static ei_x_buff binary(const char *s, size_t n)
{
	ei_x_buff x = fresh();
	ei_x_encode_binary(&x, s, (long)n);
	return x;
}

/* %{__struct__: mod, the keys given: 1, 2, ...} in that order */
static ei_x_buff struct_map(const char *mod, const char *const *keys, int n)
{
	ei_x_buff x = fresh();
	ei_x_encode_map_header(&x, n + 1);
	ei_x_encode_atom(&x, "__struct__");
	ei_x_encode_atom(&x, mod);
	for (int i = 0; i < n; i++) {
		ei_x_encode_atom(&x, keys[i]);
		ei_x_encode_long(&x, i + 1);
	}
	return x;
}

int main(void)
{
	struct term_dialect none = { 0, NULL }, d = { 0, NULL };
	ei_x_buff x;

	plan(24);

	/* ~tp on a binary that is UTF-8 at its start, then not */
	static const char lead[] = { (char)200, (char)160, (char)233, 'a' };
	x = binary(lead, sizeof(lead));
	is(render(TERM_ERLANG, &none, &x), "<<\"\xc3\x88\xc2\xa0\xc3\xa9" "a\">>",
	   "OTP 25/27: not UTF-8 throughout, so read as Latin-1");
	d.flags = TD_BIN_UTF8_LEAD;
	is(render(TERM_ERLANG, &d, &x), "<<200,160,233,97>>",
	   "OTP 29: U+0220 at its start is not printable: bytes");
	ei_x_free(&x);
	static const char m[] = { 'M', (char)220, (char)171 };
	x = binary(m, sizeof(m));
	is(render(TERM_ERLANG, &d, &x), "<<77,220,171>>",
	   "OTP 29: ASCII, then a character past Latin-1: bytes");
	ei_x_free(&x);
	static const char e[] = { 'a', (char)233 };
	x = binary(e, sizeof(e));
	is(render(TERM_ERLANG, &d, &x), "<<\"a\xc3\xa9\">>",
	   "OTP 29: no UTF-8 before a printable character: Latin-1 still");
	ei_x_free(&x);
	x = binary("caf\xc3\xa9", 5);
	is(render(TERM_ERLANG, &d, &x), "<<\"caf\xc3\xa9\"/utf8>>",
	   "OTP 29: UTF-8 throughout stays /utf8");
	ei_x_free(&x);

	/* a map of 33 pairs, encoded 1..33 */
	x = fresh();
	ei_x_encode_map_header(&x, 33);
	for (int k = 1; k <= 33; k++) {
		ei_x_encode_long(&x, k);
		ei_x_encode_long(&x, k);
	}
	d.flags = 0;
	ok(!strncmp(render(TERM_ERLANG, &d, &x), "#{33 => 33,32 => 32,", 20),
	   "io_lib walks a hash trie the other way round");
	ok(!strncmp(render(TERM_ELIXIR, &d, &x), "%{1 => 1, 2 => 2,", 17),
	   "Elixir 1.14/1.18 walk it as encoded");
	d.flags = TD_EX_MAP_BACK | TD_ERL_MAP_AS_SENT;
	ok(!strncmp(render(TERM_ELIXIR, &d, &x), "%{33 => 33, 32 => 32,", 21),
	   "OTP 29's Elixir the other way round");
	ok(!strncmp(render(TERM_ERLANG, &d, &x), "#{1 => 1,2 => 2,", 16),
	   "a release whose io_lib walks it as encoded");
	ei_x_free(&x);

	/* charlists */
	x = fresh();
	ei_x_encode_string(&x, "a\"b");
	d.flags = 0;
	is(render(TERM_ELIXIR, &d, &x), "'a\"b'", "Elixir 1.14: 'a\"b'");
	d.flags = TD_EX_SIGIL_C;
	is(render(TERM_ELIXIR, &d, &x), "~c\"a\\\"b\"", "Elixir 1.15: ~c\"a\\\"b\"");
	ei_x_free(&x);

	/* characters that show as nothing or a blank */
	x = binary("a\xc2\xa0" "b\xe2\x80\x8b", 7);
	d.flags = 0;
	is(render(TERM_ELIXIR, &d, &x), "\"a\xc2\xa0" "b\xe2\x80\x8b\"",
	   "Elixir 1.14 writes them as they are");
	d.flags = TD_EX_ESC_INVISIBLE;
	is(render(TERM_ELIXIR, &d, &x), "\"a\\u00A0b\\u200B\"",
	   "Elixir 1.18 as \\uXXXX");
	ei_x_free(&x);

	/* structs: fields in the order defined, as the target said */
	struct structs t;
	structs_init(&t);
	static const char *const line_f[] = { "sku", "qty", "at" };
	static const size_t line_l[] = { 3, 3, 2 };
	ok(structs_set(&t, "Elixir.Line", 11, line_f, line_l, 3) == 0,
	   "a struct's fields kept");
	ok(structs_set(&t, "Elixir.Plain", 12, NULL, NULL, -1) == 0,
	   "a module that is no struct kept");
	d = (struct term_dialect){ TD_EX_STRUCTS, &t };
	static const char *const held[] = { "at", "qty", "sku" };
	x = struct_map("Elixir.Line", held, 3);
	is(render(TERM_ELIXIR, &none, &x), "%Line{at: 1, qty: 2, sku: 3}",
	   "without the target's word: in the order the map holds them");
	is(render(TERM_ELIXIR, &d, &x), "%Line{sku: 3, qty: 2, at: 1}",
	   "with it: in the order the module defines them");
	ei_x_free(&x);
	x = struct_map("Elixir.Line", held, 2);
	is(render(TERM_ELIXIR, &d, &x), "%{__struct__: Line, at: 1, qty: 2}",
	   "a field missing: a map");
	ei_x_free(&x);
	static const char *const more[] = { "at", "qty", "sku", "x" };
	x = struct_map("Elixir.Line", more, 4);
	is(render(TERM_ELIXIR, &d, &x),
	   "%{__struct__: Line, at: 1, qty: 2, sku: 3, x: 4}", "a key too many: a map");
	ei_x_free(&x);
	static const char *const cut[] = { "qty", "..." };
	x = struct_map("Elixir.Line", cut, 2);
	is(render(TERM_ELIXIR, &d, &x), "%Line{qty: 1, ...: 2}",
	   "a struct the tracer cut: the fields it kept, then the mark");
	ei_x_free(&x);
	x = struct_map("Elixir.Plain", held, 1);
	is(render(TERM_ELIXIR, &d, &x), "%{__struct__: Plain, at: 1}",
	   "a module that is no struct: a map");
	ei_x_free(&x);
	x = struct_map("Elixir.Later", held, 1);
	is(render(TERM_ELIXIR, &d, &x), "%Later{at: 1}",
	   "a module not said yet: a struct, in the map's order");
	render(TERM_ELIXIR, &d, &x);
	ei_x_free(&x);
	char *asks[8];
	int n = structs_take_asks(&t, asks, 8);
	ok(n == 1 && !strcmp(asks[0], "Elixir.Later"),
	   "and it is asked about, once");
	for (int i = 0; i < n; i++)
		free(asks[i]);
	ok(structs_take_asks(&t, asks, 8) == 0, "nothing more to ask");
	structs_release(&t);
	return done_testing();
}
