/*
 * spark: a rate over time as one line of characters, for the node header
 * and the process table.
 *
 * A series keeps the last SPARK_MAX samples (one a second); a line draws
 * the newest ones that fit, right-aligned, each as one of eight heights
 * relative to the largest value drawn.  Zero is drawn as a blank, so a
 * quiet process shows nothing rather than a floor of bars.  Unicode block
 * characters (U+2581 to U+2588) where the terminal takes UTF-8, else
 * eight ASCII characters of growing weight (--ascii forces these).
 */
#ifndef BS_SPARK_H
#define BS_SPARK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sbuf.h"

#define SPARK_MAX 60

struct spark {
	uint32_t v[SPARK_MAX];
	uint8_t pos;     /* where the next sample goes */
	uint8_t n;       /* samples held, at most SPARK_MAX */
};

/* Add the newest sample (values above UINT32_MAX are held at it). */
void spark_push(struct spark *s, unsigned long v);
/* The i-th newest sample (0: the newest); 0 beyond what is held. */
uint32_t spark_at(const struct spark *s, unsigned i);
/* The largest of the newest n samples. */
uint32_t spark_max(const struct spark *s, unsigned n);

/*
 * The newest min(width, SPARK_MAX) samples into out as width columns,
 * oldest left, padded with blanks on the left when fewer are held; scaled
 * to scale, or to the largest drawn when scale is 0.
 */
void spark_text(struct sbuf *out, const struct spark *s, unsigned width,
		uint32_t scale, bool ascii);

/* Whether the terminal is known to take UTF-8 (the locale's codeset). */
bool spark_utf8_terminal(void);

#endif
