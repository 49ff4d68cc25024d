/*
 * rerender: what the store already holds, rendered again in another
 * syntax (the :syntax command).
 *
 * An event keeps what the worker shipped (struct event's raw): the
 * message alone for sends, receives, exits, returns and gen calls (nearly
 * every event), the whole entry for the rest (arguments, callers,
 * exception reasons, peers that are no pid).  Its terms are decoded again
 * from it, through the decoder, so they read exactly as if they had come
 * in the new syntax.  Names and functions (registered
 * names, initial calls, current functions, labels, the calls view's
 * functions) are read back from their text (retext.c).  An event without
 * raw bytes (one that held a cookie) keeps its message text.
 *
 * A walk of the ring: O(events), no allocation per event beyond the new
 * text block; in slices, so that the view answers keys while a big ring
 * is rendered again.
 */
#ifndef BS_RERENDER_H
#define BS_RERENDER_H

#include <stddef.h>

#include "store.h"
#include "term.h"

/* How a node's text is rendered: the decoder's settings. */
struct rerender_node {
	enum term_syntax from, to;   /* the syntax the store's text is in,
				      * and the one wanted */
	const char *node;            /* the decoder's node (NULL: several) */
	size_t payload_max;          /* the decoder's payload limit */
	struct term_dialect dia;     /* the decoder's: the target's printers
				      * (zero when not said) */
};

/* The processes' names and functions and the calls view's functions of
 * each node, from its from syntax to its to: at once (O(processes)). */
void rerender_names(struct store *st, const struct rerender_node *nodes,
		    int nnodes);
/*
 * The events of each node not in its to syntax yet, newest first (what a
 * view shows first), from *cursor down: start with st->next_seq.  Stops
 * after about budget_us microseconds (0: no limit); *cursor is where to
 * go on, 0 when the ring is done.  An event knows the syntax its text is
 * in (struct sevent's syn), so a walk can stop anywhere, and a new :syntax
 * can start another.  Returns the events rendered again.
 */
size_t rerender_events(struct store *st, const struct rerender_node *nodes,
		       int nnodes, uint64_t *cursor, long budget_us);
/* One event whose text is not in its node's to syntax (decoded before a
 * :syntax, stored after: several nodes' events wait to be merged). */
void rerender_one(struct store *st, uint64_t seq,
		  const struct rerender_node *node);
/* Both, the whole ring at once. */
size_t rerender_store(struct store *st, const struct rerender_node *nodes,
		      int nnodes);

struct gencalls;
/* The servers' calls (their requests, replies, servers) likewise. */
void rerender_gencalls(struct gencalls *g, const struct rerender_node *nodes,
		       int nnodes);

/* A process's names and functions (a copy of the store's, as a paused
 * table keeps) from syntax from to syntax to. */
void rerender_proc(struct proc *p, enum term_syntax from, enum term_syntax to);

#endif
