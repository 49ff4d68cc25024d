/* opts: parse the command line with getopt_long, built from OPTIONS. */
#include "opts.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "event.h"

const struct opt_info opt_table[OPT__COUNT] = {
#define X(id, l, s, a, h) [OPT_##id] = { l, s, a, h },
	OPTIONS(X)
#undef X
};

static int parse_ulong(const char *opt, const char *s, unsigned long max,
		       unsigned long *out, struct sbuf *err)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || *s == '-' || errno || v > max) {
		sbuf_addf(err, "--%s \"%s\": expected a whole number from 0 to %lu",
			  opt, s, max);
		return -1;
	}
	*out = v;
	return 0;
}

static int parse_seconds(const char *opt, const char *s, double *out,
			 struct sbuf *err)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (!*s || *end || errno || !(v >= 0) || v > 1e7) {
		sbuf_addf(err, "--%s \"%s\": expected seconds, e.g. 10 or 0.5",
			  opt, s);
		return -1;
	}
	*out = v;
	return 0;
}

int opts_parse(int argc, char **argv, struct config *cfg, struct sbuf *err)
{
	struct option longopts[OPT__COUNT + 1];
	char shortopts[3 * OPT__COUNT + 2];
	size_t sp = 0;
	unsigned long v;

	memset(cfg, 0, sizeof(*cfg));
	cfg->kinds = KIND_DEFAULT;
	cfg->pids.mode = SEL_ALL;
	cfg->duration = 10;
	cfg->max_events = 100000;
	cfg->payload_bytes = 256;
	cfg->high_water = 20000;
	cfg->dep_timeout = 30;
	cfg->interval = 1;

	shortopts[sp++] = ':';
	for (int i = 0; i < OPT__COUNT; i++) {
		longopts[i] = (struct option){
			opt_table[i].name,
			opt_table[i].arg ? required_argument : no_argument,
			NULL, 1000 + i };
		if (opt_table[i].short_name) {
			shortopts[sp++] = opt_table[i].short_name;
			if (opt_table[i].arg)
				shortopts[sp++] = ':';
		}
	}
	shortopts[sp] = '\0';
	memset(&longopts[OPT__COUNT], 0, sizeof(longopts[0]));

	bool pids_given = false;
	opterr = 0;
	optind = 1;
	int c;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		int id = -1;
		if (c >= 1000) {
			id = c - 1000;
		} else if (c == '?' || c == ':') {
			const char *what = argv[optind - 1];
			if (c == ':')
				sbuf_addf(err, "option \"%s\" needs an argument; "
					  "see beamscope --help", what);
			else
				sbuf_addf(err, "unknown option \"%s\"; see "
					  "beamscope --help", optopt ?
					  (char[]){ '-', (char)optopt, 0 } : what);
			return -1;
		} else {
			for (int i = 0; i < OPT__COUNT; i++)
				if (opt_table[i].short_name == c)
					id = i;
		}
		const char *name = opt_table[id].name;
		switch ((enum opt_id)id) {
		case OPT_BATCH: cfg->batch = true; break;
		case OPT_OUTPUT: cfg->output = optarg; break;
		case OPT_EVENTS: {
			char bad[64];
			int k = event_kinds_parse(optarg, bad, sizeof(bad));
			if (k < 0) {
				sbuf_addf(err, "--events: unknown kind \"%s\"; kinds "
					  "are send, receive, spawn, exit, link, "
					  "register, gc, running", bad);
				return -1;
			}
			cfg->kinds = k | (cfg->kinds & KIND_CALL);
			break;
		}
		case OPT_PIDS:
			pidsel_release(&cfg->pids);
			if (pidsel_parse(optarg, &cfg->pids, err) < 0)
				return -1;
			cfg->pids_arg = optarg;
			pids_given = true;
			break;
		case OPT_DURATION:
			if (parse_seconds(name, optarg, &cfg->duration, err) < 0)
				return -1;
			cfg->duration_set = true;
			break;
		case OPT_MAX_EVENTS:
			if (parse_ulong(name, optarg, ULONG_MAX / 2, &v, err) < 0)
				return -1;
			cfg->max_events = v;
			cfg->max_events_set = true;
			break;
		case OPT_RING:
			if (parse_ulong(name, optarg, 100000000, &v, err) < 0 || v < 100) {
				if (!err->len)
					sbuf_addstr(err, "--ring must be at least 100");
				return -1;
			}
			cfg->ring = v;
			break;
		case OPT_PAYLOAD:
			if (parse_ulong(name, optarg, 65536, &v, err) < 0)
				return -1;
			cfg->payload_bytes = (unsigned)v;
			break;
		case OPT_CALL:
			if (cfg->ncalls == 32) {
				sbuf_addstr(err, "--call: at most 32 patterns");
				return -1;
			}
			if (!*optarg || strlen(optarg) > 900) {
				sbuf_addstr(err, "--call needs a pattern (at most 900 "
					    "characters), e.g. mod:fun/2");
				return -1;
			}
			cfg->calls[cfg->ncalls++] = optarg;
			cfg->kinds |= KIND_CALL;
			break;
		case OPT_FOLLOW:
			pidsel_release(&cfg->pids);
			if (pidsel_parse(optarg, &cfg->pids, err) < 0)
				return -1;
			if (cfg->pids.mode != SEL_LIST || cfg->pids.n != 1) {
				sbuf_addstr(err, "--follow takes one process: a pid "
					    "<0.123.0> or a registered name");
				return -1;
			}
			cfg->pids_arg = optarg;
			cfg->follow = true;
			break;
		case OPT_RATE:
			if (parse_ulong(name, optarg, 100000000, &v, err) < 0)
				return -1;
			cfg->rate = v;
			break;
		case OPT_ON_LIMIT:
			if (!strcmp(optarg, "stop") || !strcmp(optarg, "shed")) {
				cfg->shed = !strcmp(optarg, "shed");
				break;
			}
			sbuf_addf(err, "--on-limit \"%s\": stop or shed", optarg);
			return -1;
		case OPT_COUNTS: cfg->counts = true; break;
		case OPT_INTERVAL:
			if (parse_seconds(name, optarg, &cfg->interval, err) < 0)
				return -1;
			if (cfg->interval < 0.05) {
				sbuf_addstr(err, "--interval must be at least 0.05 seconds");
				return -1;
			}
			break;
		case OPT_COOKIE_FILE: cfg->cookie_file = optarg; break;
		case OPT_COOKIE: cfg->cookie = optarg; break;
		case OPT_LONGNAMES: cfg->longnames = true; break;
		case OPT_LIST: cfg->list = true; break;
		case OPT_CLUSTER: cfg->cluster = true; break;
		case OPT_RECONNECT: cfg->reconnect = true; break;
		case OPT_WORKERS:
			if (parse_ulong(name, optarg, 1024, &v, err) < 0)
				return -1;
			cfg->workers = (int)v;
			break;
		case OPT_HIGH_WATER:
			if (parse_ulong(name, optarg, 10000000, &v, err) < 0 || v == 0) {
				if (!err->len)
					sbuf_addstr(err, "--high-water must be at least 1");
				return -1;
			}
			cfg->high_water = (unsigned)v;
			break;
		case OPT_DEP_TIMEOUT:
			if (parse_seconds(name, optarg, &cfg->dep_timeout, err) < 0)
				return -1;
			if (cfg->dep_timeout < 1) {
				sbuf_addstr(err, "--dependency-timeout must be at least "
					    "1 second");
				return -1;
			}
			break;
		case OPT_QUIET: cfg->quiet = true; break;
		case OPT_HELP: cfg->help = true; break;
		case OPT_VERSION: cfg->version = true; break;
		case OPT__COUNT: break;
		}
	}
	if (cfg->follow && pids_given) {
		sbuf_addstr(err, "--follow and --pids cannot be used together: "
			    "--follow names the process");
		return -1;
	}
	if (cfg->list && argc - optind > 1) {
		sbuf_addf(err, "unexpected argument \"%s\": --list takes one "
			  "host", argv[optind + 1]);
		return -1;
	}
	for (; optind < argc; optind++) {
		bool dup = false;
		for (int i = 0; i < cfg->nnodes; i++)
			dup |= !strcmp(cfg->nodes[i], argv[optind]);
		if (dup)
			continue;
		if (cfg->nnodes == BS_MAX_NODES) {
			sbuf_addf(err, "too many nodes: at most %d at once",
				  BS_MAX_NODES);
			return -1;
		}
		cfg->nodes[cfg->nnodes++] = argv[optind];
	}
	if (cfg->nnodes)
		cfg->node = cfg->nodes[0];
	if (cfg->cluster && !cfg->nnodes) {
		sbuf_addstr(err, "--cluster needs a node to start from, e.g. "
			    "beamscope --cluster myapp@host");
		return -1;
	}
	return 0;
}

void opts_release(struct config *cfg)
{
	pidsel_release(&cfg->pids);
}

void opts_help(FILE *f)
{
	fputs("usage: beamscope NODE [options]           watch NODE live, full screen\n"
	      "       beamscope NODE --batch [options]   trace NODE, write JSON lines\n"
	      "       beamscope NODE NODE... [options]   several nodes, one merged timeline\n"
	      "       beamscope --list [HOST]            list the nodes epmd knows\n"
	      "\n"
	      "NODE is NAME (on this host), NAME@HOST, or NAME@HOST.DOMAIN.\n"
	      "\n"
	      "options:\n", f);
	for (int i = 0; i < OPT__COUNT; i++) {
		char left[64];
		const struct opt_info *o = &opt_table[i];
		if (o->short_name)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", o->short_name,
				 o->name, o->arg ? " " : "", o->arg ? o->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->name,
				 o->arg ? " " : "", o->arg ? o->arg : "");
		fprintf(f, "  %-30s %s\n", left, o->help);
	}
	fputs("\nexamples:\n"
	      "  beamscope myapp\n"
	      "  beamscope myapp --batch -d 5 | jq .\n"
	      "  beamscope myapp@db1 --batch --pids my_server --events send,receive\n"
	      "\nSee 'man beamscope' for the JSON fields and exit codes.\n", f);
}
