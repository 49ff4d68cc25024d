/*
 * names: registered names of the target's processes, keyed by local pid.
 * Fed by the agent's snapshot at attach and by register/unregister events.
 * Owns its strings.  A zeroed struct names is an empty table, as is one
 * made by names_init.
 */
#ifndef BS_NAMES_H
#define BS_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "hmap.h"

/* A bit for each pid that ever had a name here (a hash of its number):
 * most events' pids have none, and a clear bit says so without a lookup */
#define NAMES_SEEN_BITS 4096

struct names {
	struct hmap map;
	uint64_t seen[NAMES_SEEN_BITS / 64];
};

void names_init(struct names *nt);
void names_release(struct names *nt);
void names_set(struct names *nt, struct bs_pid pid, const char *name);
void names_unset(struct names *nt, struct bs_pid pid);
const char *names_get(const struct names *nt, struct bs_pid pid);
/* Iteration: the name in slot i (0 <= i < names_slots(nt)), or NULL; its
 * pid (num and serial) in *pid when pid is not NULL. */
const char *names_slot(const struct names *nt, size_t i, struct bs_pid *pid);
/* Names held. */
static inline size_t names_count(const struct names *nt)
{
	return hmap_count(&nt->map);
}
static inline size_t names_slots(const struct names *nt)
{
	return nt->map.cap;
}

#endif
