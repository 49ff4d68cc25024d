/*
 * fake: a source of nodes for the engine's unit test, linked in place of
 * the code that talks to a real node (src/wire/agent*.c, conn.c,
 * src/source/attach.c).  It answers the engine through the same functions
 * (agent.h, conn.h, attach.h), at once, and ships the events a node would:
 * batches of sends and receives whose messages are drawn from the decode
 * corpus (test/unit/corpus.h), each worker's batches numbered as a real
 * worker numbers them, and every worker's last word when stopped.  The
 * connection is a pipe that is readable while the fake has something to
 * say, so the engine's own loop polls it as it polls a socket.
 *
 * A node the test did not add is unknown (the attach fails as for a name
 * epmd does not know).
 */
#ifndef BS_FAKE_H
#define BS_FAKE_H

#include <stdbool.h>

struct fake_node {
	const char *name;       /* as the engine is given it */
	int workers;            /* 1 to 8 */
	int batches;            /* per worker, shipped once tracing */
	int events;             /* per batch */
	int lose_after;         /* the connection breaks after this many
				 * batches in all; 0: never */
	bool refuse_trace;      /* the trace request fails */
	long long offset_us;    /* its clock against ours */
	long long ts0_us;       /* its first event's time, after the first
				 * trace of any node; events are 10 us apart */
};

/* What a fake node saw and did. */
struct fake_seen {
	int connects, attaches, traces, stops, gones;
	int profiles;           /* profiler requests: on, or off */
	int profile_procs;      /* what the last one named; -1: off */
	int alarms;             /* alarms requests: on, or off */
	bool alarms_on;         /* what the last one asked */
	int exacts;             /* exact mode requests: on, or off */
	int exact_patterns;     /* what the last one named; 0: off */
	long shipped;           /* events in the batches sent */
	long long last_ts_us;   /* the newest event's time */
};

void fake_reset(void);
void fake_add(const struct fake_node *f);
struct fake_seen fake_seen(const char *name);

#endif
