/*
 * replay: a recording as a source of the session engine.  The reader
 * (recording.c) hands over what it finds; this turns it into what a live
 * node would give the engine: nodes, events through the spec (kinds,
 * --pids, --follow, the event limit), count-tier deltas from "counts"
 * lines, and, once every event is in, an export's process table.
 *
 * --pids by name: a process is known by its name only from the lines that
 * carry it, so a file is read once for names before it is replayed.
 *
 * Memory: nothing is kept for each process of a recording but what the
 * spec needs: the processes --pids keeps (the ones it names, and what
 * --follow adds), the totals of "counts" lines (to turn them into
 * deltas), and an export's process table until its events are in.
 */
#include "replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "names.h"
#include "pidtext.h"
#include "recording.h"
#include "session_priv.h"
#include "xalloc.h"

/* An export's process entries kept until its events are in, at most: as
 * many as the view's table holds by default */
#define REPLAY_PROCS_MAX 200000

/* An export's process entry, kept until the events are in. */
struct rec_proc_copy {
	struct recording_proc p;
	char *strs;             /* the strings of p, one block */
	int node;
};

struct rec_state {
	struct names keep;      /* --pids: processes kept (and followers) */
	struct names totals_seen; /* counts lines: pids seen */
	struct rec_total {
		struct bs_pid pid;
		unsigned long sends, receives, spawns;
	} *totals;
	size_t ntotals, totals_cap;
	struct rec_proc_copy *procs;
	size_t nprocs, procs_cap;
	unsigned long procs_left_out; /* past REPLAY_PROCS_MAX */
	int64_t counts_ts;      /* the interval of the counts lines read */
	bool counts_open;       /* ... and some are not told as of it yet */
};


static struct rec_state *rec_state(struct session *s)
{
	return (struct rec_state *)s->replay;
}

/* The counts lines of an interval are all in: the sink hears when they
 * were written. */
static void counts_interval_done(struct session *s)
{
	struct rec_state *rs = rec_state(s);
	if (rs->counts_open)
		SINKS(s, counts_at, rs->counts_ts);
	rs->counts_open = false;
}

bool session_is_recording(const struct session *s)
{
	return s->rec != NULL;
}

int session_recording_fd(const struct session *s)
{
	return s->rec ? s->rec->fd : -1;
}

void session_replay_release(struct session *s)
{
	struct rec_state *rs = rec_state(s);
	if (rs) {
		names_release(&rs->keep);
		names_release(&rs->totals_seen);
		free(rs->totals);
		for (size_t i = 0; i < rs->nprocs; i++)
			free(rs->procs[i].strs);
		free(rs->procs);
		free(rs);
		s->replay = NULL;
	}
	if (s->rec) {
		recording_release(s->rec);
		free(s->rec);
		s->rec = NULL;
	}
	if (s->rec_sel_ready)
		pidsel_release(&s->rec_sel);
	s->rec_sel_ready = false;
	free(s->rec_path);
	s->rec_path = NULL;
}

static void rec_node(void *arg, int idx, const char *name)
{
	struct session *s = arg;
	struct snode *n = idx == s->nnodes ? node_add(s, name, false) :
		NULL;
	if (!n)
		return;   /* the reader bounds them: never */
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->state = SN_RECORDED;
	s->multi = s->nnodes > 1;
	SINKS(s, node_state, n->idx);
}

/* Is this process one the spec asks for?  name: what the line says it
 * is registered as, or NULL.  A process named once is kept from then on. */
static bool rec_wanted(struct session *s, struct bs_pid pid, const char *name)
{
	struct rec_state *rs = rec_state(s);
	if (s->rec_sel.mode != SEL_LIST)
		return true;
	if (names_get(&rs->keep, pid))
		return true;
	for (int i = 0; i < s->rec_sel.n; i++) {
		const struct pidsel_item *it = &s->rec_sel.items[i];
		if (it->is_pid ? it->num == pid.num && it->serial == pid.serial :
		    name && !strcmp(name, it->name)) {
			names_set(&rs->keep, pid, "");
			return true;
		}
	}
	return false;
}

/* The node index of a pid text in a recording: its own node's, or that
 * of the node named in it. */
static int rec_pid_node(struct session *s, const char *text, int node,
			struct bs_pid *pid)
{
	struct pidtext pt;
	if (!text || pidtext_parse(text, &pt) < 0)
		return -1;
	pid->num = pt.num;
	pid->serial = pt.serial;
	pid->node = (uint32_t)node;
	if (!pt.node_len)
		return node;
	for (int i = 0; i < s->nnodes; i++) {
		const char *nm = s->nodes[i].name;
		if (strlen(nm) == pt.node_len && !memcmp(nm, pt.node, pt.node_len)) {
			pid->node = (uint32_t)i;
			return i;
		}
	}
	return -1;
}

static void rec_event(void *arg, int node, const struct event *ev)
{
	struct session *s = arg;
	struct rec_state *rs = rec_state(s);
	int pn = (int)ev->pid.node;
	if (node < 0 || node >= s->nnodes || pn < 0 || pn >= s->nnodes)
		return;
	if (!rec_wanted(s, ev->pid, ev->name))
		return;
	struct event e = *ev;
	if (s->spec.follow && e.type == EV_SPAWN) {
		struct bs_pid child;
		if (rec_pid_node(s, e.peer, pn, &child) >= 0)
			names_set(&rs->keep, child, "");
	}
	session_feed(s, pn, &e);
}

/* a stack the profiler took: to the sinks as it came live */
static void rec_profile(void *arg, int node, const struct prof_sample *p)
{
	struct session *s = arg;
	int pn = (int)p->pid.node;
	if (pn < 0 || pn >= s->nnodes || node < 0 || node >= s->nnodes)
		return;
	SINKS(s, profile_sample, node, p);
}

static void rec_counts(void *arg, int node, const struct recording_counts *c)
{
	struct session *s = arg;
	struct rec_state *rs = rec_state(s);
	int pn = (int)c->pid.node;
	(void)node;
	if (pn < 0 || pn >= s->nnodes)
		return;
	if (!rec_wanted(s, c->pid, c->name))
		return;
	/* the lines of one interval share their time */
	if (rs->counts_open && c->ts != rs->counts_ts)
		counts_interval_done(s);
	rs->counts_ts = c->ts;
	rs->counts_open = true;
	/* counts lines carry totals; the sink wants what is new */
	struct rec_total *t = NULL;
	const char *slot = names_get(&rs->totals_seen, c->pid);
	if (slot) {
		t = &rs->totals[strtoul(slot, NULL, 10)];
	} else {
		char idx[32];
		if (rs->ntotals == rs->totals_cap) {
			rs->totals_cap = rs->totals_cap ? 2 * rs->totals_cap : 64;
			rs->totals = xrealloc(rs->totals, rs->totals_cap *
					      sizeof(*rs->totals));
		}
		snprintf(idx, sizeof(idx), "%zu", rs->ntotals);
		names_set(&rs->totals_seen, c->pid, idx);
		t = &rs->totals[rs->ntotals++];
		memset(t, 0, sizeof(*t));
		t->pid = c->pid;
	}
	unsigned long ds = c->sends > t->sends ? c->sends - t->sends : 0,
		dr = c->receives > t->receives ? c->receives - t->receives : 0,
		dp = c->spawns > t->spawns ? c->spawns - t->spawns : 0;
	t->sends = c->sends;
	t->receives = c->receives;
	t->spawns = c->spawns;
	if (c->name)
		SINKS(s, info, pn, c->pid, c->pid_text, c->name, NULL, -1);
	if (ds || dr || dp)
		SINKS(s, counts, pn, c->pid, c->pid_text, ds, dr, dp);
	s->counted += ds + dr;
	s->events += ds + dr;   /* counted events are events */
}

static char *dup_into(char **at, const char *str)
{
	if (!str)
		return NULL;
	size_t len = strlen(str) + 1;
	char *r = *at;
	memcpy(r, str, len);
	*at += len;
	return r;
}

static void rec_proc(void *arg, int node, const struct recording_proc *p)
{
	struct session *s = arg;
	struct rec_state *rs = rec_state(s);
	bool wanted;
	SINKS_ANY(s, proc, &wanted);
	if ((int)p->pid.node >= s->nnodes || !wanted)
		return;
	if (rs->nprocs == REPLAY_PROCS_MAX) {
		rs->procs_left_out++;
		return;
	}
	const char *strs[] = { p->pid_text, p->name, p->label, p->initial_call,
			       p->current_function, p->parent_text, p->reason };
	size_t total = 1;
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		total += strs[i] ? strlen(strs[i]) + 1 : 0;
	if (rs->nprocs == rs->procs_cap) {
		rs->procs_cap = rs->procs_cap ? 2 * rs->procs_cap : 64;
		rs->procs = xrealloc(rs->procs, rs->procs_cap * sizeof(*rs->procs));
	}
	struct rec_proc_copy *c = &rs->procs[rs->nprocs++];
	c->node = node;
	c->p = *p;
	c->strs = xmalloc(total);
	char *at = c->strs;
	c->p.pid_text = dup_into(&at, p->pid_text);
	c->p.name = dup_into(&at, p->name);
	c->p.label = dup_into(&at, p->label);
	c->p.initial_call = dup_into(&at, p->initial_call);
	c->p.current_function = dup_into(&at, p->current_function);
	c->p.parent_text = dup_into(&at, p->parent_text);
	c->p.reason = dup_into(&at, p->reason);
}

/* The prescan's sink: the processes named by --pids, kept. */
static void scan_name(struct session *s, struct bs_pid pid, const char *name)
{
	if (name)
		rec_wanted(s, pid, name);
}

static void scan_event(void *arg, int node, const struct event *ev)
{
	(void)node;
	scan_name(arg, ev->pid, ev->name);
}

static void scan_counts(void *arg, int node, const struct recording_counts *c)
{
	(void)node;
	scan_name(arg, c->pid, c->name);
}

static void scan_proc(void *arg, int node, const struct recording_proc *p)
{
	(void)node;
	scan_name(arg, p->pid, p->name);
}

/*
 * --pids by name over a recording: a process is known by its name only from
 * the lines that carry it, and its first events (spawned, say) come before
 * its registration; so a file (not a pipe) is read once for the names, and
 * every event of a process that ever had the name is kept.
 */
static void prescan_names(struct session *s, const char *path)
{
	bool names = false;
	struct stat sb;
	for (int i = 0; i < s->rec_sel.n && s->rec_sel.mode == SEL_LIST; i++)
		names |= !s->rec_sel.items[i].is_pid;
	if (!names || stat(path, &sb) < 0 || !S_ISREG(sb.st_mode))
		return;
	struct recording scan;
	struct sbuf err = SBUF_INIT;
	if (recording_open(&scan, path, &err) == 0) {
		static const struct recording_sink sink = {
			.event = scan_event, .counts = scan_counts,
			.proc = scan_proc,
		};
		while (recording_read(&scan, 100000, &sink, s) > 0)
			;
		recording_release(&scan);
	}
	sbuf_release(&err);
}

int session_open_recording(struct session *s, const char *path,
			   struct sbuf *err)
{
	/* a recording may name more nodes than one attaches to: as many as
	 * the reader takes (no node is attached yet, nothing points into the
	 * slots) */
	if (!s->nnodes && s->nodes_max < RECORDING_NODES_MAX) {
		free(s->nodes);
		s->nodes = xcalloc(RECORDING_NODES_MAX, sizeof(*s->nodes));
		s->nodes_max = RECORDING_NODES_MAX;
	}
	s->rec = xcalloc(1, sizeof(*s->rec));
	if (recording_open(s->rec, path, err) < 0) {
		free(s->rec);
		s->rec = NULL;
		return -1;
	}
	s->rec_path = xstrdup(path);
	s->multi = false;
	s->replay = (struct replay *)xcalloc(1, sizeof(struct rec_state));
	struct rec_state *rs = rec_state(s);
	names_init(&rs->keep);
	names_init(&rs->totals_seen);
	if (pidsel_parse(s->spec.pids[0] ? s->spec.pids : "all", &s->rec_sel,
			 err) < 0) {
		session_replay_release(s);
		return -1;
	}
	s->rec_sel_ready = true;
	prescan_names(s, path);
	s->want_tracing = false;
	s->rec_done = false;
	return 0;
}

/* The recording is in: what the user should know about it. */
static void replay_done(struct session *s)
{
	struct rec_state *rs = rec_state(s);
	const struct recording_stats *st = &s->rec->stats;
	counts_interval_done(s);
	/* an export's process table, now that its events are counted */
	for (size_t i = 0; i < rs->nprocs; i++) {
		struct rec_proc_copy *c = &rs->procs[i];
		if (rec_wanted(s, c->p.pid, c->p.name))
			SINKS(s, proc, (int)c->p.pid.node, &c->p);
	}
	struct sbuf t = SBUF_INIT;
	/* what went wrong first: the line may be cut to the screen's width */
	if (st->malformed)
		sbuf_addf(&t, "%lu malformed line%s skipped, the first at line "
			  "%lu (%s); ", st->malformed,
			  st->malformed == 1 ? "" : "s", st->first_malformed,
			  st->first_malformed_why ? st->first_malformed_why :
			  "not a beamscope line");
	if (rs->procs_left_out)
		sbuf_addf(&t, "%lu process entries past the first %d left "
			  "out; ", rs->procs_left_out, REPLAY_PROCS_MAX);
	if (s->over_limit)
		sbuf_addf(&t, "stopped at --max-events %lu, the rest was not "
			  "read; ", s->spec.max_events);
	else if (st->export_cut)
		sbuf_addstr(&t, "the export was cut short; what it held up to "
			    "there is read; ");
	else if (st->truncated)
		sbuf_addstr(&t, "the last line was cut short and is ignored; ");
	sbuf_addf(&t, "opened %s: %lu events from %d node%s", s->rec_path,
		  st->events, s->nnodes, s->nnodes == 1 ? "" : "s");
	snprintf(s->rec_summary, sizeof(s->rec_summary), "%s", t.buf);
	sbuf_release(&t);
	s->rec_done = true;
	session_notice(s, st->malformed || s->over_limit ? SESSION_WARN :
		       SESSION_NOTE, "%s", s->rec_summary);
}

bool session_replay(struct session *s, int max_items)
{
	if (!s->rec || s->rec_done)
		return false;
	if (s->rec->starved)   /* until poll says the pipe has more */
		return true;
	static const struct recording_sink sink = {
		.node = rec_node, .event = rec_event, .counts = rec_counts,
		.proc = rec_proc, .profile = rec_profile,
	};
	/* near the limit, a line at a time: the first event over it ends
	 * the replay, and the rest is not read (replay_done says so) */
	if (s->spec.max_events && s->events + (unsigned long)max_items >
	    s->spec.max_events)
		max_items = s->events < s->spec.max_events ?
			(int)(s->spec.max_events - s->events) : 1;
	int r = recording_read(s->rec, max_items, &sink, s);
	if (r > 0 && !s->over_limit)
		return true;
	if (r < 0)
		session_notice(s, SESSION_ERROR, "%s", sbuf_str(&s->rec->error));
	replay_done(s);
	return false;
}

int session_replay_percent(const struct session *s)
{
	if (!s->rec || s->rec_done)
		return 100;
	const struct recording_stats *st = &s->rec->stats;
	if (!st->size)
		return -1;
	/* a file that grows while it is read is not done at its size */
	return st->bytes >= st->size ? 99 : (int)(st->bytes * 100 / st->size);
}

bool session_replay_done(const struct session *s)
{
	return s->rec_done;
}

uint64_t session_replay_bytes(const struct session *s)
{
	return s->rec ? s->rec->stats.bytes : 0;
}

const char *session_replay_summary(const struct session *s, bool *malformed)
{
	*malformed = s->rec && s->rec->stats.malformed > 0;
	return s->rec_summary;
}

const char *session_recording_path(const struct session *s)
{
	return s->rec_path ? s->rec_path : "";
}

const struct recording_stats *session_recording_stats(const struct session *s)
{
	return &s->rec->stats;
}

bool session_replay_starved(const struct session *s)
{
	return s->rec && s->rec->starved;
}
