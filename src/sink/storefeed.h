/*
 * storefeed: a session's events and what it learns of processes, into a
 * store (batch --chart draws from it).  The view feeds its own store with
 * more (sizes, labels, what is re-rendered) in ui/sink.c.
 */
#ifndef BS_STOREFEED_H
#define BS_STOREFEED_H

#include "session.h"
#include "store.h"

/* The hooks that feed st, for session_add_sink. */
void store_feed_hooks(struct store *st, struct session_sink *out);

#endif
