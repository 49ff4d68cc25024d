/*
 * keys: what each key asks for.  Keys become requests through one table:
 * a request, its default keys, its word on the hint line ("" for none)
 * and its help.  The key map, the help view, the hint line and the man
 * page check (test/t0110-docs.sh) all read it; views act on requests,
 * never on key codes.
 *
 * A key list is key names joined by ", ": one character stands for
 * itself; Enter, Esc, Space, Up, Down, Left, Right, PgUp, PgDn, Home, End,
 * C-l and F1 to F12 are named.  A key belongs to one request only.
 */
#ifndef BS_KEYS_H
#define BS_KEYS_H

#include <stddef.h>

/*  request        keys               hint       help */
#define REQUESTS(X) \
	X(CLOSE,       "q",               "quit",    "close the view; quit from the process table") \
	X(BACK,        "Esc, Left, h",    "",        "close the view; never quits") \
	X(QUIT,        "Q, F10",          "",        "quit at once") \
	X(HELP,        "?, F1",           "help",    "help; again closes it") \
	X(FILTER,      "/, F3",           "filter",  "filter the process table; in a process log, search it") \
	X(SEARCH_NEXT, "n",               "",        "in a process log, the next older line that matches the search") \
	X(SEARCH_PREV, "N",               "",        "in a process log, the next newer line that matches the search") \
	X(PROMPT,      ":",               "command", "command line (Tab completes)") \
	X(ENTER,       "Enter, Right, l", "open",    "open the selected process's log (table, tree); in calls, its last caller's; in a log, the whole event") \
	X(JUMP,        "J",               "",        "in a process log or an event, open the log of the process the line names") \
	X(TREE,        "t, F5",           "tree",    "spawn tree; again closes it") \
	X(CALLS,       "c, F7",           "calls",   "calls: one row per traced function; again closes it") \
	X(SERVERS,     "v, F8",           "servers", "servers: gen_server/gen_statem call latency per request kind; again closes it") \
	X(INFLIGHT,    "i",               "",        "in servers, the selected row's calls in flight") \
	X(SERVER_LOG,  "o",               "",        "in a server's calls, open the server's log") \
	X(PAUSE,       "p",               "pause",   "pause or resume the display") \
	X(REDRAW,      "C-l",             "",        "redraw the whole screen") \
	X(UP,          "Up, k",           "",        "up a row; in a process log, back in time") \
	X(DOWN,        "Down, j",         "",        "down a row; in a process log, forward in time") \
	X(PAGE_UP,     "PgUp",            "",        "up a page") \
	X(PAGE_DOWN,   "PgDn",            "",        "down a page") \
	X(HOME,        "Home, g",         "",        "to the first row; in a process log, the oldest line") \
	X(END,         "End, G",          "",        "to the last row; in a process log, the newest line, then follow it") \
	X(SORT_PREV,   "<",               "",        "sort by the previous column") \
	X(SORT_NEXT,   ">, F6",           "",        "sort by the next column") \
	X(SORT_INVERT, "I",               "",        "invert the sort order") \
	X(SORT_PID,    "P",               "",        "sort by pid") \
	X(SORT_SPS,    "S",               "",        "sort by sends/s") \
	X(SORT_RPS,    "R",               "",        "sort by receives/s") \
	X(SORT_MQ,     "M",               "",        "sort by message queue length") \
	X(TOP,         "O",               "",        "top mode: the processes of the whole node that lead by the sort column (MEM, REDS/s, MQ, S/s, R/s); again leaves it") \
	X(TAG,         "Space",           "",        "in the process table, tag or untag the selected process for the chart") \
	X(CHART,       "s",               "chart",   "sequence chart of the tagged processes (or the selected one and its busiest peers); again closes it") \
	X(PROFILE,     "f, F9",           "profile", "profile: sample the stacks of the selected process (the tagged ones, if any; in a process log, its process): where it spends its time; again closes it and stops sampling and exact mode") \
	X(ALARMS,      "a, F11",          "",        "alarms: the VM's recent alarms, newest first (turns them on, at --alarm's thresholds or the defaults, if they are off); Enter opens the alarm's process; again closes it") \
	X(FLAME,       "F",               "",        "in the profile, the flame graph or the table of functions") \
	X(TIMES,       "d",               "",        "in the chart, times as wall clock or as deltas between rows") \
	X(EXITED,      "x",               "",        "show exited processes in the process table, or hide them after a few seconds") \
	X(TIMEOUTS,    "T",               "",        "in a process log, hide or show receive timeouts") \
	X(HEADER,      "m, F2",           "",        "show or hide the header above the process table: schedulers, memory, processes, run queues, events and drops")

enum request {
	REQ_NONE,               /* a key that asks for nothing */
#define X(id, keys, hint, help) REQ_##id,
	REQUESTS(X)
#undef X
	REQ__COUNT
};

struct request_info {
	const char *keys;       /* key names, as above */
	const char *hint;       /* on the hint line after the first key; "" */
	const char *help;
};

/* indexed by enum request; REQ_NONE has no keys */
extern const struct request_info request_table[REQ__COUNT];

/* What a curses key asks for; REQ_NONE if nothing. */
enum request keys_request(int ch);
/* The hint line: "q quit  ? help  ..." from the table. */
void keys_hint(char *out, size_t outsz);

#endif
