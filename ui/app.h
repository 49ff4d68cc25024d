/*
 * app: what the views of one interactive session share: the engine and
 * the store, the stack of open views, the message line, the pause.  A
 * view's own state is in its file (view_*.c), and what it offers the
 * others in its header (view_*.h); so for drawing (draw.h), engine
 * control (control.h), commands, top mode, the header and :syntax.
 *
 * Views read the store; they never talk to the network (closing the
 * process log asks control.c to take its process out of focus).  Keys
 * become requests (keys.h); request and command handlers return ACT_*
 * flags, and the loop (loop.c) acts on them (redraw, quit, ...).
 * Drawing happens only in the loop, at most REDRAW_HZ times a second.
 */
#ifndef BS_APP_H
#define BS_APP_H

#include <stdbool.h>
#include <stdint.h>

#include "chart.h"
#include "jsonsink.h"
#include "opts.h"
#include "recording.h"
#include "session.h"
#include "store.h"
#include "view.h"

enum {
	ACT_NONE = 0,
	ACT_REDRAW = 1,
	ACT_QUIT = 2,
	ACT_CLEAR = 4,          /* repaint the whole terminal, not just changes */
};

/* process table columns; the first letter of each is its sort key */
#define PROC_COLUMNS(X) \
	X(PID,      "pid",      "PID")      \
	X(NAME,     "name",     "NAME")     \
	X(NODE,     "node",     "NODE")     \
	X(CURRENT,  "current",  "CURRENT")  \
	X(SENDS,    "sends",    "SENT")     \
	X(SPS,      "sps",      "S/s")      \
	X(RECEIVES, "receives", "RECV")     \
	X(RPS,      "rps",      "R/s")      \
	X(SPAWNS,   "spawns",   "SPAWN")    \
	X(MQ,       "mq",       "MQ")       \
	X(ALARMS,   "alarms",   "ALARM")    \
	X(MEM,      "mem",      "MEM")      \
	X(REDS,     "reds",     "REDS")     \
	X(REDSPS,   "redsps",   "REDS/s")   \
	X(HEAP,     "heap",     "HEAP")     \
	X(SENT30,   "sent30",   "SENT 30s") \
	X(RECV30,   "recv30",   "RECV 30s")

enum proc_col {
#define X(id, key, title) COL_##id,
	PROC_COLUMNS(X)
#undef X
	COL__COUNT
};

struct col_info {
	const char *key;
	const char *title;
};

extern const struct col_info proc_cols[COL__COUNT];

struct app;

struct app {
	const struct config *cfg;

	/* the engine: the targets (or a recording), what is traced, call
	 * pairing; this view is its store sink */
	struct session *s;       /* the engine (session.h) */
	bool multi;             /* several nodes on one timeline */
	int node_filter;        /* -1, or the only node the table shows */
	bool refocused[BS_MAX_NODES]; /* the focus was sent to a traced node */
	bool refused_stays;     /* a change was refused: its message stays */
	bool screen_up;         /* curses has the terminal */
	int attaching;          /* :attach: the node whose start is awaited */
	bool stop_pending;      /* :off: say so once every node has stopped */
	int detaching;          /* :detach: the node to say is clean, or -1 */
	unsigned long started_traced; /* the last start: what it traced */
	int started_nodes;
	unsigned long started_skipped;

	/* :record, --record: what the view receives, as NDJSON */
	struct json_sink rec;
	bool rec_failed_said;

	struct store store;

	/* views: the open ones, bottom first, and where each one is */
	enum view_id stack[8];
	int depth;
	struct list pos[VIEW__COUNT];
	bool paused;            /* display frozen: the view is drawn only
				 * when a key asks for it */
	bool view_due;          /* paused: a key asked for the view */
	uint64_t pause_seq;     /* paused: the logs end before this event */

	/* status */
	long long start_ms;
	unsigned long rate;     /* events/s over the last second */
	unsigned long rate_base;
	char message[300];
	bool message_is_error;
	char last_error[300];

	bool prompt_active;
	char prompt_kind;       /* ':', '/' (the filter) or 's' (a search
				 * in the log, shown as '/') */
	bool color;
	bool ascii;             /* rates over time in ASCII (--ascii, or no
				 * UTF-8 locale): see spark.h */
	bool header;            /* the node at a glance above the table */
	bool dirty;
};

/* the views open, bottom first (view.c, control.c), and the message
 * line; what else a part of ui/ offers is in its own header */
void app_push(struct app *a, enum view_id v);
int app_pop(struct app *a);
/* Back to the process table. */
void app_home(struct app *a);
enum view_id app_view(const struct app *a);
void app_msg(struct app *a, bool error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int app_focus(struct app *a, struct bs_pid pid, const char *text);
/* Is a process's log open (its process in focus)? */
bool app_focus_open(const struct app *a);

#endif
