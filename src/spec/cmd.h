/*
 * cmd: the UI's commands, as one table.  The table feeds the ':' prompt
 * (parsing and Tab completion), the help view, and the tests that keep the
 * man page and shell completions in step.  Its last column names each
 * command's handler in ui/commands.c, which builds its dispatch from this
 * table: a command without a handler does not build.  src/ ignores that
 * column and never links the handlers.
 */
#ifndef BS_CMD_H
#define BS_CMD_H

#include <stddef.h>

#include "sbuf.h"

/*  id          name        arguments               help, handler */
#define COMMANDS(X) \
	X(EVENTS,   "events",   "LIST",                 "trace these kinds: send,receive,timeout,spawn,exit,link,register,gc,running", c_events) \
	X(PIDS,     "pids",     "WHO",                  "trace these processes: all, new, existing, or PID|NAME[,...]", c_pids) \
	X(FOLLOW,   "follow",   "PID|NAME",             "trace a process and everything it spawns from now on", c_follow) \
	X(UNFOLLOW, "unfollow", "",                     "stop following: each follower drops its flags at its next event", c_unfollow) \
	X(ON,       "on",       "",                     "resume tracing on the target", c_on) \
	X(OFF,      "off",      "",                     "stop tracing on the target, keep what was captured", c_off) \
	X(CALL,     "call",     "PATTERN",              "trace calls: mod:fun/arity, mod:fun(Args) when Guard -> return", c_call) \
	X(UNCALL,   "uncall",   "PATTERN",              "stop tracing the calls of a pattern given to call", c_uncall) \
	X(MATCH,    "match",    "[PATTERN|off]",        "ship only the messages matching an Erlang pattern [when Guard]; off ships all; none says which", c_match) \
	X(FOCUS,    "focus",    "PID|NAME",             "open a process's live log (puts it in focus)", c_focus) \
	X(UNFOCUS,  "unfocus",  "",                     "leave the process log", c_unfocus) \
	X(PAUSE,    "pause",    "",                     "freeze the display; tracing goes on", c_pause) \
	X(RESUME,   "resume",   "",                     "unfreeze the display", c_resume) \
	X(CLEAR,    "clear",    "",                     "forget every captured event and process", c_clear) \
	X(FILTER,   "filter",   "[TEXT]",               "show only processes matching TEXT; no TEXT clears", c_filter) \
	X(SORT,     "sort",     "COLUMN",               "sort the process table: pid name node current sends sps receives rps spawns mq alarms mem reds redsps heap sent30 recv30", c_sort) \
	X(TOP,      "top",      "[COLUMN [N]|off]",     "top mode: the N (20) processes of the whole node that lead by mem, redsps, mq, sps or rps; no argument toggles it on the sort column", c_top) \
	X(SYNTAX,   "syntax",   "[auto|erlang|elixir]", "print terms, names and functions as this language does, what is captured already too; auto: each node's own", c_syntax) \
	X(LIMIT,    "limit",    "duration|events|payload|stuck N", "set a limit (0: none for duration and events; stuck: seconds before a gen call in flight is stuck)", c_limit) \
	X(EXPORT,   "export",   "FILE",                 "write the process table and every captured event as JSON", c_export) \
	X(RECORD,   "record",   "[FILE]",               "record everything the view receives to FILE as JSON lines; no FILE stops", c_record) \
	X(TREE,     "tree",     "",                     "show the spawn tree", c_tree) \
	X(CALLS,    "calls",    "",                     "show the traced functions", c_calls) \
	X(SERVERS,  "servers",  "[off]",                "show gen_server and gen_statem call latency per server and request kind; off stops pairing calls", c_servers) \
	X(CHART,    "chart",    "",                     "show the sequence chart of the tagged processes (Space tags them in the table)", c_chart) \
	X(CHART_EXPORT, "chart-export", "FILE",         "write the chart as shown: PlantUML for FILE.puml, Mermaid for FILE.mmd", c_chart_export) \
	X(PROFILE,  "profile",  "[PID|NAME[,...]|top [N]|calls MOD[:FUN[/N]][,...]|off|window N]", "sample stacks and show where the processes spend their time (the selected or tagged ones without an argument; top N: the N leading by reductions a second); calls: exact mode, every call of those functions counted and timed (OTP 27+); window N shows the last N seconds (0: all)", c_profile) \
	X(PROFILE_EXPORT, "profile-export", "FILE",     "write the profile as shown: speedscope JSON for FILE.json, collapsed stacks otherwise", c_profile_export) \
	X(ALARMS,   "alarms",   "[on|off|NAME=VALUE,...]", "the VM's alarms as events (long_gc, long_schedule, large_heap, long_message_queue, busy_port, busy_dist_port) and the list of recent ones; NAME=VALUE,... sets thresholds as --alarm does; off turns them off", c_alarms) \
	X(PROCS,    "procs",    "",                     "show the process table", c_procs) \
	X(HEADER,   "header",   "[on|off]",             "show or hide the node at a glance above the process table; no argument toggles", c_header) \
	X(HELP,     "help",     "",                     "show keys and commands", c_help) \
	X(RECONNECT, "reconnect", "",                   "attach again (after a target was lost)", c_reconnect) \
	X(ATTACH,   "attach",   "NODE",                 "trace one more node, on the same timeline", c_attach) \
	X(DETACH,   "detach",   "NODE",                 "stop tracing a node and leave it clean; what was captured stays", c_detach) \
	X(NODE,     "node",     "[NODE]",               "show only the processes of NODE; no NODE shows every node", c_node) \
	X(NODES,    "nodes",    "",                     "list the nodes: state, clock offset and its error bound, drops", c_nodes) \
	X(QUIT,     "quit",     "",                     "detach, clean the target, and exit", c_quit)

enum cmd_id {
#define X(id, name, args, help, fn) CMD_##id,
	COMMANDS(X)
#undef X
	CMD__COUNT
};

struct cmd_info {
	const char *name;
	const char *args;
	const char *help;
};

extern const struct cmd_info cmd_table[CMD__COUNT];

#define CMD_MAX_ARGS 40

struct cmd_line {
	enum cmd_id id;
	int argc;                   /* arguments after the command name */
	char *argv[CMD_MAX_ARGS];   /* point into buf */
	char buf[1024];
};

/*
 * Parse "name arg..." into cl.  A unique prefix of a name is accepted.
 * 0, or -1 with a one-line message in err.
 */
int cmd_parse(const char *line, struct cmd_line *cl, struct sbuf *err);
/* Command names starting with prefix, for completion; state as readline's. */
const char *cmd_complete(const char *prefix, int state);

#endif
