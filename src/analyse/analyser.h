/*
 * analyser: what the engine runs every event through, beside the sinks:
 * a chain of these, each with its own state (call stacks, gen call
 * pairing).  The engine calls take for a node's live events as they come
 * (a recording has that work done already), event for each event as the
 * sinks get it, in time order, and tick as the wall clock goes on while
 * live.  Front ends read an analyser's results through the engine
 * (session_gencalls()).
 */
#ifndef BS_ANALYSER_H
#define BS_ANALYSER_H

#include <stdbool.h>
#include <stdint.h>

#include "event.h"

struct analyser_ops {
	const char *name;
	/* a live event of a kind asked for, within the limits, as its node
	 * gives it (before any merge); may fill in fields of e */
	void (*take)(void *st, struct event *e);
	/* an event as the sinks get it */
	void (*event)(void *st, int node, const struct event *ev);
	/* whether it needs events of this type the user did not ask for
	 * (given to event, but not to the sinks) */
	bool (*needs)(int type);
	/* time goes on (microseconds, the events' clock) */
	void (*tick)(void *st, int64_t now_us);
};

/* Returns and gc ends timed against their starts (callstack.c). */
extern const struct analyser_ops callstack_analyser;
/* gen_server calls paired with their replies (gencall.c). */
extern const struct analyser_ops gencall_analyser;

#endif
