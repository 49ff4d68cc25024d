/*
 * batch: one run of batch mode.
 *
 * Life of a run: connect, bootstrap the agent, set flags, then one loop that
 * pumps messages until a limit, a signal, or the target going away; then ask
 * the agent to stop, keep pumping until every worker has sent its last batch
 * (or a deadline passes), and write the summary.  Events that arrive after
 * --max-events was reached are counted, not written.
 */
#include "batch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
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
#include "node.h"
#include "sig.h"
#include "stats.h"
#include "store.h"
#include "xalloc.h"

#define PING_EVERY_MS 1000
#define STOP_TMO_MS 5000

struct run {
	const struct config *cfg;
	struct agent agent;
	struct decoder dec;
	struct trace_stats st;
	struct sbuf out;        /* JSON waiting to be written */
	FILE *fp;
	const char *out_name;
	int write_errno;        /* first write error, 0 if none */
	bool limit_hit;
	bool stats_ready;
	struct callstacks calls; /* pairs returns with their calls */
	char tripped[32];        /* a limit the target enforced, "" if none */
	long shed;               /* events shed over --rate */
	/* --counts: per-process totals, written every interval */
	struct store store;
	long count_overflow;
	unsigned long count_lines;
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

static void flush_out(struct run *r)
{
	if (!r->out.len || r->write_errno)
		goto done;
	if (fwrite(r->out.buf, 1, r->out.len, r->fp) != r->out.len ||
	    fflush(r->fp) != 0)
		r->write_errno = errno ? errno : EIO;
done:
	sbuf_reset(&r->out);
}

static void on_event(void *arg, const struct event *ev)
{
	struct run *r = arg;
	/* counts lines keep the last name a process had, even after it died */
	if (r->cfg->counts && ev->type == EV_REGISTER)
		store_set_info(&r->store, ev->pid, ev->pid_text, ev->name, NULL, -1);
	if (!(event_types[ev->type].kind & r->cfg->kinds)) {
		r->st.filtered++;
		return;
	}
	if (r->cfg->counts) {
		/* spawns are counted from their events; nothing is written */
		if (ev->type == EV_SPAWN)
			store_add_counts(&r->store, ev->pid, ev->pid_text, 0, 0, 1);
		r->st.counts[ev->type]++;
		return;
	}
	if (r->cfg->max_events && r->st.written >= r->cfg->max_events) {
		r->st.over_limit++;
		r->limit_hit = true;
		return;
	}
	struct event e = *ev;
	callstacks_event(&r->calls, &e);
	if (EVENT_IS_GC_START(e.type))
		return;   /* written with its end */
	json_event(&r->out, &e, r->agent.node);
	r->st.counts[ev->type]++;
	r->st.written++;
	if (r->cfg->max_events && r->st.written >= r->cfg->max_events)
		r->limit_hit = true;
}

static void on_batch(void *arg, const char *buf, const struct msg *m)
{
	struct run *r = arg;
	if (!r->stats_ready)
		return;
	int idx = m->body;
	long n = decode_events(&r->dec, buf, &idx, (int)m->worker, on_event, r);
	if (!stats_batch(&r->st, m->worker, m->seq, m->dropped, n < 0 ? 0 : n))
		return;
	if (n < 0)
		r->dec.malformed++;
	flush_out(r);
}

static void on_eos(void *arg, const struct msg *m)
{
	struct run *r = arg;
	if (r->stats_ready)
		stats_eos(&r->st, m->worker, m->seq, m->dropped);
}

static void count_one(void *arg, struct bs_pid pid, const char *pid_text,
		      unsigned long sends, unsigned long receives)
{
	struct run *r = arg;
	store_add_counts(&r->store, pid, pid_text, sends, receives, 0);
}

static void on_counts(void *arg, const char *buf, const struct msg *m)
{
	struct run *r = arg;
	if (!r->stats_ready)
		return;
	int idx = m->body;
	r->count_overflow = m->dropped;
	decode_counts(&r->dec, buf, &idx, count_one, r);
}

/* Every process with any activity, totals so far. */
static void write_counts(struct run *r)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	int64_t ts = (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
	for (size_t i = 0; i < r->store.nprocs; i++) {
		const struct proc *p = r->store.procs[i];
		if (!(p->sends || p->receives || p->spawns))
			continue;
		json_counts(&r->out, r->agent.node, ts, p->pid_text,
			    p->name ? p->name : names_get(&r->agent.names, p->pid),
			    p->sends,
			    p->receives, p->spawns);
		r->count_lines++;
	}
	flush_out(r);
}

static void on_limit(void *arg, const struct msg *m)
{
	struct run *r = arg;
	if (strcmp(m->limit, "none"))
		snprintf(r->tripped, sizeof(r->tripped), "%s", m->limit);
	if (m->dropped > r->shed)
		r->shed = m->dropped;
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

int batch_run(const struct config *cfg)
{
	struct conn conn;
	struct run r;
	struct sbuf err = SBUF_INIT;
	struct trace_result tr = { 0 };
	int rc;
	const char *ended = NULL;

	memset(&r, 0, sizeof(r));
	r.cfg = cfg;
	sbuf_init(&r.out);
	conn_init(&conn);
	struct agent_stream stream = { on_batch, on_eos, on_counts, NULL,
				       on_limit, &r };
	store_init(&r.store, 1);
	callstacks_init(&r.calls);
	r.count_overflow = -1;
	agent_init(&r.agent, &conn, &stream);

	if (open_output(&r) < 0) {
		rc = EXIT_FAIL;
		goto out;
	}
	rc = attach_open(cfg, &conn, &r.agent, &err);
	if (rc != EXIT_OK || sig_count())
		goto fail;

	stats_init(&r.st, r.agent.workers);
	decoder_init(&r.dec, r.agent.node, cfg->payload_bytes, &r.agent.names);
	r.stats_ready = true;

	long long t0 = mono_ms();
	long long started = wall_us();
	struct trace_spec spec = {
		.kinds = cfg->kinds, .sel = &cfg->pids,
		.payload_bytes = cfg->payload_bytes, .count_tier = cfg->counts,
		.interval_ms = 250, .calls = cfg->calls, .ncalls = cfg->ncalls,
		.follow = cfg->follow, .max_events = cfg->counts ? 0 : cfg->max_events,
		.duration_ms = (unsigned long)(cfg->duration * 1000),
		.rate = cfg->rate, .shed = cfg->shed,
	};
	rc = agent_trace(&r.agent, &spec, &tr, &err);
	if (rc != EXIT_OK)
		goto fail;
	char kt[128];
	kinds_text(cfg->kinds, kt, sizeof(kt));
	note(cfg, "attached to %s (OTP %s, %d workers); tracing %s of %s (%lu)",
	     r.agent.node, r.agent.otp, r.agent.workers, kt, pids_text(cfg),
	     tr.traced);
	for (int i = 0; i < tr.nskipped; i++)
		note(cfg, "%s is already traced by another tracer; skipped",
		     tr.skipped[i]);
	for (int i = 0; i < tr.npatterns && i < cfg->ncalls; i++)
		note(cfg, "--call \"%s\": %ld function%s", cfg->calls[i],
		     tr.pattern_functions[i], tr.pattern_functions[i] == 1 ? "" : "s");
	for (int i = 0; i < tr.nskipped_functions; i++)
		note(cfg, "%s already has a trace pattern set by someone else; "
		     "skipped", tr.skipped_functions[i]);

	long long deadline = cfg->duration > 0 ?
		t0 + (long long)(cfg->duration * 1000) : 0;
	long long next_ping = t0 + PING_EVERY_MS;
	long long interval_ms = (long long)(cfg->interval * 1000);
	long long next_counts = t0 + interval_ms;
	bool lost = false;
	if (cfg->counts)
		r.count_overflow = 0;
	while (!ended) {
		long long now = mono_ms();
		long long wait = next_ping - now;
		if (deadline && deadline - now < wait)
			wait = deadline - now;
		if (cfg->counts && next_counts - now < wait)
			wait = next_counts - now;
		if (wait < 0)
			wait = 0;
		enum pump_result pr = agent_pump(&r.agent, (int)wait);
		now = mono_ms();
		if (pr == PUMP_LOST) {
			lost = true;
			ended = "target_lost";
		} else if (pr == PUMP_SIGNAL) {
			int s = sig_take();
			ended = s == SIGINT ? "interrupted" : "terminated";
		} else if (r.write_errno) {
			ended = "write_error";
		} else if (r.limit_hit) {
			ended = "max_events";
		} else if (r.tripped[0]) {
			/* the target stopped by itself: what it sent is on its way */
			ended = !strcmp(r.tripped, "max_events") ? "max_events" :
				!strcmp(r.tripped, "rate") ? "rate" : "duration";
		} else if (deadline && now >= deadline) {
			ended = "duration";
		} else {
			if (cfg->counts && now >= next_counts) {
				write_counts(&r);
				next_counts = now + interval_ms;
			}
			if (now >= next_ping) {
				if (agent_ping(&r.agent) < 0) {
					lost = true;
					ended = "target_lost";
				}
				next_ping = now + PING_EVERY_MS;
			}
		}
	}

	/* drain: the agent stops tracing, workers send what they hold */
	if (!lost && agent_stop_send(&r.agent) == 0) {
		long long stop_deadline = mono_ms() + STOP_TMO_MS;
		int signals = sig_count();
		while (!(agent_reply_arrived(&r.agent) && stats_all_eos(&r.st))) {
			long long left = stop_deadline - mono_ms();
			if (left <= 0)
				break;
			enum pump_result pr = agent_pump(&r.agent, (int)left);
			if (pr == PUMP_LOST) {
				lost = true;
				ended = "target_lost";
				break;
			}
			if (pr == PUMP_SIGNAL) {
				sig_take();
				/* a second Ctrl-C: stop waiting, the agent cleans up
				 * by itself when we disconnect */
				if (sig_count() > signals)
					break;
			}
		}
		if (!agent_reply_arrived(&r.agent) && !lost)
			note(cfg, "the agent did not confirm the stop; it cleans up "
			     "by itself once beamscope is gone");
	}
	conn_close(&conn);
	if (cfg->counts)
		write_counts(&r);

	struct summary_info si = {
		.node = r.agent.node,
		.ended = ended,
		.started_us = started,
		.duration_ms = mono_ms() - t0,
		.limit_duration = cfg->duration,
		.limit_events = cfg->max_events,
		.payload_bytes = cfg->payload_bytes,
		.traced = tr.traced,
		.skipped = (const char *const *)tr.skipped,
		.nskipped = tr.nskipped,
		.malformed = r.dec.malformed,
		.count_overflow = cfg->counts ? r.count_overflow : -1,
		.count_lines = r.count_lines,
		.calls = cfg->calls,
		.pattern_functions = tr.pattern_functions,
		.npatterns = tr.npatterns < cfg->ncalls ? tr.npatterns : cfg->ncalls,
		.skipped_functions = (const char *const *)tr.skipped_functions,
		.nskipped_functions = tr.nskipped_functions,
		.shed = r.shed,
	};
	r.st.unknown = r.agent.unknown;
	json_summary(&r.out, &si, &r.st);
	flush_out(&r);

	if (r.write_errno) {
		fprintf(stderr, "beamscope: cannot write to \"%s\": %s; the lines "
			"written so far are complete\n", r.out_name,
			strerror(r.write_errno));
		rc = EXIT_FAIL;
	} else if (lost) {
		fprintf(stderr, "beamscope: lost the connection to \"%s\" "
			"mid-run; kept the %lu events received\n",
			r.agent.node, r.st.written);
		rc = EXIT_LOST;
	} else {
		note(cfg, "%lu events written, %lu dropped on the target; "
		     "detached (%s)", r.st.written, stats_dropped(&r.st), ended);
		rc = EXIT_OK;
	}
	goto out;

fail:
	if (err.len)
		fprintf(stderr, "beamscope: %s\n", err.buf);
	if (sig_count() && rc == EXIT_OK)
		rc = EXIT_OK;
out:
	conn_release(&conn);
	trace_result_release(&tr);
	if (r.stats_ready) {
		decoder_release(&r.dec);
		stats_release(&r.st);
	}
	agent_release(&r.agent);
	store_release(&r.store);
	callstacks_release(&r.calls);
	sbuf_release(&r.out);
	sbuf_release(&err);
	if (r.fp && r.fp != stdout)
		fclose(r.fp);
	return rc;
}
