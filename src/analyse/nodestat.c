/*
 * nodestat: a node's samples decoded, and its rates over the last minute
 * (see nodestat.h).  The decoder takes the map's keys in any order and
 * steps over the ones it does not know; every value is checked for its
 * type before it is read, and lists longer than NODESTAT_SCHED_MAX are
 * cut, never overrun.
 */
#include "nodestat.h"

#include <ei.h>
#include <stdio.h>
#include <string.h>

/* an integer that fits a long long; bignums are refused */
static int get_int(const char *buf, int *idx, long long *v)
{
	return ei_decode_longlong(buf, idx, v) < 0 ? -1 : 0;
}

/* {A, B} of integers */
static int get_pair(const char *buf, int *idx, long long *a, long long *b)
{
	int arity;
	if (ei_decode_tuple_header(buf, idx, &arity) < 0 || arity != 2)
		return -1;
	return get_int(buf, idx, a) < 0 || get_int(buf, idx, b) < 0 ? -1 : 0;
}

/*
 * A list of non-negative integers into out (at most max; the rest are
 * read and dropped), their number in *n.  [] and "string" (a list of small
 * integers, as the VM encodes one) both come here.
 */
static int get_list(const char *buf, int *idx, long long *out, int max,
		    int *n)
{
	int type, size;
	*n = 0;
	if (ei_get_type(buf, idx, &type, &size) < 0)
		return -1;
	if (type == ERL_NIL_EXT)
		return ei_decode_list_header(buf, idx, &size);
	if (type == ERL_STRING_EXT) {
		/* at most 65535 bytes, each a value */
		static char tmp[65536];
		if (size < 0 || size >= (int)sizeof(tmp) ||
		    ei_decode_string(buf, idx, tmp) < 0)
			return -1;
		for (int i = 0; i < size; i++)
			if (*n < max)
				out[(*n)++] = (unsigned char)tmp[i];
		return 0;
	}
	int len;
	if (ei_decode_list_header(buf, idx, &len) < 0 || len < 0)
		return -1;
	for (int i = 0; i < len; i++) {
		long long v;
		if (get_int(buf, idx, &v) < 0 || v < 0)
			return -1;
		if (*n < max)
			out[(*n)++] = v;
	}
	/* a proper list ends in [] */
	return ei_decode_list_header(buf, idx, &len) < 0 || len ? -1 : 0;
}

int nodestat_decode(const char *buf, int *idx, struct node_sample *out)
{
	static long long vals[NODESTAT_SCHED_MAX];
	int arity, n;

	for (int i = 0; i < NODESTAT_MEM__COUNT; i++)
		out->mem[i] = -1;
	out->procs = out->proc_limit = out->ports = out->port_limit = -1;
	out->dirty_rq = -1;
	out->nsched = out->nrq = 0;
	if (ei_decode_map_header(buf, idx, &arity) < 0)
		return -1;
	for (int i = 0; i < arity; i++) {
		char key[MAXATOMLEN_UTF8];
		if (ei_decode_atom_as(buf, idx, key, sizeof(key), ERLANG_UTF8,
				      NULL, NULL) < 0) {
			/* a key of ours is an atom: step over the pair */
			if (ei_skip_term(buf, idx) < 0 || ei_skip_term(buf, idx) < 0)
				return -1;
			continue;
		}
		int r = 0;
		if (!strcmp(key, "memory")) {
			r = get_list(buf, idx, vals, NODESTAT_MEM__COUNT, &n);
			for (int k = 0; !r && k < n; k++)
				out->mem[k] = vals[k];
		} else if (!strcmp(key, "processes")) {
			r = get_pair(buf, idx, &out->procs, &out->proc_limit);
		} else if (!strcmp(key, "ports")) {
			r = get_pair(buf, idx, &out->ports, &out->port_limit);
		} else if (!strcmp(key, "run_queues")) {
			r = get_list(buf, idx, vals, NODESTAT_SCHED_MAX, &n);
			for (int k = 0; !r && k < n; k++)
				out->rq[k] = vals[k] > UINT32_MAX ? UINT32_MAX :
					(uint32_t)vals[k];
			out->nrq = r ? 0 : n;
		} else if (!strcmp(key, "dirty_run_queue")) {
			r = get_int(buf, idx, &out->dirty_rq);
		} else if (!strcmp(key, "schedulers")) {
			r = get_list(buf, idx, vals, NODESTAT_SCHED_MAX, &n);
			for (int k = 0; !r && k < n; k++)
				out->util[k] = (uint16_t)(vals[k] > 1000 ? 1000 :
							  vals[k]);
			out->nsched = r ? 0 : n;
		} else {
			r = ei_skip_term(buf, idx);
		}
		if (r < 0)
			return -1;
	}
	return 0;
}

/* what changed in ms, a second */
static unsigned long per_second(unsigned long now, unsigned long base,
				long long ms)
{
	/* totals start again with a new session: never negative */
	unsigned long d = now >= base ? now - base : now;
	if (ms <= 0 || ms == 1000)
		return d;
	return (unsigned long)((double)d * 1000.0 / (double)ms + 0.5);
}

void nodestat_tick(struct node_stats *ns, unsigned long events,
		   unsigned long drops, long long ms)
{
	if (ns->based) {
		spark_push(&ns->events, per_second(events, ns->events_base, ms));
		spark_push(&ns->drops, per_second(drops, ns->drops_base, ms));
	}
	ns->events_base = events;
	ns->drops_base = drops;
	ns->based = true;
}

bool nodestat_util(const struct node_sample *s, int *avg, int *max)
{
	long sum = 0;
	int m = 0;
	if (s->nsched <= 0)
		return false;
	for (int i = 0; i < s->nsched; i++) {
		sum += s->util[i];
		if (s->util[i] > m)
			m = s->util[i];
	}
	*avg = (int)((sum + s->nsched / 2) / s->nsched);
	*max = m;
	return true;
}

void nodestat_bytes(char *out, size_t outsz, long long bytes)
{
	static const char units[] = "KMGTP";
	if (bytes < 0) {
		snprintf(out, outsz, "-");
		return;
	}
	if (bytes < 1024) {
		snprintf(out, outsz, "%lldB", bytes);
		return;
	}
	double v = (double)bytes / 1024;
	int u = 0;
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (v < 10)
		snprintf(out, outsz, "%.2f%c", v, units[u]);
	else if (v < 100)
		snprintf(out, outsz, "%.1f%c", v, units[u]);
	else
		snprintf(out, outsz, "%.0f%c", v, units[u]);
}
