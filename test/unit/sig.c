/*
 * sig: a fatal signal runs the cleanup once, even when what failed was
 * the stack itself, and the process still dies of that signal.  Each case
 * runs in a child; the cleanup writes to a pipe the parent reads.
 */
#include "sig.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"

static int report = -1;
static volatile int stop;

static void cleanup(void)
{
	static const char word[] = "restored";
	ssize_t r = write(report, word, sizeof(word) - 1);
	(void)r;
}

/* recursion without end: the stack overflows */
static int deeper(volatile char *up, int n)
{
	volatile char here[1024];
	here[0] = (char)n;
	if (stop)
		return up[0];
	return deeper(here, n + 1) + here[0];
}

enum how { OVERFLOW, KILLED, ABORTED, NO_CLEANUP };

/* what the child's cleanup wrote, and the signal it died of (0: none) */
static int crash(enum how how, int sig, char *said, size_t room)
{
	int fd[2];
	if (pipe(fd) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		struct rlimit none = { 0, 0 };
		setrlimit(RLIMIT_CORE, &none);   /* no core files from tests */
		close(fd[0]);
		report = fd[1];
		sig_fatal(how == NO_CLEANUP ? NULL : cleanup);
		if (how == OVERFLOW) {
			volatile char top = 0;
			deeper(&top, 0);
		} else if (how == ABORTED) {
			abort();
		} else {
			kill(getpid(), sig);
		}
		_exit(0);
	}
	close(fd[1]);
	ssize_t n = read(fd[0], said, room - 1);
	said[n > 0 ? n : 0] = '\0';
	close(fd[0]);
	int st = 0;
	waitpid(pid, &st, 0);
	return WIFSIGNALED(st) ? WTERMSIG(st) : 0;
}

int main(void)
{
	char said[64];
	plan(12);
	/* valgrind reports an overflow on its own stderr, which its test
	 * takes for an error (t0810) */
	const char *pre = getenv("LD_PRELOAD");
	if (pre && strstr(pre, "vgpreload")) {
		ok(1, "a stack overflow dies of SIGSEGV # SKIP under valgrind");
		ok(1, "after the cleanup # SKIP under valgrind");
	} else {
		is_num(crash(OVERFLOW, 0, said, sizeof(said)), SIGSEGV,
		       "a stack overflow dies of SIGSEGV");
		is(said, "restored",
		   "after the cleanup, run on a stack of its own");
	}
	is_num(crash(ABORTED, 0, said, sizeof(said)), SIGABRT,
		"abort() dies of SIGABRT");
	is(said, "restored", "after the cleanup");
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL };
	static const char *const names[] = { "SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL" };
	for (int i = 0; i < 4; i++) {
		char what[64];
		snprintf(what, sizeof(what), "%s sent: dies of it, after the cleanup",
			 names[i]);
		int got = crash(KILLED, sigs[i], said, sizeof(said));
		ok(got == sigs[i] && !strcmp(said, "restored"), what);
	}
	is_num(crash(NO_CLEANUP, SIGSEGV, said, sizeof(said)), SIGSEGV,
		"with no cleanup: the default action");
	is(said, "", "and nothing run");
	is_num(crash(KILLED, SIGTERM, said, sizeof(said)), SIGTERM,
		"other signals are not touched");
	is(said, "", "no cleanup for them");
	return done_testing();
}
