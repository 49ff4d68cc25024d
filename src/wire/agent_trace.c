/*
 * agent_trace: the trace request, {trace, Options}, as the agent takes it,
 * and its reply: what was traced, or why not, in one line (see agent.h).
 */
#include "agent.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>
#include "clock.h"
#include "esc.h"
#include "embed.h"
#include "exitcode.h"
#include "pidsel.h"
#include "sig.h"
#include "term.h"
#include "wire.h"
#include "xalloc.h"
#include "agent_priv.h"

/* A string that fits in out, or -1 (never writes past outsz). */
static int decode_str(const char *buf, int *idx, char *out, size_t outsz)
{
	int type, size;
	if (ei_get_type(buf, idx, &type, &size) < 0 || size < 0 ||
	    (size_t)size >= outsz)
		return -1;
	if (type == ERL_NIL_EXT) {
		(*idx)++;
		out[0] = '\0';
		return 0;
	}
	return type == ERL_STRING_EXT ? ei_decode_string(buf, idx, out) : -1;
}

/* n bytes for people: "512 MiB", "2.0 GiB". */
static void size_text(unsigned long long n, char *out, size_t outsz)
{
	if (n >= 1ULL << 30)
		snprintf(out, outsz, "%.1f GiB", (double)n / (1ULL << 30));
	else if (n >= 1ULL << 20)
		snprintf(out, outsz, "%llu MiB", (n + (1ULL << 19)) >> 20);
	else
		snprintf(out, outsz, "%llu KiB", (n + 512) >> 10);
}

/*
 * {memory_cap | no_memory, Need, Cap, Memory} at buf[idx] (after the tag):
 * what the session would take and why it may not; false if it is not that.
 */
bool memory_refusal(struct agent *a, const char *tag, const char *buf,
			   int idx, const char *options, struct sbuf *err)
{
	unsigned long long need, cap, mem;
	char tn[32], tc[32], tm[32];
	const char *node = a->node[0] ? a->node : a->conn->target;
	if ((strcmp(tag, "memory_cap") && strcmp(tag, "no_memory")) ||
	    ei_decode_ulonglong(buf, &idx, &need) < 0 ||
	    ei_decode_ulonglong(buf, &idx, &cap) < 0 ||
	    ei_decode_ulonglong(buf, &idx, &mem) < 0)
		return false;
	size_text(need, tn, sizeof(tn));
	size_text(cap, tc, sizeof(tc));
	size_text(mem, tm, sizeof(tm));
	if (!strcmp(tag, "no_memory"))
		sbuf_addf(err, "node \"%s\" could not give the %s the session "
			  "needs; nothing was traced; lower %s", node, tn, options);
	else if (mem)
		sbuf_addf(err, "the session would take %s on \"%s\", more than "
			  "beamscope takes there (%s: an eighth of its %s, at "
			  "most 1 GiB); nothing was traced; lower %s", tn, node,
			  tc, tm, options);
	else
		sbuf_addf(err, "the session would take %s on \"%s\", more than "
			  "beamscope takes there (%s); nothing was traced; "
			  "lower %s", tn, node, tc, options);
	return true;
}

/* Turn an {error, Reason} from the trace request into advice; the exit code. */
static int trace_error(struct agent *a, const char *buf, int idx,
		       struct sbuf *err)
{
	int arity, save = idx, rc = EXIT_REFUSED;
	char tag[MAXATOMLEN_UTF8];
	struct sbuf what = SBUF_INIT, extra = SBUF_INIT;

	if (ei_decode_tuple_header(buf, &idx, &arity) == 0 && arity >= 2 &&
	    ei_decode_atom(buf, &idx, tag) == 0) {
		if (arity == 4 && memory_refusal(a, tag, buf, idx,
				"--workers, --high-water or --payload-bytes", err))
			goto out;
		term_render(buf, &idx, a->node, &what, 200, NULL);
		if (arity == 3)
			term_render(buf, &idx, a->node, &extra, 200, NULL);
		if (!strcmp(tag, "traced_by_other")) {
			sbuf_addf(err, "%s is already traced by another tracer "
				  "(%s) in the node's one shared trace session; "
				  "nothing was traced: stop that trace first, "
				  "leave the process out of --pids, or take it "
				  "with --take-over", sbuf_str(&what),
				  sbuf_str(&extra));
			goto out;
		} else if (!strcmp(tag, "no_such_process")) {
			sbuf_addf(err, "no process %s on node \"%s\"; list "
				  "processes with erlang:processes() there",
				  sbuf_str(&what), a->node);
			goto out;
		} else if (!strcmp(tag, "no_such_name")) {
			sbuf_addf(err, "no process is registered as %s on node "
				  "\"%s\"; list names with erlang:registered() there",
				  sbuf_str(&what), a->node);
			goto out;
		} else if ((!strcmp(tag, "bad_pattern") ||
			    !strcmp(tag, "bad_match")) && arity == 5) {
			/* {bad_pattern | bad_match, Text, Line, Col, Message} */
			char text[1024], msg[1024];
			long line, col;
			idx = save;
			ei_decode_tuple_header(buf, &idx, &arity);
			ei_skip_term(buf, &idx);
			if (decode_str(buf, &idx, text, sizeof(text)) == 0 &&
			    ei_decode_long(buf, &idx, &line) == 0 &&
			    ei_decode_long(buf, &idx, &col) == 0 &&
			    decode_str(buf, &idx, msg, sizeof(msg)) == 0) {
				sbuf_addf(err, "--%s \"%s\": line %ld, column %ld: %s",
					  strcmp(tag, "bad_match") ? "call" : "match",
					  text, line, col, msg);
				rc = EXIT_USAGE;
				goto out;
			}
		} else if (!strcmp(tag, "bad_call") && arity == 3) {
			/* {bad_call, Text, {not_loaded, M | NameBin} |
			 * {no_function, M, F | NameBin, A}} */
			char text[1024], why[MAXATOMLEN_UTF8];
			int a2;
			idx = save;
			ei_decode_tuple_header(buf, &idx, &arity);
			ei_skip_term(buf, &idx);
			if (decode_str(buf, &idx, text, sizeof(text)) == 0 &&
			    ei_decode_tuple_header(buf, &idx, &a2) == 0 &&
			    ei_decode_atom(buf, &idx, why) == 0) {
				struct sbuf t = SBUF_INIT;
				int type, size;
				char name[MAXATOMLEN_UTF8];
				long len;
				if (!strcmp(why, "not_loaded")) {
					/* the module, or the name the node has no
					 * atom for, as a binary */
					if (ei_get_type(buf, &idx, &type, &size) == 0 &&
					    type == ERL_BINARY_EXT &&
					    size < (int)sizeof(name) &&
					    ei_decode_binary(buf, &idx, name, &len) == 0) {
						name[len] = '\0';
						term_atom_text(&t, TERM_ERLANG, name);
					} else {
						term_render(buf, &idx, a->node, &t,
							    200, NULL);
					}
					sbuf_addf(err, "--call \"%s\": module %s is not "
						  "loaded on \"%s\"; beamscope never loads "
						  "code, so nothing was traced", text,
						  sbuf_str(&t), a->node);
				} else {
					sbuf_addf(err, "--call \"%s\": no function of "
						  "the module matches on \"%s\"; nothing "
						  "was traced", text, a->node);
				}
				sbuf_release(&t);
				goto out;
			}
		} else if (!strcmp(tag, "match_busy") && arity == 3) {
			/* {match_busy, send | 'receive', TheirMatchSpec} */
			sbuf_addf(err, "the %s trace pattern on \"%s\" is set by "
				  "another tool (%s); --match would replace it, so "
				  "nothing was traced: reset it with "
				  "erlang:trace_pattern(%s, true, []) once that tool "
				  "is done, trace without --match, or take it with "
				  "--take-over", sbuf_str(&what), a->node,
				  sbuf_str(&extra), sbuf_str(&what));
			goto out;
		} else if (!strcmp(tag, "new_traced_by_other")) {
			sbuf_addf(err, "new processes on \"%s\" are already traced "
				  "by another tracer (%s); nothing was traced: stop "
				  "it first, use --pids existing, or take them with "
				  "--take-over", a->node, sbuf_str(&what));
			goto out;
		}
	}
	sbuf_addf(err, "the agent on \"%s\" refused to trace: ", a->node);
	idx = save;
	term_render(buf, &idx, a->node, err, 300, NULL);
out:
	sbuf_release(&what);
	sbuf_release(&extra);
	return rc;
}

/* Key => true in a map being encoded: a flag that is on. */
static void encode_true(ei_x_buff *x, const char *key)
{
	ei_x_encode_atom(x, key);
	ei_x_encode_atom(x, "true");
}

/* The trace request, {trace, Options}, in x (new). */
void trace_encode(struct agent *a, const struct trace_spec *spec,
			 ei_x_buff *x)
{
	int kinds = spec->kinds;
	request_begin(a, x, &a->req_ref);
	ei_x_encode_tuple_header(x, 2);
	ei_x_encode_atom(x, "trace");
	ei_x_encode_map_header(x, 7 + (spec->count_tier ? 2 : 0) +
			       (spec->ncalls ? 1 : 0) + (spec->follow ? 1 : 0) +
			       (spec->match ? 1 : 0) + (spec->legacy ? 1 : 0) +
			       (spec->take_over ? 1 : 0) +
			       (spec->elixir_calls ? 1 : 0));
	/* heads in Elixir form: the reader goes with them, and is loaded
	 * for them only */
	if (spec->elixir_calls) {
		ei_x_encode_atom(x, "elixir");
		ei_x_encode_binary(x, bs_elixir_beam,
				   EMBED_SIZE(bs_elixir_beam));
	}
	if (spec->legacy)
		encode_true(x, "legacy");
	if (spec->take_over)
		encode_true(x, "take_over");
	ei_x_encode_atom(x, "max_events");
	ei_x_encode_ulong(x, spec->max_events);
	ei_x_encode_atom(x, "duration_ms");
	ei_x_encode_ulong(x, spec->duration_ms);
	ei_x_encode_atom(x, "rate");
	ei_x_encode_ulong(x, spec->rate);
	ei_x_encode_atom(x, "on_limit");
	ei_x_encode_atom(x, spec->shed ? "shed" : "stop");
	if (spec->ncalls) {
		ei_x_encode_atom(x, "calls");
		ei_x_encode_list_header(x, spec->ncalls);
		for (int i = 0; i < spec->ncalls; i++) {
			/* {elixir, Text}: the target's Elixir reads it */
			if (i < 32 && (spec->elixir_calls >> i & 1)) {
				ei_x_encode_tuple_header(x, 2);
				ei_x_encode_atom(x, "elixir");
			}
			ei_x_encode_string(x, spec->calls[i]);
		}
		ei_x_encode_empty_list(x);
	}
	if (spec->match) {
		ei_x_encode_atom(x, "match");
		ei_x_encode_string(x, spec->match);
	}
	if (spec->follow)
		encode_true(x, "follow");
	if (spec->count_tier) {
		ei_x_encode_atom(x, "tier");
		ei_x_encode_atom(x, "count");
		ei_x_encode_atom(x, "interval_ms");
		ei_x_encode_long(x, (long)(spec->interval_ms ? spec->interval_ms : 250));
	}
	ei_x_encode_atom(x, "events");
	int nk = 0;
	for (int bit = 1; bit <= KIND_LAST; bit <<= 1)
		nk += (kinds & bit) && event_kind_name(bit);
	ei_x_encode_list_header(x, nk);
	for (int bit = 1; bit <= KIND_LAST; bit <<= 1)
		if ((kinds & bit) && event_kind_name(bit))
			ei_x_encode_atom(x, event_kind_name(bit));
	ei_x_encode_empty_list(x);
	ei_x_encode_atom(x, "pids");
	encode_pidsel(a, x, spec->sel);
	ei_x_encode_atom(x, "payload_bytes");
	ei_x_encode_long(x, (long)spec->payload_bytes);
}

/* The trace reply into res; EXIT_OK, or the exit code with err set. */
int trace_decode(struct agent *a, struct trace_result *res,
			struct sbuf *err)
{
	const char *buf = a->req_reply.buff;
	int idx = 1, arity;
	char tag[MAXATOMLEN];
	if (ei_decode_tuple_header(buf, &idx, &arity) < 0 || arity != 2 ||
	    ei_decode_atom(buf, &idx, tag) < 0)
		return trace_error(a, buf, 1, err);
	if (strcmp(tag, "ok"))
		return trace_error(a, buf, idx, err);
	int n;
	if (ei_decode_map_header(buf, &idx, &n) < 0)
		return EXIT_OK;
	for (int i = 0; i < n; i++) {
		char key[MAXATOMLEN];
		if (ei_decode_atom(buf, &idx, key) < 0)
			break;
		if (!strcmp(key, "traced")) {
			long v;
			if (ei_decode_long(buf, &idx, &v) == 0)
				res->traced = (unsigned long)v;
		} else if (!strcmp(key, "skipped")) {
			int len;
			if (ei_decode_list_header(buf, &idx, &len) < 0)
				break;
			res->skipped = xcalloc((size_t)len + 1, sizeof(char *));
			for (int k = 0; k < len; k++) {
				struct sbuf t = SBUF_INIT;
				term_render(buf, &idx, a->node, &t, 100, NULL);
				res->skipped[res->nskipped++] = xstrdup(sbuf_str(&t));
				sbuf_release(&t);
			}
			if (len > 0)
				ei_skip_term(buf, &idx);
		} else if (!strcmp(key, "patterns")) {
			/* [{Text, FunctionsSet}] in --call order */
			int len, t;
			if (ei_decode_list_header(buf, &idx, &len) < 0)
				break;
			for (int k = 0; k < len; k++) {
				long nf = 0;
				if (ei_decode_tuple_header(buf, &idx, &t) < 0 ||
				    ei_skip_term(buf, &idx) < 0 ||
				    ei_decode_long(buf, &idx, &nf) < 0)
					break;
				if (res->npatterns < 32)
					res->pattern_functions[res->npatterns++] = nf;
			}
			if (len > 0)
				ei_skip_term(buf, &idx);
		} else if (!strcmp(key, "receive_pattern") ||
			   !strcmp(key, "send_pattern")) {
			char *out = key[0] == 'r' ? res->receive_pattern :
				res->send_pattern;
			if (ei_decode_atom(buf, &idx, key) < 0)
				break;
			snprintf(out, sizeof(res->send_pattern), "%s",
				 strcmp(key, "off") ? "other" : "off");
		} else if (!strcmp(key, "tracing")) {
			if (ei_decode_atom(buf, &idx, key) < 0)
				break;
			snprintf(res->tracing, sizeof(res->tracing), "%s",
				 strcmp(key, "session") ? "legacy" : "session");
		} else if (!strcmp(key, "new_skipped")) {
			struct sbuf t = SBUF_INIT;
			term_render(buf, &idx, a->node, &t, 100, NULL);
			free(res->new_skipped);
			res->new_skipped = xstrdup(sbuf_str(&t));
			sbuf_release(&t);
		} else if (!strcmp(key, "taken") ||
			   !strcmp(key, "gc_skipped")) {
			long v;
			bool taken = !strcmp(key, "taken");
			if (ei_decode_long(buf, &idx, &v) < 0)
				break;
			*(taken ? &res->taken : &res->gc_skipped) = v;
		} else if (!strcmp(key, "gc_new_skipped")) {
			if (ei_decode_atom(buf, &idx, key) < 0)
				break;
			res->gc_new_skipped = !strcmp(key, "true");
		} else if (!strcmp(key, "skipped_functions")) {
			int len;
			if (ei_decode_list_header(buf, &idx, &len) < 0)
				break;
			res->skipped_functions = xcalloc((size_t)len + 1, sizeof(char *));
			for (int k = 0; k < len; k++) {
				char mod[MAXATOMLEN_UTF8], fun[MAXATOMLEN_UTF8], s[2100];
				long ar;
				int t;
				if (ei_decode_tuple_header(buf, &idx, &t) < 0 ||
				    ei_decode_atom(buf, &idx, mod) < 0 ||
				    ei_decode_atom(buf, &idx, fun) < 0 ||
				    ei_decode_long(buf, &idx, &ar) < 0)
					break;
				snprintf(s, sizeof(s), "%s:%s/%ld", mod, fun, ar);
				res->skipped_functions[res->nskipped_functions++] = xstrdup(s);
			}
			if (len > 0)
				ei_skip_term(buf, &idx);
		} else {
			ei_skip_term(buf, &idx);
		}
	}
	return EXIT_OK;
}
