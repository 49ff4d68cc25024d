/*
 * decode_calls: exact mode's messages (nif/beamscope_prof.erl, PROTOCOL.md
 * "Exact mode"): {beamscope_calls, Stats, [{Name, Calls, Us, Words}]},
 * Stats a map of counts, and {beamscope_calls_state, off | {on, N} |
 * {error, Text}}.  A row that is not of that shape is skipped; a name
 * is made safe (no control bytes) and written in the decoder's syntax.
 */
#include "decode.h"
#include "decode_priv.h"
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static int calls_stats(const char *buf, int *idx, struct prof_calls *c)
{
	static const struct long_key keys[] = {
		{ "functions", offsetof(struct prof_calls, functions) },
		{ "read", offsetof(struct prof_calls, read) },
		{ "read_us", offsetof(struct prof_calls, read_us) },
		{ "ms", offsetof(struct prof_calls, ms) },
	};
	return long_map_read(buf, idx, keys, sizeof(keys) / sizeof(keys[0]), c);
}

/* one row, its name appended to scratch */
static int calls_row(struct decoder *d, const char *buf, int *idx,
		     struct prof_call *row)
{
	int arity;
	if (ei_decode_tuple_header(buf, idx, &arity) < 0 || arity != 4)
		return -1;
	if (prof_frame(d, buf, idx) < 0 ||
	    ei_decode_longlong(buf, idx, &row->calls) < 0 ||
	    ei_decode_longlong(buf, idx, &row->us) < 0 ||
	    ei_decode_longlong(buf, idx, &row->words) < 0 ||
	    row->calls < 0 || row->us < 0 || row->words < -1)
		return -1;
	sbuf_addch(&d->scratch, '\0');
	return 0;
}

int decode_calls(struct decoder *d, const char *buf, int *idx,
		 struct prof_calls *c)
{
	size_t at[PROF_CALLS_MAX];
	int n, got = 0;
	c->functions = c->read = c->read_us = c->ms = 0;
	c->n = 0;
	d->scratch.len = 0;
	if (calls_stats(buf, idx, c) < 0 || ei_decode_list_header(buf, idx, &n) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		int start = *idx;
		size_t mark = d->scratch.len;
		if (got < PROF_CALLS_MAX &&
		    calls_row(d, buf, idx, &c->rows[got]) == 0) {
			at[got++] = mark;    /* where its name begins */
			continue;
		}
		/* a row past the limit, or not a row: skipped whole */
		d->scratch.len = mark;
		*idx = start;
		if (ei_skip_term(buf, idx) < 0)
			return -1;
	}
	if (n > 0 && ei_skip_term(buf, idx) < 0)   /* the list's tail */
		return -1;
	for (int i = 0; i < got; i++)
		c->rows[i].name = d->scratch.buf + at[i];
	c->n = got;
	return 0;
}

int decode_calls_state(const char *buf, int *idx, struct calls_state *st)
{
	int arity, type, size;
	char tag[16];
	memset(st, 0, sizeof(*st));
	if (ei_get_type(buf, idx, &type, &size) < 0)
		return -1;
	if (type != ERL_SMALL_TUPLE_EXT) {
		if (decode_atom(buf, idx, tag, sizeof(tag)) < 0 || strcmp(tag, "off"))
			return -1;
		st->kind = CALLS_STATE_OFF;
		return 0;
	}
	if (ei_decode_tuple_header(buf, idx, &arity) < 0 || arity != 2 ||
	    decode_atom(buf, idx, tag, sizeof(tag)) < 0)
		return -1;
	if (!strcmp(tag, "on")) {
		st->kind = CALLS_STATE_ON;
		return ei_decode_long(buf, idx, &st->functions) < 0 ||
			st->functions < 0 ? -1 : 0;
	}
	if (strcmp(tag, "error") ||
	    ei_get_type(buf, idx, &type, &size) < 0 || type != ERL_BINARY_EXT ||
	    size < 0 || size >= (int)sizeof(st->why))
		return -1;
	long len;
	if (ei_decode_binary(buf, idx, st->why, &len) < 0)
		return -1;
	st->why[len] = '\0';
	for (long i = 0; i < len; i++)
		if ((unsigned char)st->why[i] < 0x20 || st->why[i] == 0x7f)
			st->why[i] = '?';
	st->kind = CALLS_STATE_ERROR;
	return 0;
}
