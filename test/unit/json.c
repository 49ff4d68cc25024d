/* Unit tests: JSON escaping, event lines and the summary. */
#include <cjson/cJSON.h>

#include "json.h"
#include "tap.h"

static cJSON *parse_line(const struct sbuf *sb)
{
	return cJSON_Parse(sbuf_str(sb));
}

int main(void)
{
	struct sbuf sb = SBUF_INIT;

	plan(21);

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
	stats_eos(&st, 1, 0, 3);
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
	cJSON_Delete(o);
	stats_release(&st);
	sbuf_release(&sb);
	return done_testing();
}
