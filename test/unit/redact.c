/* redact: a cookie is found wherever a text holds it, short texts and
 * long ones (two ways of searching), against a plain search. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "redact.h"
#include "tap.h"

#define COOKIE "Secr3tC00kie"

/* the plain search the fast ones must agree with */
static int contains(const char *t, size_t n, const char *f, size_t m)
{
	for (size_t i = 0; i + m <= n; i++)
		if (!memcmp(t + i, f, m))
			return 1;
	return 0;
}

int main(void)
{
	/* letters of the cookie and others, no digits, commas or quotes:
	 * no other form of it (byte values, escapes) can be made by chance */
	static const char alpha[] = "SecrtCkiSeabx {}[]<>.";
	const size_t cl = strlen(COOKIE);
	char text[700];
	int wrong = 0, found = 0, runs = 20000;

	plan(8);
	redact_add(COOKIE);
	ok(redact_holds(COOKIE, cl, false), "the cookie alone");
	ok(!redact_holds(COOKIE, cl - 1, false), "all but its last byte: not it");
	ok(redact_holds("{ok,Secr3t", 10, true),
	   "a cut text ending in its first bytes");
	ok(!redact_holds("{ok,Secr3t", 10, false),
	   "the same text not cut: not it");

	for (int r = 0; r < runs; r++) {
		size_t n = rnd() % 2 ? rnd() % 64 : rnd() % 600;
		for (size_t i = 0; i < n; i++)
			text[i] = alpha[rnd() % (sizeof(alpha) - 1)];
		if (n >= cl && rnd() % 2) {
			size_t at = rnd() % (n - cl + 1);
			memcpy(text + at, COOKIE, cl);
			if (rnd() % 3 == 0)   /* a near miss */
				text[at + rnd() % cl] = 'x';
		}
		int want = contains(text, n, COOKIE, cl);
		int got = redact_holds(text, n, false);
		found += want;
		if (got != want && wrong++ < 5)
			printf("# %zu bytes: expected %d, got %d: %.*s\n", n,
			       want, got, (int)n, text);
	}
	char name[128];
	snprintf(name, sizeof(name), "%d random texts up to 600 bytes: %d "
		 "wrong", runs, wrong);
	ok(!wrong, name);
	snprintf(name, sizeof(name), "the cookie was in some of them (%d) and "
		 "not in others", found);
	ok(found > runs / 5 && found < runs - runs / 5, name);
	/* in a term: its bytes, with anything around them */
	static const char head[] = "\x83h\x02" "d\x00\x02ok" "m\x00\x00\x00\x0c";
	memcpy(text, head, sizeof(head) - 1);
	memcpy(text + sizeof(head) - 1, COOKIE, cl);
	ok(redact_holds_term(text, sizeof(head) - 1 + cl, false, false),
	   "a term holding it as a binary");
	redact_reset();
	ok(!redact_holds(COOKIE, cl, false), "forgotten");
	return done_testing();
}
