/*
 * sig: signals become bytes on a self-pipe, so the poll loop sees them like
 * any other input.  SIGPIPE is ignored: write errors are reported instead.
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

#endif
