/* clock: the two clocks beamscope reads: monotonic for timeouts, wall for
 * timestamps that must line up with the target's. */
#ifndef BS_CLOCK_H
#define BS_CLOCK_H

#include <stdint.h>

/* Milliseconds of CLOCK_MONOTONIC. */
long long clock_mono_ms(void);
/* Microseconds since the epoch. */
int64_t clock_wall_us(void);

#endif
