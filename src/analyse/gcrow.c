/*
 * gcrow: reading gen call rows (latency histograms, quantiles, rates,
 * the calls in flight) and rendering their texts again (:syntax); the
 * pairing itself is gencall.c.
 */
#include "gencall.h"

#include <stdlib.h>
#include <string.h>

#include "gencall_priv.h"
#include "xalloc.h"

/* ---------------------------------------------------------------------------
 * Histogram.  Bucket i < GC_SUB holds the value i; above, each power of two
 * [2^m, 2^(m+1)) is cut in GC_SUB equal buckets.
 */

static int bucket_of(int64_t v)
{
	if (v < GC_SUB)
		return v < 0 ? 0 : (int)v;
	int m = 63 - __builtin_clzll((unsigned long long)v);
	int shift = m - GC_SUB_BITS;
	int i = GC_SUB * (shift + 1) + (int)(((uint64_t)v >> shift) - GC_SUB);
	return i < GC_BUCKETS ? i : GC_BUCKETS - 1;
}

static int64_t bucket_mid(int i)
{
	if (i < GC_SUB)
		return i;
	int shift = i / GC_SUB - 1;
	uint64_t top = (uint64_t)(i % GC_SUB + GC_SUB);
	uint64_t lo = top << shift, hi = (top + 1) << shift;
	return (int64_t)((lo + hi - 1) / 2);
}

void gc_hist_add(struct gc_hist *h, int64_t us)
{
	if (us < 0)
		us = 0;
	int i = bucket_of(us);
	uint32_t **o = &h->oct[i / GC_SUB];
	if (!*o)
		*o = xcalloc(GC_SUB, sizeof(**o));
	(*o)[i % GC_SUB]++;
	h->count++;
	h->sum += us;
	if (us > h->max)
		h->max = us;
}

int64_t gc_hist_quantile(const struct gc_hist *h, double q)
{
	if (!h->count)
		return 0;
	uint64_t rank = (uint64_t)(q * (double)h->count + 0.999999), seen = 0;
	if (rank < 1)
		rank = 1;
	for (int o = 0; o < GC_OCTAVES; o++) {
		if (!h->oct[o])
			continue;
		for (int k = 0; k < GC_SUB; k++) {
			seen += h->oct[o][k];
			if (seen >= rank) {
				int64_t v = bucket_mid(o * GC_SUB + k);
				return v > h->max ? h->max : v;
			}
		}
	}
	return h->max;
}

void gc_hist_release(struct gc_hist *h)
{
	for (int o = 0; o < GC_OCTAVES; o++)
		free(h->oct[o]);
	memset(h, 0, sizeof(*h));
}

const int64_t *gc_row_quantiles(struct gc_row *r)
{
	if (r->q_count != r->hist.count) {
		r->q[0] = gc_hist_quantile(&r->hist, 0.5);
		r->q[1] = gc_hist_quantile(&r->hist, 0.9);
		r->q[2] = gc_hist_quantile(&r->hist, 0.99);
		r->q_count = r->hist.count;
	}
	return r->q;
}

double gc_row_rate(const struct gc_row *r, int64_t now)
{
	int64_t sec = now / 1000000;
	unsigned long n = 0;
	for (int i = 0; i < GC_RATE_SECS; i++)
		if (r->rate_sec[i] < sec && r->rate_sec[i] >= sec - GC_RATE_SECS)
			n += r->rate_n[i];
	return (double)n / GC_RATE_SECS;
}

const struct gc_call *gc_row_oldest(const struct gc_row *r)
{
	return r->inflight.first;
}

size_t gc_row_inflight(const struct gc_row *r, const struct gc_call **out,
		       size_t max)
{
	size_t n = 0;
	for (const struct gc_call *c = r->inflight.first; c && n < max;
	     c = c->in_row.next)
		out[n++] = c;
	return r->in_flight;
}

/* One text of c rendered again, in place. */
static void call_retext(struct gc_call *c, gc_retext_fn fn, void *arg,
			struct sbuf *sb)
{
	sbuf_reset(sb);
	if (c->request && c->request_raw &&
	    fn(arg, c->node, GC_TEXT_REQUEST, c->request_raw,
	       c->request_raw_len, c->request_raw_part, c->request, sb)) {
		free(c->request);
		c->request = xstrdup(sbuf_str(sb));
	}
	sbuf_reset(sb);
	if (c->reply && c->reply_raw &&
	    fn(arg, c->reply_node, GC_TEXT_REPLY, c->reply_raw,
	       c->reply_raw_len, c->reply_raw_part, c->reply, sb)) {
		free(c->reply);
		c->reply = xstrdup(sbuf_str(sb));
	}
}

void gencall_retext(struct gencalls *g, gc_retext_fn fn, void *arg)
{
	struct sbuf sb = SBUF_INIT;
	for (struct gc_call *c = g->all.first; c; c = c->all.next)
		call_retext(c, fn, arg, &sb);
	for (struct gc_call *c = g->early_list.first; c; c = c->all.next)
		call_retext(c, fn, arg, &sb);
	for (size_t i = 0; i < g->nrows; i++) {
		struct gc_row *r = g->rows[i];
		for (int k = 0; k < r->nslow; k++)
			call_retext(r->slow[k], fn, arg, &sb);
		sbuf_reset(&sb);
		if (r->server_raw && fn(arg, r->node, GC_TEXT_SERVER,
					r->server_raw, r->server_raw_len,
					RAW_ENTRY, r->server, &sb)) {
			free(r->server);
			r->server = xstrdup(sbuf_str(&sb));
		}
		sbuf_reset(&sb);
		if (r->server_name && fn(arg, r->node, GC_TEXT_NAME, NULL, 0,
					 RAW_ENTRY, r->server_name, &sb)) {
			free(r->server_name);
			r->server_name = xstrdup(sbuf_str(&sb));
		}
	}
	sbuf_release(&sb);
	/* the rows' keys may have changed: hashed anew */
	row_hash_build(g);
	g->generation++;
}
