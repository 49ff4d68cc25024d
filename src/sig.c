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
