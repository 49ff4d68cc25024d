/*
 * profile: the stacks a sampling profiler took, folded into a tree of
 * frames (root first), with what a top-functions table, a flame graph and
 * the exports need: samples per function (self: the function was the
 * leaf; total: it was anywhere in the stack, counted once a sample however
 * often recursion repeats it), callers and callees of a function, the
 * collapsed-stack text (`root;...;leaf count`, one line a distinct stack,
 * as flamegraph.pl and speedscope read it) and speedscope's JSON.
 *
 * Cumulative, or over the last seconds: every sample is kept with its time
 * (at most PROFILE_SAMPLES_MAX; past that the oldest are forgotten by the
 * window, never by the cumulative tree), and profile_window() folds only
 * the samples of the last seconds into a tree of its own.
 *
 * Frames are texts (a function as the syntax in force names it); they are
 * interned, so a name pointer stays valid as long as the profile.
 */
#ifndef BS_PROFILE_H
#define BS_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "decode.h"
#include "sbuf.h"

#define PROFILE_SAMPLES_MAX 1000000
/* deeper stacks are cut to their root's PROFILE_DEPTH_MAX - 1 frames and
 * a last frame "..." */
#define PROFILE_DEPTH_MAX 512

struct profile;

/* a node of the tree: one frame under its caller */
struct profile_node {
	const char *name;            /* interned; the root's is "" */
	unsigned long total;         /* samples through this node */
	unsigned long self;          /* samples ending here */
	struct profile_node *parent; /* NULL for the root */
	struct profile_node *child;  /* first child; children in the order
				      * first seen */
	struct profile_node *next;   /* next sibling */
};

/* a row of the top-functions table */
struct profile_fn {
	const char *name;
	unsigned long self, total;
};

/* a caller or a callee of a function, and the samples through that edge */
struct profile_edge {
	const char *name;
	unsigned long samples;
};

struct profile *profile_new(void);
void profile_free(struct profile *p);
/* every sample forgotten */
void profile_clear(struct profile *p);

/* One sample: frames[0] is the root (the process's first call), frames[n-1]
 * the leaf (where it was).  t_ms: when it was taken (any monotonic clock
 * of the caller's).  n == 0 is ignored. */
void profile_add(struct profile *p, const char *const *frames, int n,
		 int64_t t_ms);

/* samples added (cumulative) */
unsigned long profile_samples(const struct profile *p);

/* The tree: cumulative (profile_tree), or of the samples taken at or
 * after since_ms (profile_window; rebuilt at each call, valid until the
 * next call of profile_window or profile_clear/free).  The root's total
 * is the number of samples in it. */
const struct profile_node *profile_tree(const struct profile *p);
const struct profile_node *profile_window(struct profile *p, int64_t since_ms);

/* Every function of the tree root (a tree from profile_tree or
 * profile_window), self and total, into *out (malloc'd, the caller frees
 * it), sorted by self, then total, descending, then name; the count. */
size_t profile_functions(const struct profile_node *root,
			 struct profile_fn **out);
/* Who calls name, and whom name calls, in the tree root, with the samples
 * through each edge, most first; the count (*out malloc'd). */
size_t profile_callers(const struct profile_node *root, const char *name,
		       struct profile_edge **out);
size_t profile_callees(const struct profile_node *root, const char *name,
		       struct profile_edge **out);

/* The collapsed stacks of the tree root: "a;b;c 12\n" a line, each line a
 * distinct stack that ended there (its self count), in tree order; the
 * counts sum to the root's total.  A frame's ';' and whitespace are
 * written as '_' (the format cannot carry them). */
void profile_collapsed(const struct profile_node *root, struct sbuf *out);
/* speedscope's file format (https://www.speedscope.app/file-format-schema
 * .json), one "sampled" profile named name, weights in samples. */
void profile_speedscope(const struct profile_node *root, const char *name,
			struct sbuf *out);

/* profile_feed.c: a sample of the profiler's, its state a last frame
 * "(waiting)" when the process was not on a scheduler (profile_on_cpu:
 * running or runnable) */
bool profile_on_cpu(const char *status);
void profile_add_sample(struct profile *p, const struct prof_sample *s,
			int64_t t_ms);

#endif
