/* callstack: per-process stacks of open calls, keyed by pid. */
#include "callstack.h"

#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

#include "analyser.h"
#include "xalloc.h"

struct frame {
	uint64_t mfa;     /* hash of "m:f/N" */
	int64_t ts;
};

/* what a process has open; its key in the map is its pid, compared byte
 * for byte */
_Static_assert(sizeof(struct bs_pid) == 3 * sizeof(uint32_t),
	       "a pid has no padding");
struct callstack_entry {
	int depth;
	int64_t gc_ts;    /* the collection in progress: start time, -1 none */
	long gc_heap, gc_old;
	struct frame frames[CALLSTACK_DEPTH];
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

void callstacks_init(struct callstacks *cs)
{
	hmap_init(&cs->map, sizeof(struct bs_pid),
		  sizeof(struct callstack_entry), NULL);
}

void callstacks_release(struct callstacks *cs)
{
	hmap_release(&cs->map);
}

static struct callstack_entry *find(struct callstacks *cs, struct bs_pid pid,
				    bool create)
{
	if (!create)
		return hmap_get(&cs->map, &pid);
	bool fresh;
	struct callstack_entry *e = hmap_put(&cs->map, &pid, &fresh);
	if (fresh)
		e->gc_ts = -1;
	return e;
}

void callstacks_event(struct callstacks *cs, struct event *ev)
{
	struct callstack_entry *e;
	switch (ev->type) {
	case EV_CALL:
		e = find(cs, ev->pid, true);
		if (e->depth == CALLSTACK_DEPTH) {   /* forget the oldest */
			memmove(e->frames, e->frames + 1,
				sizeof(e->frames[0]) * (CALLSTACK_DEPTH - 1));
			e->depth--;
		}
		e->frames[e->depth++] = (struct frame){ hash_str(ev->mfa), ev->ts };
		break;
	case EV_RETURN:
	case EV_EXCEPTION: {
		e = find(cs, ev->pid, false);
		if (!e)
			break;
		uint64_t h = hash_str(ev->mfa);
		/* the innermost open call of that function; deeper ones (calls
		 * traced without return) are abandoned */
		for (int i = e->depth - 1; i >= 0; i--)
			if (e->frames[i].mfa == h) {
				ev->elapsed_us = ev->ts - e->frames[i].ts;
				e->depth = i;
				break;
			}
		break;
	}
	case EV_GC_MINOR_START:
	case EV_GC_MAJOR_START:
		e = find(cs, ev->pid, true);
		e->gc_ts = ev->ts;
		e->gc_heap = ev->heap[0];
		e->gc_old = ev->heap[2];
		break;
	case EV_GC_MINOR_END:
	case EV_GC_MAJOR_END:
		e = find(cs, ev->pid, false);
		if (e && e->gc_ts >= 0) {
			ev->elapsed_us = ev->ts - e->gc_ts;
			ev->heap[0] = e->gc_heap;
			ev->heap[2] = e->gc_old;
			e->gc_ts = -1;
		}
		break;
	case EV_EXIT:
		hmap_del(&cs->map, &ev->pid);
		break;
	default:
		break;
	}
}

static void take(void *st, struct event *e)
{
	callstacks_event(st, e);
}

const struct analyser_ops callstack_analyser = {
	.name = "call stacks", .take = take,
};
