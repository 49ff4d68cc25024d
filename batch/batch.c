/*
 * batch: batch mode, a front end of the session engine: the JSON sink,
 * progress lines on standard error, and the summaries.
 *
 * Life of a run: the session attaches to every node (and, with --cluster,
 * to their peers), starts tracing, and this loop reads until a limit, a
 * signal, a write error or every target going away; then the session
 * drains (the agents stop, the workers send what they hold) and the
 * summaries are written.  Events past --max-events are counted, not
 * written.  The source may also be a recording (--open): it is replayed
 * through the same filters into the same sink.
 *
 * With --chart the events also go to a store, and at the end the chart
 * of the processes traced (the first CHART_LINES to show up, in that
 * order) is written instead of the JSON lines, which go nowhere.
 */
#include "frontend.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart.h"
#include "clock.h"
#include "esc.h"
#include "gensum.h"
#include "exitcode.h"
#include "json.h"
#include "jsonsink.h"
#include "storefeed.h"
#include "outfile.h"
#include "profile.h"
#include "recording.h"
#include "session.h"
#include "sig.h"
#include "xalloc.h"

struct run {
	const struct config *cfg;
	struct session *s;       /* the engine (session.h) */
	struct json_sink js;
	struct gensum gs;
	struct store st;        /* --chart: the events charted */
	struct outfile chart_out; /* --chart: where it goes, opened first */
	struct profile *prof;   /* --profile-out: every stack sampled */
	char *calls_err;        /* --profile-calls refused before the start */
	struct outfile prof_out; /* and where they go, opened first */
	/* the run loop's: why it ended (NULL: it goes on); a live run's
	 * deadline (0: none) */
	const char *ended;
	long long deadline;
};

/* --node-stats: a node_stats line a second for each node */
static void on_node_sample(void *arg, int node)
{
	struct run *r = arg;
	const struct node_view *n = session_node(r->s, node);
	if (!json_sink_is_open(&r->js) || r->js.write_errno)
		return;
	json_node_stats(json_sink_buf(&r->js), session_node_name(r->s, node),
			clock_wall_us(), &n->nstats->last);
	json_sink_flush(&r->js);
}

/* --profile: a profile_sample line a stack, a profile_stats line a second */
static void on_profile_sample(void *arg, int node, const struct prof_sample *p)
{
	struct run *r = arg;
	if (r->prof)
		profile_add_sample(r->prof, p, clock_mono_ms());
	if (!json_sink_is_open(&r->js) || r->js.write_errno)
		return;
	json_profile_sample(json_sink_buf(&r->js), session_node_name(r->s, node),
			    p);
}

static void on_profile_second(void *arg, int node, const struct prof_stats *st)
{
	struct run *r = arg;
	if (!json_sink_is_open(&r->js) || r->js.write_errno)
		return;
	json_profile_stats(json_sink_buf(&r->js), session_node_name(r->s, node),
			   clock_wall_us(), st);
	json_sink_flush(&r->js);
}

/* --profile-calls: a profile_calls line a second */
static void on_profile_calls(void *arg, int node, const struct prof_calls *c)
{
	struct run *r = arg;
	if (!json_sink_is_open(&r->js) || r->js.write_errno)
		return;
	json_profile_calls(json_sink_buf(&r->js), session_node_name(r->s, node),
			   clock_wall_us(), c);
	json_sink_flush(&r->js);
}

/* --profile-calls LIST, split at its commas, asked of every node */
static void profile_calls(struct run *r, const char *list)
{
	char copy[SESSION_EXACT_MAX * SESSION_EXACT_LEN];
	const char *pats[SESSION_EXACT_MAX + 1];
	int n = 0;
	snprintf(copy, sizeof(copy), "%s", list);
	for (char *save = NULL, *w = strtok_r(copy, ",", &save); w;
	     w = strtok_r(NULL, ",", &save)) {
		if (n == SESSION_EXACT_MAX + 1)
			break;
		pats[n++] = w;
	}
	struct sbuf err = SBUF_INIT;
	if (session_profile_calls(r->s, -1, pats, n, &err) < 0)
		r->calls_err = xstrdup(err.buf);
	sbuf_release(&err);
}

/* --profile-out: opened before anything is read, so that a bad name is
 * said at once; 0, or an exit status. */
static int open_profile(struct run *r)
{
	struct sbuf err = SBUF_INIT;
	int rc = EXIT_OK;
	if (outfile_open(&r->prof_out, r->cfg->profile_out, OUTFILE_REPLACE,
			 session_recording_fd(r->s), &err) < 0) {
		esc_print(stderr, "beamscope: %s; choose another --profile-out "
			  "FILE", err.buf);
		rc = EXIT_FAIL;
	}
	sbuf_release(&err);
	return rc;
}

/* --profile-out: the collapsed stacks of every sample; an exit status. */
static int write_profile(struct run *r)
{
	struct sbuf text = SBUF_INIT, err = SBUF_INIT;
	const struct profile_node *root = profile_tree(r->prof);
	profile_collapsed(root, &text);
	char *name = xstrdup(outfile_name(&r->prof_out));
	FILE *f = outfile_file(&r->prof_out);
	int bad = 0;
	if (!f || fwrite(text.buf, 1, text.len, f) != text.len) {
		sbuf_addf(&err, "cannot write \"%s\": %s", name, strerror(errno));
		outfile_abort(&r->prof_out);
		bad = 1;
	} else if (outfile_commit(&r->prof_out, &err) < 0) {
		bad = 1;
	}
	if (bad)
		esc_print(stderr, "beamscope: %s; nothing was written there; "
			  "choose another --profile-out FILE", err.buf);
	else if (!r->cfg->quiet)
		esc_print(stderr, "beamscope: %lu stacks sampled written to %s as "
			  "collapsed stacks", root->total, name);
	sbuf_release(&text);
	sbuf_release(&err);
	free(name);
	return bad ? EXIT_FAIL : EXIT_OK;
}

static void on_notice(void *arg, enum session_level level, const char *text)
{
	struct run *r = arg;
	if (level <= SESSION_NOTE && r->cfg->quiet)
		return;
	esc_print(stderr, "beamscope: %s", text);
}

static const char *tripped_why(const char *t)
{
	return !strcmp(t, "max_events") ? "max_events" :
		!strcmp(t, "rate") ? "rate" : "duration";
}

static void node_summary(struct run *r, const struct node_view *n, const char *ended,
			 long long started, long long t0)
{
	const struct config *cfg = r->cfg;
	struct session *s = r->s;
	struct summary_info si = {
		.type = session_multi(s) ? "node_summary" : NULL,
		.node = session_node_name(s, n->idx),
		.ended = n->left[0] ? n->left : n->ever_lost &&
			n->state == SN_LOST ? "target_lost" : ended,
		.started_us = started,
		.duration_ms = clock_mono_ms() - t0,
		.limit_duration = cfg->duration,
		.limit_events = cfg->max_events,
		.payload_bytes = cfg->payload_bytes,
		.traced = n->tr->traced,
		.skipped = (const char *const *)n->tr->skipped,
		.nskipped = n->tr->nskipped,
		.malformed = n->malformed,
		.count_overflow = cfg->counts ? (n->count_overflow < 0 ? 0 :
						 n->count_overflow) : -1,
		.count_lines = r->js.count_lines,
		.calls = cfg->calls,
		.pattern_functions = n->tr->pattern_functions,
		.npatterns = n->tr->npatterns < cfg->ncalls ? n->tr->npatterns :
			cfg->ncalls,
		.skipped_functions = (const char *const *)n->tr->skipped_functions,
		.nskipped_functions = n->tr->nskipped_functions,
		.shed = n->shed,
		.tracing = n->tr->tracing,
		.cleared = n->cleared,
		.clock_offset_us = n->clock_offset_us,
		.clock_error_us = session_multi(s) ? n->clock_error_us : -1,
		.sessions = n->sessions,
	};
	/* a batch naming a worker that does not exist is junk too (a
	 * shallow copy: the summary only reads it) */
	struct trace_stats st = *n->st;
	st.unknown = n->unknown + n->st->bad_worker;
	json_summary(json_sink_buf(&r->js), &si, &st);
}

static void cluster_summary(struct run *r, const char *ended,
			    long long started, long long t0)
{
	struct session *s = r->s;
	const char *names[BS_MAX_NODES];
	bool lost[BS_MAX_NODES];
	struct cluster_summary cs = {
		.nodes = names, .lost = lost, .nnodes = session_nnodes(s),
		.ended = ended, .started_us = started,
		.duration_ms = clock_mono_ms() - t0, .events = session_events_all(s),
		.paired = session_merge_stats(s)->paired,
		.ambiguous = session_merge_stats(s)->ambiguous,
		.unmatched = session_merge_stats(s)->expired,
		.forced = session_merge_stats(s)->forced,
		.delivered = session_delivered(s), .dropped = session_dropped(s),
	};
	for (int i = 0; i < session_nnodes(s); i++) {
		names[i] = session_node_name(s, i);
		lost[i] = session_node(s, i)->ever_lost;
	}
	json_cluster_summary(json_sink_buf(&r->js), &cs);
}

/*
 * Workers whose last count never came (the target did not answer the
 * stop in time): said on stderr, whatever --quiet says; the summary says
 * "complete": false.  True if there are any.
 */
static bool drain_incomplete(struct run *r, const struct node_view *n)
{
	int missing = stats_incomplete(n->st);
	if (!missing)
		return false;
	fprintf(stderr, "beamscope: %d of the %d workers on \"%s\" did not send "
		"their final counts before the stop timed out; delivered + "
		"dropped may fall short of what was traced%s\n", missing,
		n->st->nworkers, session_node_name(r->s, n->idx),
		r->cfg->exact ? " (--exact: exit 7)" : "");
	return true;
}

/* Several nodes: a pid means a different process on each of them. */
static int check_pids(const struct config *cfg)
{
	if (!(cfg->nnodes > 1 || cfg->cluster) || cfg->pids.mode != SEL_LIST)
		return EXIT_OK;
	for (int i = 0; i < cfg->pids.n; i++)
		if (cfg->pids.items[i].is_pid) {
			esc_print(stderr, "beamscope: --pids/--follow: with several "
				"nodes, name processes by their registered name; "
				"a pid <0.N.S> means a different process on each "
				"node");
			return EXIT_USAGE;
		}
	return EXIT_OK;
}

static void output_stalled(const struct json_sink *js)
{
	esc_print(stderr, "beamscope: gave up writing to %s%s%s: %s, and %llu "
		  "bytes were left unwritten; read it faster, or write to a "
		  "file with -o FILE", js->own_fd ? "\"" : "", js->name,
		  js->own_fd ? "\"" : "", json_sink_error(js), js->unwritten);
}

/* --chart: where the chart goes (-o FILE or standard output), opened
 * before anything is read so that a bad name is said at once; 0, or an
 * exit status. */
static int open_chart(struct run *r)
{
	struct sbuf err = SBUF_INIT;
	const char *path = r->cfg->output && strcmp(r->cfg->output, "-") ?
		r->cfg->output : NULL;
	int rc = EXIT_OK;
	if (outfile_open(&r->chart_out, path, OUTFILE_REPLACE,
			 session_recording_fd(r->s), &err) < 0) {
		esc_print(stderr, "beamscope: %s; choose another -o FILE", err.buf);
		rc = EXIT_FAIL;
	}
	sbuf_release(&err);
	return rc;
}

/* --chart: the chart of what was traced, to where open_chart said; an
 * exit status. */
static int write_chart(struct run *r)
{
	struct chart c;
	struct store *st = &r->st;
	struct sbuf err = SBUF_INIT;
	chart_init(&c);
	for (uint64_t s = store_oldest_seq(st); s < st->next_seq; s++) {
		const struct sevent *e = store_event(st, s);
		if (e && !EVENT_IS_RUNNING(e->type) && !EVENT_IS_GC(e->type))
			chart_add_line(&c, e->pid, e->pid_text, NULL, 0);
	}
	chart_label(&c, st);
	chart_build(&c, st, st->next_seq);
	struct outfile *of = &r->chart_out;
	char *name = xstrdup(outfile_name(of));
	int bad = 0;
	FILE *f = outfile_file(of);
	if (!f || chart_write(&c, (enum chart_format)(r->cfg->chart - 1),
			      f) < 0) {
		sbuf_addf(&err, "cannot write \"%s\": %s", name,
			  strerror(errno));
		outfile_abort(of);
		bad = 1;
	} else if (outfile_commit(of, &err) < 0) {
		bad = 1;
	}
	if (bad)
		esc_print(stderr, "beamscope: %s; nothing was written there; "
			  "choose another -o FILE", err.buf);
	else if (!r->cfg->quiet)
		esc_print(stderr, "beamscope: a chart of %zu messages between %d "
			  "processes written to %s", c.nmsgs, c.nlines, name);
	chart_release(&c);
	sbuf_release(&err);
	free(name);
	return bad ? EXIT_FAIL : EXIT_OK;
}

/* A replay's last line: how it ended, what it wrote, what it skipped. */
static void replay_summary(struct run *r, const char *ended, int64_t started,
			   long long duration_ms)
{
	struct session *s = r->s;
	const struct recording_stats *st = session_recording_stats(s);
	const char **names = xmalloc((size_t)(session_nnodes(s) ? session_nnodes(s) : 1) *
				     sizeof(*names));
	for (int i = 0; i < session_nnodes(s); i++)
		names[i] = session_node_name(s, i);
	struct replay_summary rs = {
		.nodes = names, .nnodes = session_nnodes(s), .file = r->cfg->open,
		.ended = ended, .started_us = started,
		.duration_ms = duration_ms, .events = r->js.events,
		.limit_events = session_spec(s)->max_events, .over_limit = session_over_limit(s),
		.malformed = st->malformed, .truncated = st->truncated,
	};
	if (json_sink_is_open(&r->js) && !r->js.write_errno)
		json_replay_summary(json_sink_buf(&r->js), &rs);
	free(names);
}

/* A replay's turn: to the end of the recording, a signal, or a write
 * error (r->ended says which of the first two). */
static int replay_step(void *arg, int sig, const struct pollfd *fds)
{
	struct run *r = arg;
	(void)fds;
	if (sig) {
		r->ended = sig == SIGINT ? "interrupted" : "terminated";
		return 0;
	}
	if (session_replay_done(r->s))
		return 0;
	json_sink_flush(&r->js);
	return r->js.write_errno ? 0 : SESSION_GO_ON;
}

/*
 * A recording in, NDJSON out: the same filters as a live run.  It is
 * replayed whole unless --max-events says otherwise, and a cut is said
 * whatever --quiet says (--exact: exit 7) and in the summary line that
 * ends the output.  A pipe that goes quiet is
 * waited for in poll, with the signals, never in a read.
 */
static int replay(struct run *r)
{
	struct session *s = r->s;
	const struct config *cfg = r->cfg;
	int rc = EXIT_OK;
	long long t0 = clock_mono_ms();
	int64_t started = clock_wall_us();
	const char *ended = "end_of_recording";
	struct session_loop l = {
		.budget = SESSION_READ_BATCH, .step = replay_step, .arg = r,
	};
	r->ended = NULL;
	session_run(s, &l);
	bool interrupted = r->ended != NULL;
	if (interrupted)
		ended = r->ended;
	json_sink_tick(&r->js, true);
	gensum_tick(&r->gs, true);
	if (session_over_limit(s))
		ended = "max_events";
	replay_summary(r, ended, started, clock_mono_ms() - t0);
	json_sink_finish(&r->js, FINISH_MS);
	json_sink_close(&r->js);   /* the output in place, whole */
	if (r->js.stalled) {
		output_stalled(&r->js);
		rc = EXIT_FAIL;
	} else if (r->js.write_errno && r->js.discarded) {
		esc_print(stderr, "beamscope: cannot write to \"%s\": %s; nothing "
			"was written there; make room or choose another -o FILE",
			r->js.name, strerror(r->js.write_errno));
		rc = EXIT_FAIL;
	} else if (r->js.write_errno) {
		esc_print(stderr, "beamscope: cannot write to \"%s\": %s; the %llu "
			"bytes written so far are whole lines; make room or "
			"choose another -o FILE", r->js.name,
			strerror(r->js.write_errno), r->js.good);
		rc = EXIT_FAIL;
	} else if (session_over_limit(s)) {
		/* the session said where it stopped; this is the summary */
		esc_print(stderr, "beamscope: %lu events written from \"%s\", cut "
			"at --max-events %lu%s", r->js.events, cfg->open,
			session_spec(s)->max_events, cfg->exact ? " (--exact: exit 7)" : "");
		rc = cfg->exact ? EXIT_INCOMPLETE : EXIT_OK;
	} else if (interrupted) {
		esc_print(stderr, "beamscope: interrupted: %lu events written from "
			"\"%s\"; the rest of it was not read", r->js.events,
			cfg->open);
	} else if (!cfg->quiet) {
		esc_print(stderr, "beamscope: %lu events written from \"%s\"",
			r->js.events, cfg->open);
	}
	gensum_summary(&r->gs, stderr);
	return rc;
}

/* A live run: how long it may sleep (the deadline, counts lines, gen
 * call lines), and its turn, until r->ended says why it ends. */
static long long live_wait(void *arg)
{
	struct run *r = arg;
	const struct config *cfg = r->cfg;
	long long now = clock_mono_ms();
	long long wait = 1000;
	if (r->deadline && r->deadline - now < wait)
		wait = r->deadline - now;
	if (r->js.next_counts_ms - now < wait && cfg->counts)
		wait = r->js.next_counts_ms - now;
	if (cfg->gen_calls && gensum_wait_ms(&r->gs) < wait)
		wait = gensum_wait_ms(&r->gs);
	return wait;
}

static int live_step(void *arg, int sig, const struct pollfd *fds)
{
	struct run *r = arg;
	(void)fds;
	json_sink_tick(&r->js, false);
	gensum_tick(&r->gs, false);
	long long now = clock_mono_ms();
	const char *tripped = session_tripped(r->s);
	if (sig)
		r->ended = sig == SIGINT ? "interrupted" : "terminated";
	else if (session_all_lost(r->s) && !r->cfg->reconnect)
		r->ended = "target_lost";
	else if (r->js.write_errno)
		r->ended = "write_error";
	else if (tripped)
		/* a target stopped by itself: what it sent is on its way */
		r->ended = tripped_why(tripped);
	else if (r->deadline && now >= r->deadline)
		r->ended = "duration";
	return r->ended ? 0 : SESSION_GO_ON;
}

/* The session, and the sinks that hear it: the summary, the output and
 * the chart's store, in that order. */
static void run_setup(struct run *r, const struct config *cfg)
{
	struct session_spec spec;
	memset(r, 0, sizeof(*r));
	r->cfg = cfg;
	r->chart_out.fd = -1;
	r->prof_out.fd = -1;
	session_spec_from_config(&spec, cfg, SESSION_BATCH);
	struct session_sink sink = {
		.notice = on_notice, .node_sample = on_node_sample,
		.profile_sample = on_profile_sample,
		.profile_second = on_profile_second,
		.profile_calls = on_profile_calls, .arg = r,
	};
	r->s = session_new(cfg, &spec, &sink);
	if (cfg->profile && !cfg->open)
		session_profile(r->s, -1, &cfg->pids, cfg->profile_rate,
				cfg->profile_budget * 10000L);
	if (cfg->profile_out)
		r->prof = profile_new();
	if (cfg->profile_calls && !cfg->open)
		profile_calls(r, cfg->profile_calls);
	/* asked of each agent as it comes up; a recording has no node */
	if (cfg->alarm && !cfg->open)
		session_alarms(r->s, &cfg->alarms);
	if (cfg->node_stats && !cfg->open)
		session_node_stats(r->s, true);
	json_sink_init(&r->js, r->s, cfg->counts,
		       (long long)(cfg->interval * 1000));
	gensum_init(&r->gs, r->s, &r->js, cfg, !cfg->open);
	if (cfg->chart)
		store_init(&r->st, cfg->ring ? cfg->ring : 200000);
	gensum_hooks(&r->gs, &sink);
	session_add_sink(r->s, &sink);
	json_sink_hooks(&r->js, &sink);
	session_add_sink(r->s, &sink);
	if (cfg->chart) {
		store_feed_hooks(&r->st, &sink);
		session_add_sink(r->s, &sink);
	}
}

/* The exit status of a live run that traced, and its last line. */
static int run_verdict(struct run *r, bool any_lost, bool incomplete,
		       const char *ended)
{
	if (r->js.stalled) {
		output_stalled(&r->js);
		return EXIT_FAIL;
	}
	if (r->js.write_errno) {
		esc_print(stderr, "beamscope: cannot write to \"%s\": %s; the %llu "
			"bytes written so far are whole lines; make room or "
			"choose another -o FILE", r->js.name,
			strerror(r->js.write_errno), r->js.good);
		return EXIT_FAIL;
	}
	if (any_lost) {
		struct sbuf which = SBUF_INIT;
		for (int i = 0; i < session_nnodes(r->s); i++)
			if (session_node(r->s, i)->ever_lost &&
			    !session_node(r->s, i)->ever_left)
				sbuf_addf(&which, "%s\"%s\"", which.len ? ", " : "",
					  session_node_name(r->s, i));
		if (which.len)
			esc_print(stderr, "beamscope: lost the connection to %s "
				"mid-run; kept the %lu events received",
				which.buf, session_events_all(r->s));
		else
			esc_print(stderr, "beamscope: ended early; kept the %lu "
				"events received", session_events_all(r->s));
		sbuf_release(&which);
		return EXIT_LOST;
	}
	if (incomplete && r->cfg->exact)
		return EXIT_INCOMPLETE;
	char line[200];
	snprintf(line, sizeof(line), "%lu events written, %lu dropped on "
		 "the target%s; detached (%s)", session_events_all(r->s),
		 session_dropped(r->s), session_multi(r->s) ? " (all nodes)" : "",
		 ended);
	on_notice(r, SESSION_NOTE, line);
	return EXIT_OK;
}

/* Attach, trace until the end, drain, say what happened. */
static int run_live(struct run *r, struct sbuf *err)
{
	const struct config *cfg = r->cfg;
	int rc;
	if ((rc = check_pids(cfg)) != EXIT_OK)
		return rc;
	if (r->calls_err) {
		esc_print(stderr, "beamscope: --profile-calls: %s", r->calls_err);
		return EXIT_USAGE;
	}
	for (int i = 0; i < cfg->nnodes; i++)
		session_add_node(r->s, cfg->nodes[i], true);

	long long t0 = clock_mono_ms();
	long long started = clock_wall_us();
	rc = session_attach_wait(r->s, err);
	if (rc == EXIT_OK && !sig_count() && cfg->cluster) {
		session_discover(r->s);
		rc = session_attach_wait(r->s, err);
	}
	if (rc == EXIT_OK && !sig_count())
		rc = session_start_wait(r->s, err);
	if (rc != EXIT_OK || sig_count()) {
		if (err->len)
			esc_print(stderr, "beamscope: %s", err->buf);
		/* the nodes already tracing are stopped cleanly */
		session_drain(r->s);
		return rc;
	}

	r->deadline = cfg->duration > 0 ?
		t0 + (long long)(cfg->duration * 1000) : 0;
	struct session_loop l = {
		.budget = SESSION_READ_BATCH, .wait_ms = live_wait,
		.step = live_step, .arg = r,
	};
	r->ended = NULL;
	session_run(r->s, &l);
	const char *ended = r->ended;

	/* drain: the agents stop tracing, workers send what they hold */
	session_drain(r->s);
	json_sink_tick(&r->js, cfg->counts);
	gensum_tick(&r->gs, true);

	bool any_lost = false, incomplete = false;
	for (int i = 0; i < session_nnodes(r->s); i++) {
		const struct node_view *n = session_node(r->s, i);
		if (!n->stats_ready)
			continue;
		node_summary(r, n, ended, started, t0);
		any_lost |= n->ever_lost;
		incomplete |= !n->ever_lost && drain_incomplete(r, n);
		incomplete |= n->cleared[0] != '\0';
	}
	if (session_multi(r->s))
		cluster_summary(r, ended, started, t0);
	json_sink_finish(&r->js, FINISH_MS);
	rc = run_verdict(r, any_lost, incomplete, ended);
	gensum_summary(&r->gs, stderr);
	return rc;
}

/* The chart written (when the run went well), everything freed. */
static int run_finish(struct run *r, int rc)
{
	if (r->cfg->chart) {
		bool ok = rc == EXIT_OK || rc == EXIT_LOST ||
			rc == EXIT_INCOMPLETE;
		if (r->chart_out.fd >= 0 && ok) {
			int crc = write_chart(r);
			if (crc != EXIT_OK)
				rc = crc;
		} else if (r->chart_out.fd >= 0) {
			outfile_abort(&r->chart_out);
		}
		store_release(&r->st);
	}
	if (r->prof) {
		bool ok = rc == EXIT_OK || rc == EXIT_LOST ||
			rc == EXIT_INCOMPLETE;
		if (r->prof_out.fd >= 0 && ok) {
			int prc = write_profile(r);
			if (prc != EXIT_OK)
				rc = prc;
		} else if (r->prof_out.fd >= 0) {
			outfile_abort(&r->prof_out);
		}
		profile_free(r->prof);
	}
	gensum_release(&r->gs);
	free(r->calls_err);
	json_sink_release(&r->js);   /* it names nodes through the session */
	session_free(r->s);
	return rc;
}

int batch_run(const struct config *cfg)
{
	struct run r;
	struct sbuf err = SBUF_INIT;
	int rc;

	run_setup(&r, cfg);
	/* the input first: the output is checked against it, and nothing
	 * is emptied before it is open */
	if (cfg->open && session_open_recording(r.s, cfg->open, &err) < 0) {
		esc_print(stderr, "beamscope: %s", err.buf);
		rc = sig_count() ? EXIT_OK : EXIT_USAGE;
	} else if (cfg->chart && (rc = open_chart(&r)) != EXIT_OK) {
		/* said */
	} else if (cfg->profile_out && (rc = open_profile(&r)) != EXIT_OK) {
		/* said */
	} else if (json_sink_open(&r.js, cfg->chart ? "/dev/null" : cfg->output,
				  /* a capture is read as it grows; a replay's
				   * output replaces the file once whole */
				  cfg->open ? OUTFILE_REPLACE : OUTFILE_STREAM,
				  session_recording_fd(r.s), &err) < 0) {
		esc_print(stderr, "beamscope: %s; choose another -o FILE", err.buf);
		rc = EXIT_FAIL;
	} else {
		rc = cfg->open ? replay(&r) : run_live(&r, &err);
	}
	sbuf_release(&err);
	return run_finish(&r, rc);
}
