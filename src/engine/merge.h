/*
 * merge: the events of several nodes on one timeline, and the pairing of a
 * message sent on one node with its receipt on another.
 *
 * Events are copied in as they arrive (their timestamps already corrected
 * for the node's clock offset) and come out in timestamp order once every
 * node's stream has moved past them: merge_release() takes a watermark, and
 * the caller computes it from what each node has sent.
 *
 * Pairing: a send whose receiver lives on another attached node waits for a
 * receive by that process of the same message text; a receive may also
 * arrive first and wait for its send.  A receive is paired only when the
 * message identifies the send: when every waiting send of that text to that
 * process comes from one sender.  Erlang keeps the order of messages between
 * two processes, so the oldest of them is the one.  Ambiguous receives are
 * counted, not guessed.
 */
#ifndef BS_MERGE_H
#define BS_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "hmap.h"

/* One event held for ordering; strings live in the same allocation.  A
 * paired receive gets ev.from and ev.latency_us. */
struct mitem {
	struct event ev;
	int node;               /* index of the node it came from */
	uint64_t seq;           /* arrival order: ties keep it */
	int from_node;          /* a paired receive: the sender's node; -1 */
	struct pend *waiting;   /* a receive still waiting for its send */
};

/*
 * Where a pid text lives: the index of the attached node named in
 * "<name@host.N.S>", or -1.  Supplied by the caller.
 */
typedef int (*node_of_fn)(void *arg, const char *pid_text);

struct merge_stats {
	unsigned long paired;
	unsigned long ambiguous;   /* receives whose send could not be told */
	unsigned long expired;     /* sends whose receive never showed up */
	unsigned long forced;      /* released early: the buffer was full */
};

struct merge {
	struct mitem **heap;
	size_t n, cap;
	size_t max_items;          /* past this, the oldest go out early */
	uint64_t seq;
	/* waiting sends and receives: hash of (process, message) -> a
	 * chain of struct pend *, in arrival order */
	struct hmap waiting;
	struct pend *oldest, *newest; /* every waiting entry, arrival order */
	size_t npend;
	int64_t send_ttl_us;       /* a send waits this long past release */
	node_of_fn node_of;
	void *node_of_arg;
	struct merge_stats st;
};

void merge_init(struct merge *m, size_t max_items, node_of_fn node_of,
		void *arg);
void merge_release(struct merge *m);

/* Copy ev (from node) in, pairing it if it can be. */
void merge_add(struct merge *m, int node, const struct event *ev);

typedef void (*mitem_fn)(void *arg, const struct mitem *it);
/*
 * Hand every held event with ts <= watermark to fn, oldest first; also,
 * while more than max_items are held, the oldest ones whatever their time.
 * INT64_MAX releases everything.
 */
void merge_flush(struct merge *m, int64_t watermark, mitem_fn fn, void *arg);

static inline size_t merge_held(const struct merge *m) { return m->n; }

#endif
