/*
 * callstack: pairs each return or exception with the call it ends, and
 * each garbage collection's end with its start, per process, so a return
 * can say how long the call took and a gc what the heap was before.  Bounded: at most
 * CALLSTACK_DEPTH open calls per process (the oldest are forgotten, e.g.
 * calls traced without `return`); a process's stack goes when it exits.
 */
#ifndef BS_CALLSTACK_H
#define BS_CALLSTACK_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "hmap.h"

#define CALLSTACK_DEPTH 64

struct callstacks {
	struct hmap map;   /* pid -> struct callstack_entry */
};

void callstacks_init(struct callstacks *cs);
void callstacks_release(struct callstacks *cs);
/* Account ev; for a return, an exception or a gc end, sets ev->elapsed_us
 * (and a gc's heap sizes before) when its start is known. */
void callstacks_event(struct callstacks *cs, struct event *ev);

#endif
