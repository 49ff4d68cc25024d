/*
 * sig: signals become bytes on a self-pipe, so the poll loop sees them like
 * any other input.  SIGPIPE is ignored: write errors are reported instead.
 * The fatal ones (a crash) get one last cleanup, then kill as they would
 * have.
 */
#ifndef BS_SIG_H
#define BS_SIG_H

void sig_setup(void);
/* Read end of the self-pipe, for poll(). */
int sig_fd(void);
/* The last signal caught (0: none); the pipe is drained. */
int sig_take(void);
/* How many termination signals have been caught so far. */
int sig_count(void);
/*
 * On SIGSEGV, SIGBUS, SIGABRT, SIGFPE or SIGILL call cleanup once, then die
 * of the signal as if it had not been caught (status, core dump).  The
 * handler runs on a stack of its own, so a stack that overflowed is caught
 * too.  cleanup must be async-signal-safe.  NULL: the default actions.
 */
void sig_fatal(void (*cleanup)(void));

#endif
