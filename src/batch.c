/*
 * batch: one run of batch mode, over one node or several.
 *
 * Life of a run: connect to every node, bootstrap an agent on each, measure
 * each node's clock (several nodes only), set flags, then one loop that
 * reads every connection until a limit, a signal, or every target going
 * away; then ask the agents to stop, keep reading until every worker has sent
 * its last batch (or a deadline passes), and write the summary.  Events that
 * arrive after --max-events was reached are counted, not written.
 *
 * One node: events are written as they arrive, stamped with the target's
 * clock, pids as the target shows them.  Several nodes: events go through
 * the merge buffer and come out on one timeline in beamscope's clock, every
 * pid written with its node, receives paired with the sends of other nodes.
 */
#include "batch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "attach.h"
#include "callstack.h"
#include "conn.h"
#include "decode.h"
#include "exitcode.h"
#include "json.h"
#include "merge.h"
#include "node.h"
#include "sig.h"
#include "stats.h"
#include "store.h"
#include "xalloc.h"

#define PING_EVERY_MS 1000
#define STOP_TMO_MS 5000
#define READ_BUDGET 256
#define CLOCK_SAMPLES 8
#define RETRY_EVERY_MS 1000
/* merging: how far behind a busy node's newest event the timeline waits,
 * and after how long without a batch a node counts as quiet */
#define MERGE_SLACK_US 100000
#define MERGE_QUIET_MS 250
#define MERGE_MAX_ITEMS 500000

struct run;

/* One target node and its session. */
struct tnode {
	struct run *run;
	int idx;
	char arg[520];          /* the name as given or as its peers know it */
	struct conn conn;
	struct agent agent;
	struct decoder dec;
	struct trace_stats st;
	struct callstacks calls;
	struct trace_result tr;
	bool stats_ready;       /* stats and decoder are set up */
	bool tracing;           /* the trace request was accepted */
	bool lost;              /* the connection went away (maybe for now) */
	bool ever_lost;
	char left[32];          /* its agent left by itself: the summary's
				 * ended (agent_timeout, agent_lost), else "" */
	bool ever_left;
	bool stopped;           /* asked to stop */
	int sessions;
	long long clock_offset_us, clock_error_us;
	int64_t last_ts;        /* newest event, beamscope's clock */
	long long last_rx_ms;   /* when its last batch arrived */
	long long next_retry_ms;
	bool retry_said;        /* told the user why it is not back yet */
	char tripped[32];       /* a limit the target enforced, "" if none */
	long shed;              /* events shed over --rate */
	/* --counts: per-process totals, written every interval */
	struct store store;
	long count_overflow;
	unsigned long count_lines;
};

struct run {
	const struct config *cfg;
	bool multi;             /* several nodes: merged timeline */
	struct tnode *nodes;
	int nnodes;
	struct merge merge;
	struct sbuf out;        /* JSON waiting to be written */
	FILE *fp;               /* written with write(2) only: no stdio buffer */
	unsigned long long out_good; /* bytes of whole lines written */
	const char *out_name;
	int write_errno;        /* first write error, 0 if none */
	bool limit_hit;
	unsigned long written;  /* events written, every node */
	struct trace_spec spec;
};

static long long mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static long long wall_us(void)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	return (long long)tv.tv_sec * 1000000 + tv.tv_usec;
}

static void note(const struct config *cfg, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void note(const struct config *cfg, const char *fmt, ...)
{
	if (cfg->quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("beamscope: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/*
 * Write what is waiting, whole lines only: the buffer holds whole lines,
 * and if the disk fills halfway through it, the file is cut back to the
 * end of the last line that made it, so what is there stays valid NDJSON.
 */
static void flush_out(struct run *r)
{
	if (!r->out.len || r->write_errno)
		goto done;
	int fd = fileno(r->fp);
	size_t off = 0;
	while (off < r->out.len) {
		ssize_t w = write(fd, r->out.buf + off, r->out.len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			r->write_errno = w < 0 ? errno : EIO;
			break;
		}
		off += (size_t)w;
	}
	if (r->write_errno) {
		size_t whole = off;
		while (whole && r->out.buf[whole - 1] != '\n')
			whole--;
		/* a pipe or a terminal cannot be cut: nothing to do there */
		if (whole < off && ftruncate(fd, (off_t)(r->out_good + whole)) == 0)
			(void)lseek(fd, 0, SEEK_END);
		off = whole;
	}
	r->out_good += off;
done:
	sbuf_reset(&r->out);
}

/* The node's name as it calls itself once attached, else as given. */
static const char *node_name(const struct tnode *n)
{
	return n->agent.node[0] ? n->agent.node : n->arg;
}

/* merge's lookup: the attached node a "<name@host.N.S>" pid lives on */
static int node_of(void *arg, const char *pid_text)
{
	struct run *r = arg;
	const char *dot = strrchr(pid_text, '.');
	if (pid_text[0] != '<' || !dot)
		return -1;
	while (dot > pid_text && dot[-1] != '.')
		dot--;
	if (dot <= pid_text + 1)
		return -1;
	size_t len = (size_t)(dot - 1 - (pid_text + 1));
	for (int i = 0; i < r->nnodes; i++) {
		const char *nm = r->nodes[i].agent.node;
		if (strlen(nm) == len && !memcmp(nm, pid_text + 1, len))
			return i;
	}
	return -1;
}

/* A pid text of an attached node: its registered name there, or NULL. */
static const char *name_of(struct run *r, const char *pid_text)
{
	int i;
	const char *p;
	if (!pid_text || (i = node_of(r, pid_text)) < 0)
		return NULL;
	p = strrchr(pid_text, '.');
	const char *q = p - 1;
	while (q > pid_text && *q != '.')
		q--;
	struct bs_pid pid = { (uint32_t)strtoul(q + 1, NULL, 10),
			      (uint32_t)strtoul(p + 1, NULL, 10), 0 };
	return names_get(&r->nodes[i].agent.names, pid);
}

static void on_event(void *arg, const struct event *ev)
{
	struct tnode *n = arg;
	struct run *r = n->run;
	const struct config *cfg = r->cfg;

	if (r->multi) {
		int64_t ts = ev->ts - n->clock_offset_us;
		if (ts > n->last_ts)
			n->last_ts = ts;
	}
	/* counts lines keep the last name a process had, even after it died */
	if (cfg->counts && ev->type == EV_REGISTER)
		store_set_info(&n->store, ev->pid, ev->pid_text, ev->name, NULL, -1);
	if (!(event_types[ev->type].kind & cfg->kinds)) {
		n->st.filtered++;
		return;
	}
	if (cfg->counts) {
		/* spawns are counted from their events; nothing is written */
		if (ev->type == EV_SPAWN)
			store_add_counts(&n->store, ev->pid, ev->pid_text, 0, 0, 1);
		n->st.counts[ev->type]++;
		return;
	}
	if (cfg->max_events && r->written >= cfg->max_events) {
		n->st.over_limit++;
		r->limit_hit = true;
		return;
	}
	struct event e = *ev;
	callstacks_event(&n->calls, &e);
	if (EVENT_IS_GC_START(e.type))
		return;   /* written with its end */
	if (r->multi) {
		e.ts -= n->clock_offset_us;
		if (e.peer && !e.peer_name)
			e.peer_name = name_of(r, e.peer);
		merge_add(&r->merge, n->idx, &e);
	} else {
		json_event(&r->out, &e, n->agent.node);
	}
	n->st.counts[ev->type]++;
	n->st.written++;
	r->written++;
	if (cfg->max_events && r->written >= cfg->max_events)
		r->limit_hit = true;
}

static void on_batch(void *arg, const char *buf, const struct msg *m)
{
	struct tnode *n = arg;
	if (!n->stats_ready)
		return;
	int idx = m->body;
	long k = decode_events(&n->dec, buf, &idx, (int)m->worker, on_event, n);
	n->last_rx_ms = mono_ms();
	if (!stats_batch(&n->st, m->worker, m->seq, m->dropped, k < 0 ? 0 : k))
		return;
	if (k < 0)
		n->dec.malformed++;
	if (!n->run->multi)
		flush_out(n->run);
}

static void on_eos(void *arg, const struct msg *m)
{
	struct tnode *n = arg;
	if (n->stats_ready)
		stats_eos(&n->st, m->worker, m->seq, m->dropped);
}

static void count_one(void *arg, struct bs_pid pid, const char *pid_text,
		      unsigned long sends, unsigned long receives)
{
	struct tnode *n = arg;
	store_add_counts(&n->store, pid, pid_text, sends, receives, 0);
}

static void on_counts(void *arg, const char *buf, const struct msg *m)
{
	struct tnode *n = arg;
	if (!n->stats_ready)
		return;
	int idx = m->body;
	n->count_overflow = m->dropped;
	decode_counts(&n->dec, buf, &idx, count_one, n);
}

/* Every process with any activity, totals so far. */
static void write_counts(struct run *r, struct tnode *n)
{
	int64_t ts = wall_us();
	for (size_t i = 0; i < n->store.nprocs; i++) {
		const struct proc *p = n->store.procs[i];
		if (!(p->sends || p->receives || p->spawns))
			continue;
		json_counts(&r->out, node_name(n), ts, p->pid_text,
			    p->name ? p->name : names_get(&n->agent.names, p->pid),
			    p->sends, p->receives, p->spawns);
		n->count_lines++;
	}
	flush_out(r);
}

static void on_limit(void *arg, const struct msg *m)
{
	struct tnode *n = arg;
	if (strcmp(m->limit, "none"))
		snprintf(n->tripped, sizeof(n->tripped), "%s", m->limit);
	if (m->dropped > n->shed)
		n->shed = m->dropped;
}

/* A merged event leaves the buffer: its line, with the sender if paired. */
static void write_item(void *arg, const struct mitem *it)
{
	struct run *r = arg;
	json_event_paired(&r->out, &it->ev, node_name(&r->nodes[it->node]));
	if (r->out.len > (1 << 20))
		flush_out(r);
}

/*
 * How far the merged timeline may go: no node is expected to deliver
 * anything older.  A node that sent a batch recently is trusted up to its
 * newest event (less a slack, since its workers are separate streams); a
 * quiet one up to a little before now.
 */
static int64_t watermark(struct run *r)
{
	long long now = mono_ms();
	int64_t wm = INT64_MAX, quiet = wall_us() - MERGE_QUIET_MS * 1000LL;
	for (int i = 0; i < r->nnodes; i++) {
		struct tnode *n = &r->nodes[i];
		if (!n->tracing || n->lost)
			continue;
		int64_t w = now - n->last_rx_ms > MERGE_QUIET_MS ?
			quiet : n->last_ts - MERGE_SLACK_US;
		if (w < wm)
			wm = w;
	}
	return wm == INT64_MAX ? quiet : wm;
}

static void release_merged(struct run *r, int64_t wm)
{
	if (!r->multi)
		return;
	merge_flush(&r->merge, wm, write_item, r);
	flush_out(r);
}

static int open_output(struct run *r)
{
	if (!r->cfg->output || !strcmp(r->cfg->output, "-")) {
		r->fp = stdout;
		r->out_name = "standard output";
		return 0;
	}
	r->out_name = r->cfg->output;
	int fd = open(r->cfg->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
		      0644);
	if (fd < 0 || !(r->fp = fdopen(fd, "w"))) {
		fprintf(stderr, "beamscope: cannot write \"%s\": %s; choose "
			"another -o FILE\n", r->cfg->output, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return 0;
}

static const char *pids_text(const struct config *cfg)
{
	switch (cfg->pids.mode) {
	case SEL_ALL: return "all processes";
	case SEL_NEW: return "new processes";
	case SEL_EXISTING: return "existing processes";
	case SEL_LIST: return "the chosen processes";
	}
	return "?";
}

static void kinds_text(int kinds, char *out, size_t outsz)
{
	out[0] = '\0';
	for (int bit = 1; bit <= KIND_RUNNING; bit <<= 1)
		if ((kinds & bit) && event_kind_name(bit)) {
			size_t n = strlen(out);
			snprintf(out + n, outsz - n, "%s%s", n ? "," : "",
				 event_kind_name(bit));
		}
}

/* ---- the nodes ---- */

static struct tnode *node_add(struct run *r, const char *name)
{
	/* allocated once: agents, decoders and streams point into it */
	if (!r->nodes)
		r->nodes = xcalloc(BS_MAX_NODES, sizeof(*r->nodes));
	struct tnode *n = &r->nodes[r->nnodes];
	memset(n, 0, sizeof(*n));
	n->run = r;
	n->idx = r->nnodes++;
	snprintf(n->arg, sizeof(n->arg), "%s", name);
	n->count_overflow = -1;
	n->clock_error_us = -1;
	store_init(&n->store, 1);
	callstacks_init(&n->calls);
	conn_init(&n->conn);
	struct agent_stream stream = { on_batch, on_eos, on_counts, NULL,
				       on_limit, n };
	agent_init(&n->agent, &n->conn, &stream);
	return n;
}

static void node_free(struct tnode *n)
{
	conn_release(&n->conn);
	trace_result_release(&n->tr);
	if (n->stats_ready) {
		decoder_release(&n->dec);
		stats_release(&n->st);
	}
	agent_release(&n->agent);
	store_release(&n->store);
	callstacks_release(&n->calls);
}

/* Connect and bootstrap; EXIT_* with err set on failure. */
static int node_attach(struct run *r, struct tnode *n, struct sbuf *err)
{
	int rc = attach_open_node(r->cfg, n->arg, &n->conn, &n->agent, err);
	if (rc != EXIT_OK)
		return rc;
	if (n->agent.notice[0])
		note(r->cfg, "%s", n->agent.notice);
	if (!n->stats_ready) {
		stats_init(&n->st, n->agent.workers);
		decoder_init(&n->dec, r->multi ? NULL : n->agent.node,
			     r->cfg->payload_bytes, &n->agent.names);
		n->stats_ready = true;
	} else {
		stats_new_session(&n->st, n->agent.workers);
	}
	n->sessions++;
	if (r->multi) {
		if (agent_clock(&n->agent, CLOCK_SAMPLES, &n->clock_offset_us,
				&n->clock_error_us) < 0) {
			sbuf_addf(err, "node \"%s\" did not answer the clock "
				  "requests", node_name(n));
			return EXIT_CONNECT;
		}
	}
	n->last_rx_ms = mono_ms();
	n->last_ts = wall_us();
	return EXIT_OK;
}

static int node_trace(struct run *r, struct tnode *n, struct sbuf *err)
{
	const struct config *cfg = r->cfg;
	trace_result_release(&n->tr);
	memset(&n->tr, 0, sizeof(n->tr));
	/* several nodes: each traces the names registered there */
	struct pidsel here;
	struct trace_spec spec = r->spec;
	pidsel_on_node(r->spec.sel, &n->agent.names, &here);
	if (r->multi)
		spec.sel = &here;
	int rc = agent_trace(&n->agent, &spec, &n->tr, err);
	pidsel_release(&here);
	if (rc != EXIT_OK)
		return rc;
	n->tracing = true;
	n->lost = false;
	n->left[0] = '\0';
	n->last_rx_ms = mono_ms();
	char kt[128], clk[96] = "";
	kinds_text(cfg->kinds, kt, sizeof(kt));
	if (r->multi)
		snprintf(clk, sizeof(clk), ", clock %+lld us +-%lld",
			 n->clock_offset_us, n->clock_error_us);
	note(cfg, "attached to %s (OTP %s, %d workers%s); tracing %s of %s (%lu)",
	     n->agent.node, n->agent.otp, n->agent.workers, clk, kt,
	     pids_text(cfg), n->tr.traced);
	for (int i = 0; i < n->tr.nskipped; i++)
		note(cfg, "%s is already traced by another tracer; skipped",
		     n->tr.skipped[i]);
	for (int i = 0; i < n->tr.npatterns && i < cfg->ncalls; i++)
		note(cfg, "--call \"%s\": %ld function%s", cfg->calls[i],
		     n->tr.pattern_functions[i],
		     n->tr.pattern_functions[i] == 1 ? "" : "s");
	for (int i = 0; i < n->tr.nskipped_functions; i++)
		note(cfg, "%s already has a trace pattern set by someone else; "
		     "skipped", n->tr.skipped_functions[i]);
	return EXIT_OK;
}

static void mark_lost(struct tnode *n)
{
	n->lost = n->ever_lost = true;
	conn_close(&n->conn);
	n->next_retry_ms = mono_ms() + RETRY_EVERY_MS;
}

/*
 * The agent left by itself and said why (it heard nothing from us for
 * --dependency-timeout, or failed): the target is clean, what it sent is
 * in, and the node counts as lost.
 */
static void node_agent_left(struct run *r, struct tnode *n)
{
	struct sbuf why = SBUF_INIT;
	agent_gone_text(&n->agent, &why);
	snprintf(n->left, sizeof(n->left), "%s",
		 !strcmp(n->agent.gone_why, "owner_silent") ?
		 "agent_timeout" : "agent_lost");
	n->ever_left = true;
	fprintf(stderr, "beamscope: %s; %s\n", sbuf_str(&why),
		r->multi ? (r->cfg->reconnect ? "the others go on; attaching "
			    "again" : "the others go on") :
		r->cfg->reconnect ? "attaching again" :
		"the events received up to then are kept");
	sbuf_release(&why);
	mark_lost(n);
}

static void node_lost(struct run *r, struct tnode *n)
{
	if (n->lost)
		return;
	mark_lost(n);
	if (r->multi)
		fprintf(stderr, "beamscope: lost node \"%s\"; the others go on%s\n",
			node_name(n), r->cfg->reconnect ?
			", attaching again when it is back" : "");
}

/* --reconnect: try a lost node again. */
static void node_retry(struct run *r, struct tnode *n)
{
	struct sbuf err = SBUF_INIT;
	n->next_retry_ms = mono_ms() + RETRY_EVERY_MS;
	conn_release(&n->conn);
	conn_init(&n->conn);
	/* a fresh agent: the old one's names and pending requests are gone */
	struct agent_stream stream = n->agent.stream;
	agent_release(&n->agent);
	agent_init(&n->agent, &n->conn, &stream);
	/* a node still booting does not answer: try again soon instead of
	 * holding up the others */
	n->agent.rpc_tmo_ms = RETRY_EVERY_MS;
	n->dec.names = &n->agent.names;
	if (node_attach(r, n, &err) == EXIT_OK && node_trace(r, n, &err) == EXIT_OK) {
		n->agent.rpc_tmo_ms = 0;
		n->retry_said = false;
		note(r->cfg, "attached to \"%s\" again", node_name(n));
	} else {
		if (!n->retry_said)
			note(r->cfg, "\"%s\" is not back yet: %s", node_name(n),
			     sbuf_str(&err));
		n->retry_said = true;
		conn_close(&n->conn);
	}
	sbuf_release(&err);
}

/* --cluster: every visible node of the attached ones, not yet in the run. */
static void discover(struct run *r)
{
	int known = r->nnodes;
	for (int i = 0; i < known; i++) {
		char **names = NULL;
		if (agent_visible_nodes(&r->nodes[i].agent, &names) < 0)
			continue;
		for (char **p = names; *p; p++) {
			bool have = false;
			for (int k = 0; k < r->nnodes; k++)
				have |= !strcmp(node_name(&r->nodes[k]), *p) ||
					!strcmp(r->nodes[k].arg, *p);
			if (!have && r->nnodes < BS_MAX_NODES)
				node_add(r, *p);
		}
		node_names_free(names);
	}
}

/*
 * Wait up to ms for input on any node; read what has arrived.  Lost
 * connections are marked; PUMP_SIGNAL when a signal is pending.
 */
static enum pump_result pump_all(struct run *r, int ms)
{
	struct pollfd pfd[BS_MAX_NODES + 1];
	int who[BS_MAX_NODES + 1], np = 0;
	pfd[np].fd = sig_fd();
	pfd[np].events = POLLIN;
	who[np++] = -1;
	for (int i = 0; i < r->nnodes; i++)
		if (!r->nodes[i].lost && r->nodes[i].conn.fd >= 0) {
			pfd[np].fd = r->nodes[i].conn.fd;
			pfd[np].events = POLLIN;
			who[np++] = i;
		}
	int rc = poll(pfd, (nfds_t)np, ms);
	if (rc < 0)
		return errno == EINTR ? PUMP_SIGNAL : PUMP_OK;
	if (pfd[0].revents & POLLIN)
		return PUMP_SIGNAL;
	for (int k = 1; k < np; k++) {
		if (!(pfd[k].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		struct tnode *n = &r->nodes[who[k]];
		if (agent_read(&n->agent, READ_BUDGET) == PUMP_LOST)
			node_lost(r, n);
		else if (n->agent.gone && !n->lost)
			node_agent_left(r, n);
	}
	return PUMP_OK;
}

/*
 * After beamscope itself was stopped (SIGSTOP, a suspended machine) for
 * longer than --dependency-timeout: an agent that cleaned up meanwhile may
 * not have been able to say so (its last words wait on a busy link), so ask
 * whether it is still there.
 */
static void check_agents(struct run *r)
{
	for (int i = 0; i < r->nnodes; i++) {
		struct tnode *n = &r->nodes[i];
		if (n->lost || !n->tracing)
			continue;
		agent_check_gone(&n->agent, (long)(r->cfg->dep_timeout * 1000));
		if (n->agent.gone && !n->lost)
			node_agent_left(r, n);
	}
}

static bool all_lost(const struct run *r)
{
	for (int i = 0; i < r->nnodes; i++)
		if (!r->nodes[i].lost)
			return false;
	return true;
}

static const char *tripped_why(const char *t)
{
	return !strcmp(t, "max_events") ? "max_events" :
		!strcmp(t, "rate") ? "rate" : "duration";
}

/* Stop every agent and wait for their workers' last batches. */
static void drain(struct run *r)
{
	const struct config *cfg = r->cfg;
	for (int i = 0; i < r->nnodes; i++) {
		struct tnode *n = &r->nodes[i];
		if (!n->lost && n->tracing)
			n->stopped = agent_stop_send(&n->agent) == 0;
	}
	long long stop_deadline = mono_ms() + STOP_TMO_MS;
	int signals = sig_count();
	for (;;) {
		bool done = true;
		for (int i = 0; i < r->nnodes; i++) {
			struct tnode *n = &r->nodes[i];
			if (n->stopped && !n->lost &&
			    !(agent_reply_arrived(&n->agent) && stats_all_eos(&n->st)))
				done = false;
		}
		long long left = stop_deadline - mono_ms();
		if (done || left <= 0)
			break;
		if (pump_all(r, (int)left) == PUMP_SIGNAL) {
			sig_take();
			/* a second Ctrl-C: stop waiting, the agents clean up
			 * by themselves when we disconnect */
			if (sig_count() > signals)
				break;
		}
		release_merged(r, watermark(r));
	}
	for (int i = 0; i < r->nnodes; i++) {
		struct tnode *n = &r->nodes[i];
		if (n->stopped && !n->lost && !agent_reply_arrived(&n->agent))
			note(cfg, "the agent on \"%s\" did not confirm the stop; it "
			     "cleans up by itself once beamscope is gone",
			     node_name(n));
	}
}

static void node_summary(struct run *r, struct tnode *n, const char *ended,
			 long long started, long long t0)
{
	const struct config *cfg = r->cfg;
	struct summary_info si = {
		.type = r->multi ? "node_summary" : NULL,
		.node = node_name(n),
		.ended = n->left[0] ? n->left : n->lost ? "target_lost" : ended,
		.started_us = started,
		.duration_ms = mono_ms() - t0,
		.limit_duration = cfg->duration,
		.limit_events = cfg->max_events,
		.payload_bytes = cfg->payload_bytes,
		.traced = n->tr.traced,
		.skipped = (const char *const *)n->tr.skipped,
		.nskipped = n->tr.nskipped,
		.malformed = n->dec.malformed,
		.count_overflow = cfg->counts ? n->count_overflow : -1,
		.count_lines = n->count_lines,
		.calls = cfg->calls,
		.pattern_functions = n->tr.pattern_functions,
		.npatterns = n->tr.npatterns < cfg->ncalls ? n->tr.npatterns :
			cfg->ncalls,
		.skipped_functions = (const char *const *)n->tr.skipped_functions,
		.nskipped_functions = n->tr.nskipped_functions,
		.shed = n->shed,
		.clock_offset_us = n->clock_offset_us,
		.clock_error_us = r->multi ? n->clock_error_us : -1,
		.sessions = n->sessions,
	};
	n->st.unknown = n->agent.unknown;
	json_summary(&r->out, &si, &n->st);
}

static void cluster_summary(struct run *r, const char *ended,
			    long long started, long long t0)
{
	const char *names[BS_MAX_NODES];
	bool lost[BS_MAX_NODES];
	struct cluster_summary cs = {
		.nodes = names, .lost = lost, .nnodes = r->nnodes,
		.ended = ended, .started_us = started,
		.duration_ms = mono_ms() - t0, .events = r->written,
		.paired = r->merge.st.paired, .ambiguous = r->merge.st.ambiguous,
		.unmatched = r->merge.st.expired, .forced = r->merge.st.forced,
	};
	for (int i = 0; i < r->nnodes; i++) {
		names[i] = node_name(&r->nodes[i]);
		lost[i] = r->nodes[i].ever_lost;
		if (r->nodes[i].stats_ready) {
			cs.delivered += stats_delivered(&r->nodes[i].st);
			cs.dropped += stats_dropped(&r->nodes[i].st);
		}
	}
	json_cluster_summary(&r->out, &cs);
}

/* Attach to every node, then start tracing on each.  EXIT_* code. */
static int start(struct run *r, struct sbuf *err)
{
	const struct config *cfg = r->cfg;
	int given = r->nnodes;
	for (int i = 0; i < r->nnodes; i++) {
		struct tnode *n = &r->nodes[i];
		struct sbuf e = SBUF_INIT;
		int rc = node_attach(r, n, &e);
		if (rc != EXIT_OK || sig_count()) {
			if (i < given || sig_count()) {
				/* a node the user named: the run cannot go on */
				sbuf_addstr(err, sbuf_str(&e));
				sbuf_release(&e);
				return rc;
			}
			/* found by --cluster: say so and go on without it */
			fprintf(stderr, "beamscope: warning: leaving out \"%s\": %s\n",
				n->arg, e.buf);
			n->lost = true;
			conn_close(&n->conn);
		}
		sbuf_release(&e);
		if (cfg->cluster && i == given - 1)
			discover(r);
	}
	if (r->multi) {
		const struct names *tables[BS_MAX_NODES];
		for (int i = 0; i < r->nnodes; i++)
			tables[i] = r->nodes[i].lost ? NULL : &r->nodes[i].agent.names;
		const char *missing = pidsel_missing(&cfg->pids, tables, r->nnodes);
		if (missing) {
			sbuf_addf(err, "no process is registered as %s on any of the "
				  "nodes; list names with erlang:registered() there",
				  missing);
			return EXIT_REFUSED;
		}
	}
	for (int i = 0; i < r->nnodes; i++) {
		struct tnode *n = &r->nodes[i];
		if (n->lost)
			continue;
		int rc = node_trace(r, n, err);
		if (rc != EXIT_OK)
			return rc;
	}
	return EXIT_OK;
}

int batch_run(const struct config *cfg)
{
	struct run r;
	struct sbuf err = SBUF_INIT;
	int rc;
	const char *ended = NULL;

	memset(&r, 0, sizeof(r));
	r.cfg = cfg;
	r.multi = cfg->nnodes > 1 || cfg->cluster;
	sbuf_init(&r.out);
	merge_init(&r.merge, MERGE_MAX_ITEMS, node_of, &r);
	for (int i = 0; i < cfg->nnodes; i++)
		node_add(&r, cfg->nodes[i]);

	if (r.multi && cfg->pids.mode == SEL_LIST)
		for (int i = 0; i < cfg->pids.n; i++)
			if (cfg->pids.items[i].is_pid) {
				fprintf(stderr, "beamscope: --pids/--follow: with "
					"several nodes, name processes by their "
					"registered name; a pid <0.N.S> means a "
					"different process on each node\n");
				rc = EXIT_USAGE;
				goto out;
			}
	if (open_output(&r) < 0) {
		rc = EXIT_FAIL;
		goto out;
	}

	long long t0 = mono_ms();
	long long started = wall_us();
	r.spec = (struct trace_spec){
		.kinds = cfg->kinds, .sel = &cfg->pids,
		.payload_bytes = cfg->payload_bytes, .count_tier = cfg->counts,
		.interval_ms = 250, .calls = cfg->calls, .ncalls = cfg->ncalls,
		.follow = cfg->follow, .max_events = cfg->counts ? 0 : cfg->max_events,
		.duration_ms = (unsigned long)(cfg->duration * 1000),
		.rate = cfg->rate, .shed = cfg->shed,
	};
	rc = start(&r, &err);
	if (rc != EXIT_OK || sig_count())
		goto fail;

	long long deadline = cfg->duration > 0 ?
		t0 + (long long)(cfg->duration * 1000) : 0;
	long long next_ping = t0 + PING_EVERY_MS;
	long long interval_ms = (long long)(cfg->interval * 1000);
	long long next_counts = t0 + interval_ms;
	for (int i = 0; i < r.nnodes; i++)
		if (cfg->counts)
			r.nodes[i].count_overflow = 0;
	long long last_turn = t0, recheck_at = 0;
	while (!ended) {
		long long now = mono_ms();
		long long wait = next_ping - now;
		if (deadline && deadline - now < wait)
			wait = deadline - now;
		if (cfg->counts && next_counts - now < wait)
			wait = next_counts - now;
		if (r.multi && wait > 50)
			wait = 50;   /* the merged timeline moves on */
		if (wait < 0)
			wait = 0;
		enum pump_result pr = pump_all(&r, (int)wait);
		now = mono_ms();
		if (now - last_turn > (long long)(cfg->dep_timeout * 1000)) {
			/* we were stopped: ask now, and once more when the
			 * agents have had time to finish cleaning up */
			check_agents(&r);
			recheck_at = now + 3000;
		} else if (recheck_at && now >= recheck_at) {
			check_agents(&r);
			recheck_at = 0;
		}
		last_turn = now;
		release_merged(&r, watermark(&r));
		const char *tripped = NULL;
		for (int i = 0; i < r.nnodes; i++)
			if (r.nodes[i].tripped[0] && !r.nodes[i].lost)
				tripped = r.nodes[i].tripped;
		if (pr == PUMP_SIGNAL) {
			int s = sig_take();
			ended = s == SIGINT ? "interrupted" : "terminated";
		} else if (all_lost(&r) && !cfg->reconnect) {
			ended = "target_lost";
		} else if (r.write_errno) {
			ended = "write_error";
		} else if (r.limit_hit) {
			ended = "max_events";
		} else if (tripped) {
			/* a target stopped by itself: what it sent is on its way */
			ended = tripped_why(tripped);
		} else if (deadline && now >= deadline) {
			ended = "duration";
		} else {
			if (cfg->counts && now >= next_counts) {
				for (int i = 0; i < r.nnodes; i++)
					if (r.nodes[i].stats_ready)
						write_counts(&r, &r.nodes[i]);
				next_counts = now + interval_ms;
			}
			if (now >= next_ping) {
				for (int i = 0; i < r.nnodes; i++) {
					struct tnode *n = &r.nodes[i];
					if (!n->lost && agent_ping(&n->agent) < 0)
						node_lost(&r, n);
				}
				next_ping = now + PING_EVERY_MS;
			}
			if (cfg->reconnect)
				for (int i = 0; i < r.nnodes; i++)
					if (r.nodes[i].lost &&
					    now >= r.nodes[i].next_retry_ms)
						node_retry(&r, &r.nodes[i]);
		}
	}

	/* drain: the agents stop tracing, workers send what they hold */
	drain(&r);
	for (int i = 0; i < r.nnodes; i++)
		conn_close(&r.nodes[i].conn);
	release_merged(&r, INT64_MAX);
	if (cfg->counts)
		for (int i = 0; i < r.nnodes; i++)
			if (r.nodes[i].stats_ready)
				write_counts(&r, &r.nodes[i]);

	bool any_lost = false;
	unsigned long dropped = 0;
	for (int i = 0; i < r.nnodes; i++) {
		struct tnode *n = &r.nodes[i];
		if (!n->stats_ready)
			continue;
		node_summary(&r, n, ended, started, t0);
		any_lost |= n->ever_lost;
		dropped += stats_dropped(&n->st);
	}
	if (r.multi)
		cluster_summary(&r, ended, started, t0);
	flush_out(&r);

	if (r.write_errno) {
		fprintf(stderr, "beamscope: cannot write to \"%s\": %s; the %llu "
			"bytes written so far are whole lines; make room or "
			"choose another -o FILE\n", r.out_name,
			strerror(r.write_errno), r.out_good);
		rc = EXIT_FAIL;
	} else if (any_lost) {
		struct sbuf which = SBUF_INIT;
		for (int i = 0; i < r.nnodes; i++)
			if (r.nodes[i].ever_lost && !r.nodes[i].ever_left)
				sbuf_addf(&which, "%s\"%s\"", which.len ? ", " : "",
					  node_name(&r.nodes[i]));
		if (which.len)
			fprintf(stderr, "beamscope: lost the connection to %s "
				"mid-run; kept the %lu events received\n",
				which.buf, r.written);
		else
			fprintf(stderr, "beamscope: ended early; kept the %lu "
				"events received\n", r.written);
		sbuf_release(&which);
		rc = EXIT_LOST;
	} else {
		note(cfg, "%lu events written, %lu dropped on the target%s; "
		     "detached (%s)", r.written, dropped,
		     r.multi ? " (all nodes)" : "", ended);
		rc = EXIT_OK;
	}
	goto out;

fail:
	if (err.len)
		fprintf(stderr, "beamscope: %s\n", err.buf);
	if (sig_count() && rc == EXIT_OK)
		rc = EXIT_OK;
	/* the nodes already tracing are stopped cleanly */
	drain(&r);
out:
	for (int i = 0; i < r.nnodes; i++)
		node_free(&r.nodes[i]);
	free(r.nodes);
	merge_release(&r.merge);
	sbuf_release(&r.out);
	sbuf_release(&err);
	if (r.fp && r.fp != stdout)
		fclose(r.fp);
	return rc;
}
