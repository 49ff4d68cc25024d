/*
 * corpus: deterministic pseudo-random event batches for decoder tests.
 *
 * Every batch is encoded the way a worker sends it ({beamscope_batch, ...}
 * with a list of {Tag, Tracee, Ts, A, B, Cut}), with payloads drawn from
 * every term type that passes the wire check, atoms that need quoting,
 * Latin-1 and UTF-8 text, pids of this node and of others, and now and then
 * an entry that is malformed on purpose.  With odd set, also encodings a
 * real target never sends but a hostile peer could: NULs inside atoms and
 * node names, Latin-1 node names, 8-byte timestamps out of range.  The
 * same seed gives the same bytes on every machine.  Header-only; include
 * it once.
 */
#ifndef BS_CORPUS_H
#define BS_CORPUS_H

#include <ei.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define CORPUS_NODE "t@h"

struct corpus {
	uint64_t s;       /* xorshift state */
	int malformed;    /* one entry in this many is broken on purpose; 0: none */
	bool odd;         /* encodings only a hostile peer would send */
};

static uint32_t corpus_next(struct corpus *c)
{
	c->s ^= c->s << 13;
	c->s ^= c->s >> 7;
	c->s ^= c->s << 17;
	return (uint32_t)(c->s >> 11);
}

static unsigned corpus_pick(struct corpus *c, unsigned n)
{
	return corpus_next(c) % n;
}

/* Odd mode: now and then true, when odd encodings are asked for. */
static bool corpus_odd(struct corpus *c)
{
	return c->odd && !corpus_pick(c, 8);
}

/* An atom written raw, as 'w' (UTF-8) or 's' (Latin-1). */
static void corpus_raw_atom(ei_x_buff *x, char tag, const char *s, size_t n)
{
	char hdr[2] = { tag, (char)n };
	ei_x_append_buf(x, hdr, 2);
	ei_x_append_buf(x, s, (int)n);
}

static void corpus_atom(struct corpus *c, ei_x_buff *x)
{
	static const char *const words[] = {
		"ping", "pong", "ok", "error", "undefined", "true", "false",
		"Caps", "with space", "it's", "back\\slash", "receive", "end",
		"when", "orelse", "x", "a@b", "_under", "n0", "...", "#Fun", "",
		"tab\there", "del\x7f", "caf\xc3\xa9", "\xe2\x98\x83", "ok\xff",
		"name_with_many_characters_in_it", "9lives", "begin", "after",
		"Elixir.Shop.Cache", "nil", "\xc3\x89" "a", "\xce\xbb" "x", "foo?",
		"::", "Elixir.A-B", "a\"#{b}",
	};
	unsigned i = corpus_pick(c, sizeof(words) / sizeof(words[0]));
	const char *w = words[i];
	switch (corpus_pick(c, 6)) {
	case 0:
		/* Latin-1 on the wire: bytes above 0x7f become two in UTF-8 */
		if (!strcmp(w, "caf\xc3\xa9")) {
			ei_x_encode_atom_len_as(x, "caf\xe9", 4, ERLANG_LATIN1,
						ERLANG_LATIN1);
			return;
		}
		if (!strcmp(w, "\xe2\x98\x83") || !strcmp(w, "ok\xff"))
			break;
		ei_x_encode_atom_len_as(x, w, (int)strlen(w), ERLANG_LATIN1,
					ERLANG_LATIN1);
		return;
	case 1: {
		/* ATOM_UTF8_EXT with a two-byte length */
		size_t n = strlen(w);
		char hdr[3] = { 'v', (char)(n >> 8), (char)n };
		ei_x_append_buf(x, hdr, 3);
		ei_x_append_buf(x, w, (int)n);
		return;
	}
	default:
		break;
	}
	if (!strcmp(w, "ok\xff")) {
		/* not UTF-8 at all: written raw */
		char raw[5] = { 'w', 3, 'o', 'k', (char)0xff };
		ei_x_append_buf(x, raw, 5);
		return;
	}
	ei_x_encode_atom_len_as(x, w, (int)strlen(w), ERLANG_UTF8, ERLANG_UTF8);
}

static void corpus_pid(struct corpus *c, ei_x_buff *x)
{
	static const char *const nodes[] = {
		CORPUS_NODE, CORPUS_NODE, CORPUS_NODE, "other@host", "t@h2", "t",
	};
	erlang_pid p = {
		.num = corpus_pick(c, 4) ? corpus_pick(c, 1000) : corpus_next(c),
		.serial = corpus_pick(c, 4) ? 0 : corpus_pick(c, 70000),
		.creation = corpus_pick(c, 3) ? 3 : corpus_next(c),
	};
	strcpy(p.node, nodes[corpus_pick(c, sizeof(nodes) / sizeof(nodes[0]))]);
	if (corpus_odd(c)) {
		/* the node with a NUL inside, or in Latin-1 beyond ASCII */
		static const char *const odd[] = {
			"t@h\0x", "t@h\0", "t\0@h", "t@\xe9", CORPUS_NODE,
		};
		static const size_t len[] = { 5, 4, 4, 3, 3 };
		unsigned k = corpus_pick(c, 5);
		char b[12];
		b[0] = 'X';
		ei_x_append_buf(x, b, 1);
		corpus_raw_atom(x, corpus_pick(c, 2) ? 'w' : 's', odd[k], len[k]);
		for (int i = 0; i < 4; i++)
			b[i] = (char)(p.num >> (24 - 8 * i));
		memset(b + 4, 0, 8);
		ei_x_append_buf(x, b, 12);
		return;
	}
	switch (corpus_pick(c, 8)) {
	case 0: {
		/* PID_EXT: the old format, one creation byte */
		char b[16];
		b[0] = 'g';
		ei_x_append_buf(x, b, 1);
		ei_x_encode_atom(x, p.node);
		for (int i = 0; i < 4; i++)
			b[i] = (char)(p.num >> (24 - 8 * i));
		for (int i = 0; i < 4; i++)
			b[4 + i] = (char)(p.serial >> (24 - 8 * i));
		b[8] = (char)p.creation;
		ei_x_append_buf(x, b, 9);
		return;
	}
	case 1: {
		/* NEW_PID_EXT with the node as ATOM_EXT */
		size_t n = strlen(p.node);
		char b[16] = { 'X', 'd', 0, (char)n };
		ei_x_append_buf(x, b, 4);
		ei_x_append_buf(x, p.node, (int)n);
		for (int i = 0; i < 4; i++)
			b[i] = (char)(p.num >> (24 - 8 * i));
		for (int i = 0; i < 4; i++)
			b[4 + i] = (char)(p.serial >> (24 - 8 * i));
		for (int i = 0; i < 4; i++)
			b[8 + i] = (char)(p.creation >> (24 - 8 * i));
		ei_x_append_buf(x, b, 12);
		return;
	}
	default:
		ei_x_encode_pid(x, &p);
		return;
	}
}

static void corpus_int(struct corpus *c, ei_x_buff *x)
{
	switch (corpus_pick(c, 9)) {
	case 0: ei_x_encode_long(x, corpus_pick(c, 256)); break;
	case 1: ei_x_encode_long(x, (long)(int32_t)corpus_next(c)); break;
	case 2: ei_x_encode_long(x, -(long)corpus_pick(c, 1000)); break;
	case 3: ei_x_encode_longlong(x, (long long)((uint64_t)corpus_next(c) << 32 |
						    corpus_next(c))); break;
	case 4: ei_x_encode_ulonglong(x, (unsigned long long)corpus_next(c) << 40 |
				      corpus_next(c)); break;
	case 5: ei_x_encode_longlong(x, INT64_MIN); break;
	case 6: ei_x_encode_ulonglong(x, UINT64_MAX); break;
	case 7: {
		/* a bignum wider than 64 bits, sometimes with zero high bytes */
		unsigned n = 9 + corpus_pick(c, 4);
		char b[16] = { 'n', (char)n, (char)corpus_pick(c, 2) };
		for (unsigned i = 0; i < n; i++)
			b[3 + i] = (char)corpus_next(c);
		if (corpus_pick(c, 2))
			for (unsigned i = 8; i < n; i++)
				b[3 + i] = 0;
		ei_x_append_buf(x, b, 3 + (int)n);
		break;
	}
	default: {
		/* INTEGER_EXT holding a small value */
		int32_t v = (int32_t)corpus_pick(c, 300) - 20;
		char b[5] = { 'b', (char)(v >> 24), (char)(v >> 16), (char)(v >> 8), (char)v };
		ei_x_append_buf(x, b, 5);
		break;
	}
	}
}

static void corpus_term(struct corpus *c, ei_x_buff *x, int depth);

static void corpus_kids(struct corpus *c, ei_x_buff *x, int n, int depth)
{
	for (int i = 0; i < n; i++)
		corpus_term(c, x, depth + 1);
}

static void corpus_term(struct corpus *c, ei_x_buff *x, int depth)
{
	static const char *const texts[] = {
		"hello", "", "a \"quoted\" \\ line\n\ttab\r", "caf\xc3\xa9",
		"bin\x01\x02", "0123456789abcdefghijklmnopqrstuvwxyz", "x",
	};
	unsigned k = corpus_pick(c, depth > 4 ? 9 : 17);
	const char *t = texts[corpus_pick(c, sizeof(texts) / sizeof(texts[0]))];
	switch (k) {
	case 0: case 1: corpus_int(c, x); break;
	case 2: case 3: corpus_atom(c, x); break;
	case 4: corpus_pid(c, x); break;
	case 5: ei_x_encode_empty_list(x); break;
	case 6: ei_x_encode_binary(x, t, (long)strlen(t)); break;
	case 7: ei_x_encode_string(x, t); break;
	case 8: {
		static const double ds[] = {
			0.0, 1.5, -2.25, 0.1, 1e10, 1.0e-300, 123456789.0, 3.0e22,
			300.0, 312.5, 1.0e-10, 1.0e15, 1.0e16, 9007199254740993.0,
			5e-324, -0.0, 1.7976931348623157e308, 0.0001, 1.0e-5,
		};
		uint64_t bits = (uint64_t)corpus_next(c) << 32 | corpus_next(c);
		double d;
		memcpy(&d, &bits, sizeof(d));
		if (corpus_pick(c, 2) || d != d || d - d != 0)
			d = ds[corpus_pick(c, sizeof(ds) / sizeof(ds[0]))];
		ei_x_encode_double(x, d);
		break;
	}
	case 9: case 10: case 11: {
		int n = (int)corpus_pick(c, 5);
		ei_x_encode_tuple_header(x, n);
		corpus_kids(c, x, n, depth);
		break;
	}
	case 12: case 13: {
		/* a list header of 0 is [] itself */
		int n = (int)corpus_pick(c, 5);
		ei_x_encode_list_header(x, n);
		corpus_kids(c, x, n, depth);
		if (n && !corpus_pick(c, 5))
			corpus_term(c, x, depth + 1);   /* improper */
		else if (n)
			ei_x_encode_empty_list(x);
		break;
	}
	case 14: {
		int n = (int)corpus_pick(c, 3);
		if (!corpus_pick(c, 3)) {
			/* a struct: %Shop.Order{id: _, items: _} */
			ei_x_encode_map_header(x, 3);
			ei_x_encode_atom(x, "__struct__");
			ei_x_encode_atom(x, "Elixir.Shop.Order");
			ei_x_encode_atom(x, "id");
			corpus_term(c, x, depth + 1);
			ei_x_encode_atom(x, "items");
			corpus_term(c, x, depth + 1);
			break;
		}
		if (!corpus_pick(c, 3)) {
			/* keys all atoms: a keyword map in Elixir */
			ei_x_encode_map_header(x, n);
			for (int i = 0; i < n; i++) {
				corpus_atom(c, x);
				corpus_term(c, x, depth + 1);
			}
			break;
		}
		ei_x_encode_map_header(x, n);
		corpus_kids(c, x, 2 * n, depth);
		break;
	}
	case 15: {
		erlang_ref r = { .len = 3, .creation = 2, .n = { 1, corpus_next(c), 3 } };
		strcpy(r.node, corpus_pick(c, 2) ? CORPUS_NODE : "other@host");
		erlang_port p = { .id = corpus_next(c), .creation = 4 };
		strcpy(p.node, r.node);
		if (corpus_pick(c, 2))
			ei_x_encode_ref(x, &r);
		else
			ei_x_encode_port(x, &p);
		break;
	}
	default:
		if (corpus_pick(c, 3))
			ei_x_encode_bitstring(x, "\xa5\x5a", 0, 12);
		else
			ei_x_encode_binary(x, "\xff\x00\x10", 3);
		break;
	}
}

static void corpus_mfa(struct corpus *c, ei_x_buff *x, bool args)
{
	int n = (int)corpus_pick(c, 4);
	ei_x_encode_tuple_header(x, args ? 4 : 3);
	corpus_atom(c, x);
	corpus_atom(c, x);
	ei_x_encode_long(x, n);
	if (args) {
		ei_x_encode_list_header(x, n);
		corpus_kids(c, x, n, 1);
		if (n)
			ei_x_encode_empty_list(x);
	}
}

/* One event of a random type; now and then broken on purpose. */
static void corpus_event(struct corpus *c, ei_x_buff *x, long long ts)
{
	static const char *const tags[] = {
		"send", "send", "send", "receive", "receive", "receive",
		"send_to_non_existing_process", "spawn", "spawned", "exit",
		"link", "unlink", "getting_linked", "getting_unlinked",
		"register", "unregister", "call", "return_from",
		"exception_from", "gc_minor_start", "gc_minor_end",
		"gc_major_start", "gc_major_end", "in", "out", "in_exiting",
		"out_exiting", "out_exited",
	};
	const char *tag = tags[corpus_pick(c, sizeof(tags) / sizeof(tags[0]))];
	unsigned bad = c->malformed && !corpus_pick(c, (unsigned)c->malformed) ?
		1 + corpus_pick(c, 6) : 0;

	if (bad == 1) {         /* not a 6-tuple */
		corpus_term(c, x, 3);
		return;
	}
	ei_x_encode_tuple_header(x, bad == 2 ? 5 : 6);
	if (bad == 3)
		ei_x_encode_atom(x, "no_such_tag");
	else if (corpus_odd(c))
		corpus_raw_atom(x, corpus_pick(c, 2) ? 'w' : 's', tag, strlen(tag) + 1);
	else
		ei_x_encode_atom(x, tag);
	if (bad == 4)
		ei_x_encode_atom(x, "not_a_pid");
	else
		corpus_pid(c, x);
	if (bad == 5) {
		ei_x_encode_double(x, 1.0);
	} else if (corpus_odd(c)) {
		/* 8 bytes, sign and size at the edges of a 64-bit integer */
		char b[11] = { 'n', 8, (char)corpus_pick(c, 2) };
		memset(b + 3, 0, 7);
		b[10] = (char)(corpus_pick(c, 2) ? 0x80 : 0x7f);
		if (corpus_pick(c, 2))
			b[3] = 1;
		ei_x_append_buf(x, b, 11);
	} else if (corpus_pick(c, 8))
		ei_x_encode_longlong(x, ts);
	else
		ei_x_encode_long(x, (long)corpus_pick(c, 100000));

	/* A */
	if (!strcmp(tag, "receive") || !strcmp(tag, "exit")) {
		if (corpus_pick(c, 20))
			ei_x_encode_empty_list(x);
		else
			corpus_term(c, x, 2);
	} else if (!strncmp(tag, "send", 4)) {
		if (corpus_pick(c, 6))
			corpus_pid(c, x);
		else
			corpus_term(c, x, 2);
	} else if (!strcmp(tag, "register") || !strcmp(tag, "unregister")) {
		if (corpus_pick(c, 12))
			corpus_atom(c, x);
		else
			corpus_term(c, x, 2);
	} else if (!strcmp(tag, "call")) {
		if (corpus_pick(c, 2))
			ei_x_encode_empty_list(x);
		else
			corpus_term(c, x, 2);
	} else if (!strcmp(tag, "return_from") || !strcmp(tag, "exception_from")) {
		if (corpus_pick(c, 10))
			corpus_mfa(c, x, false);
		else
			corpus_term(c, x, 2);
	} else if (!strncmp(tag, "gc_", 3)) {
		if (corpus_pick(c, 10)) {
			ei_x_encode_tuple_header(x, 2);
			ei_x_encode_long(x, (long)corpus_pick(c, 1u << 24));
			ei_x_encode_long(x, (long)corpus_pick(c, 1u << 16));
		} else {
			corpus_term(c, x, 2);
		}
	} else if (!strncmp(tag, "in", 2) || !strncmp(tag, "out", 3)) {
		if (corpus_pick(c, 3))
			corpus_mfa(c, x, false);
		else
			corpus_term(c, x, 2);
	} else {
		corpus_pid(c, x);   /* spawn, spawned, link and friends */
	}

	/* B */
	if (!strncmp(tag, "spawn", 5) || !strcmp(tag, "call")) {
		if (corpus_pick(c, 10))
			corpus_mfa(c, x, true);
		else
			corpus_term(c, x, 2);
	} else if (!strcmp(tag, "exception_from")) {
		if (corpus_pick(c, 4)) {
			ei_x_encode_tuple_header(x, 2);
			corpus_atom(c, x);
			corpus_term(c, x, 1);
		} else {
			ei_x_encode_empty_list(x);
		}
	} else if (corpus_pick(c, 8)) {
		corpus_term(c, x, 0);
	} else {
		ei_x_encode_empty_list(x);
	}

	/* Cut */
	if (bad == 6)
		ei_x_encode_long(x, 1);
	else if (bad != 2 && corpus_odd(c))
		corpus_raw_atom(x, 'w', corpus_pick(c, 2) ? "true\0" : "fals", 5);
	else if (bad != 2)
		ei_x_encode_atom(x, corpus_pick(c, 5) ? "false" : "true");
}

/* A whole {beamscope_batch, W, Seq, Dropped, Events} message of n events. */
static __attribute__((unused)) void
corpus_batch(struct corpus *c, ei_x_buff *x, int n, long seq)
{
	ei_x_encode_version(x);
	ei_x_encode_tuple_header(x, 5);
	ei_x_encode_atom(x, "beamscope_batch");
	ei_x_encode_long(x, 0);
	ei_x_encode_long(x, seq);
	ei_x_encode_long(x, 0);
	if (n)
		ei_x_encode_list_header(x, n);
	for (int i = 0; i < n; i++)
		corpus_event(c, x, 1763790000000000LL + seq * 1000 + i);
	ei_x_encode_empty_list(x);
}

/*
 * The same n events twice: as a list (x) and as the workers ship them (b),
 * a binary of whole terms back to back, each with its version byte.
 */
static __attribute__((unused)) void
corpus_batch_pair(struct corpus *c, ei_x_buff *x, ei_x_buff *b, int n, long seq)
{
	ei_x_buff recs;
	ei_x_new(&recs);
	for (ei_x_buff *m = x; m; m = m == x ? b : NULL) {
		ei_x_encode_version(m);
		ei_x_encode_tuple_header(m, 5);
		ei_x_encode_atom(m, "beamscope_batch");
		ei_x_encode_long(m, 0);
		ei_x_encode_long(m, seq);
		ei_x_encode_long(m, 0);
	}
	if (n)
		ei_x_encode_list_header(x, n);
	for (int i = 0; i < n; i++) {
		ei_x_buff ev;
		ei_x_new_with_version(&ev);
		corpus_event(c, &ev, 1763790000000000LL + seq * 1000 + i);
		ei_x_append_buf(x, ev.buff + 1, ev.index - 1);
		ei_x_append_buf(&recs, ev.buff, ev.index);
		ei_x_free(&ev);
	}
	ei_x_encode_empty_list(x);
	ei_x_encode_binary(b, recs.buff, recs.index);
	ei_x_free(&recs);
}

#endif
