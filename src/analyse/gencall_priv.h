/*
 * gencall_priv: what gencall.c and gcrow.c share, for src/analyse/ only.
 */
#ifndef BS_GENCALL_PRIV_H
#define BS_GENCALL_PRIV_H

#include <stddef.h>

#include "gencall.h"

/* The rows hashed anew (their keys changed). */
void row_hash_build(struct gencalls *g);

#endif
