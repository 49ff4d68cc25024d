/* Unit tests: options, --pids, --events, node names and the config file. */
#include <stdlib.h>
#include <unistd.h>

#include "conffile.h"
#include "event.h"
#include "node.h"
#include "opts.h"
#include "tap.h"

static int parse(struct config *cfg, struct sbuf *err, const char *a1,
		 const char *a2, const char *a3)
{
	char *argv[] = { "beamscope", (char *)a1, (char *)a2, (char *)a3, NULL };
	int argc = 1 + (a1 != NULL) + (a2 != NULL) + (a3 != NULL);
	sbuf_reset(err);
	return opts_parse(argc, argv, NULL, cfg, err);
}

static char conf_path[64];

/* Write text as the config file; parse a1 a2 a3 over it. */
static int parse_conf(struct config *cfg, struct sbuf *err, const char *text,
		      const char *a1, const char *a2, const char *a3)
{
	FILE *f = fopen(conf_path, "w");
	fputs(text, f);
	fclose(f);
	char *argv[] = { "beamscope", (char *)a1, (char *)a2, (char *)a3, NULL };
	int argc = 1 + (a1 != NULL) + (a2 != NULL) + (a3 != NULL);
	sbuf_reset(err);
	return opts_parse(argc, argv, conf_path, cfg, err);
}

static void test_conffile(void)
{
	struct config cfg;
	struct sbuf err = SBUF_INIT;
	char want[128];

	snprintf(conf_path, sizeof(conf_path), "/tmp/bs-conf-%ld", (long)getpid());
	ok(parse_conf(&cfg, &err, "# defaults\n\n  duration = 30 \n"
		      "events=send,gc\nquiet = true\npids = new\n", "x", NULL,
		      NULL) == 0 && cfg.duration == 30 && cfg.duration_set &&
	   cfg.kinds == (KIND_SEND | KIND_GC) && cfg.quiet &&
	   cfg.pids.mode == SEL_NEW && !strcmp(cfg.pids_arg, "new"),
	   "config lines set options; comments and blanks skipped");
	opts_release(&cfg);
	ok(parse_conf(&cfg, &err, "duration = 30\nquiet = true\nquiet = no\n",
		      "x", "-d", "2") == 0 && cfg.duration == 2 && !cfg.quiet,
	   "the command line and later lines override");
	opts_release(&cfg);
	ok(parse_conf(&cfg, &err, "pids = new\n", "x", "--follow", "sink") == 0 &&
	   cfg.follow && cfg.pids.mode == SEL_LIST, "--follow overrides pids");
	opts_release(&cfg);
	ok(parse_conf(&cfg, &err, "duration = 30\n", "x", "--no-config", NULL) == 0 &&
	   cfg.duration == 10, "--no-config skips the file");
	opts_release(&cfg);
	ok(parse_conf(&cfg, &err, "durtion = 30\n", "--help", NULL, NULL) == 0 &&
	   cfg.help, "--help works whatever the file says");
	opts_release(&cfg);

	snprintf(want, sizeof(want), "%s:3: unknown option \"durtion\"", conf_path);
	ok(parse_conf(&cfg, &err, "# a\nduration = 3\ndurtion = 30\n", "x", NULL,
		      NULL) < 0 && !strncmp(sbuf_str(&err), want, strlen(want)),
	   "unknown key: file and line named");
	opts_release(&cfg);
	snprintf(want, sizeof(want), "%s:1: --duration \"soon\"", conf_path);
	ok(parse_conf(&cfg, &err, "duration = soon\n", "x", NULL, NULL) < 0 &&
	   !strncmp(sbuf_str(&err), want, strlen(want)), "bad value: file and line");
	opts_release(&cfg);
	snprintf(want, sizeof(want), "%s:2: expected \"option = value\"", conf_path);
	ok(parse_conf(&cfg, &err, "\nquiet\n", "x", NULL, NULL) < 0 &&
	   !strncmp(sbuf_str(&err), want, strlen(want)), "a line without =");
	opts_release(&cfg);
	ok(parse_conf(&cfg, &err, "call = m:f/1\n", "x", NULL, NULL) < 0 &&
	   strstr(sbuf_str(&err), "command line only"), "command-line options refused");
	opts_release(&cfg);
	ok(parse_conf(&cfg, &err, "cookie = secret\n", "x", NULL, NULL) < 0 &&
	   strstr(sbuf_str(&err), "cookie-file") && !strstr(sbuf_str(&err), "secret"),
	   "a cookie is refused, its value never shown");
	opts_release(&cfg);
	setenv("HOME", "/home/u", 1);
	ok(parse_conf(&cfg, &err, "cookie-file = ~/c\n", "x", NULL, NULL) == 0 &&
	   !strcmp(cfg.cookie_file, "/home/u/c"), "~/ in a file name is expanded");
	opts_release(&cfg);
	ok(parse_conf(&cfg, &err, "quiet = maybe\n", "x", NULL, NULL) < 0 &&
	   strstr(sbuf_str(&err), "true or false"), "flags take true or false");
	opts_release(&cfg);
	unlink(conf_path);
	ok(parse_conf(&cfg, &err, "", "x", NULL, NULL) == 0, "an empty file is fine");
	opts_release(&cfg);
	unlink(conf_path);
	char *argv[] = { "beamscope", "x", NULL };
	sbuf_reset(&err);
	ok(opts_parse(2, argv, conf_path, &cfg, &err) == 0 && cfg.duration == 10,
	   "a missing file is fine");
	opts_release(&cfg);

	setenv("XDG_CONFIG_HOME", "/xdg", 1);
	setenv("HOME", "/home/u", 1);
	ok(conffile_path(want, sizeof(want)) == 0 &&
	   !strcmp(want, "/xdg/beamscope/config"), "XDG_CONFIG_HOME first");
	setenv("XDG_CONFIG_HOME", "rel", 1);
	ok(conffile_path(want, sizeof(want)) == 0 &&
	   !strcmp(want, "/home/u/.config/beamscope/config"),
	   "else ~/.config (a relative XDG_CONFIG_HOME is ignored)");
	sbuf_release(&err);
}

int main(void)
{
	struct config cfg;
	struct sbuf err = SBUF_INIT;
	struct node_name nn;

	plan(46);

	ok(parse(&cfg, &err, "demo", "--batch", NULL) == 0, "plain batch parses");
	ok(cfg.kinds == KIND_DEFAULT && cfg.duration == 10 &&
	   cfg.max_events == 100000 && cfg.payload_bytes == 256 &&
	   cfg.pids.mode == SEL_ALL, "defaults are the documented ones");
	opts_release(&cfg);

	ok(parse(&cfg, &err, "--events=send,link", "x", NULL) == 0 &&
	   cfg.kinds == (KIND_SEND | KIND_LINK), "--events list");
	opts_release(&cfg);
	ok(parse(&cfg, &err, "--events=send,sned", "x", NULL) < 0 &&
	   strstr(sbuf_str(&err), "\"sned\""), "unknown kind named in the error");
	opts_release(&cfg);
	ok(parse(&cfg, &err, "--duration=abc", "x", NULL) < 0, "bad duration refused");
	opts_release(&cfg);
	ok(parse(&cfg, &err, "--max-events=-3", "x", NULL) < 0, "negative count refused");
	opts_release(&cfg);
	ok(parse(&cfg, &err, "--bogus", "x", NULL) < 0 &&
	   strstr(sbuf_str(&err), "--bogus"), "unknown option named");
	opts_release(&cfg);
	ok(parse(&cfg, &err, "a", "b", "a") == 0 && cfg.nnodes == 2 &&
	   !strcmp(cfg.nodes[1], "b") && !strcmp(cfg.node, "a"),
	   "several nodes, each once");
	opts_release(&cfg);
	ok(parse(&cfg, &err, "--cluster", NULL, NULL) < 0 &&
	   strstr(sbuf_str(&err), "--cluster"), "--cluster needs a node");
	opts_release(&cfg);
	ok(parse(&cfg, &err, "--list", "h1", "h2") < 0, "--list takes one host");
	opts_release(&cfg);
	ok(parse(&cfg, &err, "x", "-o", NULL) < 0 &&
	   strstr(sbuf_str(&err), "needs an argument"), "missing argument");
	opts_release(&cfg);
	ok(parse(&cfg, &err, "x", "--duration", "0.5") == 0 && cfg.duration == 0.5,
	   "fractional seconds");
	opts_release(&cfg);

	ok(parse(&cfg, &err, "x", "--pids=<0.123.0>,sink", NULL) == 0 &&
	   cfg.pids.mode == SEL_LIST && cfg.pids.n == 2 &&
	   cfg.pids.items[0].is_pid && cfg.pids.items[0].num == 123 &&
	   !strcmp(cfg.pids.items[1].name, "sink"), "--pids list of pid and name");
	opts_release(&cfg);
	ok(parse(&cfg, &err, "x", "--pids=Elixir.MyApp.Worker", NULL) == 0 &&
	   !strcmp(cfg.pids.items[0].name, "Elixir.MyApp.Worker"),
	   "Elixir names accepted");
	opts_release(&cfg);
	ok(parse(&cfg, &err, "x", "--pids=<1.2.3>", NULL) < 0 &&
	   strstr(sbuf_str(&err), "another node"), "remote pid refused");
	opts_release(&cfg);
	ok(parse(&cfg, &err, "x", "--pids=<0.1>", NULL) < 0, "malformed pid refused");
	opts_release(&cfg);
	ok(parse(&cfg, &err, "x", "--pids=all,sink", NULL) < 0, "all cannot be mixed");
	opts_release(&cfg);
	ok(parse(&cfg, &err, "x", "--pids=new", NULL) == 0 && cfg.pids.mode == SEL_NEW,
	   "--pids new");
	opts_release(&cfg);

	sbuf_reset(&err);
	ok(node_name_parse("demo@box", false, &nn, &err) == 0 && !nn.longnames &&
	   !strcmp(nn.full, "demo@box"), "short name with host");
	ok(node_name_parse("demo@box.example.com", false, &nn, &err) == 0 &&
	   nn.longnames, "dotted host means long names");
	ok(node_name_parse("demo", false, &nn, &err) == 0 && nn.host[0] &&
	   !strchr(nn.host, '.'), "bare name gets this host");
	ok(node_name_parse("demo", true, &nn, &err) == 0 && strchr(nn.host, '.'),
	   "bare name with --longnames gets a dotted host");
	ok(node_name_parse("de mo@h", false, &nn, &err) < 0, "space refused");
	ok(node_name_parse("@h", false, &nn, &err) < 0, "empty name refused");
	ok(node_name_parse("a@", false, &nn, &err) < 0, "empty host refused");
	ok(node_name_parse("demo@box:9100", false, &nn, &err) == 0 &&
	   nn.port == 9100 && !strcmp(nn.host, "box") &&
	   !strcmp(nn.full, "demo@box") && !nn.longnames, "HOST:PORT");
	ok(node_name_parse("demo@::1", false, &nn, &err) == 0 && nn.port == 0 &&
	   !strcmp(nn.host, "::1") && nn.longnames,
	   "an IPv6 address: no port, a long name");
	ok(node_name_parse("demo@10.0.0.1:4370", false, &nn, &err) == 0 &&
	   nn.port == 4370 && !strcmp(nn.full, "demo@10.0.0.1") && nn.longnames,
	   "an IPv4 address and a port");
	ok(node_name_parse("demo@box:0", false, &nn, &err) < 0 &&
	   node_name_parse("demo@box:65536", false, &nn, &err) < 0 &&
	   node_name_parse("demo@box:", false, &nn, &err) < 0 &&
	   node_name_parse("demo@:9100", false, &nn, &err) < 0 &&
	   node_name_parse("demo@box:91x", false, &nn, &err) < 0,
	   "bad ports refused");

	int seen = 0;
	for (int i = 0; i < OPT__COUNT; i++)
		seen += opt_table[i].help && opt_table[i].help[0];
	is_num(seen, OPT__COUNT, "every option has help text");

	test_conffile();

	sbuf_release(&err);
	return done_testing();
}
