/*
 * json: the NDJSON that batch mode writes (and export will reuse).
 * Event lines are written by hand for speed; the summary is built with cJSON.
 * Every string is escaped so the output is valid JSON and valid UTF-8 whatever
 * the target sent.
 */
#ifndef BS_JSON_H
#define BS_JSON_H

#include <stdbool.h>
#include <stdint.h>

#include "event.h"
#include "sbuf.h"
#include "stats.h"

/* Append s as a JSON string literal (quotes included). */
void json_string(struct sbuf *out, const char *s);
/* Append one event as a JSON object followed by a newline. */
void json_event(struct sbuf *out, const struct event *ev, const char *node);

/* The same, with from, from_node and latency_us when ev->from is set. */
void json_event_paired(struct sbuf *out, const struct event *ev,
		       const char *node);

/* Append one "counts" line for a process (with newline). */
struct node_sample;
/* A node_stats line: what a node said of itself (nodestat.h). */
void json_node_stats(struct sbuf *out, const char *node, int64_t ts,
		     const struct node_sample *s);
void json_counts(struct sbuf *out, const char *node, int64_t ts,
		 const char *pid_text, const char *name, const char *label,
		 unsigned long sends, unsigned long receives,
		 unsigned long spawns);

struct prof_sample;
struct prof_stats;
struct prof_calls;
/* A profile_sample line: one stack the profiler took, root first. */
void json_profile_sample(struct sbuf *out, const char *node,
			 const struct prof_sample *p);
/* A profile_stats line: what a second of sampling cost and reached. */
void json_profile_stats(struct sbuf *out, const char *node, int64_t ts,
			const struct prof_stats *st);
/* exact mode's totals (a profile_calls line): each function's calls, time
 * and words allocated since it began, over every process of the node */
void json_profile_calls(struct sbuf *out, const char *node, int64_t ts,
			const struct prof_calls *c);

struct gc_row;
struct gc_call;
struct gencalls;

/* What a server is called: its registered name, else what the agent
 * said it is (a proc_lib initial call, a label); NULL: not known. */
struct gc_server_names {
	const char *name, *label;
};

/* A gen_call_stats line: one server and request kind, now. */
void json_gen_stats(struct sbuf *out, int64_t ts, const char *node,
		    struct gc_row *r, const struct gc_server_names *sn,
		    double calls_per_s, int64_t oldest_us);
/* A slow_call line: a call replied (or closed) after too long. */
void json_slow_call(struct sbuf *out, const char *node,
		    const struct gc_row *r, const struct gc_call *c,
		    const char *caller_name, const struct gc_server_names *sn);
/* A gen_call_totals line: what the pairing kept, left out and gave up. */
void json_gen_totals(struct sbuf *out, int64_t ts, const struct gencalls *g);

struct summary_info {
	const char *type;         /* NULL: "summary" */
	const char *node;
	const char *ended;        /* why the run ended */
	int64_t started_us;       /* wall clock, microseconds since the epoch */
	int64_t duration_ms;
	double limit_duration;    /* 0: none */
	unsigned long limit_events;
	unsigned long payload_bytes;
	unsigned long traced;     /* processes traced at start */
	const char *const *skipped; /* pids left alone: another tracer has them */
	int nskipped;
	unsigned long malformed;
	long count_overflow;      /* -1: not in the count tier */
	unsigned long count_lines;
	const char *const *calls; /* --call patterns ... */
	const long *pattern_functions; /* ... and the functions each one set */
	int npatterns;
	const char *const *skipped_functions;
	int nskipped_functions;
	long shed;                /* events shed over --rate */
	const char *tracing;      /* "session", "legacy"; NULL, "": unsaid */
	const char *cleared;      /* what someone else cleared mid-run,
				   * comma-separated; NULL, "": nothing */
	/* several nodes: this node's clock against beamscope's, and how often
	 * it was attached; clock_error_us < 0 leaves them out */
	long long clock_offset_us, clock_error_us;
	int sessions;
};

/* The last line of a run over several nodes. */
struct cluster_summary {
	const char *const *nodes;
	const bool *lost;
	int nnodes;
	const char *ended;
	int64_t started_us, duration_ms;
	unsigned long events, delivered, dropped;
	unsigned long paired, ambiguous, unmatched, forced;
};

/* The last line of a replay (--open --batch): a summary the reader
 * takes as any other. */
struct replay_summary {
	const char *const *nodes;
	int nnodes;
	const char *file;         /* the recording replayed */
	const char *ended;        /* end_of_recording, max_events,
				   * interrupted, terminated */
	int64_t started_us, duration_ms;
	unsigned long events;     /* event lines written */
	unsigned long limit_events; /* --max-events; 0: none */
	unsigned long over_limit; /* events not written for it */
	unsigned long malformed;  /* lines of the recording skipped */
	bool truncated;           /* its last line was cut short */
};

/* Append the summary line (with newline). */
void json_summary(struct sbuf *out, const struct summary_info *si,
		  const struct trace_stats *st);
void json_cluster_summary(struct sbuf *out, const struct cluster_summary *cs);
void json_replay_summary(struct sbuf *out, const struct replay_summary *rs);

#endif
