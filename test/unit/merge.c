/* Unit tests: the merged timeline of several nodes and send pairing. */
#include <stdint.h>
#include <string.h>

#include "merge.h"
#include "tap.h"

static const char *nodes[] = { "a@h", "b@h", "c@h" };

/* "<b@h.N.S>" lives on node 1 */
static int node_of(void *arg, const char *pid)
{
	(void)arg;
	for (int i = 0; i < 3; i++) {
		size_t l = strlen(nodes[i]);
		if (!strncmp(pid + 1, nodes[i], l) && pid[l + 1] == '.')
			return i;
	}
	return -1;
}

static struct event ev(enum event_type t, int64_t ts, unsigned num,
		       const char *pid, const char *peer, const char *payload)
{
	struct event e = { .type = t, .ts = ts, .pid = { num, 0, 0 },
			   .pid_text = pid, .peer = peer, .payload = payload };
	return e;
}

static struct {
	int64_t ts[32];
	char from[32][32];
	int64_t lat[32];
	int n;
} out;

static void take(void *arg, const struct mitem *it)
{
	(void)arg;
	if (out.n < 32) {
		out.ts[out.n] = it->ev.ts;
		strcpy(out.from[out.n], it->ev.from ? it->ev.from : "");
		out.lat[out.n] = it->ev.latency_us;
		out.n++;
	}
}

int main(void)
{
	struct merge m;
	struct event e;
	plan(16);

	/* order: three nodes arriving out of time order */
	merge_init(&m, 100, node_of, NULL);
	e = ev(EV_SPAWN, 30, 1, "<b@h.1.0>", "<b@h.2.0>", NULL);
	merge_add(&m, 1, &e);
	e = ev(EV_SPAWN, 10, 1, "<a@h.1.0>", "<a@h.2.0>", NULL);
	merge_add(&m, 0, &e);
	e = ev(EV_SPAWN, 20, 1, "<c@h.1.0>", "<c@h.2.0>", NULL);
	merge_add(&m, 2, &e);
	out.n = 0;
	merge_flush(&m, 25, take, NULL);
	is_num(out.n, 2, "only what the watermark passed comes out");
	ok(out.ts[0] == 10 && out.ts[1] == 20, "oldest first");
	is_num(merge_held(&m), 1, "the rest waits");
	merge_flush(&m, INT64_MAX, take, NULL);
	ok(out.n == 3 && out.ts[2] == 30, "everything at the end");
	merge_release(&m);

	/* pairing: send first, then its receive on the other node */
	merge_init(&m, 100, node_of, NULL);
	out.n = 0;
	e = ev(EV_SEND, 100, 7, "<a@h.7.0>", "<b@h.9.0>", "{ping,1}");
	merge_add(&m, 0, &e);
	e = ev(EV_RECEIVE, 150, 9, "<b@h.9.0>", NULL, "{ping,1}");
	merge_add(&m, 1, &e);
	/* receive first, then the send (the sender's node lagging) */
	e = ev(EV_RECEIVE, 260, 9, "<b@h.9.0>", NULL, "{ping,2}");
	merge_add(&m, 1, &e);
	e = ev(EV_SEND, 200, 7, "<a@h.7.0>", "<b@h.9.0>", "{ping,2}");
	merge_add(&m, 0, &e);
	merge_flush(&m, INT64_MAX, take, NULL);
	is_num(out.n, 4, "four events");
	is(out.from[1], "<a@h.7.0>", "a receive names its send");
	is_num(out.lat[1], 50, "latency from the corrected clocks");
	is(out.from[3], "<a@h.7.0>", "also when the receive arrived first");
	is_num(out.lat[3], 60, "and its latency");
	is_num(m.st.paired, 2, "two pairs");
	merge_release(&m);

	/* ambiguity: two senders of the very same message */
	merge_init(&m, 100, node_of, NULL);
	out.n = 0;
	e = ev(EV_SEND, 100, 7, "<a@h.7.0>", "<b@h.9.0>", "hello");
	merge_add(&m, 0, &e);
	e = ev(EV_SEND, 101, 3, "<c@h.3.0>", "<b@h.9.0>", "hello");
	merge_add(&m, 2, &e);
	e = ev(EV_RECEIVE, 150, 9, "<b@h.9.0>", NULL, "hello");
	merge_add(&m, 1, &e);
	/* a local send is never paired */
	e = ev(EV_SEND, 160, 8, "<b@h.8.0>", "<b@h.9.0>", "local");
	merge_add(&m, 1, &e);
	e = ev(EV_RECEIVE, 170, 9, "<b@h.9.0>", NULL, "local");
	merge_add(&m, 1, &e);
	merge_flush(&m, INT64_MAX, take, NULL);
	is(out.from[2], "", "an ambiguous receive is not paired");
	is_num(m.st.ambiguous, 1, "and is counted");
	is(out.from[4], "", "a local message is not paired");
	merge_release(&m);

	/* a send nobody receives expires; a full buffer releases early */
	merge_init(&m, 2, node_of, NULL);
	out.n = 0;
	e = ev(EV_SEND, 100, 7, "<a@h.7.0>", "<b@h.9.0>", "lost");
	merge_add(&m, 0, &e);
	merge_flush(&m, 100 + m.send_ttl_us + 1, take, NULL);
	is_num(m.st.expired, 1, "an unreceived send expires");
	for (int i = 0; i < 4; i++) {
		e = ev(EV_SPAWN, 1000000000 + i, 1, "<a@h.1.0>", NULL, NULL);
		merge_add(&m, 0, &e);
	}
	merge_flush(&m, 0, take, NULL);
	is_num(merge_held(&m), 2, "at most max_items are held");
	is_num(m.st.forced, 2, "the ones let out early are counted");
	merge_release(&m);
	return done_testing();
}
