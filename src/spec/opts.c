/*
 * opts: parse the command line with getopt_long, built from OPTIONS.  The
 * command line is read in two passes: the first collects the options, so
 * that the config file can be read (or skipped) before they are applied
 * over it.
 */
#include "opts.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "callpat.h"
#include "chart.h"
#include "conffile.h"
#include "event.h"
#include "term.h"
#include "xalloc.h"

const struct opt_info opt_table[OPT__COUNT] = {
#define X(id, l, s, a, c, h) [OPT_##id] = { l, s, a, c, h },
	OPTIONS(X)
#undef X
};

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* Plain decimal digits only: no sign, blank, base prefix or exponent. */
static int parse_ulong(const char *opt, const char *s, unsigned long max,
		       unsigned long *out, struct sbuf *err)
{
	char *end;
	errno = 0;
	unsigned long v = all_digits(s) ? strtoul(s, &end, 10) : 0;
	if (!all_digits(s) || errno || v > max) {
		sbuf_addf(err, "--%s \"%s\": expected a whole number from 0 to %lu",
			  opt, s, max);
		return -1;
	}
	*out = v;
	return 0;
}

/* Seconds: digits with at most one '.', as in 10, 0.5 or .5, from min to
 * max; no sign, exponent, hexadecimal, inf or nan. */
static int parse_seconds(const char *opt, const char *s, double min,
			 double max, double *out, struct sbuf *err)
{
	size_t digits = 0, dots = 0;
	for (const char *p = s; *p; p++) {
		if (*p >= '0' && *p <= '9')
			digits++;
		else if (*p == '.')
			dots++;
		else
			digits = 0, dots = 2;
	}
	double v = digits && dots <= 1 ? strtod(s, NULL) : -1;
	if (!(v >= 0)) {
		sbuf_addf(err, "--%s \"%s\": expected seconds, e.g. 10 or 0.5",
			  opt, s);
		return -1;
	}
	if (v < min || v > max) {
		sbuf_addf(err, "--%s \"%s\": expected seconds from %.10g to %.10g",
			  opt, s, min, max);
		return -1;
	}
	*out = v;
	return 0;
}

/* The field of an option without an argument. */
static bool *flag_of(struct config *cfg, enum opt_id id)
{
	switch (id) {
	case OPT_BATCH: return &cfg->batch;
	case OPT_COUNTS: return &cfg->counts;
	case OPT_LONGNAMES: return &cfg->longnames;
	case OPT_LIST: return &cfg->list;
	case OPT_CLUSTER: return &cfg->cluster;
	case OPT_RECONNECT: return &cfg->reconnect;
	case OPT_EXACT: return &cfg->exact;
	case OPT_TAKE_OVER: return &cfg->take_over;
	case OPT_LEGACY: return &cfg->legacy;
	case OPT_GEN_CALLS: return &cfg->gen_calls;
	case OPT_SUMMARY: return &cfg->summary;
	case OPT_QUIET: return &cfg->quiet;
	case OPT_ASCII: return &cfg->ascii;
	case OPT_NODE_STATS: return &cfg->node_stats;
	case OPT_PROFILE: return &cfg->profile;
	case OPT_NO_CONFIG: return &cfg->no_config;
	case OPT_HELP: return &cfg->help;
	case OPT_VERSION: return &cfg->version;
	default: return NULL;
	}
}

/* Apply an option that says what is traced: 0, -1 with err, or 1 if id is
 * not one of them. */
static int opt_apply_what(struct config *cfg, enum opt_id id, const char *arg,
			  struct sbuf *err)
{
	switch (id) {
	case OPT_EVENTS: {
		char bad[64];
		int k = event_kinds_parse(arg, bad, sizeof(bad));
		if (k < 0) {
			sbuf_addf(err, "--events: unknown kind \"%s\"; kinds "
				  "are %s", bad, event_kinds_list());
			return -1;
		}
		cfg->kinds = k | (cfg->kinds & KIND_CALL);
		cfg->events_set = true;
		break;
	}
	case OPT_PIDS:
		pidsel_release(&cfg->pids);
		if (pidsel_parse(arg, &cfg->pids, err) < 0)
			return -1;
		cfg->pids_arg = arg;
		cfg->follow = false;
		break;
	case OPT_CALL:
		if (cfg->ncalls == 32) {
			sbuf_addstr(err, "--call: at most 32 patterns");
			return -1;
		}
		if (!*arg || strlen(arg) > 900) {
			sbuf_addstr(err, "--call needs a pattern (at most 900 "
				    "characters), e.g. mod:fun/2");
			return -1;
		}
		{
			/* the Elixir form is turned into Erlang here: check it now */
			struct sbuf erl = SBUF_INIT;
			int r = callpat_erlang(arg, &erl, err);
			sbuf_release(&erl);
			if (r < 0)
				return -1;
		}
		cfg->calls[cfg->ncalls++] = arg;
		cfg->kinds |= KIND_CALL;
		break;
	case OPT_MATCH:
		/* compiled on the target, which says what is wrong with it */
		if (!*arg || strlen(arg) > BS_MAX_MATCH) {
			sbuf_addf(err, "--match needs a message pattern (at most "
				  "%d characters), e.g. \"{get, _}\"",
				  BS_MAX_MATCH);
			return -1;
		}
		cfg->match = arg;
		break;
	case OPT_FOLLOW:
		pidsel_release(&cfg->pids);
		if (pidsel_parse(arg, &cfg->pids, err) < 0)
			return -1;
		if (cfg->pids.mode != SEL_LIST || cfg->pids.n != 1) {
			sbuf_addstr(err, "--follow takes one process: a pid "
				    "<0.123.0> or a registered name");
			return -1;
		}
		cfg->pids_arg = arg;
		cfg->follow = true;
		break;
	default:
		return 1;
	}
	return 0;
}

/* Apply an option that says how to reach the node: 0, -1 with err, or 1
 * if id is not one of them. */
static int opt_apply_reach(struct config *cfg, enum opt_id id,
			   const char *arg, struct sbuf *err)
{
	unsigned long v;
	switch (id) {
	case OPT_COOKIE_FILE: cfg->cookie_file = arg; return 0;
	case OPT_COOKIE: cfg->cookie = arg; return 0;
	case OPT_PORT:
		if (parse_ulong("port", arg, 65535, &v, err) < 0 || v == 0) {
			if (!err->len)
				sbuf_addstr(err, "--port: a port from 1 to 65535");
			return -1;
		}
		cfg->port = (int)v;
		return 0;
	case OPT_SSL_DIST_OPTFILE: cfg->ssl_optfile = arg; return 0;
	case OPT_TLS_CERT: cfg->tls_cert = arg; return 0;
	case OPT_TLS_KEY: cfg->tls_key = arg; return 0;
	case OPT_TLS_CA: cfg->tls_ca = arg; return 0;
	case OPT_TLS_VERIFY:
		if (strcmp(arg, "verify_peer") && strcmp(arg, "verify_none")) {
			sbuf_addf(err, "--tls-verify \"%s\": verify_peer or "
				  "verify_none", arg);
			return -1;
		}
		cfg->tls_verify = strcmp(arg, "verify_none") ? 1 : 2;
		return 0;
	default:
		return 1;
	}
}

/* Apply an option of the profiler: 0, -1 with err, or 1 if id is not one
 * of them. */
static int opt_apply_profile(struct config *cfg, enum opt_id id,
			     const char *arg, struct sbuf *err)
{
	const char *name = opt_table[id].name;
	unsigned long v;
	switch (id) {
	case OPT_PROFILE_OUT:
		cfg->profile_out = arg;
		cfg->profile = true;
		return 0;
	case OPT_PROFILE_RATE:
		if (parse_ulong(name, arg, 1000, &v, err) < 0 || v == 0) {
			if (!err->len)
				sbuf_addstr(err, "--profile-rate must be at least 1");
			return -1;
		}
		cfg->profile_rate = (int)v;
		return 0;
	case OPT_PROFILE_BUDGET:
		if (parse_ulong(name, arg, 50, &v, err) < 0 || v == 0) {
			if (!err->len)
				sbuf_addstr(err, "--profile-budget must be at least 1");
			return -1;
		}
		cfg->profile_budget = (int)v;
		return 0;
	case OPT_PROFILE_CALLS:
		if (!arg[0] || arg[0] == ',' || arg[strlen(arg) - 1] == ',' ||
		    strstr(arg, ",,")) {
			sbuf_addstr(err, "--profile-calls: name functions: mod, "
				    "mod:fun or mod:fun/N, comma-separated");
			return -1;
		}
		cfg->profile_calls = arg;
		return 0;
	case OPT_ALARM:
		if (alarm_spec_parse(&cfg->alarms, arg, err) < 0)
			return -1;
		cfg->alarm = alarm_spec_any(&cfg->alarms);
		return 0;
	default:
		return 1;
	}
}

/* Apply one option with its argument (NULL for a flag). */
static int opt_apply(struct config *cfg, enum opt_id id, const char *arg,
		     struct sbuf *err)
{
	const char *name = opt_table[id].name;
	unsigned long v;
	int what = opt_apply_what(cfg, id, arg, err);
	if (what <= 0)
		return what;
	what = opt_apply_profile(cfg, id, arg, err);
	if (what <= 0)
		return what;
	what = opt_apply_reach(cfg, id, arg, err);
	if (what <= 0)
		return what;

	switch (id) {
	case OPT_OUTPUT: cfg->output = arg; break;
	case OPT_OPEN: cfg->open = arg; break;
	case OPT_RECORD: cfg->record = arg; break;
	case OPT_DURATION:
		if (parse_seconds(name, arg, 0, BS_MAX_SECONDS, &cfg->duration,
				  err) < 0)
			return -1;
		cfg->duration_set = true;
		break;
	case OPT_MAX_EVENTS:
		if (parse_ulong(name, arg, ULONG_MAX / 2, &v, err) < 0)
			return -1;
		cfg->max_events = v;
		cfg->max_events_set = true;
		break;
	case OPT_RING:
		if (parse_ulong(name, arg, 100000000, &v, err) < 0 || v < 100) {
			if (!err->len)
				sbuf_addstr(err, "--ring must be at least 100");
			return -1;
		}
		cfg->ring = v;
		break;
	case OPT_PAYLOAD:
		if (parse_ulong(name, arg, 65536, &v, err) < 0)
			return -1;
		cfg->payload_bytes = (unsigned)v;
		break;
	case OPT_RATE:
		if (parse_ulong(name, arg, 100000000, &v, err) < 0)
			return -1;
		cfg->rate = v;
		break;
	case OPT_CHART: {
		int f = chart_format_parse(arg);
		if (f < 0) {
			sbuf_addf(err, "--chart \"%s\": plantuml or mermaid", arg);
			return -1;
		}
		cfg->chart = f + 1;
		break;
	}
	case OPT_ON_LIMIT:
		if (!strcmp(arg, "stop") || !strcmp(arg, "shed")) {
			cfg->shed = !strcmp(arg, "shed");
			break;
		}
		sbuf_addf(err, "--on-limit \"%s\": stop or shed", arg);
		return -1;
	case OPT_SYNTAX:
		if (!strcmp(arg, "auto") || !strcmp(arg, "erlang") ||
		    !strcmp(arg, "elixir")) {
			cfg->syntax = !strcmp(arg, "auto") ? -1 :
				      !strcmp(arg, "elixir") ? TERM_ELIXIR : TERM_ERLANG;
			break;
		}
		sbuf_addf(err, "--syntax \"%s\": auto, erlang or elixir", arg);
		return -1;
	case OPT_INTERVAL:
		if (parse_seconds(name, arg, 0.05, BS_MAX_SECONDS, &cfg->interval,
				  err) < 0)
			return -1;
		break;
	case OPT_SLOWER_THAN:
		if (parse_ulong(name, arg, 1000000000, &v, err) < 0)
			return -1;
		cfg->slower_than_ms = (double)v;
		cfg->gen_calls = true;
		break;
	case OPT_STUCK:
		if (parse_seconds(name, arg, 0.001, BS_MAX_SECONDS, &cfg->stuck,
				  err) < 0)
			return -1;
		break;
	case OPT_WORKERS:
		if (parse_ulong(name, arg, 1024, &v, err) < 0)
			return -1;
		cfg->workers = (int)v;
		break;
	case OPT_HIGH_WATER:
		if (parse_ulong(name, arg, 10000000, &v, err) < 0 || v == 0) {
			if (!err->len)
				sbuf_addstr(err, "--high-water must be at least 1");
			return -1;
		}
		cfg->high_water = (unsigned)v;
		break;
	case OPT_DEP_TIMEOUT:
		/* the agent waits for it in one receive ... after, which
		 * takes at most 2^32 - 1 ms */
		if (parse_seconds(name, arg, 1, BS_MAX_DEP_TIMEOUT,
				  &cfg->dep_timeout, err) < 0)
			return -1;
		break;
	default: {
		bool *flag = flag_of(cfg, id);
		if (flag)
			*flag = true;
		break;
	}
	}
	return 0;
}

int opts_set_conf(struct config *cfg, const char *name, const char *value,
		  struct sbuf *err)
{
	int id = -1;
	for (int i = 0; i < OPT__COUNT; i++)
		if (!strcmp(opt_table[i].name, name))
			id = i;
	if (id < 0) {
		sbuf_addf(err, "unknown option \"%s\"; the options are those of "
			  "beamscope --help, without the dashes", name);
		return -1;
	}
	if (!opt_table[id].conf) {
		if (id == OPT_COOKIE)
			sbuf_addstr(err, "\"cookie\" cannot be set here; put the "
				    "cookie in a file (chmod 400) and set "
				    "cookie-file");
		else
			sbuf_addf(err, "\"%s\" is for the command line only; "
				  "remove the line", name);
		return -1;
	}
	if (opt_table[id].arg && !strcmp(opt_table[id].arg, "FILE") &&
	    !strncmp(value, "~/", 2) && getenv("HOME")) {
		/* no shell expands it here */
		struct sbuf path = SBUF_INIT;
		sbuf_addf(&path, "%s%s", getenv("HOME"), value + 1);
		free(cfg->conf_file_arg);
		cfg->conf_file_arg = path.buf;
		value = path.buf;
	}
	if (opt_table[id].arg)
		return opt_apply(cfg, (enum opt_id)id, value, err);
	bool *flag = flag_of(cfg, (enum opt_id)id);
	if (!strcmp(value, "true") || !strcmp(value, "yes"))
		*flag = true;
	else if (!strcmp(value, "false") || !strcmp(value, "no"))
		*flag = false;
	else {
		sbuf_addf(err, "%s \"%s\": true or false", name, value);
		return -1;
	}
	return 0;
}

struct opt_use {
	enum opt_id id;
	const char *arg;
};

/* First pass: the options in the order given, and the NODE.  0 or -1. */
static int collect(int argc, char **argv, struct config *cfg,
		   struct opt_use *uses, int *nuses, const char **node,
		   struct sbuf *err)
{
	struct option longopts[OPT__COUNT + 1];
	char shortopts[3 * OPT__COUNT + 2];
	size_t sp = 0;

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

	bool pids = false, follow = false;
	opterr = 0;
	optind = 0;   /* GNU: start afresh, even after a cluster left half read */
	*nuses = 0;
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
			else if (optopt >= 1000)   /* --flag=VALUE */
				sbuf_addf(err, "option \"--%s\" takes no value; "
					  "see beamscope --help",
					  opt_table[optopt - 1000].name);
			else if (optopt > ' ' && optopt < 0x7f)
				sbuf_addf(err, "unknown option \"-%c\"; see "
					  "beamscope --help", optopt);
			else
				sbuf_addf(err, "unknown option \"%s\"; see "
					  "beamscope --help", what);
			return -1;
		} else {
			for (int i = 0; i < OPT__COUNT; i++)
				if (opt_table[i].short_name == c)
					id = i;
		}
		pids |= id == OPT_PIDS;
		follow |= id == OPT_FOLLOW;
		const char *arg = optarg;
		if (id == OPT_COOKIE && optarg) {
			/* keep a copy, and blank the original so that ps and
			 * /proc/PID/cmdline no longer show the cookie */
			if (cfg->cookie_owned) {
				explicit_bzero(cfg->cookie_owned,
					       strlen(cfg->cookie_owned));
				free(cfg->cookie_owned);
			}
			cfg->cookie_owned = xstrdup(optarg);
			memset(optarg, 'x', strlen(optarg));
			arg = cfg->cookie_owned;
		}
		uses[(*nuses)++] = (struct opt_use){ (enum opt_id)id, arg };
	}
	if (follow && pids) {
		sbuf_addstr(err, "--follow and --pids cannot be used together: "
			    "--follow names the process");
		return -1;
	}
	*node = NULL;
	cfg->nnodes = 0;
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
		*node = cfg->nodes[0];
	return 0;
}

int opts_parse(int argc, char **argv, const char *conf_path,
	       struct config *cfg, struct sbuf *err)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->kinds = KIND_DEFAULT;
	cfg->pids.mode = SEL_ALL;
	cfg->duration = 10;
	cfg->max_events = 100000;
	cfg->payload_bytes = 256;
	cfg->high_water = 20000;
	cfg->dep_timeout = 30;
	cfg->interval = 1;
	cfg->syntax = -1;
	cfg->slower_than_ms = -1;
	cfg->stuck = 5;
	cfg->profile_rate = 100;
	cfg->profile_budget = 1;

	/* "-qqq" is three options in one argument: at most one a byte */
	size_t most = 1;
	for (int i = 0; i < argc; i++)
		most += strlen(argv[i]) + 1;
	struct opt_use *uses = xcalloc(most, sizeof(*uses));
	int nuses, rc = -1;
	if (collect(argc, argv, cfg, uses, &nuses, &cfg->node, err) < 0)
		goto out;

	bool read_conf = conf_path && cfg->node;
	for (int i = 0; i < nuses; i++)
		if (uses[i].id == OPT_NO_CONFIG || uses[i].id == OPT_LIST ||
		    uses[i].id == OPT_HELP || uses[i].id == OPT_VERSION)
			read_conf = false;
	if (read_conf && conffile_read(conf_path, cfg, err) < 0)
		goto out;

	for (int i = 0; i < nuses; i++)
		if (opt_apply(cfg, uses[i].id, uses[i].arg, err) < 0)
			goto out;
	if (cfg->list && cfg->nnodes > 1) {
		sbuf_addf(err, "unexpected argument \"%s\": --list takes one "
			  "host", cfg->nodes[1]);
		goto out;
	}
	if (cfg->open && !cfg->events_set)
		cfg->kinds = KIND_ALL;   /* a recording: whatever it holds */
	if (cfg->open && cfg->nnodes) {
		sbuf_addf(err, "unexpected argument \"%s\": --open replays a "
			  "file; give no node with it", cfg->nodes[0]);
		goto out;
	}
	if (cfg->open && (cfg->record || cfg->cluster || cfg->match)) {
		sbuf_addf(err, "--%s needs a live node; --open replays a file",
			  cfg->record ? "record" : cfg->cluster ? "cluster" :
			  "match");
		goto out;
	}
	if (cfg->record && cfg->batch) {
		sbuf_addstr(err, "--record is for the view; in batch mode -o FILE "
			    "writes the same recording");
		goto out;
	}
	if (cfg->chart && (!cfg->batch || cfg->pids.mode != SEL_LIST ||
			   cfg->counts)) {
		sbuf_addstr(err, cfg->batch && !cfg->counts ? "--chart needs the "
			    "processes to chart: --pids a,b,c or --follow PID|NAME" :
			    "--chart is for batch mode, without --counts: beamscope "
			    "NODE --batch --pids a,b --chart mermaid; in the view, s "
			    "charts and :chart-export writes");
		goto out;
	}
	if (cfg->profile && (!cfg->batch || cfg->open ||
			     cfg->pids.mode != SEL_LIST)) {
		sbuf_addstr(err, !cfg->batch ? "--profile is for batch mode; in "
			    "the view, :profile samples the selected process" :
			    cfg->open ? "--profile needs a live node; --open "
			    "replays a file" : "--profile samples the processes "
			    "named: --pids a,b or --follow PID|NAME");
		goto out;
	}
	if (cfg->profile_calls && (!cfg->batch || cfg->open)) {
		sbuf_addstr(err, !cfg->batch ? "--profile-calls is for batch "
			    "mode; in the view, :profile calls MOD times the calls "
			    "of a module" : "--profile-calls needs a live node; "
			    "--open replays a file");
		goto out;
	}
	if ((cfg->profile || cfg->profile_calls) && !cfg->events_set &&
	    !cfg->chart)
		cfg->counts = true;   /* the processes' counts, cheaply */
	if (cfg->port && (cfg->nnodes != 1 || cfg->list || cfg->cluster)) {
		sbuf_addstr(err, "--port is the port of the one node given; for "
			    "more nodes, give each as NAME@HOST:PORT");
		goto out;
	}
	if (cfg->cluster && !cfg->nnodes) {
		sbuf_addstr(err, "--cluster needs a node to start from, e.g. "
			    "beamscope --cluster myapp@host --batch");
		goto out;
	}
	rc = 0;
out:
	free(uses);
	return rc;
}

void opts_release(struct config *cfg)
{
	pidsel_release(&cfg->pids);
	free(cfg->conf_text);
	free(cfg->conf_file_arg);
	cfg->conf_text = cfg->conf_file_arg = NULL;
	if (cfg->cookie_owned) {
		explicit_bzero(cfg->cookie_owned, strlen(cfg->cookie_owned));
		free(cfg->cookie_owned);
		cfg->cookie_owned = NULL;
		cfg->cookie = NULL;
	}
}

void opts_help(FILE *f)
{
	fputs("usage: beamscope NODE [options]           watch NODE live, full screen\n"
	      "       beamscope NODE --batch [options]   trace NODE, write JSON lines\n"
	      "       beamscope NODE NODE... [--batch]   several nodes, one merged timeline\n"
	      "       beamscope [--list [HOST]]          the nodes epmd knows\n"
	      "\n"
	      "NODE is NAME (on this host), NAME@HOST, or NAME@HOST.DOMAIN.\n"
	      "\n"
	      "examples:\n"
	      "  beamscope myapp                           the live view; ? for help, q quits\n"
	      "  beamscope myapp --batch -d 5 | jq .       five seconds of events as JSON\n"
	      "  beamscope myapp --batch --pids my_server --events send,receive\n"
	      "  beamscope myapp --batch --follow my_sup   a process and all it spawns\n"
	      "  beamscope myapp --batch --call 'cache:get(K, _) when K > 9 -> return'\n"
	      "\n"
	      "options:\n", f);
	char left[OPT__COUNT][64];
	int width = 0;
	for (int i = 0; i < OPT__COUNT; i++) {
		const struct opt_info *o = &opt_table[i];
		int n;
		if (o->short_name)
			n = snprintf(left[i], sizeof(left[i]), "-%c, --%s%s%s",
				     o->short_name, o->name, o->arg ? " " : "",
				     o->arg ? o->arg : "");
		else
			n = snprintf(left[i], sizeof(left[i]), "    --%s%s%s",
				     o->name, o->arg ? " " : "",
				     o->arg ? o->arg : "");
		if (n > width)
			width = n;
	}
	for (int i = 0; i < OPT__COUNT; i++)
		fprintf(f, "  %-*s  %s\n", width, left[i], opt_table[i].help);
	fputs("\nDefaults for the options can be kept in "
	      "~/.config/beamscope/config.\n"
	      "man beamscope: every option in full, the keys and commands of the "
	      "view,\nthe JSON fields, the config file and the exit codes.\n", f);
}
