/*
 * gensum: gen_call_stats and slow_call lines, and the --summary table.
 * Rows are the session's (src/gencall.c); this only writes them.
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

static const char *server_name(struct gensum *g, const struct gc_row *r,
			       struct sbuf *buf)
{
	if (r->server[0] != '<')
		return NULL;   /* a name already */
	const char *now = session_text_name(g->s, r->node, r->server);
	return now ? shown_name(g, r->node, now, buf) : r->server_name;
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
	json_slow_call(json_sink_buf(g->js), session_node_name(g->s, c->node),
		       r, c, shown_name(g, c->node, session_text_name(g->s,
				c->node, c->caller_text), &caller),
		       server_name(g, r, &server));
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
	s->gcalls.done = on_done;
	s->gcalls.done_arg = g;
}

void gensum_release(struct gensum *g)
{
	free(g->marks);
	store_release(&g->tally);
	g->s->gcalls.done = NULL;
}

void gensum_event(struct gensum *g, const struct event *ev)
{
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

void gensum_counts(struct gensum *g, struct bs_pid pid, const char *pid_text,
		   unsigned long sends, unsigned long receives)
{
	if (g->cfg->summary)
		store_add_counts(&g->tally, pid, pid_text, sends, receives, 0);
}

long long gensum_wait_ms(const struct gensum *g)
{
	long long w = g->next_ms - clock_mono_ms();
	return w < 0 ? 0 : w;
}

void gensum_tick(struct gensum *g, bool force)
{
	struct gencalls *gc = &g->s->gcalls;
	long long now = clock_mono_ms();
	if (!g->cfg->gen_calls || (!force && now < g->next_ms) ||
	    !json_sink_is_open(g->js) || g->js->write_errno)
		return;
	g->next_ms = now + (long long)(g->cfg->interval * 1000);
	int64_t ts = g->live ? clock_wall_us() : gc->now;
	gencall_tick(gc, ts);
	if (force)
		gencall_settle(gc);
	double secs = (double)(ts - g->last_us) / 1e6;
	if (!g->live || g->last_us == 0 || secs <= 0)
		secs = 0;
	if (g->nmarks < gc->nrows) {
		g->marks = xrealloc(g->marks, gc->nrows * sizeof(*g->marks));
		memset(g->marks + g->nmarks, 0,
		       (gc->nrows - g->nmarks) * sizeof(*g->marks));
		g->nmarks = gc->nrows;
	}
	struct sbuf buf = SBUF_INIT;
	for (size_t i = 0; i < gc->nrows; i++) {
		const struct gc_row *r = gc->rows[i];
		unsigned long closed = r->calls + r->abandoned + r->server_down;
		/* quiet rows are written again only at the end */
		if (!force && closed == g->marks[i] && !r->in_flight)
			continue;
		const struct gc_call *old = gc_row_oldest(gc, r);
		double rate = secs > 0 ? (double)(closed - g->marks[i]) / secs :
			gc_row_rate(r, ts);
		g->marks[i] = closed;
		json_gen_stats(json_sink_buf(g->js), ts,
			       session_node_name(g->s, r->node), r,
			       server_name(g, r, &buf), rate,
			       old ? ts - old->ts : -1);
	}
	sbuf_release(&buf);
	g->last_us = ts;
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
	const struct gc_row *x = *(struct gc_row *const *)a;
	const struct gc_row *y = *(struct gc_row *const *)b;
	int64_t px = gc_hist_quantile(&x->hist, 0.99);
	int64_t py = gc_hist_quantile(&y->hist, 0.99);
	return px < py ? 1 : px > py ? -1 : 0;
}

#define SUMMARY_ROWS 10

void gensum_summary(struct gensum *g, FILE *f)
{
	const struct store *st = &g->tally;
	struct gencalls *gc = &g->s->gcalls;
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
		const struct gc_row *r = rows[i];
		const char *name = server_name(g, r, &buf);
		esc_print(f, "%8lu %9.2f %9.2f %9.2f %7lu  %s%s%s (%s)", r->calls,
			(double)gc_hist_quantile(&r->hist, 0.5) / 1000,
			(double)gc_hist_quantile(&r->hist, 0.99) / 1000,
			(double)r->hist.max / 1000, r->in_flight, r->server,
			name ? " " : "", name ? name : "", r->kind);
	}
	if (!gc->nrows)
		fprintf(f, "%8s %9s %9s %9s %7s  (no gen calls seen)\n", "-", "-",
			"-", "-", "-");
	free(rows);
	sbuf_release(&buf);
}
