/*
 * nodestat: what a node says about itself once a second while the view's
 * header asks (the agent's beamscope_node, nif/PROTOCOL.md), decoded, and
 * the rates beamscope keeps beside it for the header's sparklines.
 *
 * A sample holds what one message said: a field the message did not carry
 * is -1 (counts) or absent (nsched, nrq 0).  Nothing here draws; ui/header.c
 * does.
 */
#ifndef BS_NODESTAT_H
#define BS_NODESTAT_H

#include <stdbool.h>
#include <stdint.h>

#include "spark.h"

/* schedulers (and run queues) a sample keeps at most; more are cut off */
#define NODESTAT_SCHED_MAX 1024

enum nodestat_mem {
	NODESTAT_MEM_TOTAL, NODESTAT_MEM_PROCESSES, NODESTAT_MEM_BINARY,
	NODESTAT_MEM_ETS, NODESTAT_MEM_ATOM, NODESTAT_MEM__COUNT
};

struct node_sample {
	long long mem[NODESTAT_MEM__COUNT]; /* bytes; -1: not said */
	long long procs, proc_limit;        /* -1: not said */
	long long ports, port_limit;
	int nsched;                 /* utilisation known for this many
				     * schedulers online (0 until the agent
				     * has two samples) */
	uint16_t util[NODESTAT_SCHED_MAX];  /* permille of the last second */
	int nrq;                    /* run queue lengths, per scheduler */
	uint32_t rq[NODESTAT_SCHED_MAX];
	long long dirty_rq;         /* the dirty CPU schedulers' queue; -1 */
};

/* A node as the header sees it: its latest sample and what it did. */
struct node_stats {
	struct node_sample last;
	bool have;                  /* last holds a sample */
	long long at_ms;            /* when it arrived (monotonic) */
	unsigned long samples;      /* received, in the whole run */
	struct spark events;        /* events/s, one value a second */
	struct spark drops;         /* drops/s */
	unsigned long events_base, drops_base; /* the totals a second ago */
	bool based;
};

/*
 * The map of a beamscope_node message at buf[*idx] into *out (*idx moves
 * past it).  Unknown keys are skipped, so the agent may say more.  0, or
 * -1 when the term is not such a map (*out is then partial).
 */
int nodestat_decode(const char *buf, int *idx, struct node_sample *out);

/* About once a second: the node's totals of events and drops so far,
 * ms after the last call; the differences, as rates a second, go into
 * the sparklines. */
void nodestat_tick(struct node_stats *ns, unsigned long events,
		   unsigned long drops, long long ms);

/* The average and the largest utilisation of a sample, permille; false
 * when it has none. */
bool nodestat_util(const struct node_sample *s, int *avg, int *max);

/* bytes as people read them: 512B, 12.3K, 845M, 1.21G (at most 6 columns) */
void nodestat_bytes(char *out, size_t outsz, long long bytes);

#endif
