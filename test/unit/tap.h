/*
 * tap: a tiny Test Anything Protocol API for C unit tests (plan/ok/is).
 * Header-only; each test program includes it once.
 */
#ifndef BS_TAP_H
#define BS_TAP_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed, tap_planned;

/* a small random generator of its own (xorshift): the same run every
 * time, on every machine */
static uint64_t rnd_state = 88172645463325252ULL;
static __attribute__((unused)) uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)rnd_state;
}

static __attribute__((unused)) void plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
}

static __attribute__((unused)) int ok_(int cond, const char *file, int line, const char *name)
{
	tap_n++;
	printf("%sok %d - %s\n", cond ? "" : "not ", tap_n, name);
	if (!cond) {
		tap_failed++;
		printf("#   failed at %s:%d\n", file, line);
	}
	return cond;
}

static __attribute__((unused)) int is_str_(const char *got, const char *want, const char *file,
		   int line, const char *name)
{
	int cond = got && want ? !strcmp(got, want) : got == want;
	if (!ok_(cond, file, line, name)) {
		printf("#        got: '%s'\n", got ? got : "(null)");
		printf("#   expected: '%s'\n", want ? want : "(null)");
	}
	return cond;
}

static __attribute__((unused)) int is_long_(long got, long want, const char *file, int line,
		    const char *name)
{
	int cond = got == want;
	if (!ok_(cond, file, line, name))
		printf("#        got: %ld\n#   expected: %ld\n", got, want);
	return cond;
}

#define ok(cond, name) ok_(!!(cond), __FILE__, __LINE__, name)
#define is(got, want, name) is_str_(got, want, __FILE__, __LINE__, name)
#define is_num(got, want, name) is_long_((long)(got), (long)(want), __FILE__, __LINE__, name)

static __attribute__((unused)) int done_testing(void)
{
	if (tap_planned && tap_n != tap_planned)
		printf("# planned %d tests but ran %d\n", tap_planned, tap_n);
	return tap_failed || (tap_planned && tap_n != tap_planned) ? 1 : 0;
}

#endif
