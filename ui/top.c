/*
 * top: top mode (:top, the O key), the N processes that lead by a column:
 * by memory, reductions or queue the agents look through the whole node;
 * by sends or receives the counts rank the processes seen.
 */
#include "app.h"
#include "top.h"
#include "view_procs.h"

/* top mode: the table holds the n processes first by col, of the whole
 * node (the agents look for them); col -1: off */
static struct {
	int col, n;
} tm = { -1, TOP_DEFAULT };

int top_col(const struct app *a)
{
	(void)a;
	return tm.col;
}

int top_n(const struct app *a)
{
	(void)a;
	return tm.n;
}

int app_top(struct app *a, int col, int n)
{
	static const struct {
		enum proc_col col;
		const char *metric;   /* the agents' scan; NULL: the counts */
	} ranks[] = { { COL_MEM, "memory" }, { COL_REDSPS, "reductions" },
		      { COL_MQ, "message_queue_len" }, { COL_SPS, NULL },
		      { COL_RPS, NULL } };
	if (col < 0) {
		if (tm.col >= 0)
			app_msg(a, false, "top mode off");
		tm.col = -1;
		session_top(a->s, NULL, 0);
		return ACT_REDRAW;
	}
	for (size_t i = 0; i < sizeof(ranks) / sizeof(ranks[0]); i++) {
		if ((int)ranks[i].col != col)
			continue;
		if (session_is_recording(a->s) && ranks[i].metric) {
			app_msg(a, true, "top by %s looks through a live node; a "
				"recording ranks by S/s or R/s only",
				proc_cols[col].title);
			return ACT_REDRAW;
		}
		bool tracing = false, counted = false;
		for (int k = 0; k < session_nnodes(a->s); k++) {
			tracing |= session_node(a->s, k)->state == SN_TRACING;
			counted |= session_node(a->s, k)->state == SN_TRACING &&
				session_node(a->s, k)->counted;
		}
		if (ranks[i].metric && tracing && !counted) {
			app_msg(a, true, "top by %s looks through the node while "
				"processes are counted; this trace ships only the "
				"processes --pids names: :sort %s ranks them",
				proc_cols[col].title, proc_cols[col].key);
			return ACT_REDRAW;
		}
		tm.col = col;
		tm.n = n;
		procs_set_sort(a, col, false);
		session_top(a->s, ranks[i].metric, n);
		app_msg(a, false, "top %d by %s%s; O or :top off leaves it", n,
			proc_cols[col].title, ranks[i].metric ?
			", of every process on the node" : "");
		return ACT_REDRAW;
	}
	app_msg(a, true, "top ranks by MEM, REDS/s, MQ, S/s or R/s, not %s; "
		"sort by one of them first, or :top mem|redsps|mq|sps|rps",
		proc_cols[col].title);
	return ACT_REDRAW;
}

/* Is the column ranked from the agents' samples (not from the counts)? */
bool top_sampled(int col)
{
	return col == COL_MEM || col == COL_REDSPS || col == COL_MQ;
}

/* "top 20 by MEM (node: 35% of 500000 looked at, a pass 48 s)": what
 * top mode ranks, and how far the agents' look through every process
 * has come (summed over the nodes; the slowest pass) */
void top_where(const struct app *a, struct sbuf *sb)
{
	sbuf_addf(sb, "  top %d by %s", tm.n, proc_cols[tm.col].title);
	if (procs_sort_col(a) != tm.col)
		sbuf_addf(sb, ", sort %s %s", proc_cols[procs_sort_col(a)].title,
			  procs_sort_asc(a) ? "asc" : "desc");
	if (!top_sampled(tm.col)) {
		sbuf_addf(sb, " (of the processes counted)");
		return;
	}
	long scanned = 0, total = 0, pass_ms = 0;
	bool have = false;
	for (int i = 0; i < session_nnodes(a->s); i++) {
		const struct node_view *n = session_node(a->s, i);
		if (!n->top.have)
			continue;
		have = true;
		scanned += n->top.scanned;
		total += n->top.total;
		if (n->top.pass_ms > pass_ms)
			pass_ms = n->top.pass_ms;
	}
	if (!have) {
		bool counted = false;
		for (int i = 0; i < session_nnodes(a->s); i++)
			counted |= session_node(a->s, i)->counted;
		sbuf_addf(sb, counted ? " (looking through the node)" :
			  " (only while processes are counted, not with "
			  "--pids naming them)");
		return;
	}
	sbuf_addf(sb, " (node: %ld%% of %ld looked at", total ?
		  scanned * 100 / total : 100, total);
	if (pass_ms)
		sbuf_addf(sb, ", a pass %.0f s", (double)pass_ms / 1000.0);
	sbuf_addf(sb, ")");
}
