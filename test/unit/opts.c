/* Unit tests: options, --pids, --events and node names. */
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
	return opts_parse(argc, argv, cfg, err);
}

int main(void)
{
	struct config cfg;
	struct sbuf err = SBUF_INIT;
	struct node_name nn;

	plan(24);

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
	ok(parse(&cfg, &err, "a", "b", NULL) < 0, "two nodes refused");
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

	int seen = 0;
	for (int i = 0; i < OPT__COUNT; i++)
		seen += opt_table[i].help && opt_table[i].help[0];
	is_num(seen, OPT__COUNT, "every option has help text");

	sbuf_release(&err);
	return done_testing();
}
