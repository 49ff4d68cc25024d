/* sig: self-pipe signal handling. */
#include "sig.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static int pipefd[2] = { -1, -1 };
static volatile sig_atomic_t last_sig;
static volatile sig_atomic_t nsig;

static const int fatal_sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };
static void (*volatile fatal_cleanup)(void);
/* where the fatal handler runs: the stack may be what overflowed */
static char fatal_stack[1 << 16] __attribute__((aligned(16)));

static void on_signal(int sig)
{
	int e = errno;
	last_sig = sig;
	nsig++;
	if (pipefd[1] >= 0) {
		char c = (char)sig;
		ssize_t r = write(pipefd[1], &c, 1);
		(void)r;
	}
	errno = e;
}

void sig_setup(void)
{
	if (pipe(pipefd) == 0) {
		for (int i = 0; i < 2; i++) {
			fcntl(pipefd[i], F_SETFL, fcntl(pipefd[i], F_GETFL) | O_NONBLOCK);
			fcntl(pipefd[i], F_SETFD, FD_CLOEXEC);
		}
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int sig_fd(void)
{
	return pipefd[0];
}

int sig_take(void)
{
	char buf[64];
	while (pipefd[0] >= 0 && read(pipefd[0], buf, sizeof(buf)) > 0)
		;
	return last_sig;
}

int sig_count(void)
{
	return nsig;
}

static void on_fatal(int sig)
{
	void (*cleanup)(void) = fatal_cleanup;
	fatal_cleanup = NULL;   /* a crash in cleanup kills at once */
	if (cleanup)
		cleanup();
	/* the action is the default again (SA_RESETHAND) and sig is not
	 * blocked (SA_NODEFER): a signal sent by kill kills here, a fault
	 * again when the instruction runs once more */
	signal(sig, SIG_DFL);
	raise(sig);
}

void sig_fatal(void (*cleanup)(void))
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	fatal_cleanup = cleanup;
	if (cleanup) {
		stack_t ss = { .ss_sp = fatal_stack, .ss_size = sizeof(fatal_stack) };
		sigaltstack(&ss, NULL);
		sa.sa_handler = on_fatal;
		sa.sa_flags = SA_ONSTACK | SA_RESETHAND | SA_NODEFER;
	} else {
		sa.sa_handler = SIG_DFL;
	}
	for (size_t i = 0; i < sizeof(fatal_sigs) / sizeof(*fatal_sigs); i++)
		sigaction(fatal_sigs[i], &sa, NULL);
}
