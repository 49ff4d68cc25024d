/*
 * Unit tests: what each front end asks of the engine from the options
 * (session_spec_from_config), and the view's changes while tracing: call
 * patterns and :match tried at the next start and taken back if refused.
 */
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "session_priv.h"
#include "tap.h"

static int parse(struct config *cfg, const char *a1, const char *a2,
		 const char *a3, const char *a4)
{
	char *argv[] = { "beamscope", (char *)a1, (char *)a2, (char *)a3,
			 (char *)a4, NULL };
	int argc = 1;
	while (argv[argc])
		argc++;
	struct sbuf err = SBUF_INIT;
	int rc = opts_parse(argc, argv, NULL, cfg, &err);
	if (rc != 0)
		printf("# opts_parse: %s\n", sbuf_str(&err));
	sbuf_release(&err);
	return rc;
}

static void test_batch(void)
{
	struct config cfg;
	struct session_spec sp;

	ok(parse(&cfg, "n@h", "--batch", NULL, NULL) == 0, "batch: parsed");
	session_spec_from_config(&sp, &cfg, SESSION_BATCH);
	is_num(sp.kinds, KIND_DEFAULT, "batch: the default kinds");
	is(sp.pids, "all", "batch: every process");
	ok(sp.ship_all && !sp.counts_only && !sp.gen_calls,
	   "batch: every event shipped, no pairing");
	ok(sp.max_events == cfg.max_events && sp.duration == cfg.duration,
	   "batch: the limits as given");
	opts_release(&cfg);

	ok(parse(&cfg, "n@h", "--batch", "--counts", NULL) == 0, "counts: parsed");
	session_spec_from_config(&sp, &cfg, SESSION_BATCH);
	ok(sp.counts_only && !sp.ship_all && sp.max_events == 0,
	   "--counts: counted, nothing shipped, no event limit");
	opts_release(&cfg);

	ok(parse(&cfg, "n@h", "--batch", "--gen-calls", NULL) == 0,
	   "gen calls: parsed");
	session_spec_from_config(&sp, &cfg, SESSION_BATCH);
	ok(sp.gen_calls && (sp.kinds & KIND_GENCALL) && !sp.ship_all &&
	   sp.max_events == 0,
	   "--gen-calls alone: paired, every process counted, no limit");
	opts_release(&cfg);

	ok(parse(&cfg, "n@h", "--batch", "--gen-calls", "--events=send") == 0,
	   "gen calls and events: parsed");
	session_spec_from_config(&sp, &cfg, SESSION_BATCH);
	ok(sp.gen_calls && sp.ship_all && sp.kinds == (KIND_SEND | KIND_GENCALL),
	   "--gen-calls with --events: the events shipped too");
	opts_release(&cfg);
}

static void test_view(void)
{
	struct config cfg;
	struct session_spec sp;

	ok(parse(&cfg, "n@h", NULL, NULL, NULL) == 0, "view: parsed");
	session_spec_from_config(&sp, &cfg, SESSION_VIEW);
	is_num(sp.kinds, KIND_VIEW_DEFAULT, "view: receive timeouts too");
	ok(sp.duration == 600 && sp.max_events == 0,
	   "view: ten minutes, no event limit");
	ok(!sp.gen_calls && !sp.ship_all && !sp.counts_only,
	   "view: no pairing until asked, processes in focus shipped");
	opts_release(&cfg);

	ok(parse(&cfg, "n@h", "--events=send", "--gen-calls", "-d5") == 0,
	   "view with options: parsed");
	session_spec_from_config(&sp, &cfg, SESSION_VIEW);
	ok(sp.kinds == (KIND_SEND | KIND_GENCALL) && sp.gen_calls &&
	   sp.duration == 5, "view: --events, --gen-calls and -d as given");
	opts_release(&cfg);
}

static struct session s;   /* large: not on the stack */

static void test_changes(void)
{
	struct config cfg;
	struct sbuf why = SBUF_INIT;

	ok(parse(&cfg, "n@h", "--match", "{a, _}", NULL) == 0, "match: parsed");
	memset(&s, 0, sizeof(s));
	session_spec_from_config(&s.spec, &cfg, SESSION_VIEW);
	const struct session_spec *sp = session_spec(&s);

	ok(session_add_call(&s, "Shop.Cache.get -> often", &why) == -1 &&
	   why.len > 0 && sp->ncalls == 0 && !(sp->kinds & KIND_CALL),
	   "a call pattern that does not parse: refused with why, nothing kept");
	printf("# why: %s\n", sbuf_str(&why));
	sbuf_reset(&why);
	ok(!session_take_back(&s), "nothing to take back");

	ok(session_add_call(&s, "lists:seq/2", &why) == 0 && sp->ncalls == 1 &&
	   (sp->kinds & KIND_CALL), "a call pattern: kept for the next start");
	ok(session_take_back(&s) && sp->ncalls == 0 && !(sp->kinds & KIND_CALL),
	   "refused at its start: taken back, and the call kind with it");
	ok(!session_take_back(&s), "taken back once");

	ok(session_add_call(&s, "lists:seq/2", &why) == 0, "a call pattern again");
	s.trial = SESSION_TRIAL_NONE;   /* its start went well */
	ok(session_add_call(&s, "lists:reverse/1", &why) == 0 &&
	   session_take_back(&s) && sp->ncalls == 1 &&
	   !strcmp(sp->calls[0], "lists:seq/2") && (sp->kinds & KIND_CALL),
	   "a second refused: the first stays, and the call kind");
	ok(session_remove_call(&s, "lists:reverse/1") == -1 && sp->ncalls == 1,
	   "removing one never added: -1");
	ok(session_remove_call(&s, "lists:seq/2") == 0 && sp->ncalls == 0 &&
	   !(sp->kinds & KIND_CALL), "removing the last: no call kind");

	int added = 0;
	for (int i = 0; i < SESSION_CALLS_MAX + 1; i++)
		added += session_add_call(&s, "lists:seq/2", &why) == 0;
	is_num(added, SESSION_CALLS_MAX, "at most SESSION_CALLS_MAX patterns");
	is(sbuf_str(&why), "at most 32 call patterns; :uncall one first",
	   "the one too many: why");
	sbuf_reset(&why);
	while (sp->ncalls)
		session_remove_call(&s, sp->calls[0]);
	s.trial = SESSION_TRIAL_NONE;

	is(sp->match, "{a, _}", "--match in the spec");
	session_set_match(&s, "{b, _}");
	is(sp->match, "{b, _}", "a new :match for the next start");
	ok(session_take_back(&s), "refused: taken back");
	is(sp->match, "{a, _}", "the one before is in force again");
	session_set_match(&s, "");
	ok(!session_take_back(&s) && !sp->match[0],
	   ":match off is never taken back");

	session_set_kinds(&s, KIND_SEND);
	ok(session_add_call(&s, "lists:seq/2", &why) == 0 &&
	   session_set_gen_calls(&s, true), "a call pattern and gen calls");
	session_set_kinds(&s, KIND_RECEIVE);
	is_num(sp->kinds, KIND_RECEIVE | KIND_CALL | KIND_GENCALL,
	       "new kinds keep the call and gen call kinds");
	ok(!session_set_gen_calls(&s, true), "gen calls on twice: nothing to do");
	ok(session_set_gen_calls(&s, false) && !(sp->kinds & KIND_GENCALL),
	   "gen calls off");
	s.rec = (struct recording *)&s;   /* any: only its presence counts */
	ok(!session_set_gen_calls(&s, true) && !sp->gen_calls,
	   "a recording has its records: nothing to turn on");
	s.rec = NULL;
	session_remove_call(&s, "lists:seq/2");
	sbuf_release(&why);
	opts_release(&cfg);
}

int main(void)
{
	plan(39);
	test_batch();
	test_view();
	test_changes();
	return done_testing();
}
