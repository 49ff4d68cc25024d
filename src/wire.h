/*
 * wire: is this buffer one well-formed Erlang external term, entirely
 * inside its length, and not nested too deep?  ei's decoders trust their
 * input, so every message from the network passes here first; what fails
 * is counted and dropped, never decoded.
 */
#ifndef BS_WIRE_H
#define BS_WIRE_H

#include <stddef.h>

#define WIRE_MAX_DEPTH 200

/* 0 if buf[0..len) is the version byte and exactly one valid term. */
int wire_check(const char *buf, size_t len);
/*
 * The number of terms in buf[0..len) if it is nothing but whole terms back
 * to back, each with its version byte (how workers pack event batches);
 * else -1.  0 for an empty buffer.
 */
long wire_check_seq(const char *buf, size_t len);

#endif
