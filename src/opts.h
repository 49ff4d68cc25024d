/*
 * opts: the command-line options, as one table.  The table feeds the
 * parser, --help, and the checks that keep the man page and the shell
 * completions honest.
 */
#ifndef BS_OPTS_H
#define BS_OPTS_H

#include <stdbool.h>
#include <stdio.h>

#include "pidsel.h"

/*  id            long name             short  argument   help */
#define OPTIONS(X) \
	X(BATCH,       "batch",              0,   NULL,      "write events as JSON lines instead of opening the interactive view") \
	X(OUTPUT,      "output",             'o', "FILE",    "write to FILE instead of standard output") \
	X(EVENTS,      "events",             'e', "LIST",    "kinds: send,receive,spawn,exit,link,register,gc,running (default: send,receive,spawn,exit)") \
	X(PIDS,        "pids",               'p', "WHO",     "all, new, existing, or PID|NAME[,...] (default: all)") \
	X(CALL,        "call",               'c', "PATTERN", "trace calls: mod:fun/arity, mod:fun(Args) when Guard -> return (repeatable)") \
	X(FOLLOW,      "follow",             'f', "PID|NAME", "trace a process and everything it spawns from now on") \
	X(DURATION,    "duration",           'd', "SECONDS", "stop after SECONDS (default: 10; 0: no limit)") \
	X(MAX_EVENTS,  "max-events",         'n', "N",       "stop after N events (default: 100000; 0: no limit)") \
	X(PAYLOAD,     "payload-bytes",      0,   "N",       "cut messages to N bytes on the target (default: 256; 0: none)") \
	X(RATE,        "rate",               'r', "N",       "at most N events per second, enforced on the target (default: none)") \
	X(ON_LIMIT,    "on-limit",           0,   "stop|shed", "over --rate: stop tracing (default) or drop and count") \
	X(COUNTS,      "counts",             0,   NULL,      "batch: per-process counts instead of events (count tier)") \
	X(INTERVAL,    "interval",           0,   "SECONDS", "batch --counts: write counts every SECONDS (default: 1)") \
	X(COOKIE_FILE, "cookie-file",        0,   "FILE",    "read the cookie from FILE (default: ~/.erlang.cookie)") \
	X(COOKIE,      "cookie",             0,   "COOKIE",  "the cookie itself (visible in ps; prefer --cookie-file)") \
	X(LONGNAMES,   "longnames",          'l', NULL,      "NODE is a long name (name@host.domain)") \
	X(LIST,        "list",               0,   NULL,      "list the nodes epmd knows on HOST (default: this host)") \
	X(RING,        "ring",               0,   "N",       "events the interactive view keeps (default: 200000)") \
	X(WORKERS,     "workers",            0,   "N",       "worker processes on the target (default: one per scheduler)") \
	X(HIGH_WATER,  "high-water",         0,   "N",       "room per worker on the target, in 64-byte cells, before it drops (default: 20000)") \
	X(DEP_TIMEOUT, "dependency-timeout", 0,   "SECONDS", "the target cleans up after SECONDS without beamscope (default: 30)") \
	X(QUIET,       "quiet",              'q', NULL,      "no progress lines on standard error") \
	X(HELP,        "help",               'h', NULL,      "show this help") \
	X(VERSION,     "version",            'V', NULL,      "show version and OTP releases")

enum opt_id {
#define X(id, l, s, a, h) OPT_##id,
	OPTIONS(X)
#undef X
	OPT__COUNT
};

struct opt_info {
	const char *name;
	char short_name;
	const char *arg;
	const char *help;
};

extern const struct opt_info opt_table[OPT__COUNT];

struct config {
	const char *node;         /* NODE, or the HOST of --list */
	bool batch, list, longnames, quiet, help, version, counts;
	double interval;          /* --counts period, seconds */
	const char *output;
	int kinds;
	struct pidsel pids;
	const char *pids_arg;     /* --pids as given, NULL: all */
	const char *calls[32];    /* --call patterns */
	int ncalls;
	bool follow;              /* --follow: pids is that process, with children */
	double duration;          /* seconds; 0: none */
	bool duration_set, max_events_set;
	unsigned long max_events; /* 0: none */
	unsigned long ring;       /* 0: the view's default */
	unsigned payload_bytes;
	unsigned long rate;       /* events/s; 0: none */
	bool shed;                /* --on-limit shed */
	const char *cookie_file, *cookie;
	int workers;
	unsigned high_water;
	double dep_timeout;
};

/* 0, or -1 with a one-line message in err (EXIT_USAGE). */
int opts_parse(int argc, char **argv, struct config *cfg, struct sbuf *err);
void opts_release(struct config *cfg);
void opts_help(FILE *f);

#endif
