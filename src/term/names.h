/*
 * names: registered names of the target's processes, keyed by local pid.
 * Fed by the agent's snapshot at attach and by register/unregister events.
 * Owns its strings.
 */
#ifndef BS_NAMES_H
#define BS_NAMES_H

#include <stddef.h>

#include "event.h"

struct names {
	struct names_slot *slots;
	size_t cap;     /* power of two */
	size_t used;    /* live + deleted slots */
};

void names_init(struct names *nt);
void names_release(struct names *nt);
void names_set(struct names *nt, struct bs_pid pid, const char *name);
void names_unset(struct names *nt, struct bs_pid pid);
const char *names_get(const struct names *nt, struct bs_pid pid);
/* Iteration: the name in slot i (0 <= i < nt->cap), or NULL; its pid in
 * *pid when pid is not NULL. */
const char *names_slot(const struct names *nt, size_t i, struct bs_pid *pid);

#endif
