/*
 * fuzz_recording: libFuzzer target for the reader of recordings.  The
 * input is the file, through a memfd; the reader is built with a tiny read
 * buffer (RECORDING_RBUF_SIZE) so that lines span reads, and with an odd
 * first byte the line cap is lowered so that lines go over it.  Every
 * string a sink gets is read whole and every event is written back as
 * JSON; an index out of range, a type out of range or a count that does
 * not add up aborts.  So does the reader holding more than its bounds
 * allow: a line or an export's entry over line_max, more nodes than
 * RECORDING_NODES_MAX (an export of any length is streamed, never held).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "json.h"
#include "recording.h"

static struct sbuf out;

struct seen {
	const struct recording *r;
	int nodes;
	unsigned long items, events;
};

static void touch(const char *s)
{
	if (s)
		json_string(&out, s);
}

static void check_node(const struct seen *sn, int node)
{
	if (node < 0 || node >= sn->r->nnodes || node >= sn->nodes)
		abort();
}

static void on_node(void *arg, int idx, const char *name)
{
	struct seen *sn = arg;
	if (idx != sn->nodes++ || !name || !*name)
		abort();
	touch(name);
}

static void on_event(void *arg, int node, const struct event *ev)
{
	struct seen *sn = arg;
	check_node(sn, node);
	check_node(sn, (int)ev->pid.node);
	if ((int)ev->type < 0 || ev->type >= EV__COUNT ||
	    EVENT_IS_GC_START(ev->type) || !ev->pid_text)
		abort();
	touch(ev->from);
	json_event_paired(&out, ev, sn->r->nodes[node]);
	sn->items++;
	sn->events++;
}

static void on_counts(void *arg, int node, const struct recording_counts *c)
{
	struct seen *sn = arg;
	check_node(sn, node);
	check_node(sn, (int)c->pid.node);
	json_counts(&out, sn->r->nodes[node], c->ts, c->pid_text, c->name, NULL,
		    c->sends, c->receives, c->spawns);
	sn->items++;
}

static void on_proc(void *arg, int node, const struct recording_proc *p)
{
	struct seen *sn = arg;
	check_node(sn, node);
	check_node(sn, (int)p->pid.node);
	if (p->has_parent)
		check_node(sn, (int)p->parent.node);
	touch(p->pid_text);
	touch(p->name);
	touch(p->initial_call);
	touch(p->current_function);
	touch(p->parent_text);
	touch(p->reason);
	sn->items++;
}

static void on_summary(void *arg, int node, const struct recording_summary *s)
{
	struct seen *sn = arg;
	if (node != -1 || s->node)
		check_node(sn, node);
	if (!s->type || !s->obj)
		abort();
	touch(s->type);
	touch(s->node);
	touch(s->ended);
	sn->items++;
}

static void on_profile(void *arg, int node, const struct prof_sample *p)
{
	struct seen *sn = arg;
	check_node(sn, node);
	check_node(sn, (int)p->pid.node);
	if (p->nframes < 0 || p->nframes > PROF_FRAMES_MAX)
		abort();
	json_profile_sample(&out, sn->r->nodes[node], p);
	sn->items++;
}

static const struct recording_sink sink = {
	on_node, on_event, on_counts, on_proc, on_summary, on_profile,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct recording r;
	struct sbuf err = SBUF_INIT;
	int fd = memfd_create("fuzz-recording", MFD_CLOEXEC);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) ||
	    lseek(fd, 0, SEEK_SET) != 0)
		abort();
	if (recording_open_fd(&r, fd, "fuzz", &err) < 0) {
		/* one line, and a reason */
		if (!err.len || strchr(err.buf, '\n'))
			abort();
		sbuf_release(&err);
		return 0;
	}
	if (size && (data[0] & 1))
		r.line_max = 48;
	struct seen sn = { .r = &r };
	int rc, calls = 0;
	while ((rc = recording_read(&r, 1 + calls % 5, &sink, &sn)) == 1) {
		if (++calls > 1000000)
			abort();
		if (r.line.len > r.line_max || r.scan.head.len > r.line_max + 1 ||
		    r.nnodes > RECORDING_NODES_MAX)
			abort();
	}
	if (rc != 0 || sn.items != r.stats.items || sn.events != r.stats.events ||
	    sn.nodes != r.nnodes || r.told != r.nnodes || r.stats.bytes != size ||
	    (r.stats.malformed && !r.stats.first_malformed) ||
	    r.stats.first_malformed > r.stats.lines || r.line.len || r.export)
		abort();
	recording_release(&r);
	sbuf_reset(&out);
	sbuf_release(&err);
	return 0;
}
