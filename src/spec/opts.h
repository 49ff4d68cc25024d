/*
 * opts: the command-line options, as one table.  The table feeds the
 * parser, the config file (options marked "conf" may be set there),
 * --help, and the checks that keep the man page and the shell completions
 * honest.
 */
#ifndef BS_OPTS_H
#define BS_OPTS_H

#include <stdbool.h>
#include <stdio.h>

#include "alarm.h"
#include "pidsel.h"

/* the longest --duration and --interval, in seconds */
#define BS_MAX_SECONDS 1e7
/* the longest --dependency-timeout: 2^32 - 1 ms, in whole seconds */
#define BS_MAX_DEP_TIMEOUT 4294967

/* the longest --match pattern, in bytes */
#define BS_MAX_MATCH 900

/* nodes one beamscope attaches to at once */
#define BS_MAX_NODES 32

/*  id            long name             short  argument   conf help */
#define OPTIONS(X) \
	X(BATCH,       "batch",              0,   NULL,      0, "write events as JSON lines instead of opening the interactive view") \
	X(OUTPUT,      "output",             'o', "FILE",    0, "write to FILE instead of standard output") \
	X(OPEN,        "open",               0,   "FILE",    0, "reopen a recording (batch output, :record or :export) instead of a node") \
	X(RECORD,      "record",             0,   "FILE",    0, "the view: record everything it receives to FILE as JSON lines") \
	X(EVENTS,      "events",             'e', "LIST",    1, "kinds: send,receive,timeout,spawn,exit,link,register,gc,running,gen_call (default: send,receive,spawn,exit; the view adds timeout)") \
	X(PIDS,        "pids",               'p', "WHO",     1, "all, new, existing, or PID|NAME[,...] (default: all)") \
	X(CALL,        "call",               'c', "PATTERN", 0, "trace calls: mod:fun/arity, mod:fun(Args) when Guard -> return, Mod.fun(args) when guard in Elixir form (repeatable)") \
	X(MATCH,       "match",              0,   "PATTERN", 0, "ship only the messages matching an Erlang pattern [when Guard], filtered on the target; counts stay exact") \
	X(FOLLOW,      "follow",             'f', "PID|NAME", 0, "trace a process and everything it spawns from now on") \
	X(DURATION,    "duration",           'd', "SECONDS", 1, "stop after SECONDS (default: 10 in batch, 600 in the view; 0: none)") \
	X(MAX_EVENTS,  "max-events",         'n', "N",       1, "stop after N events (default: 100000 in batch, none in the view or a replay of --open)") \
	X(PAYLOAD,     "payload-bytes",      0,   "N",       1, "cut messages to N bytes on the target (default: 256; 0: none)") \
	X(RATE,        "rate",               'r', "N",       1, "at most N events per second, enforced on the target (default: none)") \
	X(ON_LIMIT,    "on-limit",           0,   "stop|shed", 1, "over --rate: stop tracing (default) or drop and count") \
	X(SYNTAX,      "syntax",             0,   "auto|erlang|elixir", 1, "print terms and names as this language does (default: auto, the target's)") \
	X(COUNTS,      "counts",             0,   NULL,      0, "batch: per-process counts instead of events (count tier)") \
	X(INTERVAL,    "interval",           0,   "SECONDS", 1, "batch --counts, --gen-calls: write counts, call statistics every SECONDS (default: 1)") \
	X(GEN_CALLS,   "gen-calls",          0,   NULL,      0, "batch: gen_server/gen_statem call latency per server and request kind (gen_call_stats lines)") \
	X(SLOWER_THAN, "slower-than",        0,   "MS",      0, "batch: a slow_call line for every gen call slower than MS milliseconds") \
	X(STUCK,       "stuck",              0,   "SECONDS", 1, "a gen call in flight longer than SECONDS is stuck (default: 5)") \
	X(CHART,       "chart",              0,   "FORMAT",  0, "batch: a sequence chart of the --pids or --follow processes (plantuml, mermaid) instead of JSON lines") \
	X(PROFILE,     "profile",            0,   NULL,      0, "batch: sample the stacks of the --pids or --follow processes (profile_sample lines); a --counts run of them unless --events is given") \
	X(PROFILE_OUT, "profile-out",        0,   "FILE",    0, "batch --profile: at the end, write the stacks sampled to FILE as collapsed stacks (flamegraph.pl, speedscope)") \
	X(PROFILE_RATE, "profile-rate",      0,   "N",       1, "--profile, :profile: N samples a second in all, spread over the processes (default: 100; at most 1000)") \
	X(PROFILE_BUDGET, "profile-budget", 0,   "PERCENT", 1, "--profile, :profile: the sampler's time on the target, waits included, at most PERCENT of one scheduler (default: 1; at most 50)") \
	X(PROFILE_CALLS, "profile-calls",   0,   "LIST",    0, "batch: exact mode (OTP 27+): count and time every call of the functions named, mod, mod:fun or mod:fun/N, comma-separated (at most 200 functions), a profile_calls line a second with the totals") \
	X(ALARM,       "alarm",              0,   "LIST",    1, "the VM's alarms as events: on (every one at its default: long_gc=100ms,long_schedule=100ms,large_heap=256MB,long_message_queue=10000,busy_port,busy_dist_port), or NAME=VALUE,... (NAME=off: not that one)") \
	X(SUMMARY,     "summary",            0,   NULL,      0, "batch: at the end, the busiest processes and the slowest servers on standard error") \
	X(NODE_STATS,  "node-stats",         0,   NULL,      1, "sample each node once a second (memory, processes, run queues, schedulers): the view starts with its header shown, batch writes node_stats lines") \
	X(ASCII,       "ascii",              0,   NULL,      1, "the view: draw rates and lines with ASCII characters only (default: Unicode where the locale is UTF-8)") \
	X(COOKIE_FILE, "cookie-file",        0,   "FILE",    1, "read the cookie from FILE (default: ~/.erlang.cookie)") \
	X(COOKIE,      "cookie",             0,   "COOKIE",  0, "the cookie itself (blanked in ps once read; --cookie-file is safer)") \
	X(PORT,        "port",               0,   "PORT",    0, "the node's distribution port: attach without asking epmd (a node started with -start_epmd false); NODE@HOST:PORT says the same") \
	X(SSL_DIST_OPTFILE, "ssl-dist-optfile", 0, "FILE",  1, "the node's distribution runs over TLS (inet_tls): the options file it was started with (its client part: certfile, keyfile, cacertfile, verify, server_name_indication)") \
	X(TLS_CERT,    "tls-cert",           0,   "FILE",    1, "TLS: beamscope's certificate (PEM), shown to a node that asks for one") \
	X(TLS_KEY,     "tls-key",            0,   "FILE",    1, "TLS: the certificate's private key (default: in --tls-cert's file)") \
	X(TLS_CA,      "tls-ca",             0,   "FILE",    1, "TLS: the CA certificates the node's certificate must be signed by") \
	X(TLS_VERIFY,  "tls-verify",         0,   "MODE",    1, "TLS: verify_peer (the default: the node's certificate, and its host name) or verify_none") \
	X(LONGNAMES,   "longnames",          'l', NULL,      1, "NODE is a long name (name@host.domain)") \
	X(LIST,        "list",               0,   NULL,      0, "list the nodes epmd knows on HOST (default: this host)") \
	X(CLUSTER,     "cluster",            0,   NULL,      0, "also attach to every visible node the given nodes are connected to") \
	X(RECONNECT,   "reconnect",          0,   NULL,      1, "attach again to a node that was lost, when it comes back") \
	X(RING,        "ring",               0,   "N",       1, "events the interactive view keeps (default: 200000), and N KiB of them at most (64 MiB at least)") \
	X(WORKERS,     "workers",            0,   "N",       1, "worker processes on the target (default: one per scheduler)") \
	X(HIGH_WATER,  "high-water",         0,   "N",       1, "room per worker on the target, in 64-byte cells, before it drops (default: 20000)") \
	X(DEP_TIMEOUT, "dependency-timeout", 0,   "SECONDS", 1, "the target cleans up after SECONDS without beamscope (default: 30)") \
	X(TAKE_OVER,   "take-over",          0,   NULL,      0, "legacy tracing (OTP 25-26): take the processes, new processes and message patterns another tracer holds, and give them back at the end (default: leave them)") \
	X(LEGACY,      "legacy",             0,   NULL,      0, "OTP 27 and later: trace in the node's shared legacy session instead of a session of beamscope's own") \
	X(EXACT,       "exact",              0,   NULL,      1, "batch: exit with status 7 if the final counts are not complete") \
	X(QUIET,       "quiet",              'q', NULL,      1, "no progress lines on standard error") \
	X(NO_CONFIG,   "no-config",          0,   NULL,      0, "do not read ~/.config/beamscope/config") \
	X(HELP,        "help",               'h', NULL,      0, "show this help") \
	X(VERSION,     "version",            'V', NULL,      0, "show version and OTP releases")

enum opt_id {
#define X(id, l, s, a, c, h) OPT_##id,
	OPTIONS(X)
#undef X
	OPT__COUNT
};

struct opt_info {
	const char *name;
	char short_name;
	const char *arg;
	bool conf;         /* may be set in the config file */
	const char *help;
};

extern const struct opt_info opt_table[OPT__COUNT];

struct config {
	const char *node;         /* NODE (the first), or the HOST of --list */
	const char *nodes[BS_MAX_NODES]; /* every NODE given */
	int nnodes;
	bool cluster;             /* --cluster: and the nodes they see */
	bool reconnect;           /* --reconnect: reattach lost nodes */
	bool batch, list, longnames, quiet, help, version, counts, no_config;
	bool exact;               /* --exact: incomplete counts fail the run */
	bool take_over;           /* --take-over: another tracer's, legacy */
	bool legacy;              /* --legacy: no session of our own */
	bool gen_calls;           /* --gen-calls (or --slower-than): pair calls */
	double slower_than_ms;    /* --slower-than; < 0: none */
	double stuck;             /* --stuck, seconds */
	bool summary;             /* --summary */
	bool profile;             /* --profile: sample stacks */
	const char *profile_out;  /* --profile-out FILE; NULL: none */
	int profile_rate;         /* --profile-rate, samples a second */
	int profile_budget;       /* --profile-budget, percent of a scheduler */
	const char *profile_calls; /* --profile-calls LIST; NULL: none */
	bool alarm;               /* --alarm: the VM's alarms on */
	struct alarm_spec alarms; /* ... at these thresholds */
	bool ascii;               /* --ascii: no Unicode drawing characters */
	bool node_stats;          /* --node-stats: the nodes sampled a second */
	double interval;          /* --counts period, seconds */
	const char *output;
	const char *open;         /* --open: a recording instead of nodes */
	const char *record;       /* --record: the view writes NDJSON there */
	int kinds;
	bool events_set;          /* --events was given */
	struct pidsel pids;
	const char *pids_arg;     /* --pids as given, NULL: all */
	const char *calls[32];    /* --call patterns */
	int ncalls;
	const char *match;        /* --match: a message pattern; NULL: none */
	bool follow;              /* --follow: pids is that process, with children */
	int chart;                /* --chart: enum chart_format + 1; 0: none */
	double duration;          /* seconds; 0: none */
	bool duration_set, max_events_set;
	unsigned long max_events; /* 0: none */
	unsigned long ring;       /* 0: the view's default */
	unsigned payload_bytes;
	unsigned long rate;       /* events/s; 0: none */
	bool shed;                /* --on-limit shed */
	int syntax;               /* --syntax: a term_syntax; -1: auto */
	const char *cookie_file, *cookie;
	int port;                 /* --port; 0: epmd's */
	const char *ssl_optfile;  /* --ssl-dist-optfile */
	const char *tls_cert, *tls_key, *tls_ca;
	int tls_verify;           /* 0: as the file says; 1 verify_peer; 2 none */
	char *cookie_owned;     /* --cookie's copy; wiped when released */
	int workers;
	unsigned high_water;
	double dep_timeout;
	char *conf_text;          /* the config file read; values point into it */
	char *conf_file_arg;      /* a FILE value of it, "~/" expanded */
};

/*
 * Fill cfg from the defaults, then the config file at conf_path (when a
 * NODE is given and neither --no-config, --list, --help nor --version is;
 * NULL: none), then the command line, each overriding the one before.
 * 0, or -1 with a one-line message in err (EXIT_USAGE).
 */
int opts_parse(int argc, char **argv, const char *conf_path,
	       struct config *cfg, struct sbuf *err);
/* Set the option called name from the config file: 0, or -1 with err. */
int opts_set_conf(struct config *cfg, const char *name, const char *value,
		  struct sbuf *err);
void opts_release(struct config *cfg);
void opts_help(FILE *f);

#endif
