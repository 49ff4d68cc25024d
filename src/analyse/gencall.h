/*
 * gencall: gen_server and gen_statem calls paired with their replies, and,
 * per server and request kind, the numbers a servers view and batch lines
 * show: calls, calls/s, a latency histogram, calls in flight, the oldest,
 * the stuck ones, and the slowest calls with their request and reply.
 *
 * Input is events: gen_call and gen_reply records (the tracer's compact
 * record of a '$gen_call' request sent and of its {Tag, Reply} answer sent)
 * and exits, which close the calls of a caller that died (abandoned) or
 * made to a server that died (server_down).  Processes are named by their
 * pid text as the decoder renders it, which is unique across the nodes of
 * one session; the front ends look names up.
 *
 * Anything on the target can send a message shaped as a call, so nothing
 * here grows with what it is sent: a server has at most GC_KINDS_MAX rows
 * of its own kinds, the rest of its calls go to one "other" row of it; past
 * GC_ROWS_MAX rows, calls to further servers go to one "other" row of all;
 * past GC_INFLIGHT_MAX calls in flight, the oldest is given up (counted).
 * Every event and every tick costs what it changes, not what is kept: a
 * call in flight is reachable by its tag, its row, its caller and its
 * server, and the stuck and the given-up calls are found from the oldest.
 *
 * Owns every string it keeps.  Invariants: a call is in flight in exactly
 * one place of each index (the tag table, the time-ordered list, its row's
 * list, its caller's and its server's chains, and the list of calls whose
 * caller died if it did); rows never move once made (the views keep
 * pointers to them); a row is in the changed list at most once.
 */
#ifndef BS_GENCALL_H
#define BS_GENCALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event.h"
#include "hmap.h"
#include "sbuf.h"

/* latency histogram: log-linear, GC_SUB buckets per power of two of
 * microseconds, so a quantile is within 1/GC_SUB of the truth */
#define GC_SUB 32
#define GC_SUB_BITS 5
#define GC_BUCKETS (GC_SUB * 40)
#define GC_SLOWEST 10          /* slowest calls kept per row */
#define GC_RATE_SECS 5         /* calls/s: over the last whole seconds */
#define GC_INFLIGHT_MAX 100000 /* past this the oldest call is given up */
#define GC_KINDS_MAX 64        /* request kinds with a row, per server */
#define GC_ROWS_MAX 10000      /* rows; then one row for other servers */
#define GC_OTHER "(other)"     /* the kind (and server) of a folded row */
#define GC_STUCK_US_DEFAULT 5000000
/* events of different processes come through different workers, so a
 * reply may come before its call, or a caller's exit before the reply it
 * got: a reply waits this long for its call, a caller that died this long
 * for the reply it may have had (on the events' clock) */
#define GC_GRACE_US 2000000
#define GC_EARLY_MAX 100000    /* replies waiting for their call, at most */

#define GC_OCTAVES (GC_BUCKETS / GC_SUB)

/* a row's histogram takes memory only for the powers of two it has seen:
 * a latency's range is a few of them */
struct gc_hist {
	uint32_t *oct[GC_OCTAVES]; /* GC_SUB counters each, or NULL */
	uint64_t count;
	int64_t max;
	int64_t sum;
};

void gc_hist_add(struct gc_hist *h, int64_t us);
/* The q quantile (0 < q <= 1) in microseconds; 0 if empty. */
int64_t gc_hist_quantile(const struct gc_hist *h, double q);
void gc_hist_release(struct gc_hist *h);

/* GC_OUT_OF_ORDER: its reply was stamped before it (clocks of two nodes,
 * or a record not to be believed): closed, but no latency */
enum gc_outcome { GC_IN_FLIGHT, GC_REPLIED, GC_ABANDONED, GC_SERVER_DOWN,
		  GC_OUT_OF_ORDER };
/* a row that gathers what the bounds leave out */
enum gc_other { GC_OTHER_NONE, GC_OTHER_KINDS, GC_OTHER_SERVERS };

struct gc_row;
struct gc_call;

/* a place in one of the doubly linked lists of calls */
struct gc_link {
	struct gc_call *prev, *next;
};
struct gc_list {
	struct gc_call *first, *last;
};

struct gc_call {
	uint64_t tag;
	int64_t ts;                /* sent (microseconds) */
	int64_t end_ts;            /* replied or closed; 0 in flight */
	int node;                  /* the caller's node */
	struct bs_pid caller;
	char *caller_text;
	char *request;             /* NULL: not shipped */
	char *reply;               /* replied: its text, or NULL */
	/* the entries that carried them (struct event's raw), to render
	 * them again in another syntax; NULL when not kept */
	char *request_raw, *reply_raw;
	uint32_t request_raw_len, reply_raw_len;
	uint8_t request_raw_part, reply_raw_part;   /* RAW_* */
	int reply_node;            /* the node of the reply's entry */
	enum gc_outcome outcome;
	int64_t gone_ts;           /* the caller exited then; 0: alive */
	bool stuck;                /* counted as stuck once */
	struct gc_row *row;
	/* in flight: its places in the indexes (gencall.c) */
	uint64_t caller_key;       /* (node, caller) hashed */
	uint64_t server_key;       /* (node, server pid) hashed; 0: a name */
	struct gc_call *next_tag;  /* the same tag (a chain in an hmap) */
	struct gc_link all;        /* every call, oldest first */
	struct gc_link in_row;     /* its row's, oldest first */
	struct gc_link by_caller, by_server; /* the same key */
	struct gc_link gone;       /* its caller died: in order of deaths */
};

static inline int64_t gc_latency(const struct gc_call *c)
{
	return c->end_ts - c->ts;
}

struct gc_row {
	char *server;              /* the call's destination: a pid text, a
				    * name, or "?" */
	char *server_name;         /* its registered name when a call said it,
				    * or NULL */
	char *kind;                /* the request's atom, "", or GC_OTHER */
	enum gc_other other;       /* what it gathers, if it is a fold */
	char *server_raw;          /* a server that is no pid: the entry of
				    * its first call, to render it again */
	uint32_t server_raw_len;
	int node;                  /* the node of the first call seen */
	struct bs_pid caller_pid;  /* a caller of the first call (names) */
	unsigned long calls;       /* replied */
	unsigned long abandoned, server_down;
	unsigned long out_of_order;  /* replies stamped before their call */
	unsigned long given_up;      /* past GC_INFLIGHT_MAX, oldest first */
	unsigned long stuck;         /* in flight, and for longer than stuck_us */
	unsigned long in_flight;
	struct gc_hist hist;
	int64_t rate_sec[GC_RATE_SECS];    /* which second each slot counts */
	unsigned long rate_n[GC_RATE_SECS];
	struct gc_call *slow[GC_SLOWEST];  /* slowest first; owned copies */
	int nslow;
	struct gc_list inflight;   /* its calls in flight, oldest first */
	size_t idx;                /* in gencalls.rows */
	bool changed;              /* in gencalls.changed */
	/* the first row of a server heads it: how many kinds have a row,
	 * and the row of the others */
	bool head;
	size_t nkinds;
	struct gc_row *other_row;
	uint64_t q_count;          /* quantiles cached at this hist.count */
	int64_t q[3];
	/* the other rows of the same hash (chains in gencalls' hmaps) */
	struct gc_row *next_hash;  /* of (server, kind) */
	struct gc_row *next_srv;   /* heads: of the server */
};

typedef void (*gc_done_fn)(void *arg, const struct gc_row *row,
			   const struct gc_call *call);

struct gencalls {
	struct gc_row **rows;      /* creation order */
	size_t nrows, rows_cap;
	/* hash of (server, kind) -> rows (folds left out); hash of a
	 * server -> its head rows: chains of struct gc_row * */
	struct hmap row_map, srv_map;
	struct gc_row *other_servers; /* calls past GC_ROWS_MAX, or NULL */
	size_t nfolded;            /* servers with an other row of kinds */
	/* rows changed since gencall_changed() last took them */
	struct gc_row **changed;
	size_t nchanged, changed_cap;
	unsigned long generation;  /* bumped by every change */
	/* calls in flight: tag -> a chain of struct gc_call *; caller
	 * and server keys -> a struct gc_list, in the order they came */
	struct hmap tags, by_caller, by_server;
	struct gc_list all;        /* in flight, in the order they came */
	struct gc_call *unstuck;   /* the first of them not yet seen stuck */
	struct gc_list gone;       /* in flight, their caller dead */
	size_t inflight;
	/* replies that came before their call: by tag, and oldest first
	 * (gc_call records with no row, linked by all) */
	struct hmap early;         /* tag -> a chain of struct gc_call * */
	struct gc_list early_list;
	size_t nearly;
	size_t gone_n;             /* calls in flight whose caller died */
	int64_t stuck_us;          /* in flight longer than this: stuck */
	int64_t now;               /* the newest time seen or told */
	unsigned long unmatched;   /* replies with no call in flight */
	unsigned long given_up;    /* in flight past GC_INFLIGHT_MAX */
	unsigned long out_of_order; /* replies stamped before their call */
	unsigned long replied;     /* every row's calls */
	/* processes seen to exit, newest kept: (node, pid text) hash and
	 * when; a call to one that had already died is closed at once */
	struct gc_dead { uint64_t h; int64_t ts; } *dead;
	gc_done_fn done;           /* a call closed (any outcome); may be NULL */
	void *done_arg;
};

void gencall_init(struct gencalls *g);
void gencall_release(struct gencalls *g);

/* A gen_call, gen_reply or exit event of node (others are ignored). */
void gencall_event(struct gencalls *g, int node, const struct event *ev);
/* Time goes on (microseconds, the events' clock): calls become stuck,
 * callers that died are given up on, early replies expire. */
void gencall_tick(struct gencalls *g, int64_t now);
/* A new stuck threshold, applied to the calls in flight at once. */
void gencall_set_stuck(struct gencalls *g, int64_t us);
/* Every event is in (the end of a run): what waits is settled now. */
void gencall_settle(struct gencalls *g);

/*
 * Text kept rendered again (the :syntax command): fn gets what carried a
 * request, a reply or a server (raw, len, part as struct event's, of
 * node), or, with raw NULL, a registered name's old text; it appends the
 * new text to out and returns true, or false to keep the old one.
 */
enum gc_text { GC_TEXT_REQUEST, GC_TEXT_REPLY, GC_TEXT_SERVER, GC_TEXT_NAME };
typedef bool (*gc_retext_fn)(void *arg, int node, enum gc_text what,
			     const char *raw, uint32_t len, uint8_t part,
			     const char *text, struct sbuf *out);
void gencall_retext(struct gencalls *g, gc_retext_fn fn, void *arg);

/* calls/s of a row, over the last GC_RATE_SECS whole seconds before now */
double gc_row_rate(const struct gc_row *r, int64_t now);
/* The oldest call in flight of a row, or NULL. */
const struct gc_call *gc_row_oldest(const struct gc_row *r);
/* The calls in flight of a row, oldest first, into out (up to max): how
 * many there are in all. */
size_t gc_row_inflight(const struct gc_row *r, const struct gc_call **out,
		       size_t max);
/* p50, p90 and p99 of a row's latencies (computed again only when it has
 * new ones). */
const int64_t *gc_row_quantiles(struct gc_row *r);
/* The rows changed (a call made, closed, given up, or newly stuck) since
 * the last time, each once, to fn; then none is. */
void gencall_changed(struct gencalls *g,
		     void (*fn)(void *arg, struct gc_row *r), void *arg);

#endif
