/*
 * app: the state of one interactive session, shared by the views.
 *
 * Views read the store and this struct; they never talk to the network
 * (closing the process log asks ui.c to take its process out of focus).
 * Keys become requests (keys.h); request and command handlers return
 * ACT_* flags, and the loop in ui.c acts on them (redraw, quit, ...).
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
	/* :syntax: the ring rendered again a slice a turn (ui/syntax.c) */
	struct rerender_node *rr;   /* per node; NULL: nothing to do */
	int rr_n;
	uint64_t rr_cursor;         /* the walk's place, newest first */
	size_t rr_done;             /* events rendered again so far */
	long long rr_t0;            /* when it began, ms */
	char rr_what[64];           /* "elixir syntax", for the message */
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


	/* process table: what it shows, and its rows (view_procs.c) */
	int sort_col;
	bool sort_asc;
	/* top mode: the table holds the top_n processes by top_col, of the
	 * whole node (the agents look for them); -1: off */
	int top_col;
	int top_n;
	char filter[256];
	bool show_exited;       /* exited processes stay in the table */
	bool hide_timeouts;     /* a process log leaves out receive timeouts */

	/* the processes tagged for the chart (Space): in focus on their
	 * nodes while tagged */
	struct bs_pid tags[CHART_LINES];
	char tag_text[CHART_LINES][48];
	uint64_t tag_seq[CHART_LINES];  /* the store's next seq when tagged */
	int ntags;

	/* the process in focus: its log is open */
	struct bs_pid focus;
	char focus_text[48];
	uint64_t focus_seq;     /* the store's next seq when it was focused */
	/* its links, monitors and ancestors as its agent said them last;
	 * have_rel: said since the log opened */
	struct relations rel;
	bool have_rel;
	long long rel_ms;       /* when rel was said */

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

void status_draw(struct app *a, int y);

/* views (view.c, ui.c) and messages */
void app_push(struct app *a, enum view_id v);
int app_pop(struct app *a);
/* Back to the process table. */
void app_home(struct app *a);
enum view_id app_view(const struct app *a);
void app_msg(struct app *a, bool error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int app_focus(struct app *a, struct bs_pid pid, const char *text);
/* Pause the display (tracing goes on) or resume it; ACT_* flags. */
int app_pause(struct app *a, bool on);

/* tracing control (ui.c) */
int app_retrace(struct app *a);
/* Start or stop pairing gen calls for the servers view. */
int app_gen_calls(struct app *a, bool on);
int app_stop_tracing(struct app *a, const char *why);
/* Put a process in focus on its node (its events are shipped), or out. */
void node_focus(struct app *a, struct bs_pid pid, bool on);
/* Is any node tracing?  Is any node lost? */
bool app_attached(const struct app *a);
bool app_lost(const struct app *a);
/* A live session (true), or a recording: what needs a node says so. */
bool app_live(struct app *a, const char *what);
/* :record FILE starts writing what the view receives; NULL stops. */
int app_record(struct app *a, const char *path);
/* The name of node i, as it calls itself once attached. */
const char *app_node_name(const struct app *a, int i);
/* Several nodes: attach one more, or leave one (ACT_*). */
int app_attach_node(struct app *a, const char *name);
int app_detach_node(struct app *a, const char *name);
/* A pid text as the agent of its node wants it: "<0.N.S>". */
void app_local_pid(struct bs_pid pid, char *out, size_t outsz);

/* The process table holds its rows still (paused), or follows the store
 * again (view_procs.c). */
void procs_freeze(struct app *a, bool on);
/* The process table's rows are built again at the next draw; its held
 * rows (paused) rendered again (:syntax); its selected process (false:
 * none). */
void procs_invalidate(struct app *a);
struct rerender_node;
void procs_rerender(struct app *a, const struct rerender_node *rn, int nn);
bool procs_selected(const struct app *a, struct bs_pid *pid);
void procs_select(struct app *a, struct bs_pid pid);

/* The process log (view_proc.c): search it for text (NULL or "": the
 * last text again) from the cursor, towards older lines (older) or newer
 * ones; the cursor's line itself counts when from_cursor.  ACT_* flags. */
int log_search(struct app *a, const char *text, bool older,
	       bool from_cursor);
/* The event detail (view_event.c): open it on an event of the store. */
void event_open(struct app *a, const struct sevent *e);
/* The same without opening the view: the open event's text anew. */
void event_fill(struct app *a, const struct sevent *e);
/* The open event's text anew from the store, if it is still there and
 * the view is on top (after :syntax). */
void event_refill(struct app *a);
/* Everything shown rendered again (:syntax, ui/syntax.c): the store, a
 * paused table, the open event, the servers' calls; rn (nn nodes, taken)
 * says from which syntax to which, what ("elixir syntax") is said when it
 * is done.  The ring goes a slice a turn: app_rerender_step, while it is
 * true. */
struct rerender_node;
void app_rerender(struct app *a, struct rerender_node *rn, int nn,
		  const char *what);
bool app_rerender_step(struct app *a);
/* An event of node stored in the syntax it had before. */
void app_rerender_late(struct app *a, int node, uint64_t seq);
/* Open the log of the process a line names (PID or NAME); ACT_* flags. */
int app_jump(struct app *a, const char *what);

/* the chart (view_chart.c): tag or untag a process (ACT_*); is it
 * tagged (its index, or -1); the tagged processes as a chart's
 * lifelines; :chart-export FILE */
int app_tag(struct app *a, struct bs_pid pid, const char *text);
int app_tagged(const struct app *a, struct bs_pid pid);
void chart_lines(struct app *a, struct chart *c);
int app_chart_export(struct app *a, const char *path);

/* the header above the process table (header.c): the rows it takes of
 * a view of h rows (0: none), drawing them, and turning it on or off
 * (the node's samples with it); ACT_* flags */
int header_lines(struct app *a, int h);
void header_draw(struct app *a, int y, int h);
int app_header(struct app *a, bool on);
/* Top mode on column col with n rows, or off (col -1); a column it cannot
 * rank by is refused with a message. */
int app_top(struct app *a, int col, int n);
/* Is the column ranked from the agents' samples (not from the counts)? */
bool top_sampled(int col);
/* what top mode ranks and how far the agents' look has come, for the
 * table's status line */
void top_where(const struct app *a, struct sbuf *sb);
#define TOP_DEFAULT 20
#define TOP_MAX 200

/* commands (commands.c) */
int cmd_run(struct app *a, const char *line);
/* Open the log of PID or NAME, as :focus does; ACT_* flags. */
int app_focus_text(struct app *a, const char *what);
/* Names and pids for completion; state as readline's. */
const char *app_complete_proc(struct app *a, const char *prefix, int state);

/* drawing helpers (draw.c) */
void draw_text(int y, int x, int width, const char *s, int attr);
/* The columns draw_text takes for all of s. */
int draw_width(const char *s);
int draw_attr(struct app *a, int role);
enum { ROLE_HEADER = 1, ROLE_SELECTED, ROLE_STATUS, ROLE_ERROR, ROLE_DIM,
       ROLE_SEND, ROLE_RECEIVE, ROLE_PROC };
void draw_init_colors(struct app *a);
/* Wall-clock text of a target timestamp: HH:MM:SS.mmm (local time). */
void draw_time(char *out, size_t outsz, long long ts_us);

#endif
