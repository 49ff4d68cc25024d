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

struct callstack_entry {
	struct bs_pid pid;
	int state;        /* 0 free, 1 live, 2 deleted */
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

static size_t hash_pid(struct bs_pid p)
{
	uint64_t h = ((((uint64_t)p.num << 32) ^ p.serial) + p.node) *
		0x9e3779b97f4a7c15ULL;
	return (size_t)(h >> 20);
}

void callstacks_init(struct callstacks *cs)
{
	memset(cs, 0, sizeof(*cs));
}

void callstacks_release(struct callstacks *cs)
{
	free(cs->slots);
	memset(cs, 0, sizeof(*cs));
}

static struct callstack_entry *find(struct callstacks *cs, struct bs_pid pid,
				    bool create);

static void grow(struct callstacks *cs)
{
	struct callstacks old = *cs;
	cs->cap = old.cap ? old.cap * 2 : 64;
	cs->slots = xcalloc(cs->cap, sizeof(*cs->slots));
	cs->used = 0;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].state == 1)
			*find(cs, old.slots[i].pid, true) = old.slots[i];
	free(old.slots);
}

static struct callstack_entry *find(struct callstacks *cs, struct bs_pid pid,
				    bool create)
{
	if (create && (cs->used + 1) * 2 > cs->cap)
		grow(cs);
	if (!cs->cap)
		return NULL;
	struct callstack_entry *tomb = NULL;
	for (size_t i = hash_pid(pid) & (cs->cap - 1);; i = (i + 1) & (cs->cap - 1)) {
		struct callstack_entry *e = &cs->slots[i];
		if (e->state == 1 && bs_pid_eq(e->pid, pid))
			return e;
		if (e->state == 2 && !tomb)
			tomb = e;
		if (e->state == 0) {
			if (!create)
				return NULL;
			if (!tomb) {
				tomb = e;
				cs->used++;
			}
			memset(tomb, 0, sizeof(*tomb));
			tomb->pid = pid;
			tomb->state = 1;
			tomb->gc_ts = -1;
			return tomb;
		}
	}
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
		e = find(cs, ev->pid, false);
		if (e)
			e->state = 2;
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
