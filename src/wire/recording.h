/*
 * recording: read back what beamscope wrote, a streaming reader without UI.
 *
 * Two kinds of file are read, told apart line by line:
 *  - batch NDJSON (beamscope --batch -o FILE): one object a line, events
 *    of every type in EVENT_TYPES, "counts" lines (--counts) and the
 *    "summary", "node_summary" and cluster "summary" lines at the end;
 *  - an export (:export FILE): one object {"type":"export", ...} with the
 *    process table and the events, possibly all on one long line.
 *
 * recording_read() hands what it finds to a sink, a few items a call, so
 * that a caller can interleave keys and a progress indicator.  An item is
 * an event, a counts line, a summary line or an export's process entry.
 *
 * Nodes get indexes in the order they are first seen, 0 first: from a
 * line's "node", an export's "node" and "nodes", a cluster summary's
 * "nodes", and the node part of a "<name@host.N.S>" pid.  A pid "<0.N.S>"
 * belongs to the node of its line.  The sink hears of a node just before
 * the first item that names it; a malformed line makes up no node.
 *
 * Lines are read through a bounded buffer.  A line may be up to line_max
 * bytes (RECORDING_LINE_MAX unless the caller lowers it after opening); a
 * longer one is skipped as it is read, never held whole, and counted as
 * malformed.  So is any line that is not a JSON object beamscope writes:
 * unknown type, missing "ts", "pid" or "node", a field of the wrong type,
 * one node more than RECORDING_NODES_MAX.  An export is read an entry at
 * a time, whatever its length: each of its process entries and events
 * may be up to line_max (a longer one is skipped and counted as
 * malformed).  So memory is bounded by line_max, whatever the file holds.
 * Blank lines and "\r\n" endings are accepted.  A last line without its
 * newline that does not parse was cut short while it was written: it is
 * flagged in stats.truncated, not counted as malformed (an export cut
 * short keeps the entries read before the cut: stats.export_cut).
 *
 * Strings handed to a sink are valid only during the call.
 */
#ifndef BS_RECORDING_H
#define BS_RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decode.h"
#include "event.h"
#include "sbuf.h"

/* longest line read, newline excluded, and longest entry of an export
 * (which is streamed, never held whole) */
#define RECORDING_LINE_MAX ((size_t)64 << 20)
/* distinct nodes in one recording; a line naming one more is malformed */
#define RECORDING_NODES_MAX 1024

/* A "counts" line: one process's totals so far (the last line of a pid
 * holds its totals for the run). */
struct recording_counts {
	int64_t ts;
	struct bs_pid pid;
	const char *pid_text;
	const char *name;          /* or NULL */
	unsigned long sends, receives, spawns;
};

/* A process entry of an export. */
struct recording_proc {
	struct bs_pid pid;
	const char *pid_text;
	const char *name;          /* each of these four may be NULL */
	const char *label;
	const char *initial_call;
	const char *current_function;
	unsigned long sends, receives, spawns;
	long mqlen;                /* message_queue_len; -1: not sampled */
	int64_t running_us;        /* time on a scheduler; 0: not known */
	unsigned long gcs;
	bool has_parent;
	struct bs_pid parent;
	const char *parent_text;   /* or NULL */
	bool exited;
	const char *reason;        /* exit reason when exited, else NULL */
};

/*
 * A summary line: "summary" of a run over one node, "node_summary" of
 * each node of a run over several, and the run's "summary" over several
 * (node NULL, and the nodes registered from its "nodes").  Numbers a line
 * does not carry are -1, strings NULL.  obj is the whole line.
 */
struct recording_summary {
	const char *type;
	const char *node;
	const char *ended;         /* why the run ended */
	int64_t started_ts;        /* microseconds since the epoch */
	int64_t duration_ms;
	int64_t events;            /* events written */
	int64_t malformed;         /* what the run itself found malformed */
	const struct cJSON *obj;
};

/* Where what is read goes.  Any callback may be NULL. */
struct recording_sink {
	/* a node first seen: idx counts from 0 in first-seen order */
	void (*node)(void *arg, int idx, const char *name);
	/* ev is filled as the decoder fills it; ev->worker is 0 (not
	 * recorded), ev->pid.node is the index of the pid's node; node is
	 * the index of the line's "node" */
	void (*event)(void *arg, int node, const struct event *ev);
	void (*counts)(void *arg, int node, const struct recording_counts *c);
	void (*proc)(void *arg, int node, const struct recording_proc *p);
	/* node: the index of s->node, -1 for a summary over several nodes */
	void (*summary)(void *arg, int node, const struct recording_summary *s);
	/* a stack the profiler took (a profile_sample line) */
	void (*profile)(void *arg, int node, const struct prof_sample *p);
};

struct recording_stats {
	unsigned long lines;       /* read, the last one even without newline */
	unsigned long items;       /* delivered (whether a callback took them) */
	unsigned long events;      /* of them, events */
	unsigned long malformed;   /* lines (or export entries) skipped */
	unsigned long first_malformed; /* the first one's line number; 0: none */
	const char *first_malformed_why; /* and what was wrong with it */
	unsigned long too_long;    /* of the malformed, lines (or export
				    * entries) over line_max */
	bool truncated;            /* the last line was cut short: ignored */
	bool export_cut;           /* ... and it was an export streamed: what
				    * it held up to there was read */
	uint64_t bytes;            /* read so far */
	uint64_t size;             /* of the file; 0 when not known (a pipe,
				    * a file of /proc) */
	bool has_ts;               /* an event was read: first_ts, last_ts */
	int64_t first_ts, last_ts; /* earliest and latest event ts */
	/* an export: when it was written, and the events the ring had lost */
	bool is_export;
	int64_t exported_ts;
	int64_t evicted_events;
};

struct recording_export;

/*
 * A line that spans reads is looked at as it comes: when it is an export
 * (its members before "processes" or "events" say "type":"export"), its
 * two arrays are streamed, an entry at a time, each entry up to line_max;
 * the line is never held whole.
 */
enum recording_scan_mode {
	SCAN_DETECT,               /* the line's start: is it an export? */
	SCAN_PLAIN,                /* no: gathered whole, up to line_max */
	SCAN_STREAM,               /* yes: entries handed out as they end */
};

struct recording_scan {
	enum recording_scan_mode mode;
	int depth;                 /* of the line's JSON, before this byte */
	bool str, esc;             /* in a string; after its backslash */
	bool want_key;             /* depth 1: a key comes next */
	bool in_key;               /* the string being read is a key */
	bool want_value;           /* depth 1: after a key's ':' */
	char key[12];              /* the last key, as far as it fits */
	size_t keylen;
	size_t member_at;          /* SCAN_DETECT: where in the line the
				    * member being read starts */
	int array;                 /* SCAN_STREAM: 1 "processes", 2 "events",
				    * 0 outside them */
	bool in_entry;             /* an entry is being gathered in line */
	bool entry_scalar;         /* ... and it is not an object or array */
	bool entry_long;           /* ... over line_max: skipped */
	bool closed;               /* the top object has ended */
	int node;                  /* the export's node */
	struct sbuf head;          /* the members before the first array */
};

struct recording {
	int fd;                    /* owned; -1 once released */
	char *path;                /* for messages */
	size_t line_max;
	struct recording_stats stats;
	char **nodes;              /* names, owned; index = node index */
	int nnodes;
	int told;                  /* nodes the sink has been told of */
	int last_node;             /* the last one looked up, tried first */
	bool over_nodes;           /* the line being read named one node too
				    * many */

	char *rbuf;                /* bytes read, not yet taken */
	size_t rpos, rlen;
	bool eof;
	bool starved;              /* a pipe had nothing the last time: wait
				    * for it to be readable (poll) */
	struct sbuf line;          /* a line that spans reads */
	bool skipping;             /* inside a line over line_max */
	struct recording_export *export; /* an export read whole, being
					  * delivered */
	struct recording_scan scan; /* the line being read, when it spans
				     * reads */
	struct sbuf error;         /* why recording_read returned -1 */
};

/*
 * Open path: a regular file or a pipe, not empty, that looks like a
 * recording (its first line is JSON, no binary data).  0, or -1 with one
 * line in err saying what is wrong and what to do.  A pipe is waited for
 * until its first line (a signal ends the wait: "interrupted"); after
 * that it is read without blocking: recording_read returns 1 with
 * starved set when it has nothing yet, for the caller to poll r->fd.
 */
int recording_open(struct recording *r, const char *path, struct sbuf *err);
/* The same for fd, already open; it is the reader's and closed by
 * recording_release (also on failure).  name is used in messages. */
int recording_open_fd(struct recording *r, int fd, const char *name,
		      struct sbuf *err);

/*
 * Deliver up to max_items items to s, reading at most max_items lines and
 * a few MiB of input.  1: more may follow; 0: the end (everything read);
 * -1: the file could not be read, r->error says why (what was delivered
 * stands).
 */
int recording_read(struct recording *r, int max_items,
		   const struct recording_sink *s, void *arg);

/* The name of node idx, or NULL. */
const char *recording_node(const struct recording *r, int idx);

void recording_release(struct recording *r);

#endif
