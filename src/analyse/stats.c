/* stats: per-worker accounting of batches, events and drops. */
#include "stats.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

static struct worker_stats *workers_new(int nworkers)
{
	struct worker_stats *w = xcalloc((size_t)(nworkers > 0 ? nworkers : 1),
					 sizeof(*w));
	for (int i = 0; i < nworkers; i++)
		w[i].taken = -1;
	return w;
}

void stats_init(struct trace_stats *st, int nworkers)
{
	memset(st, 0, sizeof(*st));
	st->nworkers = nworkers;
	st->w = workers_new(nworkers);
}

/* Taken on the target but not delivered: lost on the way, so dropped. */
static void settle(struct worker_stats *w)
{
	w->dropped = w->source_dropped;
	if (w->taken >= 0 && (unsigned long)w->taken > w->delivered)
		w->dropped += (unsigned long)w->taken - w->delivered;
}

void stats_release(struct trace_stats *st)
{
	free(st->w);
	st->w = NULL;
	st->nworkers = 0;
}

void stats_new_session(struct trace_stats *st, int nworkers)
{
	for (int i = 0; i < st->nworkers; i++) {
		st->carried_delivered += st->w[i].delivered;
		st->carried_dropped += st->w[i].dropped;
	}
	free(st->w);
	st->nworkers = nworkers;
	st->w = workers_new(nworkers);
}

bool stats_batch(struct trace_stats *st, long worker, long seq, long dropped,
		 long events)
{
	if (worker < 0 || worker >= st->nworkers) {
		st->bad_worker++;
		return false;
	}
	struct worker_stats *w = &st->w[worker];
	if (seq > w->next_seq)
		w->lost_batches += (unsigned long)(seq - w->next_seq);
	if (seq >= w->next_seq)
		w->next_seq = seq + 1;
	w->batches++;
	w->delivered += (unsigned long)(events > 0 ? events : 0);
	if (dropped >= 0 && (unsigned long)dropped > w->source_dropped)
		w->source_dropped = (unsigned long)dropped;
	settle(w);
	return true;
}

bool stats_eos(struct trace_stats *st, long worker, long batches, long dropped,
	       long taken)
{
	if (worker < 0 || worker >= st->nworkers) {
		st->bad_worker++;
		return false;
	}
	struct worker_stats *w = &st->w[worker];
	if (batches > w->next_seq) {
		w->lost_batches += (unsigned long)(batches - w->next_seq);
		w->next_seq = batches;   /* said twice, counted once */
	}
	if (dropped >= 0 && (unsigned long)dropped > w->source_dropped)
		w->source_dropped = (unsigned long)dropped;
	if (taken >= 0)
		w->taken = taken;
	settle(w);
	w->eos = true;
	return true;
}

int stats_incomplete(const struct trace_stats *st)
{
	int n = 0;
	for (int i = 0; i < st->nworkers; i++)
		n += !st->w[i].eos;
	return n;
}

bool stats_all_eos(const struct trace_stats *st)
{
	for (int i = 0; i < st->nworkers; i++)
		if (!st->w[i].eos)
			return false;
	return true;
}

unsigned long stats_delivered(const struct trace_stats *st)
{
	unsigned long n = st->carried_delivered;
	for (int i = 0; i < st->nworkers; i++)
		n += st->w[i].delivered;
	return n;
}

unsigned long stats_dropped(const struct trace_stats *st)
{
	unsigned long n = st->carried_dropped;
	for (int i = 0; i < st->nworkers; i++)
		n += st->w[i].dropped;
	return n;
}
