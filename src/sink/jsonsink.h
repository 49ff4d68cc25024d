/*
 * jsonsink: a session's events as NDJSON in the batch schema, for batch
 * mode (-o FILE or standard output) and for a recording made from the view
 * (:record, --record).  What it writes reopens with --open.
 *
 * The file only ever holds whole lines: lines are built in a buffer and
 * written with write(2); if the disk fills halfway through a write, the
 * file is cut back to the end of the last whole line.  The first write
 * error stops writing and is kept for the caller to report.  A pipe or a
 * terminal is written only as fast as its reader reads, without ever
 * blocking: a reader that stops is given up, never waited for.  The file
 * is opened through outfile: a capture in place, read as it grows; a
 * replay's output beside it, put in place once whole.
 *
 * In counts mode (batch --counts) no event is written: spawns are counted
 * from their events, sends and receives from the count tier, and every
 * interval a "counts" line per process with activity gives its totals.
 * Otherwise count-tier deltas become the same "counts" lines, for the
 * processes whose totals changed, so that a recording keeps them too.
 */
#ifndef BS_JSONSINK_H
#define BS_JSONSINK_H

#include <stdbool.h>

#include "event.h"
#include "outfile.h"
#include "sbuf.h"
#include "store.h"

struct session;

struct json_sink {
	const struct session *s;
	struct sbuf out;         /* whole lines waiting to be written */
	struct outfile file;
	int fd;                  /* file.fd; -1: not open */
	bool own_fd;
	bool discarded;          /* a replaced file's temporary was removed
				  * on an error: the file is as it was */
	char *name;              /* for messages: the file, or "standard output" */
	bool regular;            /* a file: writes never wait for a reader */
	bool socket;
	int nbfd;                /* a pipe's own non-blocking opening, or -1 */
	size_t off;              /* bytes of out written already */
	unsigned long long base; /* bytes written before out's first */
	unsigned long long good; /* bytes of whole lines written */
	int write_errno;         /* the first write error, 0 if none */
	bool stalled;            /* the reader stopped reading: given up */
	bool behind;             /* the last flush wrote nothing */
	unsigned long long unwritten; /* bytes dropped when it was given up */
	bool counts_mode;
	struct store counts;     /* count-tier totals per process */
	unsigned long *sent_sum; /* per counts.procs index: totals last written */
	size_t nsent;
	long long interval_ms, next_counts_ms;
	unsigned long count_lines;
	bool stamped;            /* counts lines have a recording's times */
	unsigned long events;    /* event lines written */
};

void json_sink_init(struct json_sink *js, const struct session *s,
		    bool counts_mode, long long interval_ms);
/* Open path for writing ("-" or NULL: standard output) through outfile:
 * OUTFILE_STREAM for a capture (read as it grows), OUTFILE_REPLACE for a
 * recording written again; input_fd is the file read, or -1.  0, or -1
 * with err. */
int json_sink_open(struct json_sink *js, const char *path,
		   enum outfile_mode mode, int input_fd, struct sbuf *err);
/* Write what is waiting (json_sink_tick(js, true) first for the last
 * counts lines), then close; the sink can be opened again.  A replaced
 * file is put in place, or, after a write error, left as it was
 * (discarded); an error putting it in place is a write error. */
void json_sink_close(struct json_sink *js);
void json_sink_release(struct json_sink *js);
static inline bool json_sink_is_open(const struct json_sink *js)
{
	return js->fd >= 0;
}

/* The session's hooks that feed js (events, counts, names, a recording's
 * counts times), for session_add_sink; they write nothing while js is
 * closed, so the sink may stay added across :record and its end. */
struct session_sink;
void json_sink_hooks(struct json_sink *js, struct session_sink *out);
/* Append a line built by the caller (a summary); it ends with '\n'. */
struct sbuf *json_sink_buf(struct json_sink *js);
/* Counts lines when the interval has passed (or force), then write. */
void json_sink_tick(struct json_sink *js, bool force);
/*
 * Write what is waiting, as far as the reader takes it: never blocks for
 * long, so that signals and limits keep working whatever the reader does.
 * Past STALL_BYTES waiting the reader is taken for gone: writing stops,
 * stalled and write_errno are set.
 */
void json_sink_flush(struct json_sink *js);
/* Write everything that waits, waiting up to wait_ms (or until a
 * signal) for the reader; then what is left is given up as above. */
void json_sink_finish(struct json_sink *js, int wait_ms);
/* Why writing stopped, for messages. */
const char *json_sink_error(const struct json_sink *js);

/* how long the last lines wait for a reader at the end */
#define FINISH_MS 3000

#endif
