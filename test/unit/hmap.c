/* hmap: keys in and out across growth and removals, against a plain
 * array doing the same; an owning map drops every value exactly once. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "names.h"
#include "tap.h"

struct key {
	uint32_t a, b, c;
};

static int dropped;

static void drop(void *val)
{
	free(*(char **)val);
	dropped++;
}

#define KEYS 5000

/* keys kept outside: records whose address is the value */
struct rec {
	long v;
	struct key k;
};

static const void *rec_key(const void *ctx, const void *val)
{
	(void)ctx;
	return &(*(struct rec *const *)val)->k;
}

/* The same random run on a map whose keys are in the records. */
static void outside(void)
{
	static struct rec recs[KEYS];
	static bool have[KEYS];
	struct hmap m;
	hmap_init_outside(&m, sizeof(struct key), sizeof(struct rec *),
			  rec_key, NULL);
	is_num(m.stride, 16, "keys outside: a slot is a state byte and a pointer");
	unsigned long mismatches = 0;
	for (int op = 0; op < 200000; op++) {
		uint32_t i = rnd() % KEYS;
		struct key k = { i, i * 7u, 1 };
		uint32_t what = rnd() % 3;
		if (what == 0) {
			bool fresh;
			struct rec **v = hmap_put(&m, &k, &fresh);
			if (fresh != !have[i] || (fresh && *v) ||
			    (!fresh && *v != &recs[i]))
				mismatches++;
			recs[i].k = k;
			recs[i].v = (long)rnd();
			*v = &recs[i];
			have[i] = true;
		} else if (what == 1) {
			if (hmap_del(&m, &k) != have[i])
				mismatches++;
			have[i] = false;
		} else {
			struct rec **v = hmap_get(&m, &k);
			if ((v != NULL) != have[i] || (v && *v != &recs[i]))
				mismatches++;
		}
	}
	is_num(mismatches, 0, "keys outside: 200000 operations agree with an array");
	size_t nhave = 0, keyed = 0;
	for (int i = 0; i < KEYS; i++)
		nhave += have[i];
	for (size_t i = 0; i < m.cap; i++) {
		const void *kp;
		struct rec **v = hmap_slot(&m, i, &kp);
		keyed += v && kp == &(*v)->k;
	}
	is_num(keyed, nhave, "keys outside: each slot's key is its record's");
	hmap_clear(&m);
	struct key k0 = { 0, 0, 1 };
	ok(hmap_count(&m) == 0 && !hmap_get(&m, &k0) && m.cap > 0,
	   "cleared: empty, the room kept");
	hmap_release(&m);
}

int main(void)
{
	plan(20);

	/* values kept in the map: a reference array says what it must hold */
	struct hmap m;
	hmap_init(&m, sizeof(struct key), sizeof(long), NULL);
	static long want[KEYS];
	static bool have[KEYS];
	unsigned long mismatches = 0;
	for (int op = 0; op < 200000; op++) {
		uint32_t i = rnd() % KEYS;
		struct key k = { i, i * 7u, 1 };
		uint32_t what = rnd() % 3;
		if (what == 0) {
			bool fresh;
			long *v = hmap_put(&m, &k, &fresh);
			if (fresh != !have[i] || (fresh && *v != 0))
				mismatches++;
			*v = want[i] = (long)rnd();
			have[i] = true;
		} else if (what == 1) {
			if (hmap_del(&m, &k) != have[i])
				mismatches++;
			have[i] = false;
		} else {
			long *v = hmap_get(&m, &k);
			if ((v != NULL) != have[i] || (v && *v != want[i]))
				mismatches++;
		}
	}
	is_num(mismatches, 0, "200000 puts, removals and gets agree with an array");
	size_t nhave = 0, seen = 0, wrong = 0;
	for (int i = 0; i < KEYS; i++)
		nhave += have[i];
	for (size_t i = 0; i < m.cap; i++) {
		const void *kp;
		long *v = hmap_slot(&m, i, &kp);
		if (!v)
			continue;
		struct key k;
		memcpy(&k, kp, sizeof(k));
		seen++;
		wrong += k.a >= KEYS || !have[k.a] || want[k.a] != *v;
	}
	is_num(hmap_count(&m), nhave, "the count is the keys held");
	is_num(seen, nhave, "walking the slots meets every key once");
	is_num(wrong, 0, "each with its own value");
	ok(m.used * 2 <= m.cap, "removed slots are swept when it grows: load at most one half");
	struct key other = { 1, 7, 2 };
	ok(!hmap_get(&m, &other), "a key differing in its last bytes is another key");
	hmap_release(&m);
	is_num(hmap_count(&m), 0, "released: empty");
	struct key k1 = { 1, 7, 1 };
	ok(!hmap_get(&m, &k1) && hmap_put(&m, &k1, NULL), "and usable again");
	hmap_release(&m);

	/* an owning map: every value dropped once, on removal, overwrite by
	 * the caller, or release */
	hmap_init(&m, sizeof(uint64_t), sizeof(char *), drop);
	for (uint64_t i = 0; i < 1000; i++) {
		char **v = hmap_put(&m, &i, NULL);
		*v = malloc(8);
	}
	for (uint64_t i = 0; i < 1000; i += 2)
		hmap_del(&m, &i);
	is_num(dropped, 500, "an owning map drops what it removes");
	hmap_release(&m);
	is_num(dropped, 1000, "and what it holds when released");

	/* names on it: a zeroed table is an empty one */
	struct names nt;
	memset(&nt, 0, sizeof(nt));
	struct bs_pid p = { .num = 85, .serial = 3, .node = 0 };
	ok(!names_get(&nt, p), "a zeroed names table is empty");
	names_set(&nt, p, "cache");
	names_set(&nt, p, "store");
	is(names_get(&nt, p), "store", "a name set again replaces the old one");
	struct bs_pid q = { .num = 85, .serial = 4, .node = 0 };
	names_set(&nt, q, "");
	names_unset(&nt, p);
	ok(!names_get(&nt, p) && names_get(&nt, q) && !*names_get(&nt, q),
	   "unset removes one name; an empty name is kept");
	is_num(names_count(&nt), 1, "one name left");
	names_release(&nt);

	/* the seen bits in front of the lookup: 3000 named pids among
	 * 200 000, set, replaced and unset, against a plain array */
	enum { NPIDS = 200000 };
	static char named[NPIDS];
	names_init(&nt);
	unsigned x = 12345;
	for (int i = 0; i < 3000; i++) {
		x = x * 1103515245u + 12345u;
		unsigned n = (x >> 8) % NPIDS;
		named[n] = 1;
		names_set(&nt, (struct bs_pid){ .num = n, .serial = 0 }, "n");
	}
	for (unsigned n = 0; n < NPIDS; n += 7)
		if (named[n]) {
			named[n] = 0;
			names_unset(&nt, (struct bs_pid){ .num = n, .serial = 0 });
		}
	int bad = 0, hits = 0;
	for (unsigned n = 0; n < NPIDS; n++) {
		const char *v = names_get(&nt, (struct bs_pid){ .num = n, .serial = 0 });
		bad += !v != !named[n];
		hits += v != NULL;
		/* another serial of a named number: no name */
		bad += names_get(&nt, (struct bs_pid){ .num = n, .serial = 1 }) != NULL;
	}
	is_num(bad, 0, "seen bits: every named pid found, no other");
	ok(hits == (int)names_count(&nt) && hits > 2000,
	   "and as many found as the table holds");
	names_release(&nt);
	outside();
	return done_testing();
}
