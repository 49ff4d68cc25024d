/* Unit tests: the event ring and per-process aggregates, no terminal. */
#include "store.h"
#include "tap.h"

static struct event mk(enum event_type t, unsigned num, const char *pid_text,
		       const char *peer, const char *payload)
{
	struct event e = { .type = t, .ts = 1000 + num, .pid = { num, 0, 0 },
			   .pid_text = pid_text, .peer = peer, .payload = payload };
	return e;
}

int main(void)
{
	struct store st;
	plan(25);

	store_init(&st, 4);
	struct event e = mk(EV_REGISTER, 5, "<0.5.0>", NULL, NULL);
	e.name = "srv";
	store_add_event(&st, &e);
	for (int i = 0; i < 3; i++) {
		e = mk(EV_RECEIVE, 5, "<0.5.0>", NULL, "hello");
		e.name = "srv";
		store_add_event(&st, &e);
	}
	e = mk(EV_SEND, 6, "<0.6.0>", "<0.5.0>", "hello");
	uint64_t last = store_add_event(&st, &e);

	is_num(last, 5, "sequence ids count from 1");
	is_num(store_oldest_seq(&st), 2, "ring of 4 keeps the newest 4");
	ok(store_event(&st, 1) == NULL, "evicted event is gone");
	is_num(st.evicted, 1, "eviction counted");
	ok(store_event(&st, 5) && !strcmp(store_event(&st, 5)->peer, "<0.5.0>"),
	   "event kept with its own copy of the strings");

	struct proc *p = store_proc(&st, (struct bs_pid){ 5, 0, 0 });
	ok(p && !strcmp(p->name, "srv"), "process named by register");
	is_num(p->receives, 3, "receives counted");
	is_num(p->sends, 0, "no sends");
	struct proc *q = store_proc(&st, (struct bs_pid){ 6, 0, 0 });
	is_num(q->sends, 1, "sender counted");

	store_tick(&st);
	is_num(p->rreceives, 3, "rate: receives in the last second");
	e = mk(EV_RECEIVE, 5, "<0.5.0>", NULL, "again");
	store_add_event(&st, &e);
	store_tick(&st);
	is_num(p->rreceives, 1, "rate follows the window");
	store_tick(&st);
	is_num(p->rreceives, 0, "rate falls to zero when idle");
	is_num(p->receives, 4, "total keeps growing");

	e = mk(EV_SPAWN, 5, "<0.5.0>", "<0.9.0>", "[]");
	e.mfa = "worker:init/1";
	store_add_event(&st, &e);
	struct proc *c = store_proc(&st, (struct bs_pid){ 9, 0, 0 });
	ok(c && c->has_parent && c->parent.num == 5, "child knows its parent");
	ok(c && !strcmp(c->initial, "worker:init/1"), "child's initial call");
	is_num(p->spawns, 1, "spawn counted");

	e = mk(EV_EXIT, 9, "<0.9.0>", NULL, "normal");
	store_add_event(&st, &e);
	ok(c->exited && !strcmp(c->reason, "normal"), "exit recorded with reason");

	store_add_counts(&st, (struct bs_pid){ 7, 0, 0 }, "<0.7.0>", 10, 20, 1);
	store_add_counts(&st, (struct bs_pid){ 7, 0, 0 }, "<0.7.0>", 5, 0, 0);
	struct proc *r = store_proc(&st, (struct bs_pid){ 7, 0, 0 });
	ok(r && r->sends == 15 && r->receives == 20 && r->spawns == 1,
	   "count-tier deltas add up");
	store_set_info(&st, (struct bs_pid){ 7, 0, 0 }, "<0.7.0>", "logger",
		       "gen_server:loop/7", 12);
	ok(!strcmp(r->name, "logger") && !strcmp(r->current, "gen_server:loop/7") &&
	   r->mqlen == 12, "process_info sample kept");

	for (unsigned i = 100; i < 1100; i++) {
		char t[32];
		snprintf(t, sizeof(t), "<0.%u.0>", i);
		store_add_counts(&st, (struct bs_pid){ i, 0, 0 }, t, 1, 0, 0);
	}
	ok(store_proc(&st, (struct bs_pid){ 777, 0, 0 })->sends == 1,
	   "index grows with many processes");
	is_num(st.nprocs, 1004, "one record per process");

	st.max_exited = 2;
	for (unsigned i = 2000; i < 2005; i++) {
		char txt[32];
		snprintf(txt, sizeof(txt), "<0.%u.0>", i);
		struct event x = mk(EV_EXIT, i, txt, NULL, "normal");
		store_add_event(&st, &x);
	}
	store_tick(&st);
	is_num(st.pruned, 4, "oldest exited processes forgotten beyond the cap");
	ok(!store_proc(&st, (struct bs_pid){ 9, 0, 0 }) &&
	   !store_proc(&st, (struct bs_pid){ 2002, 0, 0 }) &&
	   store_proc(&st, (struct bs_pid){ 2003, 0, 0 }) &&
	   store_proc(&st, (struct bs_pid){ 2004, 0, 0 }), "the newest exited stay");
	ok(store_proc(&st, (struct bs_pid){ 777, 0, 0 }) &&
	   store_proc(&st, (struct bs_pid){ 5, 0, 0 })->receives == 4,
	   "live processes untouched, index rebuilt");

	store_clear(&st);
	ok(st.nprocs == 0 && store_event(&st, 5) == NULL, "clear forgets everything");
	store_release(&st);
	return done_testing();
}
