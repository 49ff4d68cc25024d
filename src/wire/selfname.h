/*
 * selfname: the name beamscope's C node gives itself on a target.  A node
 * name is an atom on the target, and atoms are never freed, so every
 * attach must not bring a new one: the name is one of SELFNAME_SLOTS
 * fixed ones per user and host, beamscope_UID_1 to beamscope_UID_8.  A
 * process holds its name by a lock (flock) on a file in the state
 * directory for as long as it runs, so two beamscopes of one user never
 * share one (the target would refuse the second connection); of the free
 * names it takes the one used least lately, so that a beamscope started
 * again at once does not take the name of the one before, whose session
 * may still be ending on a target.  With no state directory, or every
 * name held, the name is beamscope_UID_PID, one atom on each target it
 * attaches to, as before.
 */
#ifndef BS_SELFNAME_H
#define BS_SELFNAME_H

#include <stddef.h>

#define SELFNAME_SLOTS 8

/* This process's alive name ("beamscope_1000_3") into out; the same for
 * every call (thread-safe). */
void selfname_alive(char *out, size_t n);

#endif
