/* Unit tests: the event ring and per-process aggregates, no terminal. */
#include <time.h>

#include "store.h"
#include "tap.h"

static struct event mk(enum event_type t, unsigned num, const char *pid_text,
		       const char *peer, const char *payload)
{
	struct event e = { .type = t, .ts = 1000 + num, .pid = { num, 0, 0 },
			   .pid_text = pid_text, .peer = peer, .payload = payload };
	return e;
}

static struct bs_pid pidn(unsigned num)
{
	return (struct bs_pid){ num, 0, 0 };
}

static void counts(struct store *st, unsigned num)
{
	char t[32];
	snprintf(t, sizeof(t), "<0.%u.0>", num);
	store_add_counts(st, pidn(num), t, 1, 0, 0);
}

static bool has(const struct store *st, unsigned num)
{
	return store_proc(st, pidn(num)) != NULL;
}

/* Every process the table holds is found through the index, and once. */
static bool index_whole(const struct store *st)
{
	for (size_t i = 0; i < st->nprocs; i++)
		if (store_proc(st, st->procs[i]->pid) != st->procs[i])
			return false;
	return true;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The table is bounded by activity: the quietest go first, registered
 * ones last, kept ones never. */
static void forgetting(void)
{
	struct store st;
	store_init(&st, 16);
	st.max_procs = 16;   /* passes leave 14 */
	store_set_info(&st, pidn(1), "<0.1.0>", "reg", NULL, -1);
	for (unsigned i = 2; i <= 16; i++)
		counts(&st, i);
	store_keep(&st, &(struct bs_pid){ 2, 0, 0 }, 1);
	counts(&st, 3);      /* active again: the quietest are now 4 and 5 */
	is_num(st.nprocs, 16, "a full table forgets nothing yet");
	counts(&st, 17);
	is_num(st.nprocs, 15, "a new process: the table goes down to 7/8, then it");
	is_num(st.forgotten, 2, "forgotten processes counted");
	ok(!has(&st, 4) && !has(&st, 5), "the two quiet the longest are forgotten");
	ok(has(&st, 1) && has(&st, 2) && has(&st, 3) && has(&st, 6) && has(&st, 17),
	   "registered, kept, active again and the new one stay");
	ok(index_whole(&st), "index rebuilt");
	counts(&st, 4);
	ok(has(&st, 4) && store_proc(&st, pidn(4))->sends == 1,
	   "a forgotten process active again comes back, counted afresh");

	/* a spawn storm from one process: the children cannot outgrow it */
	size_t most = 0;
	for (unsigned i = 1000; i < 1200; i++) {
		char child[32];
		snprintf(child, sizeof(child), "<0.%u.0>", i);
		struct event e = mk(EV_SPAWN, 6, "<0.6.0>", child, "[]");
		store_add_event(&st, &e);
		if (st.nprocs > most)
			most = st.nprocs;
	}
	ok(most <= st.max_procs + 1, "spawn events never grow the table past the bound");
	ok(has(&st, 6) && has(&st, 1199) && has(&st, 2),
	   "the spawner, the newest child and the kept one stay");

	/* only the kept are out of reach; registered ones go when they must */
	st.max_procs = 2;
	store_tick(&st);
	ok(st.nprocs == 1 && has(&st, 2), "a tick applies a lowered bound; kept stays");

	/* exited beyond max_exited: the first to exit go, a kept one stays */
	st.max_procs = 0;
	st.max_exited = 2;
	for (unsigned i = 3000; i < 3004; i++) {
		char t[32];
		snprintf(t, sizeof(t), "<0.%u.0>", i);
		struct event x = mk(EV_EXIT, i, t, NULL, "normal");
		store_add_event(&st, &x);
	}
	store_keep(&st, &(struct bs_pid){ 3000, 0, 0 }, 1);
	store_tick(&st);
	ok(st.nexited == 2 && has(&st, 3000) && has(&st, 3003) && !has(&st, 3001) &&
	   !has(&st, 3002), "exited: the oldest go, the kept one stays");
	store_release(&st);
}

/* The cost of the bound: passes over a table of 100 000 processes, each
 * O(n), come once per n/8 new processes, so the work per new process is
 * a constant; counted in records looked at, not timed. */
static void forgetting_cost(void)
{
	struct store st;
	const unsigned cap = 100000, total = 400000;
	store_init(&st, 16);
	st.max_procs = cap;
	double t0 = now_ms();
	for (unsigned i = 1; i <= total; i++)
		counts(&st, i);
	double t1 = now_ms();
	ok(st.nprocs <= cap && st.nprocs > cap - cap / 8 - 1,
	   "400 000 processes through a table of 100 000");
	/* pids in a row spread over the index: no long probe runs */
	size_t run = 0, longest = 0;
	for (size_t k = 0; k < st.index.cap; k++) {
		run = hmap_slot(&st.index, k, NULL) ? run + 1 : 0;
		if (run > longest)
			longest = run;
	}
	printf("# longest run in the index: %zu of %zu slots\n", longest,
	       st.index.cap);
	ok(longest < 100, "the index of pids in a row has no long probe runs");
	printf("# %.1f records looked at per new process\n",
	       (double)st.forget_work / total);
	ok(st.forget_work <= 64ULL * total, "forgetting is O(1) per new process, amortized");

	uint64_t before = st.forget_work;
	double tick0 = now_ms();
	for (int i = 0; i < 10; i++)
		store_tick(&st);
	double tick1 = now_ms();
	is_num(st.forget_work - before, 0, "a tick under the bound forgets nothing");
	for (unsigned i = total + 1; st.nprocs < cap; i++)
		counts(&st, i);
	st.max_procs = cap - 1;
	before = st.forget_work;
	double p0 = now_ms();
	store_tick(&st);
	double p1 = now_ms();
	ok(st.forget_work - before <= 16ULL * cap, "one pass over 100 000 is O(n)");
	printf("# %u new processes: %.0f ms; a tick: %.2f ms; a pass: %.2f ms\n",
	       total, t1 - t0, (tick1 - tick0) / 10,
	       p1 - p0);
	store_release(&st);
}

/* A second in which nothing moved changes nothing the view looks at;
 * an exit is stamped with the second it was seen in. */
static void quiet_ticks(void)
{
	struct store st;
	store_init(&st, 16);
	st.history = true;
	counts(&st, 1);
	store_tick(&st);
	uint64_t g = st.generation;
	store_tick(&st);
	ok(st.generation != g, "a rate that falls to zero is a change");
	g = st.generation;
	store_tick(&st);
	ok(st.generation != g, "so is a sparkline moving on");
	for (int i = 0; i < STORE_HISTORY; i++)
		store_tick(&st);
	g = st.generation;
	store_tick(&st);
	store_tick(&st);
	is_num(st.generation, g, "quiet seconds leave the generation alone, "
	       "once the sparklines are blank");
	is_num(st.ticks, 5 + STORE_HISTORY, "ticks counted");
	struct event x = mk(EV_EXIT, 1, "<0.1.0>", NULL, "normal");
	store_add_event(&st, &x);
	store_tick(&st);
	store_add_event(&st, &x);
	is_num(store_proc(&st, pidn(1))->exit_tick, 5 + STORE_HISTORY,
	       "an exit is stamped with its second, once");
	store_release(&st);
}

/* the spawn tree as links: 1 spawns 2 and 3, 2 spawns 4 */
/* The sparklines' history: seconds in order, sums, and a process quiet
 * for the whole window lets it go. */
static void history(void)
{
	struct store st;
	store_init(&st, 16);
	store_add_counts(&st, pidn(9), "<0.9.0>", 5, 5, 0);
	store_tick(&st);
	ok(!store_proc(&st, pidn(9))->hist, "no history unless asked for");
	store_clear(&st);
	st.history = true;
	store_tick(&st);
	ok(st.nprocs == 0, "no process, no history");
	store_add_counts(&st, pidn(9), "<0.9.0>", 0, 0, 0);
	store_tick(&st);
	struct proc *p = store_proc(&st, pidn(9));
	ok(p && !p->hist, "a process that never sent has none");
	for (unsigned i = 1; i <= STORE_HISTORY + 5; i++) {
		store_add_counts(&st, pidn(9), "<0.9.0>", i, 2 * i, 0);
		store_tick(&st);
	}
	p = store_proc(&st, pidn(9));
	ok(p && p->hist && p->hist->n == STORE_HISTORY, "the window is full");
	is_num(store_hist_sends(p->hist, 0), STORE_HISTORY + 5, "newest second first");
	is_num(store_hist_receives(p->hist, 0), 2 * (STORE_HISTORY + 5),
	       "receives beside it");
	is_num(store_hist_sends(p->hist, STORE_HISTORY - 1), 6,
	       "the oldest kept is 30 seconds back");
	is_num(store_hist_sends(p->hist, STORE_HISTORY), 0, "beyond it: 0");
	unsigned long want = 0;
	for (unsigned i = 6; i <= STORE_HISTORY + 5; i++)
		want += i;
	is_num(p->hist->sum_sends, want, "the sum is the window's");
	is_num(p->hist->sum_receives, 2 * want, "and of receives");
	for (unsigned i = 0; i < STORE_HISTORY - 1; i++)
		store_tick(&st);
	ok(p->hist && p->hist->sum_sends == STORE_HISTORY + 5,
	   "quiet seconds push the old ones out");
	store_tick(&st);
	ok(!p->hist, "quiet for the whole window: let go");
	store_add_counts(&st, pidn(9), "<0.9.0>", 4, 0, 0);
	store_tick(&st);
	ok(p->hist && p->hist->n == 1 && store_hist_sends(p->hist, 0) == 4,
	   "and taken again when it sends");
	store_release(&st);
}

static void tree_links(void)
{
	struct store st;
	store_init(&st, 64);
	struct event e = mk(EV_SPAWN, 1, "<0.1.0>", "<0.2.0>", "[]");
	store_add_event(&st, &e);
	e = mk(EV_SPAWN, 1, "<0.1.0>", "<0.3.0>", "[]");
	store_add_event(&st, &e);
	e = mk(EV_SPAWNED, 4, "<0.4.0>", "<0.2.0>", "[]");
	store_add_event(&st, &e);
	struct proc *p1 = store_proc(&st, (struct bs_pid){ 1, 0, 0 }),
		*p2 = store_proc(&st, (struct bs_pid){ 2, 0, 0 }),
		*p3 = store_proc(&st, (struct bs_pid){ 3, 0, 0 }),
		*p4 = store_proc(&st, (struct bs_pid){ 4, 0, 0 });
	ok(p1->kids == p2 && p2->next_sib == p3 && p1->kids_tail == p3 &&
	   p2->up == p1 && p3->up == p1 && !p1->up, "children in spawn order");
	ok(p2->kids == p4 && p4->up == p2, "spawned links to its parent");
	uint64_t gen = st.tree_gen;
	e = mk(EV_SPAWN, 1, "<0.1.0>", "<0.2.0>", "[]");
	store_add_event(&st, &e);
	ok(st.tree_gen == gen && p1->kids == p2 && p2->next_sib == p3,
	   "a spawn seen twice links once");

	/* 2 is forgotten: 1 keeps 3, 4 is an orphan */
	st.max_procs = 3;
	struct bs_pid keep[] = { { 1, 0, 0 }, { 3, 0, 0 }, { 4, 0, 0 } };
	store_keep(&st, keep, 3);
	store_tick(&st);
	ok(!store_proc(&st, (struct bs_pid){ 2, 0, 0 }) && p1->kids == p3 &&
	   p1->kids_tail == p3 && !p3->prev_sib, "a forgotten child leaves its parent");
	ok(!p4->up && !p4->next_sib && st.tree_gen != gen,
	   "its children are orphans, and the tree is stale");
	store_release(&st);
}

/* The ring is bounded by bytes too: big events push out the oldest
 * before the count does; the newest is kept whatever its size. */
static void ring_bytes(void)
{
	struct store st;
	store_init(&st, 1000);
	is_num(st.max_bytes, STORE_BYTES_MIN, "a small ring holds the least bytes");
	is_num(store_ring_bytes(200000), (size_t)200000 * STORE_EVENT_BYTES,
	       "a big one a KiB an event");
	size_t big = (size_t)1 << 20;
	char *pay = malloc(big + 1);
	memset(pay, 'a', big);
	pay[big] = '\0';
	bool bounded = true;
	for (unsigned i = 0; i < 300; i++) {
		struct event e = mk(EV_SEND, 100 + i % 7, "<0.100.0>", "<0.1.0>", pay);
		store_add_event(&st, &e);
		bounded &= st.bytes <= st.max_bytes;
	}
	ok(bounded, "300 events of 1 MiB stay within the bytes bound");
	uint64_t held = st.next_seq - store_oldest_seq(&st);
	ok(held >= 60 && held <= 64, "about 64 of them are held");
	ok(store_event(&st, store_oldest_seq(&st)) &&
	   !store_event(&st, store_oldest_seq(&st) - 1),
	   "the oldest held is there, the one before gone");
	is_num(st.evicted, 300 - held, "the others counted as evicted");
	size_t sum = 0;
	for (uint64_t q = store_oldest_seq(&st); q < st.next_seq; q++)
		sum += store_event(&st, q)->size;
	is_num(sum, st.bytes, "bytes is the sum of what is held");
	char *huge = malloc(3 * STORE_BYTES_MIN / 2);
	memset(huge, 'b', 3 * STORE_BYTES_MIN / 2 - 1);
	huge[3 * STORE_BYTES_MIN / 2 - 1] = '\0';
	struct event e = mk(EV_SEND, 100, "<0.100.0>", "<0.1.0>", huge);
	uint64_t seq = store_add_event(&st, &e);
	ok(store_event(&st, seq) && store_oldest_seq(&st) == seq,
	   "an event bigger than the bound is kept alone");
	e = mk(EV_SEND, 100, "<0.100.0>", "<0.1.0>", "small");
	for (int i = 0; i < 1500; i++)
		store_add_event(&st, &e);
	is_num(st.next_seq - store_oldest_seq(&st), 1000,
	       "small events: the count bounds them again");
	free(huge);
	free(pay);
	store_release(&st);
}

int main(void)
{
	struct store st;
	plan(85);
	quiet_ticks();

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
	ok(r->memory.bytes == -1 && r->reds == -1 && r->rreds == -1 &&
	   r->heap.bytes == -1, "sizes unknown until sampled");
	store_set_sizes(&st, (struct bs_pid){ 7, 0, 0 }, 6400, false, 1000,
			4000, false, 5000);
	ok(r->memory.bytes == 6400 && r->heap.bytes == 4000 && r->reds == 1000 &&
	   r->rreds == -1, "one sample: no reductions a second yet");
	store_set_sizes(&st, (struct bs_pid){ 7, 0, 0 }, 6400, false, 4000,
			4000, false, 7000);
	is_num(r->rreds, 1500, "reductions a second from two samples");
	/* lower bounds: a measured value that is recent, or larger, stays */
	store_set_sizes(&st, (struct bs_pid){ 7, 0, 0 }, 9000, true, 4000,
			100, true, 8000);
	ok(r->memory.bytes == 6400 && !r->memory.at_least &&
	   r->heap.bytes == 4000 && !r->heap.at_least,
	   "a lower bound does not replace a recent measure");
	ok(!store_size_stale(&r->memory, 7000 + STORE_STALE_MS) &&
	   store_size_stale(&r->memory, 7001 + STORE_STALE_MS),
	   "a measure is old after STORE_STALE_MS");
	store_set_sizes(&st, (struct bs_pid){ 7, 0, 0 }, 9000, true, 4000,
			100, true, 7001 + STORE_STALE_MS);
	ok(r->memory.bytes == 9000 && r->memory.at_least &&
	   !store_size_stale(&r->memory, 99999) && r->heap.bytes == 4000 &&
	   !r->heap.at_least, "an old measure gives way to a larger bound only");
	store_set_sizes(&st, (struct bs_pid){ 7, 0, 0 }, 6000, false, 4000,
			4100, false, 20000);
	ok(r->memory.bytes == 6000 && !r->memory.at_least &&
	   r->heap.bytes == 4100, "a measure replaces a bound");
	store_set_sizes(&st, (struct bs_pid){ 9999, 0, 0 }, 1, false, 1, 1,
			false, 7000);
	ok(!store_proc(&st, (struct bs_pid){ 9999, 0, 0 }),
	   "sizes never make a process up");

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

	struct proc *w = store_proc(&st, (struct bs_pid){ 777, 0, 0 });
	ok(!strcmp(store_proc_title(w), ""), "nothing known: an empty title");
	store_set_label(&st, (struct bs_pid){ 777, 0, 0 }, "my_server:init/1");
	ok(!strcmp(store_proc_title(w), "my_server:init/1"), "a label names it");
	store_set_label(&st, (struct bs_pid){ 4242, 0, 0 }, "x:init/1");
	ok(!store_proc(&st, (struct bs_pid){ 4242, 0, 0 }),
	   "a label makes no process of its own");
	e = mk(EV_SPAWN, 777, "<0.777.0>", "<0.778.0>", "[]");
	e.mfa = "proc_lib:init_p/5";
	store_add_event(&st, &e);
	e = mk(EV_RECEIVE, 778, "<0.778.0>", NULL, "hi");
	e.label = "sup:init/1";
	e.name = "sup";
	store_add_event(&st, &e);
	struct proc *k = store_proc(&st, (struct bs_pid){ 778, 0, 0 });
	ok(k && !strcmp(k->label, "sup:init/1") &&
	   !strcmp(store_proc_title(k), "sup"),
	   "an event's label is kept; the registered name wins");

	store_clear(&st);
	ok(st.nprocs == 0 && store_event(&st, 5) == NULL, "clear forgets everything");
	store_release(&st);

	tree_links();
	history();
	forgetting();
	forgetting_cost();
	ring_bytes();
	return done_testing();
}
