/*
 * Unit tests: what comes from outside, shown safely: messages escaped
 * (esc), JSON strings without hidden characters, atoms with a NUL or cut
 * inside a character, and cookies redacted (redact).
 */
#include <ei.h>
#include <string.h>

#include "esc.h"
#include "json.h"
#include "redact.h"
#include "tap.h"
#include "term.h"

static char text[4096];

static const char *escaped(const char *s)
{
	struct sbuf sb = SBUF_INIT;
	esc_addstr(&sb, s);
	snprintf(text, sizeof(text), "%s", sb.buf);
	sbuf_release(&sb);
	return text;
}

static const char *json(const char *s)
{
	struct sbuf sb = SBUF_INIT;
	json_string(&sb, s);
	snprintf(text, sizeof(text), "%s", sb.buf);
	sbuf_release(&sb);
	return text;
}

/* An atom from raw bytes (UTF-8 atom ext), rendered with a limit. */
static const char *atom(const char *bytes, size_t n, size_t max, bool *cut)
{
	char buf[600];
	int i = 0;
	buf[i++] = (char)131;
	buf[i++] = 'v';   /* ATOM_UTF8_EXT */
	buf[i++] = (char)(n >> 8);
	buf[i++] = (char)n;
	memcpy(buf + i, bytes, n);
	i += (int)n;
	struct sbuf sb = SBUF_INIT;
	int idx = 1;
	*cut = false;
	int rv = term_render(buf, &idx, "t@h", &sb, max, cut);
	snprintf(text, sizeof(text), "%s", rv < 0 || idx != i ? "(error)" :
		 sbuf_str(&sb));
	sbuf_release(&sb);
	return text;
}

static const char *atom_ref(const char *bytes, size_t n)
{
	char buf[600];
	int i = 0;
	buf[i++] = (char)131;
	buf[i++] = 'v';
	buf[i++] = (char)(n >> 8);
	buf[i++] = (char)n;
	memcpy(buf + i, bytes, n);
	struct sbuf sb = SBUF_INIT;
	int idx = 1;
	int rv = term_render_reference(buf, &idx, "t@h", &sb, 0, NULL);
	snprintf(text, sizeof(text), "%s", rv < 0 ? "(error)" : sbuf_str(&sb));
	sbuf_release(&sb);
	return text;
}

int main(void)
{
	plan(44);

	/* messages */
	is(escaped("node \"a\x1b[31mb\" not found"),
	   "node \"a\\x{1B}[31mb\" not found", "an escape sequence is escaped");
	is(escaped("x\xc2\x9b" "1m"), "x\\x{9B}1m", "a C1 control is escaped");
	is(escaped("a\xe2\x80\xae" "b\xe2\x80\xa8" "c"), "a\\x{202E}b\\x{2028}c",
	   "bidi override and line separator are escaped");
	is(escaped("bad \xff" " byte"), "bad \\x{FF} byte", "a byte that is not UTF-8");
	is(escaped("caf\xc3\xa9 \xe2\x9c\x93"), "caf\xc3\xa9 \xe2\x9c\x93",
	   "plain UTF-8 stays");
	is(escaped(escaped("a\x07" "b")), "a\\x{7}b", "escaping twice changes nothing");
	is(escaped(""), "", "nothing to escape: an empty string, terminated");
	/* what a terminal shows as nothing: format characters and the other
	 * default-ignorable ones */
	is(escaped("a\xe2\x80\x8b" "b"), "a\\x{200B}b", "a zero-width space is escaped");
	is(escaped("\xef\xbb\xbf" "bom"), "\\x{FEFF}bom", "a byte order mark");
	is(escaped("soft\xc2\xad" "hyphen"), "soft\\x{AD}hyphen", "a soft hyphen");
	is(escaped("x\xe2\x80\x8d\xe2\x81\xa0\xe2\x81\xa4" "y"),
	   "x\\x{200D}\\x{2060}\\x{2064}y", "a joiner, a word joiner, an invisible plus");
	is(escaped("t\xf3\xa0\x81\x81" "g\xef\xb8\x8f" "v\xe3\x85\xa4" "f"),
	   "t\\x{E0041}g\\x{FE0F}v\\x{3164}f", "a tag, a variation selector, a filler");
	is(escaped("\xc2\xac\xc2\xae\xe2\x80\x90\xe6\xbc\xa2\xe5\xad\x97\xef\xbc\xa1"),
	   "\xc2\xac\xc2\xae\xe2\x80\x90\xe6\xbc\xa2\xe5\xad\x97\xef\xbc\xa1",
	   "their neighbours and wide characters stay");
	ok(!esc_needed(text, strlen(text)), "escaped text needs nothing more");

	/* JSON strings */
	is(json("a\xc2\x85" "b"), "\"a\\u0085b\"", "JSON: C1 control as \\u");
	is(json("\xe2\x80\xa8\xe2\x80\xae"), "\"\\u2028\\u202e\"",
	   "JSON: U+2028 and U+202E as \\u");
	is(json("\xc3\xa9"), "\"\xc3\xa9\"", "JSON: other characters stay");
	is(json("a\xe2\x80\x8b\xc2\xad\xef\xbb\xbf" "b"), "\"a\\u200b\\u00ad\\ufeffb\"",
	   "JSON: zero-width space, soft hyphen and BOM as \\u");
	is(json("\xf3\xa0\x81\x81"), "\"\\udb40\\udc41\"",
	   "JSON: a tag past U+FFFF as a surrogate pair");

	/* atoms */
	bool cut;
	is(atom("a\0b", 3, 0, &cut), "'a\\000b'", "an atom with a NUL shows it");
	ok(!cut, "and is not cut");
	is(atom_ref("a\0b", 3), "'a\\000b'", "the reference renders it the same");
	/* 'ÉÉÉÉ...' cut at 6 bytes: the quote, then whole characters */
	char e[40];
	for (int i = 0; i < 20; i++)
		memcpy(e + 2 * i, "\xc3\x89", 2);
	is(atom(e, 40, 6, &cut), "'\xc3\x89\xc3\x89", "a cut quoted atom keeps whole characters");
	ok(cut, "and says it was cut");
	is(atom(e, 40, 4, &cut), "'\xc3\x89", "cut after the first character");

	/* cookies */
	redact_reset();
	redact_add("SECRETCOOKIEVALUE");
	ok(redact_holds("{x,'SECRETCOOKIEVALUE'}", 22, false), "the cookie as an atom");
	ok(redact_holds("<<\"SECRETCOOKIEVALUE\">>", 23, false), "in a binary");
	const char *bytes = "[83,69,67,82,69,84,67,79,79,75,73,69,86,65,76,85,69]";
	ok(redact_holds(bytes, strlen(bytes), false), "as byte values");
	ok(!redact_holds("{x,'SECRETCOOK'}", 16, false), "part of it, not cut: kept");
	ok(redact_holds("{x,<<\"SECRETC", 13, true), "a cut text ending in its start");
	ok(redact_holds("{x,<<\"SECRET\">>,...}", 20, true), "a cut text holding its start");
	ok(!redact_holds("{hello,world}", 13, true), "an unrelated text");
	redact_add("we'ird\\");
	ok(redact_holds("'we\\'ird\\\\'", 11, false), "escaped as a quoted atom");

	struct event ev = { .type = EV_SEND, .name = "auth", .peer = "<0.9.0>",
			    .payload = "{#Ref<0.1.2.3>,'OTHERNODECOOKIE'}" };
	ok(redact_event(&ev) && !strcmp(ev.payload, REDACT_TEXT),
	   "what auth sends is redacted");
	ok(redact_holds("x OTHERNODECOOKIE", 17, false),
	   "and the cookie it handed out is learnt");
	struct event plain = { .type = EV_RECEIVE, .name = "srv",
			       .payload = "{ping,1}" };
	ok(!redact_event(&plain) && !strcmp(plain.payload, "{ping,1}"),
	   "other events are left alone");

	/* the bytes behind the text, whatever the syntax made of them */
	const char *c = "SECRETCOOKIEVALUE";
	size_t cn = strlen(c);
	ei_x_buff x;
	ei_x_new(&x);   /* <<Cookie/binary, 0>> */
	ei_x_encode_binary(&x, "SECRETCOOKIEVALUE\0", (long)cn + 1);
	ok(redact_holds_term(x.buff, (size_t)x.index, false, true),
	   "the term: a binary holding it");
	ei_x_free(&x);
	ei_x_new(&x);   /* binary_to_list(Cookie) ++ [1000]: a list of integers */
	ei_x_encode_list_header(&x, (long)cn + 1);
	for (size_t i = 0; i < cn; i++)
		ei_x_encode_long(&x, (unsigned char)c[i]);
	ei_x_encode_long(&x, 1000);
	ei_x_encode_empty_list(&x);
	ok(redact_holds_term(x.buff, (size_t)x.index, false, true),
	   "a list of its byte values");
	struct event ex = { .type = EV_RECEIVE, .name = "srv",
			    .payload = "[83, 69, ...]",
			    .truncated = true, .raw = x.buff,
			    .raw_len = (uint32_t)x.index, .raw_part = RAW_PAYLOAD };
	ok(redact_event(&ex) && !strcmp(ex.payload, REDACT_TEXT),
	   "an event whose term holds it, where its text was cut before");
	ei_x_free(&x);
	ei_x_new(&x);   /* cut on the target: its first bytes, then '...' */
	ei_x_encode_list_header(&x, 7);
	for (size_t i = 0; i < 7; i++)
		ei_x_encode_long(&x, (unsigned char)c[i]);
	ei_x_encode_atom(&x, "...");
	ok(redact_holds_term(x.buff, (size_t)x.index, true, true),
	   "a cut list holding its first bytes");
	ok(!redact_holds_term(x.buff, (size_t)x.index, false, true),
	   "the same, not cut: kept");
	ei_x_free(&x);
	ei_x_new(&x);   /* {x, <<"SECR">>}, cut: its first bytes end it */
	ei_x_encode_tuple_header(&x, 2);
	ei_x_encode_atom(&x, "x");
	ei_x_encode_binary(&x, "SECR", 4);
	ok(redact_holds_term(x.buff, (size_t)x.index, true, true),
	   "a term cut to its first bytes, at its end");
	ok(!redact_holds_term(x.buff, (size_t)x.index, true, false),
	   "not when the term goes on past the cut");
	ei_x_free(&x);
	const char *ex_bytes = "<<83, 69, 67, 82, 69, 84, 67, 79, 79, 75, 73, 69, "
		"86, 65, 76, 85, 69, 0>>";
	ok(redact_holds(ex_bytes, strlen(ex_bytes), false),
	   "the text: byte values as Elixir writes them");
	redact_reset();
	return done_testing();
}
