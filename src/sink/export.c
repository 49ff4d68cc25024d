/* export: one JSON object: {"type":"export", node, processes, events},
 * written through outfile a chunk at a time. */
#include "export.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "json.h"
#include "outfile.h"

/* the document goes out in pieces of about this size */
#define EXPORT_CHUNK (1 << 20)

/* What out holds, to f; out is emptied.  False on a write error. */
static bool flush_chunk(struct sbuf *out, FILE *f)
{
	bool ok = fwrite(out->buf, 1, out->len, f) == out->len;
	sbuf_reset(out);
	return ok;
}

/* node: the process's node when several are traced, else NULL */
static void proc_json(struct sbuf *out, const struct proc *p, const char *node)
{
	sbuf_addstr(out, "{\"pid\":");
	json_string(out, p->pid_text);
	if (node) {
		sbuf_addstr(out, ",\"node\":");
		json_string(out, node);
	}
	if (p->name) {
		sbuf_addstr(out, ",\"name\":");
		json_string(out, p->name);
	}
	if (p->label) {
		sbuf_addstr(out, ",\"label\":");
		json_string(out, p->label);
	}
	if (p->initial) {
		sbuf_addstr(out, ",\"initial_call\":");
		json_string(out, p->initial);
	}
	if (p->current) {
		sbuf_addstr(out, ",\"current_function\":");
		json_string(out, p->current);
	}
	sbuf_addf(out, ",\"sends\":%lu,\"receives\":%lu,\"spawns\":%lu",
		  p->sends, p->receives, p->spawns);
	if (p->mqlen >= 0)
		sbuf_addf(out, ",\"message_queue_len\":%ld", p->mqlen);
	if (p->run_us || p->gcs)
		sbuf_addf(out, ",\"running_us\":%lld,\"gcs\":%lu",
			  (long long)p->run_us, p->gcs);
	if (p->has_parent && node) {
		sbuf_addf(out, ",\"parent\":\"<%s.%u.%u>\"", node, p->parent.num,
			  p->parent.serial);
	} else if (p->has_parent) {
		sbuf_addf(out, ",\"parent\":\"<0.%u.%u>\"", p->parent.num,
			  p->parent.serial);
	}
	if (p->exited) {
		sbuf_addstr(out, ",\"exited\":true,\"reason\":");
		json_string(out, p->reason ? p->reason : "");
	}
	sbuf_addch(out, '}');
}

/* The document into out; with f, out is written to f whenever it holds
 * a chunk, so that a big ring is never held twice.  False when writing
 * failed (errno says why). */
static bool export_emit(struct sbuf *out, const struct store *st,
			const char *const *nodes, int nnodes, FILE *f)
{
	sbuf_addstr(out, "{\"type\":\"export\",\"node\":");
	json_string(out, nodes[0]);
	if (nnodes > 1) {
		sbuf_addstr(out, ",\"nodes\":[");
		for (int i = 0; i < nnodes; i++) {
			if (i)
				sbuf_addch(out, ',');
			json_string(out, nodes[i]);
		}
		sbuf_addch(out, ']');
	}
	sbuf_addf(out, ",\"exported_ts\":%lld,\"evicted_events\":%llu,\"processes\":[",
		  (long long)clock_wall_us(),
		  (unsigned long long)st->evicted);
	for (size_t i = 0; i < st->nprocs; i++) {
		if (i)
			sbuf_addch(out, ',');
		const struct proc *p = st->procs[i];
		proc_json(out, p, nnodes > 1 && (int)p->pid.node < nnodes ?
			  nodes[p->pid.node] : NULL);
		if (f && out->len >= EXPORT_CHUNK && !flush_chunk(out, f))
			return false;
	}
	sbuf_addstr(out, "],\"events\":[");
	bool first = true;
	for (uint64_t s = store_oldest_seq(st); s < st->next_seq; s++) {
		const struct sevent *e = store_event(st, s);
		if (!e)
			continue;
		struct event ev = {
			.type = e->type, .ts = e->ts, .pid = e->pid,
			.pid_text = e->pid_text, .name = e->name, .peer = e->peer,
			.peer_name = e->peer_name, .mfa = e->mfa,
			.payload = e->payload, .truncated = e->truncated,
			.extra = e->extra, .elapsed_us = e->elapsed_us,
			.heap = { e->heap[0], e->heap[1], e->heap[2], e->heap[3] },
			.from = e->from, .latency_us = e->latency_us,
		};
		if (!first)
			sbuf_addch(out, ',');
		first = false;
		json_event_paired(out, &ev, (int)e->pid.node < nnodes ?
				  nodes[e->pid.node] : nodes[0]);
		sbuf_truncate(out, out->len - 1);   /* the newline */
		if (f && out->len >= EXPORT_CHUNK && !flush_chunk(out, f))
			return false;
	}
	sbuf_addstr(out, "]}\n");
	return !f || flush_chunk(out, f);
}

void export_json(struct sbuf *out, const struct store *st,
		 const char *const *nodes, int nnodes)
{
	export_emit(out, st, nodes, nnodes, NULL);
}

int export_write(const char *path, const struct store *st,
		 const char *const *nodes, int nnodes, int input_fd,
		 struct sbuf *err)
{
	struct outfile of;
	struct sbuf doc = SBUF_INIT, why = SBUF_INIT;

	if (!path || !*path) {
		sbuf_addstr(err, "export needs a file name: export FILE");
		return -1;
	}
	if (outfile_open(&of, path, OUTFILE_REPLACE, input_fd, &why) < 0) {
		if (strstr(why.buf, "is a directory"))
			sbuf_addf(err, "%s; name a file in it, e.g. %s%sbeamscope.json",
				  why.buf, path,
				  path[strlen(path) - 1] == '/' ? "" : "/");
		else
			sbuf_addf(err, "%s; choose another file", why.buf);
		sbuf_release(&why);
		return -1;
	}
	FILE *f = outfile_file(&of);
	if (!f || !export_emit(&doc, st, nodes, nnodes, f)) {
		int e = errno ? errno : EIO;
		outfile_abort(&of);
		sbuf_release(&doc);
		sbuf_addf(err, "cannot write \"%s\": %s; nothing was written "
			  "there; make room or choose another file", path,
			  strerror(e));
		return -1;
	}
	sbuf_release(&doc);
	if (outfile_commit(&of, &why) < 0) {
		sbuf_addf(err, "%s; nothing was written there; make room or "
			  "choose another file", why.buf);
		sbuf_release(&why);
		return -1;
	}
	return 0;
}
