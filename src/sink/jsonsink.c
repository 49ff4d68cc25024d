/* jsonsink: see jsonsink.h. */
#include "jsonsink.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "json.h"
#include "session.h"
#include "sig.h"
#include "xalloc.h"

/* past this much waiting output, write at once, and wait a little for a
 * slow reader */
#define FLUSH_AT (1 << 20)
#define FLUSH_WAIT_MS 100
/* past this much, the reader has stopped: the output is given up */
#define STALL_BYTES (64u << 20)

void json_sink_init(struct json_sink *js, const struct session *s,
		    bool counts_mode, long long interval_ms)
{
	memset(js, 0, sizeof(*js));
	js->s = s;
	js->fd = js->file.fd = js->nbfd = -1;
	js->counts_mode = counts_mode;
	js->interval_ms = interval_ms > 0 ? interval_ms : 1000;
	sbuf_init(&js->out);
	store_init(&js->counts, 1);
}

/* A pipe's largest size asked for: room for about 10 000 events while the
 * reader is busy */
#define PIPE_SIZE (1 << 20)

/*
 * A pipe or a FIFO is opened a second time, through /proc, with O_NONBLOCK:
 * a new opening of the same pipe, whose flag nobody else shares (the
 * shell's or the reader's opening stays blocking).  Writes then take what
 * fits, any size, with no poll before each: without it each write has to
 * stay within PIPE_BUF after a poll, two system calls for every 4 KiB.
 * The pipe is also asked to grow (the kernel may refuse: then as it is).
 * If the reopening fails, writes go the polled way.
 */
static void open_nonblocking(struct json_sink *js)
{
	char path[64];
	(void)snprintf(path, sizeof(path), "/proc/self/fd/%d", js->fd);
	int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat a, b;
	if (fstat(fd, &a) != 0 || fstat(js->fd, &b) != 0 ||
	    a.st_ino != b.st_ino || a.st_dev != b.st_dev) {
		close(fd);
		return;
	}
	if (fcntl(fd, F_GETPIPE_SZ) < PIPE_SIZE)
		(void)fcntl(fd, F_SETPIPE_SZ, PIPE_SIZE);
	js->nbfd = fd;
}

int json_sink_open(struct json_sink *js, const char *path,
		   enum outfile_mode mode, int input_fd, struct sbuf *err)
{
	json_sink_close(js);
	free(js->name);
	js->name = NULL;
	js->good = js->base = js->unwritten = 0;
	js->off = 0;
	js->stalled = false;
	js->behind = false;
	js->discarded = false;
	js->write_errno = 0;
	js->events = 0;
	js->count_lines = 0;
	js->stamped = false;
	if (outfile_open(&js->file, path, mode, input_fd, err) < 0)
		return -1;
	js->fd = js->file.fd;
	js->own_fd = js->file.path != NULL;
	js->name = xstrdup(outfile_name(&js->file));
	struct stat st;
	js->regular = fstat(js->fd, &st) == 0 &&
		(S_ISREG(st.st_mode) || S_ISBLK(st.st_mode));
	js->socket = !js->regular && S_ISSOCK(st.st_mode);
	if (!js->regular && S_ISFIFO(st.st_mode))
		open_nonblocking(js);
	js->next_counts_ms = clock_mono_ms() + js->interval_ms;
	return 0;
}

/* The last whole line written: base plus the end of the last newline in
 * the part of the buffer that is out. */
static void mark_good(struct json_sink *js)
{
	size_t i = js->off;
	while (i && js->out.buf[i - 1] != '\n')
		i--;
	if (i)
		js->good = js->base + i;
}

/* On a write error: a file is cut back to its last whole line. */
static void write_failed(struct json_sink *js, int e)
{
	js->write_errno = e;
	mark_good(js);
	/* a pipe or a terminal cannot be cut: nothing to do there */
	if (js->regular && js->good < js->base + js->off &&
	    ftruncate(js->fd, (off_t)js->good) == 0)
		(void)lseek(js->fd, 0, SEEK_END);
}

/* Room in fd before until, a signal cutting it short; false if none. */
static bool wait_room(struct json_sink *js, int fd, long long until, int nsig)
{
	struct pollfd pfd[2] = {
		{ .fd = fd, .events = POLLOUT },
		{ .fd = sig_fd(), .events = POLLIN },
	};
	long long left = until - clock_mono_ms();
	int r = poll(pfd, 2, left > 0 ? (int)left : 0);
	if (r < 0 && errno != EINTR) {
		write_failed(js, errno);
		return false;
	}
	return r > 0 && pfd[0].revents && sig_count() == nsig;
}

/*
 * Write what waits, without ever blocking on a reader: a file gets
 * everything; a pipe through its own non-blocking opening as much as
 * fits, waiting for room only when it is full; a socket or a terminal
 * what poll says it has room for (a write of at most PIPE_BUF bytes then
 * fits).  wait_ms: how long to wait for room, a signal cutting it short.
 * True when nothing waits.
 */
static bool write_out(struct json_sink *js, int wait_ms)
{
	long long until = clock_mono_ms() + wait_ms;
	int nsig = sig_count();
	int fd = js->nbfd >= 0 ? js->nbfd : js->fd;
	bool polled = !js->regular && js->nbfd < 0;
	while (js->off < js->out.len && !js->write_errno) {
		const char *p = js->out.buf + js->off;
		size_t n = js->out.len - js->off;
		if (polled) {
			if (!wait_room(js, fd, until, nsig))
				break;   /* no room yet, or a signal to see to */
			if (n > PIPE_BUF)
				n = PIPE_BUF;
		}
		ssize_t w = js->socket ?
			send(fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL) :
			write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			/* full: polled, look again; else wait for room */
			if (!polled && !wait_room(js, fd, until, nsig))
				break;
			continue;
		}
		if (w <= 0) {
			write_failed(js, w < 0 ? errno : EIO);
			break;
		}
		js->off += (size_t)w;
	}
	mark_good(js);
	if (js->off == js->out.len || js->write_errno) {
		js->base += js->off;
		js->off = 0;
		sbuf_reset(&js->out);
	} else if (js->off > FLUSH_AT) {
		/* keep the buffer from holding what is out already */
		memmove(js->out.buf, js->out.buf + js->off, js->out.len - js->off);
		js->base += js->off;
		sbuf_truncate(&js->out, js->out.len - js->off);
		js->off = 0;
	}
	return js->out.len == 0;
}

/* The reader is gone for good: what waits is dropped, writing stops. */
static void abandon(struct json_sink *js)
{
	js->stalled = true;
	js->unwritten += js->out.len - js->off;
	js->write_errno = EAGAIN;
	js->base += js->off;
	js->off = 0;
	sbuf_reset(&js->out);
}

void json_sink_flush(struct json_sink *js)
{
	if (js->write_errno || js->fd < 0) {
		sbuf_reset(&js->out);
		js->off = 0;
		return;
	}
	/*
	 * A slow reader slows the loop down a little, never stops it: a
	 * flush waits for room only if the one before it wrote something.
	 * A reader that has stopped would otherwise cost every flush the
	 * whole wait, the loop would read a batch or two a second, and a
	 * flood would bury the agent's answers (the end of a run among
	 * them) under batches it cannot reach.
	 */
	unsigned long long out = js->base + js->off;
	bool done = write_out(js, js->out.len - js->off > FLUSH_AT && !js->behind ?
			      FLUSH_WAIT_MS : 0);
	js->behind = !done && js->base + js->off == out;
	if (done)
		return;
	if (js->out.len - js->off > STALL_BYTES)
		abandon(js);
}

void json_sink_finish(struct json_sink *js, int wait_ms)
{
	if (js->write_errno || js->fd < 0) {
		json_sink_flush(js);
		return;
	}
	if (!write_out(js, wait_ms))
		abandon(js);
}

const char *json_sink_error(const struct json_sink *js)
{
	return js->stalled ? "its reader stopped reading" :
		strerror(js->write_errno);
}

void json_sink_close(struct json_sink *js)
{
	if (js->fd < 0)
		return;
	json_sink_finish(js, FINISH_MS);
	if (js->write_errno && js->file.tmp) {
		outfile_abort(&js->file);
		js->discarded = true;
	} else {
		struct sbuf err = SBUF_INIT;
		if (outfile_commit(&js->file, &err) < 0 && !js->write_errno)
			js->write_errno = errno ? errno : EIO;
		sbuf_release(&err);
	}
	if (js->nbfd >= 0)
		close(js->nbfd);
	js->fd = js->nbfd = -1;
}

void json_sink_release(struct json_sink *js)
{
	json_sink_close(js);
	sbuf_release(&js->out);
	store_release(&js->counts);
	free(js->sent_sum);
	free(js->name);
	memset(js, 0, sizeof(*js));
	js->fd = js->nbfd = -1;
}

struct sbuf *json_sink_buf(struct json_sink *js)
{
	return &js->out;
}

static void on_event(void *arg, int node, const struct event *ev)
{
	struct json_sink *js = arg;
	if (js->fd < 0 || js->write_errno)
		return;
	if (js->counts_mode && ev->type != EV_ALARM) {
		/* counts lines keep the last name a process had; the VM's
		 * alarms are written as they come */
		if (ev->type == EV_REGISTER)
			store_set_info(&js->counts, ev->pid, ev->pid_text,
				       ev->name, NULL, -1);
		if (ev->type == EV_SPAWN)
			store_add_counts(&js->counts, ev->pid, ev->pid_text,
					 0, 0, 1);
		return;
	}
	json_event_paired(&js->out, ev, session_node_name(js->s, node));
	js->events++;
	if (js->out.len > FLUSH_AT)
		json_sink_flush(js);
}

static void on_counts(void *arg, int node, struct bs_pid pid,
		      const char *pid_text, unsigned long sends,
		      unsigned long receives, unsigned long spawns)
{
	struct json_sink *js = arg;
	(void)node;
	if (js->fd < 0)
		return;
	store_add_counts(&js->counts, pid, pid_text, sends, receives, spawns);
}

/* only the name: counts lines keep the last a process had */
static void on_info(void *arg, int node, struct bs_pid pid,
		    const char *pid_text, const char *name, const char *current,
		    long mqlen)
{
	struct json_sink *js = arg;
	(void)node;
	(void)current;
	(void)mqlen;
	if (js->fd >= 0 && name)
		store_set_info(&js->counts, pid, pid_text, name, NULL, -1);
}

/* A counts line for every process with activity (counts mode), or whose
 * totals changed since the last line, stamped ts. */
static void write_counts(struct json_sink *js, int64_t ts)
{
	const struct store *st = &js->counts;
	if (js->nsent < st->nprocs) {
		js->sent_sum = xrealloc(js->sent_sum, st->nprocs *
					sizeof(*js->sent_sum));
		memset(js->sent_sum + js->nsent, 0,
		       (st->nprocs - js->nsent) * sizeof(*js->sent_sum));
		js->nsent = st->nprocs;
	}
	for (size_t i = 0; i < st->nprocs; i++) {
		const struct proc *p = st->procs[i];
		unsigned long sum = p->sends + p->receives + p->spawns;
		/* batch --counts: every active process, every time */
		if (!sum || (!js->counts_mode && sum == js->sent_sum[i]))
			continue;
		js->sent_sum[i] = sum;
		const char *name = p->name ? p->name :
			session_proc_name(js->s, p->pid);
		json_counts(&js->out, session_node_name(js->s, (int)p->pid.node),
			    ts, p->pid_text, name,
			    session_proc_label(js->s, p->pid), p->sends,
			    p->receives, p->spawns);
		js->count_lines++;
	}
}

void json_sink_tick(struct json_sink *js, bool force)
{
	if (js->fd < 0)
		return;
	long long now = clock_mono_ms();
	if (!js->stamped && (force || now >= js->next_counts_ms)) {
		if (!js->write_errno)
			write_counts(js, clock_wall_us());
		js->next_counts_ms = now + js->interval_ms;
	}
	json_sink_flush(js);
}

/* Counts lines stamped ts (a recording's interval), then write; from then
 * on the sink writes counts lines only so (stamped). */
static void on_counts_at(void *arg, int64_t ts)
{
	struct json_sink *js = arg;
	if (js->fd < 0)
		return;
	js->stamped = true;
	if (!js->write_errno)
		write_counts(js, ts);
	json_sink_flush(js);
}

void json_sink_hooks(struct json_sink *js, struct session_sink *out)
{
	*out = (struct session_sink){
		.event = on_event, .counts = on_counts,
		.counts_at = on_counts_at, .info = on_info, .arg = js,
	};
}
