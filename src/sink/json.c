/* json: event lines and the summary line. */
#include "json.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "gencall.h"
#include "nodestat.h"
#include "pidtext.h"
#include "utf8.h"
#include "xalloc.h"

/* Bytes that stand for themselves inside a JSON string: printable ASCII
 * but the quote and the backslash, as bits of 0-63 and 64-127. */
#define PLAIN_LO 0xfffffffb00000000ULL   /* 0x20-0x3f without '"' */
#define PLAIN_HI 0xffffffffefffffffULL   /* 0x40-0x7f without '\\' */

static inline bool plain(unsigned char c)
{
	return c < 64 ? (PLAIN_LO >> c) & 1 : c < 128 ? (PLAIN_HI >> (c - 64)) & 1 : 0;
}

/* \uXXXX at o, u below 0x10000; returns the end */
static char *json_u(char *o, uint32_t u)
{
	static const char hex[] = "0123456789abcdef";
	o[0] = '\\';
	o[1] = 'u';
	o[2] = hex[u >> 12];
	o[3] = hex[(u >> 8) & 15];
	o[4] = hex[(u >> 4) & 15];
	o[5] = hex[u & 15];
	return o + 6;
}

void json_string(struct sbuf *out, const char *str)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t len = strlen(str);
	/* nothing takes more than 6 bytes a byte: \u00XX or \ufffd (a
	 * hidden character of 2 to 4 bytes takes 6 or 12) */
	if (out->len + 6 * len + 2 >= out->cap)
		sbuf_grow(out, 6 * len + 2);
	char *o = out->buf + out->len;
	*o++ = '"';
	const unsigned char *end = s + len;
	while (s < end) {
		/* eight plain bytes at a time: no byte below 0x20 or above
		 * 0x7f, no '"' (0x22), no '\\' (0x5c) */
		while (end - s >= 8) {
			uint64_t x, q, b;
			memcpy(&x, s, 8);
			q = x ^ 0x2222222222222222ULL;
			b = x ^ 0x5c5c5c5c5c5c5c5cULL;
			if (((x - 0x2020202020202020ULL) | (q - 0x0101010101010101ULL) |
			     (b - 0x0101010101010101ULL) | x) & 0x8080808080808080ULL)
				break;
			memcpy(o, s, 8);
			o += 8;
			s += 8;
		}
		if (s == end)
			break;
		if (plain(*s)) { // NOLINT(clang-analyzer-core.CallAndMessage): s < end, inside str
			*o++ = (char)*s++;
			continue;
		}
		switch (*s) {
		case '"':  *o++ = '\\'; *o++ = '"'; s++; continue;
		case '\\': *o++ = '\\'; *o++ = '\\'; s++; continue;
		case '\n': *o++ = '\\'; *o++ = 'n'; s++; continue;
		case '\t': *o++ = '\\'; *o++ = 't'; s++; continue;
		case '\r': *o++ = '\\'; *o++ = 'r'; s++; continue;
		default: break;
		}
		if (*s < 0x20) {
			memcpy(o, "\\u00", 4);
			o[4] = hex[*s >> 4];
			o[5] = hex[*s & 15];
			o += 6;
			s++;
		} else {
			uint32_t cp = 0;
			int n = utf8_decode(s, (size_t)(end - s), &cp);
			if (n && utf8_hidden(cp)) {
				/* past U+FFFF: a surrogate pair */
				if (cp > 0xFFFF) {
					uint32_t v = cp - 0x10000;
					o = json_u(o, 0xD800 | (v >> 10));
					cp = 0xDC00 | (v & 0x3FF);
				}
				o = json_u(o, cp);
				s += n;
			} else if (n) {
				memcpy(o, s, (size_t)n);
				o += n;
				s += n;
			} else {
				memcpy(o, "\\ufffd", 6);
				o += 6;
				s++;
			}
		}
	}
	*o++ = '"';
	*o = '\0';
	out->len = (size_t)(o - out->buf);
}

/* A literal, without its terminator. */
#define ADD_LIT(out, lit) sbuf_add(out, lit, sizeof(lit) - 1)

/* ,"key":"value" for a literal key; nothing when val is NULL. */
#define FIELD(out, key, val) do { \
	const char *v_ = (val); \
	if (v_) { \
		ADD_LIT(out, ",\"" key "\":"); \
		json_string(out, v_); \
	} \
} while (0)

static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static void add_int64(struct sbuf *out, int64_t v)
{
	char num[24], *e = num + sizeof(num), *p = e;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	while (u >= 100) {
		p -= 2;
		memcpy(p, digit_pairs + 2 * (u % 100), 2);
		u /= 100;
	}
	if (u >= 10) {
		p -= 2;
		memcpy(p, digit_pairs + 2 * u, 2);
	} else {
		*--p = (char)('0' + u);
	}
	if (v < 0)
		*--p = '-';
	sbuf_add(out, p, (size_t)(e - p));
}

static void field(struct sbuf *out, const char *key, const char *val)
{
	if (!val)
		return;
	sbuf_addf(out, ",\"%s\":", key);
	json_string(out, val);
}

/* ,"key": of k, its whole array copied (event.h says why) */
static inline void add_key(struct sbuf *out, const struct event_key *k)
{
	if (out->len + sizeof(k->pre) >= out->cap)
		sbuf_grow(out, sizeof(k->pre));
	memcpy(out->buf + out->len, k->pre, sizeof(k->pre));
	out->len += k->len;
	out->buf[out->len] = '\0';
}

/* The type's key k with val, when it has that key and val is not NULL. */
static inline void key_field(struct sbuf *out, const struct event_key *k,
			     const char *val)
{
	if (val && k->name[0]) {
		add_key(out, k);
		json_string(out, val);
	}
}

void json_event(struct sbuf *out, const struct event *ev, const char *node)
{
	ADD_LIT(out, "{\"type\":\"");
	sbuf_addstr(out, event_types[ev->type].json);
	ADD_LIT(out, "\",\"ts\":");
	add_int64(out, ev->ts);
	ADD_LIT(out, ",\"node\":");
	json_string(out, node);
	FIELD(out, "pid", ev->pid_text);
	FIELD(out, "name", ev->name);
	FIELD(out, "label", ev->label);
	const struct event_fields *f = &event_fields[ev->type];
	key_field(out, &f->peer, ev->peer);
	key_field(out, &f->peer_name, ev->peer_name);
	if (ev->type == EV_SEND_DEAD)
		ADD_LIT(out, ",\"undelivered\":true");
	if (EVENT_IS_RUNNING(ev->type))
		sbuf_addf(out, ",\"state\":\"%s\"", event_types[ev->type].tag);
	if (f->mfa)
		FIELD(out, "mfa", ev->mfa);
	key_field(out, &f->extra, ev->extra);
	if (ev->type == EV_GC_MINOR_END || ev->type == EV_GC_MAJOR_END)
		sbuf_addf(out, ",\"kind\":\"%s\",\"heap_before\":%ld,\"heap_after\":%ld,"
			  "\"old_heap_before\":%ld,\"old_heap_after\":%ld",
			  ev->type == EV_GC_MINOR_END ? "minor" : "major",
			  ev->heap[0], ev->heap[1], ev->heap[2], ev->heap[3]);
	if ((ev->type == EV_RETURN || ev->type == EV_EXCEPTION ||
	     ev->type == EV_GC_MINOR_END || ev->type == EV_GC_MAJOR_END) &&
	    ev->elapsed_us >= 0)
		sbuf_addf(out, ",\"elapsed_us\":%" PRId64, ev->elapsed_us);
	if (ev->type == EV_GEN_CALL || ev->type == EV_GEN_REPLY)
		sbuf_addf(out, ",\"tag\":\"%016" PRIx64 "\"", ev->gen_tag);
	if (ev->type == EV_ALARM) {
		if (ev->elapsed_us >= 0)
			sbuf_addf(out, ",\"elapsed_us\":%" PRId64, ev->elapsed_us);
		if (ev->heap[0] >= 0)
			sbuf_addf(out, ",\"heap_bytes\":%ld", ev->heap[0]);
		if (ev->heap[1] >= 0)
			sbuf_addf(out, ",\"message_queue_len\":%ld", ev->heap[1]);
	}
	if (ev->payload) {
		add_key(out, &f->payload);
		json_string(out, ev->payload);
		if (ev->truncated)
			ADD_LIT(out, ",\"truncated\":true}\n");
		else
			ADD_LIT(out, ",\"truncated\":false}\n");
		return;
	}
	ADD_LIT(out, "}\n");
}

/* cJSON copies strings as they are; ours are escaped as json_string does. */
static cJSON *str_item(const char *v)
{
	struct sbuf b = SBUF_INIT;
	json_string(&b, v ? v : "");
	cJSON *r = cJSON_CreateRaw(b.buf);
	sbuf_release(&b);
	return r;
}

static void add_str(cJSON *o, const char *key, const char *v)
{
	cJSON_AddItemToObject(o, key, str_item(v));
}

/* cJSON prints large numbers in exponent form; counts must stay integers. */
static void add_int(cJSON *o, const char *key, long long v)
{
	char tmp[32];
	snprintf(tmp, sizeof(tmp), "%lld", v);
	cJSON_AddRawToObject(o, key, tmp);
}

void json_counts(struct sbuf *out, const char *node, int64_t ts,
		 const char *pid_text, const char *name, const char *label,
		 unsigned long sends, unsigned long receives,
		 unsigned long spawns)
{
	sbuf_addf(out, "{\"type\":\"counts\",\"ts\":%" PRId64 ",\"node\":", ts);
	json_string(out, node);
	field(out, "pid", pid_text);
	field(out, "name", name);
	field(out, "label", label);
	sbuf_addf(out, ",\"sends\":%lu,\"receives\":%lu,\"spawns\":%lu}\n",
		  sends, receives, spawns);
}

/* "key":v after sep; a count the sample did not carry is null */
static void count_field(struct sbuf *out, const char *sep, const char *key,
			long long v)
{
	if (v < 0)
		sbuf_addf(out, "%s\"%s\":null", sep, key);
	else
		sbuf_addf(out, "%s\"%s\":%lld", sep, key, v);
}

void json_node_stats(struct sbuf *out, const char *node, int64_t ts,
		     const struct node_sample *s)
{
	static const char *const mem[NODESTAT_MEM__COUNT] = {
		"total", "processes", "binary", "ets", "atom",
	};
	sbuf_addf(out, "{\"type\":\"node_stats\",\"ts\":%" PRId64 ",\"node\":",
		  ts);
	json_string(out, node);
	sbuf_addstr(out, ",\"memory\":{");
	for (int i = 0; i < NODESTAT_MEM__COUNT; i++)
		count_field(out, i ? "," : "", mem[i], s->mem[i]);
	sbuf_addch(out, '}');
	count_field(out, ",", "processes", s->procs);
	count_field(out, ",", "process_limit", s->proc_limit);
	count_field(out, ",", "ports", s->ports);
	count_field(out, ",", "port_limit", s->port_limit);
	sbuf_addstr(out, ",\"run_queues\":[");
	for (int i = 0; i < s->nrq; i++)
		sbuf_addf(out, "%s%u", i ? "," : "", s->rq[i]);
	sbuf_addch(out, ']');
	count_field(out, ",", "dirty_run_queue", s->dirty_rq);
	/* percent of the last second, per scheduler online; [] at first */
	sbuf_addstr(out, ",\"schedulers\":[");
	for (int i = 0; i < s->nsched; i++)
		sbuf_addf(out, "%s%d.%d", i ? "," : "", s->util[i] / 10,
			  s->util[i] % 10);
	sbuf_addstr(out, "]}\n");
}

/* What every summary says of its run: why it ended, when it started, how
 * long it ran, the event lines written. */
static void add_run(cJSON *o, const char *ended, int64_t started_us,
		    int64_t duration_ms, unsigned long events)
{
	add_str(o, "ended", ended);
	add_int(o, "started_ts", (long long)started_us);
	add_int(o, "duration_ms", (long long)duration_ms);
	add_int(o, "events", (long long)events);
}

/* o as one line of out; o is freed. */
static void put_line(struct sbuf *out, cJSON *o)
{
	char *text = cJSON_PrintUnformatted(o);
	sbuf_addstr(out, text);
	sbuf_addch(out, '\n');
	cJSON_free(text);
	cJSON_Delete(o);
}

void json_summary(struct sbuf *out, const struct summary_info *si,
		  const struct trace_stats *st)
{
	cJSON *o = cJSON_CreateObject();
	add_str(o, "type", si->type ? si->type : "summary");
	add_str(o, "node", si->node);
	if (si->clock_error_us >= 0) {
		add_int(o, "clock_offset_us", si->clock_offset_us);
		add_int(o, "clock_error_us", si->clock_error_us);
		add_int(o, "sessions", si->sessions);
	}
	add_run(o, si->ended, si->started_us, si->duration_ms, st->written);

	/* several tags share a JSON type (send and send_to_non_existing_process) */
	cJSON *counts = cJSON_AddObjectToObject(o, "counts");
	for (int t = 0; t < EV__COUNT; t++) {
		unsigned long sum = 0;
		bool first = true;
		for (int u = 0; u < EV__COUNT; u++) {
			if (strcmp(event_types[u].json, event_types[t].json))
				continue;
			if (u < t)
				first = false;
			sum += st->counts[u];
		}
		if (first && sum)
			add_int(counts, event_types[t].json, (long long)sum);
	}

	add_int(o, "delivered", (long long)stats_delivered(st));
	add_int(o, "dropped", (long long)stats_dropped(st));
	add_int(o, "shed", si->shed);
	add_int(o, "filtered", (long long)st->filtered);
	add_int(o, "over_limit", (long long)st->over_limit);
	/* every worker said its last count: delivered + dropped is all,
	 * and nobody cleared our flags meanwhile */
	bool cleared = si->cleared && si->cleared[0];
	cJSON_AddBoolToObject(o, "complete", stats_incomplete(st) == 0 &&
			      !cleared);
	cJSON *ws = cJSON_AddArrayToObject(o, "workers");
	for (int i = 0; i < st->nworkers; i++) {
		const struct worker_stats *w = &st->w[i];
		cJSON *wo = cJSON_CreateObject();
		add_int(wo, "worker", i);
		add_int(wo, "batches", (long long)w->batches);
		add_int(wo, "delivered", (long long)w->delivered);
		add_int(wo, "dropped", (long long)w->dropped);
		add_int(wo, "lost_batches", (long long)w->lost_batches);
		cJSON_AddBoolToObject(wo, "complete", w->eos);
		cJSON_AddItemToArray(ws, wo);
	}

	cJSON *lim = cJSON_AddObjectToObject(o, "limits");
	cJSON_AddNumberToObject(lim, "duration_s", si->limit_duration);
	add_int(lim, "max_events", (long long)si->limit_events);
	add_int(lim, "payload_bytes", (long long)si->payload_bytes);

	if (si->tracing && si->tracing[0])
		add_str(o, "tracing", si->tracing);
	if (cleared) {
		/* "flags,new_processes" -> ["flags", "new_processes"] */
		cJSON *cl = cJSON_AddArrayToObject(o, "cleared");
		for (const char *p = si->cleared; *p;) {
			size_t n = strcspn(p, ",");
			char what[32];
			snprintf(what, sizeof(what), "%.*s", (int)n, p);
			cJSON_AddItemToArray(cl, str_item(what));
			p += n + (p[n] == ',');
		}
	}
	add_int(o, "traced_processes", (long long)si->traced);
	cJSON *sk = cJSON_AddArrayToObject(o, "skipped");
	for (int i = 0; i < si->nskipped; i++)
		cJSON_AddItemToArray(sk, str_item(si->skipped[i]));
	if (si->npatterns) {
		cJSON *pa = cJSON_AddArrayToObject(o, "patterns");
		for (int i = 0; i < si->npatterns; i++) {
			cJSON *po = cJSON_CreateObject();
			add_str(po, "pattern", si->calls[i]);
			add_int(po, "functions", si->pattern_functions[i]);
			cJSON_AddItemToArray(pa, po);
		}
		cJSON *sf = cJSON_AddArrayToObject(o, "skipped_functions");
		for (int i = 0; i < si->nskipped_functions; i++)
			cJSON_AddItemToArray(sf, str_item(si->skipped_functions[i]));
	}
	add_int(o, "malformed", (long long)si->malformed);
	if (si->count_overflow >= 0) {
		add_int(o, "count_lines", (long long)si->count_lines);
		add_int(o, "count_overflow", si->count_overflow);
	}
	add_int(o, "unknown_messages", (long long)st->unknown);

	put_line(out, o);
}

void json_cluster_summary(struct sbuf *out, const struct cluster_summary *cs)
{
	cJSON *o = cJSON_CreateObject();
	add_str(o, "type", "summary");
	cJSON *ns = cJSON_AddArrayToObject(o, "nodes");
	cJSON *lost = cJSON_AddArrayToObject(o, "lost");
	for (int i = 0; i < cs->nnodes; i++) {
		cJSON_AddItemToArray(ns, str_item(cs->nodes[i]));
		if (cs->lost[i])
			cJSON_AddItemToArray(lost, str_item(cs->nodes[i]));
	}
	add_run(o, cs->ended, cs->started_us, cs->duration_ms, cs->events);
	add_int(o, "delivered", (long long)cs->delivered);
	add_int(o, "dropped", (long long)cs->dropped);
	cJSON *p = cJSON_AddObjectToObject(o, "pairs");
	add_int(p, "paired", (long long)cs->paired);
	add_int(p, "ambiguous", (long long)cs->ambiguous);
	add_int(p, "unmatched_sends", (long long)cs->unmatched);
	add_int(o, "reordered", (long long)cs->forced);

	put_line(out, o);
}

void json_replay_summary(struct sbuf *out, const struct replay_summary *rs)
{
	cJSON *o = cJSON_CreateObject();
	add_str(o, "type", "summary");
	if (rs->nnodes == 1) {
		add_str(o, "node", rs->nodes[0]);
	} else {
		cJSON *ns = cJSON_AddArrayToObject(o, "nodes");
		for (int i = 0; i < rs->nnodes; i++)
			cJSON_AddItemToArray(ns, str_item(rs->nodes[i]));
	}
	add_str(o, "replayed", rs->file);
	add_run(o, rs->ended, rs->started_us, rs->duration_ms, rs->events);
	add_int(o, "over_limit", (long long)rs->over_limit);
	cJSON *lim = cJSON_AddObjectToObject(o, "limits");
	add_int(lim, "max_events", (long long)rs->limit_events);
	add_int(o, "malformed", (long long)rs->malformed);
	cJSON_AddBoolToObject(o, "truncated", rs->truncated);

	put_line(out, o);
}

/* "<name@host.N.S>": its node into out (empty if there is none). */
static void pid_node(const char *pid, char *out, size_t outsz)
{
	struct pidtext pt;
	out[0] = '\0';
	if (pidtext_parse(pid, &pt) == 0 && pt.node_len && pt.node_len < outsz) {
		memcpy(out, pt.node, pt.node_len);
		out[pt.node_len] = '\0';
	}
}

void json_event_paired(struct sbuf *out, const struct event *ev,
		       const char *node)
{
	json_event(out, ev, node);
	if (!ev->from)
		return;
	char from_node[PIDTEXT_NODE_MAX + 1];
	pid_node(ev->from, from_node, sizeof(from_node));
	sbuf_truncate(out, out->len - 2);   /* reopen "}\n" */
	sbuf_addstr(out, ",\"from\":");
	json_string(out, ev->from);
	sbuf_addstr(out, ",\"from_node\":");
	json_string(out, from_node);
	sbuf_addf(out, ",\"latency_us\":%lld}\n", (long long)ev->latency_us);
}

static const char *outcome_name(enum gc_outcome o)
{
	switch (o) {
	case GC_REPLIED: return "replied";
	case GC_ABANDONED: return "abandoned";
	case GC_SERVER_DOWN: return "server_down";
	case GC_OUT_OF_ORDER: return "out_of_order";
	case GC_IN_FLIGHT: break;
	}
	return "in_flight";
}

static void server_fields(struct sbuf *out, const struct gc_row *r,
			  const struct gc_server_names *sn)
{
	field(out, "server", r->server);
	field(out, "server_name", sn->name);
	if (!sn->name)
		field(out, "server_label", sn->label);
	field(out, "kind", r->kind);
	if (r->other)
		field(out, "other", r->other == GC_OTHER_KINDS ? "kinds" :
		      "servers");
}

void json_gen_stats(struct sbuf *out, int64_t ts, const char *node,
		    struct gc_row *r, const struct gc_server_names *sn,
		    double calls_per_s, int64_t oldest_us)
{
	const struct gc_hist *h = &r->hist;
	const int64_t *q = gc_row_quantiles(r);
	sbuf_addf(out, "{\"type\":\"gen_call_stats\",\"ts\":%" PRId64
		  ",\"node\":", ts);
	json_string(out, node);
	server_fields(out, r, sn);
	sbuf_addf(out, ",\"calls\":%lu,\"calls_per_s\":%.1f,\"p50_us\":%" PRId64
		  ",\"p90_us\":%" PRId64 ",\"p99_us\":%" PRId64 ",\"max_us\":%"
		  PRId64 ",\"mean_us\":%" PRId64 ",\"in_flight\":%lu",
		  r->calls, calls_per_s, q[0], q[1], q[2], h->max,
		  h->count ? h->sum / (int64_t)h->count : 0, r->in_flight);
	if (oldest_us >= 0)
		sbuf_addf(out, ",\"oldest_in_flight_us\":%" PRId64, oldest_us);
	sbuf_addf(out, ",\"stuck\":%lu,\"abandoned\":%lu,\"server_down\":%lu"
		  ",\"out_of_order\":%lu,\"given_up\":%lu}\n", r->stuck,
		  r->abandoned, r->server_down, r->out_of_order, r->given_up);
}

void json_gen_totals(struct sbuf *out, int64_t ts, const struct gencalls *g)
{
	sbuf_addf(out, "{\"type\":\"gen_call_totals\",\"ts\":%" PRId64
		  ",\"rows\":%zu,\"replied\":%lu,\"in_flight\":%zu"
		  ",\"given_up\":%lu,\"out_of_order\":%lu"
		  ",\"unmatched_replies\":%lu,\"servers_other_kinds\":%zu"
		  ",\"other_servers\":%s}\n", ts, g->nrows, g->replied,
		  g->inflight, g->given_up, g->out_of_order, g->unmatched,
		  g->nfolded, g->other_servers ? "true" : "false");
}

void json_slow_call(struct sbuf *out, const char *node,
		    const struct gc_row *r, const struct gc_call *c,
		    const char *caller_name, const struct gc_server_names *sn)
{
	sbuf_addf(out, "{\"type\":\"slow_call\",\"ts\":%" PRId64 ",\"node\":",
		  c->end_ts);
	json_string(out, node);
	field(out, "caller", c->caller_text);
	field(out, "caller_name", caller_name);
	server_fields(out, r, sn);
	field(out, "request", c->request);
	field(out, "reply", c->reply);
	sbuf_addf(out, ",\"outcome\":\"%s\",\"latency_us\":%" PRId64
		  ",\"sent_ts\":%" PRId64 ",\"replied_ts\":%" PRId64 "}\n",
		  outcome_name(c->outcome), gc_latency(c), c->ts, c->end_ts);
}

void json_profile_sample(struct sbuf *out, const char *node,
			 const struct prof_sample *p)
{
	sbuf_addf(out, "{\"type\":\"profile_sample\",\"ts\":%" PRId64
		  ",\"node\":", p->ts_us);
	json_string(out, node);
	sbuf_addstr(out, ",\"pid\":");
	json_string(out, p->pid_text);
	sbuf_addstr(out, ",\"status\":");
	json_string(out, p->status);
	sbuf_addf(out, ",\"whole\":%s,\"stack\":[", p->whole ? "true" :
		  "false");
	for (int i = 0; i < p->nframes; i++) {
		if (i)
			sbuf_addch(out, ',');
		json_string(out, p->frames[i]);
	}
	sbuf_addstr(out, "]}\n");
}

void json_profile_stats(struct sbuf *out, const char *node, int64_t ts,
			const struct prof_stats *st)
{
	sbuf_addf(out, "{\"type\":\"profile_stats\",\"ts\":%" PRId64
		  ",\"node\":", ts);
	json_string(out, node);
	sbuf_addf(out, ",\"samples\":%ld,\"processes\":%ld,\"skipped\":%ld,"
		  "\"used_us\":%ld,\"waited_us\":%ld,\"ms\":%ld,"
		  "\"cut_processes\":%ld,\"gone\":%ld}\n", st->samples,
		  st->procs, st->skipped, st->used_us, st->waited_us, st->ms,
		  st->cut, st->gone);
}

void json_profile_calls(struct sbuf *out, const char *node, int64_t ts,
			const struct prof_calls *c)
{
	sbuf_addf(out, "{\"type\":\"profile_calls\",\"ts\":%" PRId64
		  ",\"node\":", ts);
	json_string(out, node);
	sbuf_addf(out, ",\"functions\":%ld,\"read\":%ld,\"read_us\":%ld,"
		  "\"ms\":%ld,\"calls\":[", c->functions, c->read, c->read_us,
		  c->ms);
	for (int i = 0; i < c->n; i++) {
		const struct prof_call *r = &c->rows[i];
		sbuf_addstr(out, i ? ",{\"function\":" : "{\"function\":");
		json_string(out, r->name);
		sbuf_addf(out, ",\"calls\":%lld,\"time_us\":%lld", r->calls,
			  r->us);
		if (r->words >= 0)
			sbuf_addf(out, ",\"words\":%lld", r->words);
		sbuf_addch(out, '}');
	}
	sbuf_addstr(out, "]}\n");
}
