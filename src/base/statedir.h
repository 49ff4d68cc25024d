/*
 * statedir: where beamscope keeps what it needs between runs of one user
 * (the prompt's history, the locks of the node names): $XDG_STATE_HOME/
 * beamscope, else ~/.local/state/beamscope, made (0700) when first asked.
 */
#ifndef BS_STATEDIR_H
#define BS_STATEDIR_H

#include <stddef.h>

/* The directory into out, made if missing; -1 when there is none (no
 * HOME) or it cannot be made. */
int statedir_path(char *out, size_t n);

#endif
