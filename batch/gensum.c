/*
 * gensum: gen_call_stats and slow_call lines, and the --summary table.
 * Rows are the session's (src/analyse/gencall.c); this only writes them.
 */
#include "gensum.h"

#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "esc.h"
#include "json.h"
#include "term.h"
#include "xalloc.h"

/* A registered name of node as its syntax writes it (Shop.Cache for
 * 'Elixir.Shop.Cache' in Elixir), in buf; NULL for none. */
static const char *shown_name(struct gensum *g, int node, const char *raw,
			      struct sbuf *buf)
{
	if (!raw)
		return NULL;
	if (session_node_syntax(g->s, node) != TERM_ELIXIR)
		return raw;
	sbuf_reset(buf);
	term_atom_text(buf, TERM_ELIXIR, raw);
	return sbuf_str(buf);
}

/* What the server of a row is called: the registered name as the node's
 * syntax writes it, else what the agent said it is (as the process
 * table's NAME); nothing for a server that is a name already. */
static struct gc_server_names server_names(struct gensum *g,
					   const struct gc_row *r,
					   struct sbuf *buf)
{
	struct gc_server_names sn = { NULL, NULL };
	if (r->server[0] != '<')
		return sn;
	const char *now = session_text_name(g->s, r->node, r->server);
	sn.name = now ? shown_name(g, r->node, now, buf) : r->server_name;
	if (!sn.name)
		sn.label = session_text_label(g->s, r->node, r->server);
	return sn;
}

/* A call closed: a slow_call line if it took longer than --slower-than. */
static void on_done(void *arg, const struct gc_row *r, const struct gc_call *c)
{
	struct gensum *g = arg;
	if (g->cfg->slower_than_ms < 0 || c->outcome != GC_REPLIED ||
	    (double)gc_latency(c) <= g->cfg->slower_than_ms * 1000.0 ||
	    !json_sink_is_open(g->js) || g->js->write_errno)
		return;
	struct sbuf caller = SBUF_INIT, server = SBUF_INIT;
	struct gc_server_names sn = server_names(g, r, &server);
	json_slow_call(json_sink_buf(g->js), session_node_name(g->s, c->node),
		       r, c, shown_name(g, c->node, session_text_name(g->s,
				c->node, c->caller_text), &caller), &sn);
	sbuf_release(&caller);
	sbuf_release(&server);
}

void gensum_init(struct gensum *g, struct session *s, struct json_sink *js,
		 const struct config *cfg, bool live)
{
	memset(g, 0, sizeof(*g));
	g->s = s;
	g->js = js;
	g->cfg = cfg;
	g->live = live;
	g->next_ms = clock_mono_ms() + (long long)(cfg->interval * 1000);
	g->last_us = live ? clock_wall_us() : 0;
	store_init(&g->tally, 1);
	session_on_call_done(s, on_done, g);
}

void gensum_release(struct gensum *g)
{
	free(g->marks);
	store_release(&g->tally);
	session_on_call_done(g->s, NULL, NULL);
}

static void on_event(void *arg, int node, const struct event *ev)
{
	struct gensum *g = arg;
	(void)node;
	if (!g->cfg->summary)
		return;
	switch (ev->type) {
	case EV_SEND:
	case EV_SEND_DEAD:
		store_add_counts(&g->tally, ev->pid, ev->pid_text, 1, 0, 0);
		break;
	case EV_RECEIVE:
		store_add_counts(&g->tally, ev->pid, ev->pid_text, 0, 1, 0);
		break;
	case EV_SPAWN:
		store_add_counts(&g->tally, ev->pid, ev->pid_text, 0, 0, 1);
		break;
	case EV_REGISTER:
		store_set_info(&g->tally, ev->pid, ev->pid_text, ev->name,
			       NULL, -1);
		break;
	default:
		break;
	}
}

static void on_counts(void *arg, int node, struct bs_pid pid,
		      const char *pid_text, unsigned long sends,
		      unsigned long receives, unsigned long spawns)
{
	struct gensum *g = arg;
	(void)node;
	(void)spawns;   /* counted from their events */
	if (g->cfg->summary)
		store_add_counts(&g->tally, pid, pid_text, sends, receives, 0);
}

void gensum_hooks(struct gensum *g, struct session_sink *out)
{
	*out = (struct session_sink){
		.event = on_event, .counts = on_counts, .arg = g,
	};
}

long long gensum_wait_ms(const struct gensum *g)
{
	long long w = g->next_ms - clock_mono_ms();
	return w < 0 ? 0 : w;
}

/* What one tick writes with: when, and over how long since the last. */
struct tick {
	struct gensum *g;
	int64_t ts;
	double secs;
	struct sbuf buf;
};

static void write_row(void *arg, struct gc_row *r)
{
	struct tick *t = arg;
	struct gensum *g = t->g;
	unsigned long closed = r->calls + r->abandoned + r->server_down +
		r->out_of_order;
	const struct gc_call *old = gc_row_oldest(r);
	double rate = t->secs > 0 ? (double)(closed - g->marks[r->idx]) /
		t->secs : gc_row_rate(r, t->ts);
	g->marks[r->idx] = closed;
	struct gc_server_names sn = server_names(g, r, &t->buf);
	json_gen_stats(json_sink_buf(g->js), t->ts,
		       session_node_name(g->s, r->node), r, &sn, rate,
		       old ? t->ts - old->ts : -1);
}

static void skip_row(void *arg, struct gc_row *r)
{
	(void)arg;
	(void)r;
}

/* The gen_call_totals line, when any of its counts moved (or force). */
static void write_totals(struct gensum *g, int64_t ts, bool force)
{
	const struct gencalls *gc = session_gencalls(g->s);
	unsigned long sum = gc->given_up + gc->out_of_order + gc->unmatched +
		gc->nfolded + (gc->other_servers ? 1 : 0);
	if (!force && sum == g->totals_mark)
		return;
	g->totals_mark = sum;
	json_gen_totals(json_sink_buf(g->js), ts, gc);
}

void gensum_tick(struct gensum *g, bool force)
{
	const struct gencalls *gc = session_gencalls(g->s);
	long long now = clock_mono_ms();
	if (!g->cfg->gen_calls || (!force && now < g->next_ms) ||
	    !json_sink_is_open(g->js) || g->js->write_errno)
		return;
	g->next_ms = now + (long long)(g->cfg->interval * 1000);
	struct tick t = { .g = g, .buf = SBUF_INIT };
	t.ts = g->live ? clock_wall_us() : gc->now;
	session_calls_tick(g->s, t.ts);
	if (force)
		session_calls_settle(g->s);
	t.secs = (double)(t.ts - g->last_us) / 1e6;
	if (!g->live || g->last_us == 0 || t.secs <= 0)
		t.secs = 0;
	if (g->nmarks < gc->nrows) {
		g->marks = xrealloc(g->marks, gc->nrows * sizeof(*g->marks));
		memset(g->marks + g->nmarks, 0,
		       (gc->nrows - g->nmarks) * sizeof(*g->marks));
		g->nmarks = gc->nrows;
	}
	/* the rows with news; at the end every row */
	if (force) {
		session_calls_changed(g->s, skip_row, NULL);
		for (size_t i = 0; i < gc->nrows; i++)
			write_row(&t, gc->rows[i]);
	} else {
		session_calls_changed(g->s, write_row, &t);
	}
	write_totals(g, t.ts, force);
	sbuf_release(&t.buf);
	g->last_us = t.ts;
	json_sink_flush(g->js);
}

static int by_activity(const void *a, const void *b)
{
	const struct proc *x = *(struct proc *const *)a, *y = *(struct proc *const *)b;
	unsigned long sx = x->sends + x->receives + x->spawns;
	unsigned long sy = y->sends + y->receives + y->spawns;
	return sx < sy ? 1 : sx > sy ? -1 : 0;
}

static int by_p99(const void *a, const void *b)
{
	struct gc_row *x = *(struct gc_row *const *)a;
	struct gc_row *y = *(struct gc_row *const *)b;
	int64_t px = gc_row_quantiles(x)[2];
	int64_t py = gc_row_quantiles(y)[2];
	return px < py ? 1 : px > py ? -1 : 0;
}

#define SUMMARY_ROWS 10

/* What the pairing left out or gave up, in a line, when it did. */
static void summary_bounds(const struct gencalls *gc, FILE *f)
{
	struct sbuf sb = SBUF_INIT;
	if (gc->nfolded)
		sbuf_addf(&sb, "; %zu servers had more than %d request kinds, "
			  "the rest counted as " GC_OTHER, gc->nfolded,
			  GC_KINDS_MAX);
	if (gc->other_servers)
		sbuf_addf(&sb, "; calls to servers past %d rows counted under "
			  GC_OTHER " " GC_OTHER, GC_ROWS_MAX);
	if (gc->given_up)
		sbuf_addf(&sb, "; %lu calls in flight given up, the oldest, "
			  "past %d at once", gc->given_up, GC_INFLIGHT_MAX);
	if (gc->out_of_order)
		sbuf_addf(&sb, "; %lu replies stamped before their call "
			  "(out of order, not timed)", gc->out_of_order);
	if (sb.len)
		fprintf(f, "gen calls: %s\n", sb.buf + 2);
	sbuf_release(&sb);
}

void gensum_summary(struct gensum *g, FILE *f)
{
	const struct store *st = &g->tally;
	const struct gencalls *gc = session_gencalls(g->s);
	if (!g->cfg->summary)
		return;
	struct sbuf buf = SBUF_INIT;
	struct proc **procs = xcalloc(st->nprocs + 1, sizeof(*procs));
	if (st->nprocs) {   /* none: st->procs may be NULL */
		memcpy(procs, st->procs, st->nprocs * sizeof(*procs));
		qsort(procs, st->nprocs, sizeof(*procs), by_activity);
	}
	fprintf(f, "%10s %10s %8s  %s\n", "sends", "receives", "spawns",
		"busiest processes");
	for (size_t i = 0; i < st->nprocs && i < SUMMARY_ROWS; i++) {
		const struct proc *p = procs[i];
		/* what the view's NAME column says: the registered name,
		 * else what the process is */
		const char *name = p->name ? p->name :
			shown_name(g, (int)p->pid.node,
				   session_proc_name(g->s, p->pid), &buf);
		if (!name)
			name = session_proc_label(g->s, p->pid);
		/* names and kinds come from the target: escaped */
		esc_print(f, "%10lu %10lu %8lu  %s%s%s", p->sends, p->receives,
			p->spawns, p->pid_text, name ? " " : "", name ? name : "");
	}
	if (!st->nprocs)
		fprintf(f, "%10s %10s %8s  (none seen)\n", "-", "-", "-");
	free(procs);
	if (!g->cfg->gen_calls) {
		sbuf_release(&buf);
		return;
	}

	struct gc_row **rows = xcalloc(gc->nrows + 1, sizeof(*rows));
	if (gc->nrows) {
		memcpy(rows, gc->rows, gc->nrows * sizeof(*rows));
		qsort(rows, gc->nrows, sizeof(*rows), by_p99);
	}
	fprintf(f, "\n%8s %9s %9s %9s %7s  %s\n", "calls", "p50 ms", "p99 ms",
		"max ms", "flight", "slowest servers (request kind)");
	for (size_t i = 0; i < gc->nrows && i < SUMMARY_ROWS; i++) {
		struct gc_row *r = rows[i];
		struct gc_server_names sn = server_names(g, r, &buf);
		const char *name = sn.name ? sn.name : sn.label;
		const int64_t *q = gc_row_quantiles(r);
		esc_print(f, "%8lu %9.2f %9.2f %9.2f %7lu  %s%s%s (%s)", r->calls,
			(double)q[0] / 1000, (double)q[2] / 1000,
			(double)r->hist.max / 1000, r->in_flight, r->server,
			name ? " " : "", name ? name : "", r->kind);
	}
	if (!gc->nrows)
		fprintf(f, "%8s %9s %9s %9s %7s  (no gen calls seen)\n", "-", "-",
			"-", "-", "-");
	free(rows);
	sbuf_release(&buf);
	summary_bounds(gc, f);
}
