/* jsonsink: see jsonsink.h. */
#include "jsonsink.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "json.h"
#include "session.h"
#include "xalloc.h"

/* past this much waiting output, write at once */
#define FLUSH_AT (1 << 20)

void json_sink_init(struct json_sink *js, const struct session *s,
		    bool counts_mode, long long interval_ms)
{
	memset(js, 0, sizeof(*js));
	js->s = s;
	js->fd = -1;
	js->counts_mode = counts_mode;
	js->interval_ms = interval_ms > 0 ? interval_ms : 1000;
	sbuf_init(&js->out);
	store_init(&js->counts, 1);
}

int json_sink_open(struct json_sink *js, const char *path, struct sbuf *err)
{
	json_sink_close(js);
	free(js->name);
	js->good = 0;
	js->write_errno = 0;
	js->events = 0;
	js->count_lines = 0;
	if (!path || !strcmp(path, "-")) {
		js->fd = STDOUT_FILENO;
		js->own_fd = false;
		js->name = xstrdup("standard output");
	} else {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			sbuf_addf(err, "cannot write \"%s\": %s", path,
				  strerror(errno));
			js->name = NULL;
			return -1;
		}
		js->fd = fd;
		js->own_fd = true;
		js->name = xstrdup(path);
	}
	js->next_counts_ms = clock_mono_ms() + js->interval_ms;
	return 0;
}

void json_sink_flush(struct json_sink *js)
{
	if (!js->out.len || js->write_errno || js->fd < 0)
		goto done;
	size_t off = 0;
	while (off < js->out.len) {
		ssize_t w = write(js->fd, js->out.buf + off, js->out.len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			js->write_errno = w < 0 ? errno : EIO;
			break;
		}
		off += (size_t)w;
	}
	if (js->write_errno) {
		size_t whole = off;
		while (whole && js->out.buf[whole - 1] != '\n')
			whole--;
		/* a pipe or a terminal cannot be cut: nothing to do there */
		if (whole < off &&
		    ftruncate(js->fd, (off_t)(js->good + whole)) == 0)
			(void)lseek(js->fd, 0, SEEK_END);
		off = whole;
	}
	js->good += off;
done:
	sbuf_reset(&js->out);
}

void json_sink_close(struct json_sink *js)
{
	if (js->fd < 0)
		return;
	json_sink_flush(js);
	if (js->own_fd)
		close(js->fd);
	js->fd = -1;
}

void json_sink_release(struct json_sink *js)
{
	json_sink_close(js);
	sbuf_release(&js->out);
	store_release(&js->counts);
	free(js->sent_sum);
	free(js->name);
	memset(js, 0, sizeof(*js));
	js->fd = -1;
}

struct sbuf *json_sink_buf(struct json_sink *js)
{
	return &js->out;
}

void json_sink_event(struct json_sink *js, int node, const struct event *ev)
{
	if (js->fd < 0 || js->write_errno)
		return;
	if (js->counts_mode) {
		/* counts lines keep the last name a process had */
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

void json_sink_counts(struct json_sink *js, int node, struct bs_pid pid,
		      const char *pid_text, unsigned long sends,
		      unsigned long receives, unsigned long spawns)
{
	(void)node;
	if (js->fd < 0)
		return;
	store_add_counts(&js->counts, pid, pid_text, sends, receives, spawns);
}

void json_sink_name(struct json_sink *js, struct bs_pid pid,
		    const char *pid_text, const char *name)
{
	if (js->fd >= 0 && name)
		store_set_info(&js->counts, pid, pid_text, name, NULL, -1);
}

/* A counts line for every process with activity (counts mode), or whose
 * totals changed since the last line. */
static void write_counts(struct json_sink *js)
{
	int64_t ts = clock_wall_us();
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
			    ts, p->pid_text, name, p->sends, p->receives,
			    p->spawns);
		js->count_lines++;
	}
}

void json_sink_tick(struct json_sink *js, bool force)
{
	if (js->fd < 0)
		return;
	long long now = clock_mono_ms();
	if (force || now >= js->next_counts_ms) {
		if (!js->write_errno)
			write_counts(js);
		js->next_counts_ms = now + js->interval_ms;
	}
	json_sink_flush(js);
}
