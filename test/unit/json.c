/*
 * Unit tests: JSON escaping, event lines and the summary; and escaping
 * against a plain reference (the first, byte-at-a-time version) on random
 * strings rich in what needs escaping.
 */
#include <cjson/cJSON.h>
#include <stdint.h>

#include "json.h"
#include "tap.h"

/* The reference. */
/* Length of a valid UTF-8 sequence at s (s[0] >= 0x80), or 0. */
static int ref_utf8_len(const unsigned char *s, unsigned int *cpp)
{
	int n;
	unsigned int cp;
	if (s[0] >= 0xC2 && s[0] <= 0xDF) { n = 2; cp = s[0] & 0x1F; }
	else if (s[0] >= 0xE0 && s[0] <= 0xEF) { n = 3; cp = s[0] & 0x0F; }
	else if (s[0] >= 0xF0 && s[0] <= 0xF4) { n = 4; cp = s[0] & 0x07; }
	else return 0;
	for (int i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
	    (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	*cpp = cp;
	return n;
}

/* C1 controls, line separators, bidirectional controls: escaped */
static int ref_hidden(unsigned int cp)
{
	return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x200E ||
		cp == 0x200F || (cp >= 0x2028 && cp <= 0x202E) ||
		(cp >= 0x2066 && cp <= 0x2069);
}

static void ref_string(struct sbuf *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	sbuf_grow(out, strlen(str) + 2);
	sbuf_addch(out, '"');
	while (*s) {
		const unsigned char *run = s;
		while (*s >= 0x20 && *s < 0x80 && *s != '"' && *s != '\\')
			s++;
		if (s > run)
			sbuf_add(out, run, (size_t)(s - run));
		if (!*s)
			break;
		switch (*s) {
		case '"':  sbuf_add(out, "\\\"", 2); s++; continue;
		case '\\': sbuf_add(out, "\\\\", 2); s++; continue;
		case '\n': sbuf_add(out, "\\n", 2); s++; continue;
		case '\t': sbuf_add(out, "\\t", 2); s++; continue;
		case '\r': sbuf_add(out, "\\r", 2); s++; continue;
		default: break;
		}
		if (*s < 0x20) {
			sbuf_addf(out, "\\u%04x", *s);
			s++;
		} else {
			unsigned int cp = 0;
			int n = ref_utf8_len(s, &cp);
			if (n && ref_hidden(cp)) {
				sbuf_addf(out, "\\u%04x", cp);
				s += n;
			} else if (n) {
				sbuf_add(out, s, (size_t)n);
				s += n;
			} else {
				sbuf_add(out, "\\ufffd", 6);
				s++;
			}
		}
	}
	sbuf_addch(out, '"');
}


/* Random strings of every length up to 40: how many escape differently. */
static long differential(long rounds)
{
	static const unsigned char pool[] = {
		'a', 'b', 'Z', ' ', '~', '"', '\\', '\n', '\t', '\r', 0x01, 0x1f,
		0x7f, 0x80, 0xbf, 0xc2, 0xc3, 0xa9, 0xdf, 0xe0, 0xe2, 0x98, 0x83,
		0xed, 0xa0, 0xef, 0xf0, 0x9f, 0x92, 0xa9, 0xf4, 0x8f, 0xf5, 0xff,
	};
	uint64_t x = 88172645463325252ULL;
	struct sbuf a = SBUF_INIT, b = SBUF_INIT;
	char str[48];
	long bad = 0;
	for (long r = 0; r < rounds; r++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size_t n = (size_t)(x % 41), i;
		uint64_t y = x;
		for (i = 0; i < n; i++) {
			y = y * 6364136223846793005ULL + 1442695040888963407ULL;
			/* mostly plain text, so long plain runs occur */
			str[i] = (y >> 60) < 10 ? (char)('a' + (y >> 33) % 26) :
				(char)pool[(y >> 33) % sizeof(pool)];
			if (!str[i])
				str[i] = 'x';
		}
		str[n] = '\0';
		sbuf_reset(&a);
		sbuf_reset(&b);
		sbuf_addstr(&a, "pre");  /* not at the start of the buffer */
		sbuf_addstr(&b, "pre");
		json_string(&a, str);
		ref_string(&b, str);
		bad += strcmp(sbuf_str(&a), sbuf_str(&b)) != 0;
	}
	sbuf_release(&a);
	sbuf_release(&b);
	return bad;
}

static cJSON *parse_line(const struct sbuf *sb)
{
	return cJSON_Parse(sbuf_str(sb));
}

int main(void)
{
	struct sbuf sb = SBUF_INIT;

	plan(27);

	json_string(&sb, "a\"b\\c\n\x01");
	is(sbuf_str(&sb), "\"a\\\"b\\\\c\\n\\u0001\"", "escapes quotes, backslash, control");
	sbuf_reset(&sb);
	json_string(&sb, "caf\xc3\xa9");
	is(sbuf_str(&sb), "\"caf\xc3\xa9\"", "valid UTF-8 passes");
	sbuf_reset(&sb);
	json_string(&sb, "x\xff\xc3(y\x1b[2J");
	is(sbuf_str(&sb), "\"x\\ufffd\\ufffd(y\\u001b[2J\"",
	   "invalid UTF-8 and ESC are escaped");
	sbuf_reset(&sb);
	json_string(&sb, "\xed\xa0\x80");
	is(sbuf_str(&sb), "\"\\ufffd\\ufffd\\ufffd\"", "surrogates are invalid");

	struct event ev = {
		.type = EV_SEND, .ts = 1763790000123456LL,
		.pid_text = "<0.90.0>", .name = "client",
		.peer = "<0.85.0>", .peer_name = "sink",
		.payload = "{hello,1}", .truncated = false,
	};
	sbuf_reset(&sb);
	json_event(&sb, &ev, "t@h");
	ok(sb.len && sb.buf[sb.len - 1] == '\n', "event line ends in newline");
	cJSON *o = parse_line(&sb);
	ok(o, "event line parses");
	is(cJSON_GetStringValue(cJSON_GetObjectItem(o, "type")), "send", "type");
	ok(cJSON_GetObjectItem(o, "ts")->valuedouble == 1763790000123456.0, "ts exact");
	is(cJSON_GetStringValue(cJSON_GetObjectItem(o, "to")), "<0.85.0>", "to");
	is(cJSON_GetStringValue(cJSON_GetObjectItem(o, "to_name")), "sink", "to_name");
	is(cJSON_GetStringValue(cJSON_GetObjectItem(o, "payload")), "{hello,1}", "payload");
	ok(cJSON_IsFalse(cJSON_GetObjectItem(o, "truncated")), "truncated false");
	cJSON_Delete(o);

	struct event sp = {
		.type = EV_SPAWN, .ts = 1, .pid_text = "<0.1.0>",
		.peer = "<0.2.0>", .mfa = "m:f/1", .payload = "[x]",
	};
	sbuf_reset(&sb);
	json_event(&sb, &sp, "t@h");
	o = parse_line(&sb);
	is(cJSON_GetStringValue(cJSON_GetObjectItem(o, "child")), "<0.2.0>", "spawn child");
	is(cJSON_GetStringValue(cJSON_GetObjectItem(o, "mfa")), "m:f/1", "spawn mfa");
	ok(!cJSON_GetObjectItem(o, "name"), "no name when unregistered");
	cJSON_Delete(o);

	struct trace_stats st;
	stats_init(&st, 2);
	stats_batch(&st, 0, 0, 0, 10);
	stats_batch(&st, 0, 2, 5, 10);   /* seq 1 lost */
	stats_eos(&st, 1, 0, 3, -1);
	st.counts[EV_SEND] = 4;
	st.counts[EV_SEND_DEAD] = 1;
	st.written = 5;
	struct summary_info si = { .node = "t@h", .ended = "duration",
				   .started_us = 1763790000123457LL };
	sbuf_reset(&sb);
	json_summary(&sb, &si, &st);
	o = parse_line(&sb);
	ok(o, "summary parses");
	is(cJSON_GetStringValue(cJSON_GetObjectItem(o, "ended")), "duration", "ended");
	is_num(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "counts"), "send")->valueint,
	       5, "send counts merge both send tags");
	is_num(cJSON_GetObjectItem(o, "dropped")->valueint, 8, "drops summed");
	is_num(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(o, "workers"), 0),
				   "lost_batches")->valueint, 1, "sequence gap counted");
	ok(strstr(sbuf_str(&sb), "\"started_ts\":1763790000123457"), "timestamps stay integers");
	ok(!cJSON_GetObjectItem(o, "cleared") && !cJSON_GetObjectItem(o, "tracing"),
	   "nothing cleared, tracing unsaid: neither key");
	cJSON_Delete(o);

	/* someone cleared our flags: said, and the counts are not complete */
	stats_eos(&st, 0, 3, 0, -1);
	si.tracing = "legacy";
	si.cleared = "flags,new_processes";
	sbuf_reset(&sb);
	json_summary(&sb, &si, &st);
	o = parse_line(&sb);
	is(cJSON_GetStringValue(cJSON_GetObjectItem(o, "tracing")), "legacy", "tracing");
	cJSON *cl = cJSON_GetObjectItem(o, "cleared");
	ok(cJSON_GetArraySize(cl) == 2 &&
	   !strcmp(cJSON_GetStringValue(cJSON_GetArrayItem(cl, 1)), "new_processes"),
	   "cleared: each thing");
	ok(cJSON_IsFalse(cJSON_GetObjectItem(o, "complete")), "cleared: not complete");
	si.cleared = "";
	sbuf_reset(&sb);
	json_summary(&sb, &si, &st);
	cJSON_Delete(o);
	o = parse_line(&sb);
	ok(cJSON_IsTrue(cJSON_GetObjectItem(o, "complete")), "every worker's word, nothing cleared: complete");
	cJSON_Delete(o);
	stats_release(&st);
	sbuf_release(&sb);
	long bad = differential(200000);
	if (!ok(bad == 0, "escaping equals the reference on 200000 random strings"))
		printf("#   %ld differ\n", bad);
	return done_testing();
}
