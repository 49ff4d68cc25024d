/*
 * event: the kinds of trace events and the decoded event record.
 *
 * EVENT_TYPES is the one list of event types: the tag the tracer NIF sends,
 * the "type" written to JSON, and the user-facing kind (--events) that turns
 * it on.  Everything that maps between them is generated from it.
 *
 * A timeout is a receive that ended by its after clause, not a message:
 * a kind of its own (timeout), never counted as a received message.  On
 * a busy node it can be a third of all events (gen_server2's `after 0`):
 * batch leaves it out unless asked for, the view (whose events are those
 * of a few processes in focus) shows it.
 */
#ifndef BS_EVENT_H
#define BS_EVENT_H

#include <stdbool.h>
#include <stdint.h>

/* user-facing kinds, as in --events; bit values match the tracer NIF */
#define EVENT_KINDS(X) \
	X(SEND,     "send",     1) \
	X(RECEIVE,  "receive",  2) \
	X(SPAWN,    "spawn",    4) \
	X(EXIT,     "exit",     8) \
	X(LINK,     "link",     16) \
	X(REGISTER, "register", 32) \
	X(GC,       "gc",       128) \
	X(RUNNING,  "running",  256) \
	X(TIMEOUT,  "timeout",  512) \
	X(GENCALL,  "gen_call", 1024)

enum event_kind {
#define X(id, name, bit) KIND_##id = (bit),
	EVENT_KINDS(X)
#undef X
};

#define KIND_DEFAULT (KIND_SEND | KIND_RECEIVE | KIND_SPAWN | KIND_EXIT)
/* the view's: receive timeouts too (only processes in focus ship them) */
#define KIND_VIEW_DEFAULT (KIND_DEFAULT | KIND_TIMEOUT)
/* function calls: turned on by --call patterns, not by --events */
#define KIND_CALL 64
/* the VM's alarms (alarm.h): turned on by --alarm, not by --events; not
 * the tracer's, so above KIND_LAST */
#define KIND_ALARM 2048
/* every kind, calls included */
#define KIND_ALL (KIND_SEND | KIND_RECEIVE | KIND_SPAWN | KIND_EXIT | \
		  KIND_LINK | KIND_REGISTER | KIND_GC | KIND_RUNNING | KIND_CALL | \
		  KIND_TIMEOUT | KIND_GENCALL | KIND_ALARM)
/* the highest kind bit */
#define KIND_LAST KIND_GENCALL

/*  id                   NIF tag                          JSON type          kind */
#define EVENT_TYPES(X) \
	X(SEND,              "send",                          "send",            KIND_SEND) \
	X(SEND_DEAD,         "send_to_non_existing_process",  "send",            KIND_SEND) \
	X(RECEIVE,           "receive",                       "receive",         KIND_RECEIVE) \
	X(SPAWN,             "spawn",                         "spawn",           KIND_SPAWN) \
	X(SPAWNED,           "spawned",                       "spawned",         KIND_SPAWN) \
	X(EXIT,              "exit",                          "exit",            KIND_EXIT) \
	X(LINK,              "link",                          "link",            KIND_LINK) \
	X(UNLINK,            "unlink",                        "unlink",          KIND_LINK) \
	X(GETTING_LINKED,    "getting_linked",                "getting_linked",  KIND_LINK) \
	X(GETTING_UNLINKED,  "getting_unlinked",              "getting_unlinked", KIND_LINK) \
	X(REGISTER,          "register",                      "register",        KIND_REGISTER) \
	X(UNREGISTER,        "unregister",                    "unregister",      KIND_REGISTER) \
	X(CALL,              "call",                          "call",            KIND_CALL) \
	X(RETURN,            "return_from",                   "return",          KIND_CALL) \
	X(EXCEPTION,         "exception_from",                "exception",       KIND_CALL) \
	X(GC_MINOR_START,    "gc_minor_start",                "gc_start",        KIND_GC) \
	X(GC_MINOR_END,      "gc_minor_end",                  "gc",              KIND_GC) \
	X(GC_MAJOR_START,    "gc_major_start",                "gc_start",        KIND_GC) \
	X(GC_MAJOR_END,      "gc_major_end",                  "gc",              KIND_GC) \
	X(IN,                "in",                            "running",         KIND_RUNNING) \
	X(OUT,               "out",                           "running",         KIND_RUNNING) \
	X(IN_EXITING,        "in_exiting",                    "running",         KIND_RUNNING) \
	X(OUT_EXITING,       "out_exiting",                   "running",         KIND_RUNNING) \
	X(OUT_EXITED,        "out_exited",                    "running",         KIND_RUNNING) \
	X(GEN_CALL,          "gen_call",                      "gen_call",        KIND_GENCALL) \
	X(GEN_REPLY,         "gen_reply",                     "gen_reply",       KIND_GENCALL) \
	X(TIMEOUT,           "timeout",                       "timeout",         KIND_TIMEOUT) \
	X(ALARM,             "alarm",                         "alarm",           KIND_ALARM)

enum event_type {
#define X(id, tag, json, kind) EV_##id,
	EVENT_TYPES(X)
#undef X
	EV__COUNT
};

struct event_type_info {
	const char *tag;   /* atom the NIF sends */
	const char *json;  /* "type" in JSON */
	int kind;          /* KIND_* bit */
};

extern const struct event_type_info event_types[EV__COUNT];

/*
 * What a type's JSON line (batch, recordings, the export) holds besides
 * type, ts, node, pid, name and label: the keys of struct event's peer,
 * peer_name, extra and payload ("": none), whether its mfa is written,
 * and what its payload is, for people.  The JSON writer and the recording
 * reader both go by it.  One row per EVENT_TYPES row, in the same order:
 * event.c fails to build otherwise.
 */
/*  id                   peer      peer_name      mfa extra           payload    payload is */
#define EVENT_FIELDS(X) \
	X(SEND,              "to",     "to_name",     0,  "",             "payload", "message") \
	X(SEND_DEAD,         "to",     "to_name",     0,  "",             "payload", "message") \
	X(RECEIVE,           "",       "",            0,  "",             "payload", "message") \
	X(SPAWN,             "child",  "",            1,  "initial_call", "args",    "arguments") \
	X(SPAWNED,           "parent", "parent_name", 1,  "initial_call", "args",    "arguments") \
	X(EXIT,              "",       "",            0,  "",             "reason",  "reason") \
	X(LINK,              "peer",   "peer_name",   0,  "",             "payload", "payload") \
	X(UNLINK,            "peer",   "peer_name",   0,  "",             "payload", "payload") \
	X(GETTING_LINKED,    "peer",   "peer_name",   0,  "",             "payload", "payload") \
	X(GETTING_UNLINKED,  "peer",   "peer_name",   0,  "",             "payload", "payload") \
	X(REGISTER,          "",       "",            0,  "",             "payload", "payload") \
	X(UNREGISTER,        "",       "",            0,  "",             "payload", "payload") \
	X(CALL,              "",       "",            1,  "caller",       "args",    "arguments") \
	X(RETURN,            "",       "",            1,  "class",        "value",   "returned") \
	X(EXCEPTION,         "",       "",            1,  "class",        "reason",  "raised") \
	X(GC_MINOR_START,    "",       "",            0,  "",             "payload", "payload") \
	X(GC_MINOR_END,      "",       "",            0,  "",             "payload", "payload") \
	X(GC_MAJOR_START,    "",       "",            0,  "",             "payload", "payload") \
	X(GC_MAJOR_END,      "",       "",            0,  "",             "payload", "payload") \
	X(IN,                "",       "",            1,  "",             "payload", "payload") \
	X(OUT,               "",       "",            1,  "",             "payload", "payload") \
	X(IN_EXITING,        "",       "",            1,  "",             "payload", "payload") \
	X(OUT_EXITING,       "",       "",            1,  "",             "payload", "payload") \
	X(OUT_EXITED,        "",       "",            1,  "",             "payload", "payload") \
	X(GEN_CALL,          "to",     "to_name",     0,  "kind",         "request", "payload") \
	X(GEN_REPLY,         "",       "",            0,  "",             "reply",   "payload") \
	X(TIMEOUT,           "",       "",            0,  "",             "payload", "payload") \
	X(ALARM,             "port",   "to_node",     0,  "alarm",        "info",    "what the VM says")

/* One JSON key: its name ("" when the type has none) and, ready to write,
 * ,"name": with its length, in an array of fixed size: the writer copies
 * the whole array, which takes a few moves, and keeps len bytes (a copy
 * of a length known only at run time compiles to a slow-starting rep
 * movs, which cost the JSON writer a third of its time). */
#define EVENT_KEY_ROOM 24
struct event_key {
	const char *name;
	char pre[EVENT_KEY_ROOM];
	unsigned char len;
};

struct event_fields {
	struct event_key peer, peer_name, extra, payload;
	bool mfa;               /* the mfa is written */
	const char *payload_is; /* "message", "arguments", ... */
};

extern const struct event_fields event_fields[EV__COUNT];

/* A local pid of a target: enough to key tables.  node is the index of
 * the target among several attached at once (0 with one). */
struct bs_pid {
	uint32_t num;
	uint32_t serial;
	uint32_t node;
};

static inline bool bs_pid_eq(struct bs_pid x, struct bs_pid y)
{
	return x.num == y.num && x.serial == y.serial && x.node == y.node;
}

/*
 * One decoded event.  The strings belong to the decoder and are valid only
 * until the next event is decoded; a consumer that keeps them copies them.
 */
struct event {
	enum event_type type;
	int64_t ts;             /* microseconds since the epoch, target clock */
	int worker;             /* which worker shipped it */
	struct bs_pid pid;
	const char *pid_text;   /* "<0.85.0>" */
	const char *name;       /* registered name of pid, or NULL */
	const char *label;      /* what pid is, when known (session_proc_label) */
	const char *peer;       /* receiver, child, parent, link peer, or name */
	const char *peer_name;  /* registered name of peer, or NULL */
	const char *mfa;        /* "m:f/N" for spawn/spawned and calls, else NULL */
	const char *payload;    /* message, args, exit reason, return value */
	const char *extra;      /* a call's caller; an exception's class */
	int64_t elapsed_us;     /* return/exception/gc: time since its start;
				 * an alarm: how long (long_gc, long_schedule);
				 * -1 */
	long heap[4];           /* gc: heap before, after, old heap before, after
				 * (words); an alarm: the heap (bytes), the
				 * queue's length; -1 unknown */
	bool truncated;         /* payload was cut, on the target or here */
	/* several nodes: a receive paired with its send on another node */
	const char *from;       /* the sender, "<name@host.N.S>", or NULL */
	int64_t latency_us;     /* receive time minus send time */
	/* gen_call, gen_reply: the call's reference, hashed with its node
	 * (the same on every node); a gen_call's kind is in extra */
	uint64_t gen_tag;
	/* what the worker shipped (external term format, no version
	 * byte), for rendering it again in another syntax: the whole entry,
	 * or its message alone (raw_part); NULL when there is none (a
	 * recording) or it must not be kept (it held a cookie) */
	const char *raw;
	uint32_t raw_len;
	uint8_t raw_part;       /* RAW_* */
	uint8_t syn;            /* the enum term_syntax its text is in */
};

/* struct event's raw_part: the whole entry, or the message alone and
 * whether the target cut it, or nothing (no term was shown) */
#define RAW_ENTRY 0
#define RAW_PAYLOAD 1
#define RAW_CUT_THERE 2
#define RAW_NOTHING 4

/* A gc start: folded into its end, never written on its own. */
#define EVENT_IS_GC_START(t) ((t) == EV_GC_MINOR_START || (t) == EV_GC_MAJOR_START)
#define EVENT_IS_GC(t) ((t) >= EV_GC_MINOR_START && (t) <= EV_GC_MAJOR_END)
#define EVENT_IS_RUNNING(t) ((t) >= EV_IN && (t) <= EV_OUT_EXITED)

/* a gen call's request or reply: text kept, at most (the target cuts
 * them to 80 bytes already) */
#define EVENT_GEN_TEXT_MAX 120

/* Parse "send,receive" into KIND_* bits; -1 and *bad = the offending word. */
int event_kinds_parse(const char *list, char *bad, unsigned badsz);
/* The --events word for one KIND_* bit, or NULL. */
const char *event_kind_name(int bit);
/* Every --events word, "send, receive, ..." (for messages). */
const char *event_kinds_list(void);

#endif
