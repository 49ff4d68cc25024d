/*
 * wire: is this buffer one well-formed Erlang external term, entirely
 * inside its length, and not nested too deep?  ei's decoders trust their
 * input, so every message from the network passes here first; what fails
 * is counted and dropped, never decoded.
 */
#ifndef BS_WIRE_H
#define BS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include <ei.h>

#define WIRE_MAX_DEPTH 200

/* 0 if buf[0..len) is the version byte and exactly one valid term. */
int wire_check(const char *buf, size_t len);
/*
 * The number of terms in buf[0..len) if it is nothing but whole terms back
 * to back, each with its version byte (how workers pack event batches);
 * else -1.  0 for an empty buffer.
 */
long wire_check_seq(const char *buf, size_t len);

/*
 * A pid of node (with its creation) as NEW_PID_EXT, number and serial in
 * full 32 bits, into x.  Some releases of ei cut them to 15 and 13 bits,
 * which names another process; the target takes all 32 bits of a pid of
 * another node, and of its own only what its release can have (see
 * pidsel_fits).  0, or -1 when ei cannot add to x.
 */
int wire_encode_pid(ei_x_buff *x, const char *node, uint32_t num,
		    uint32_t serial, uint32_t creation);

#endif
