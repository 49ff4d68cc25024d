/*
 * stats: what one trace session delivered, dropped and lost, per worker and
 * per event type.  delivered + dropped is everything the tracer produced,
 * once every worker has said its last word (eos): that word says how many
 * events the worker took from its ring, so events taken but never received
 * are counted as dropped too.  lost_batches counts sequence gaps, which a
 * healthy connection never has.  A worker without its last word is
 * incomplete: its counts may fall short.
 */
#ifndef BS_STATS_H
#define BS_STATS_H

#include <stdbool.h>

#include "event.h"

struct worker_stats {
	unsigned long batches;
	unsigned long delivered;   /* events that reached us */
	unsigned long dropped;     /* source_dropped, and what was taken on the
				    * target but never reached us */
	unsigned long source_dropped; /* dropped on the target (cumulative) */
	long taken;                /* taken from its ring, as eos says; -1 */
	unsigned long lost_batches;/* sequence gaps */
	long next_seq;
	bool eos;                  /* the worker has said its last word */
};

struct trace_stats {
	int nworkers;
	struct worker_stats *w;
	unsigned long counts[EV__COUNT]; /* events written, per type */
	unsigned long written;
	unsigned long filtered;    /* delivered, but not asked for */
	unsigned long over_limit;  /* delivered after --max-events was reached */
	unsigned long unknown;     /* messages of unknown shape */
	unsigned long bad_worker;  /* batches naming a worker that does not exist */
	/* earlier sessions of the same run (a node attached again) */
	unsigned long carried_delivered, carried_dropped;
};

void stats_init(struct trace_stats *st, int nworkers);
void stats_release(struct trace_stats *st);
/* A new agent session: its workers start afresh; totals carry over. */
void stats_new_session(struct trace_stats *st, int nworkers);
/* Account a batch header; false if the worker id is out of range. */
bool stats_batch(struct trace_stats *st, long worker, long seq, long dropped,
		 long events);
/* A worker's last word; taken < 0 if it did not say. */
bool stats_eos(struct trace_stats *st, long worker, long batches, long dropped,
	       long taken);
bool stats_all_eos(const struct trace_stats *st);
/* Workers that have not said their last word. */
int stats_incomplete(const struct trace_stats *st);
unsigned long stats_delivered(const struct trace_stats *st);
unsigned long stats_dropped(const struct trace_stats *st);

#endif
