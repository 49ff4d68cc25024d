/*
 * chart: the conversation between a few processes, as a sequence chart.
 *
 * A chart has 1 to CHART_LINES lifelines (the processes charted) and one
 * more column, "others", for the rest of the world.  chart_build reads
 * the store's ring and makes one row per message, spawn, exit or link
 * that touches a lifeline, in time order.  The same rows feed the view
 * (ui/view_chart.c), the :chart-export command and batch --chart, so a
 * chart reads the same wherever it is drawn.
 *
 * Pairing on one node: the tracer reports a send (sender, recipient,
 * message) and, separately, a receive (receiver, message) that does not
 * name its sender.  A message is drawn once, at its send; when its
 * recipient is a lifeline, the send waits for a receive by that recipient
 * of the same message text, and is then delivered.  Both ends must have
 * been shipped for a pair: a receive pairs only with a send made before
 * it (never a later one), to a lifeline charted by then (its since).
 * A lifeline's receives are known to be shipped from its first message
 * since it was charted (the focus takes a moment to reach its node), or
 * at the latest a second after; a send made from then on is judged, and
 * receives take judged sends first, oldest first (a mailbox is first in,
 * first out), so that a receive lost while the focus took effect shifts
 * no pair.  A judged send still waiting is "not received" (it may yet
 * be); a send to a dead process is "dead".  A receive that pairs with no
 * send (its sender is not charted, or was not shipped then) is drawn at
 * the receive, from "others" or, with several nodes, from the sender's
 * lifeline when its pid is charted.  A send to "others", or one not
 * judged, is drawn plain.  The rules are the same for every front end,
 * so the view, :chart-export and batch --chart draw the same events the
 * same way.
 *
 * Rows point into the store's events: they are valid until the store
 * changes (the next store_add_event or store_clear).
 */
#ifndef BS_CHART_H
#define BS_CHART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "event.h"
#include "store.h"

#define CHART_LINES 10          /* lifelines, at most */
#define CHART_TEXT_MAX 200      /* message text in an export, bytes */

struct chart_line {
	struct bs_pid pid;
	char pid_text[48];
	char label[64];         /* registered name, label or initial call
				 * (store_proc_title); "" */
	uint64_t since;         /* the store's next seq when it was charted:
				 * its receives may be shipped from then on */
};

enum chart_kind {
	CHART_MSG,              /* from -> to */
	CHART_SPAWN,            /* on from; to is the child when charted */
	CHART_EXIT,             /* on from; the reason in text */
	CHART_LINK,             /* from -- to */
	CHART_UNLINK,
	CHART_TIMEOUT,          /* a receive that timed out, on from */
	CHART_ALARM,            /* the VM's alarm of from: its kind in text,
				 * how long in latency_us (-1) */
};

enum chart_state {
	CHART_PLAIN,            /* delivered, or not ours to judge */
	CHART_WAITING,          /* its receive has not been seen */
	CHART_DEAD,             /* sent to a process that did not exist */
};

struct chart_row {
	enum chart_kind kind;
	enum chart_state state;
	int from, to;           /* lifeline indexes; nlines is "others";
				 * to is -1 when the row is on one lifeline */
	uint64_t seq;           /* the event drawn (the send, for a message) */
	int64_t ts;
	int64_t latency_us;     /* across nodes: receive minus send; -1 */
	bool truncated;
	bool paired;            /* a message whose receive was seen */
	const char *text;       /* message, exit reason, child; never NULL */
	const char *mfa;        /* a spawn's function, or NULL */
};

struct chart {
	struct chart_line lines[CHART_LINES];
	int nlines;
	struct chart_row *rows; /* owned */
	size_t nrows, cap;
	size_t nmsgs;           /* rows that are messages */
};

void chart_init(struct chart *c);
void chart_release(struct chart *c);
/* Add a lifeline; -1 when there are CHART_LINES already (or it is one). */
int chart_add_line(struct chart *c, struct bs_pid pid, const char *pid_text,
		   const char *label, uint64_t since);
/* The lifeline of pid, or -1. */
int chart_line_of(const struct chart *c, struct bs_pid pid);
/* Rebuild the rows from the store's events before seq end. */
void chart_build(struct chart *c, const struct store *st, uint64_t end);
/* The lifelines' labels from the store's processes, where known. */
void chart_label(struct chart *c, const struct store *st);

/* Export formats, by name ("plantuml", "mermaid") or file name
 * (".puml", ".mmd"); -1 when not one. */
enum chart_format { CHART_PLANTUML, CHART_MERMAID };
int chart_format_parse(const char *name);
int chart_format_of_path(const char *path);
/* Write the chart; 0, or -1 with errno when writing failed. */
int chart_write(const struct chart *c, enum chart_format fmt, FILE *f);

#endif
