/*
 * gensum: what batch mode writes about gen calls and processes besides
 * events: gen_call_stats lines every --interval and at the end, a slow_call
 * line for each call slower than --slower-than, and the --summary table on
 * standard error (the busiest processes, the slowest servers).
 */
#ifndef BS_GENSUM_H
#define BS_GENSUM_H

#include <stdbool.h>
#include <stdio.h>

#include "jsonsink.h"
#include "opts.h"
#include "session.h"
#include "store.h"

struct gensum {
	struct session *s;
	struct json_sink *js;
	const struct config *cfg;
	bool live;
	long long next_ms;          /* the next gen_call_stats lines */
	unsigned long *marks;       /* per row: calls closed at its last line */
	unsigned long totals_mark;  /* the gen_call_totals counts, summed,
				     * at the last such line */
	size_t nmarks;
	int64_t last_us;            /* when the last lines were written */
	struct store tally;         /* per process: sends, receives, spawns */
};

/* Set up, and hook the session's gen calls (before it starts). */
void gensum_init(struct gensum *g, struct session *s, struct json_sink *js,
		 const struct config *cfg, bool live);
void gensum_release(struct gensum *g);
/* The hooks that hear every event and count delta, for the summary
 * (session_add_sink). */
void gensum_hooks(struct gensum *g, struct session_sink *out);
/* gen_call_stats lines, when the interval has passed (or force). */
void gensum_tick(struct gensum *g, bool force);
/* Milliseconds until the next lines are due (for the loop's poll). */
long long gensum_wait_ms(const struct gensum *g);
/* The --summary table. */
void gensum_summary(struct gensum *g, FILE *f);

#endif
