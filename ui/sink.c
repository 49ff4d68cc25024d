/*
 * sink: what the session reports, into the view's store and messages.
 */
#include <curses.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "clock.h"
#include "view_alarms.h"
#include "control.h"
#include "esc.h"
#include "exitcode.h"
#include "json.h"
#include "keys.h"
#include "view_exact.h"
#include "view_profile.h"
#include "prompt.h"
#include "sig.h"
#include "spark.h"
#include "syntax.h"
#include "view_chart.h"
#include "ui.h"
#include "view_proc.h"
#include "xalloc.h"

/* ---- the store sink: what the session reports ---- */

static void on_event(void *arg, int node, const struct event *ev)
{
	struct app *a = arg;
	uint64_t seq = store_add_event(&a->store, ev);
	if (ev->type == EV_ALARM)
		alarms_add(a, ev);
	/* decoded before a :syntax, merged after it */
	if (node >= 0 && node < session_nnodes(a->s) &&
	    ev->syn != (uint8_t)session_node_syntax(a->s, node) && ev->raw)
		app_rerender_late(a, node, seq);
	if (!a->paused)
		a->dirty = true;
}

static void on_counts(void *arg, int node, struct bs_pid pid,
		      const char *pid_text, unsigned long sends,
		      unsigned long receives, unsigned long spawns)
{
	struct app *a = arg;
	(void)node;
	store_add_counts(&a->store, pid, pid_text, sends, receives, spawns);
	/* a process forgotten and back again: what it is was said once */
	const struct proc *p = store_proc(&a->store, pid);
	if (p && !p->label && !p->name)
		store_set_label(&a->store, pid, session_proc_label(a->s, pid));
	if (!a->paused)
		a->dirty = true;
}

static void on_info(void *arg, int node, struct bs_pid pid,
		    const char *pid_text, const char *name, const char *current,
		    long mqlen)
{
	struct app *a = arg;
	(void)node;
	/* a name alone (a registration) keeps what was sampled */
	const struct proc *p = store_proc(&a->store, pid);
	if (!current && mqlen < 0 && p)
		mqlen = p->mqlen;
	store_set_info(&a->store, pid, pid_text, name, current, mqlen);
}

static void on_sizes(void *arg, int node, struct bs_pid pid,
		     struct psize memory, long reductions, struct psize heap)
{
	struct app *a = arg;
	(void)node;
	store_set_sizes(&a->store, pid, memory.bytes, memory.at_least,
			reductions, heap.bytes, heap.at_least, clock_mono_ms());
	if (!a->paused)
		a->dirty = true;
}

static void on_label(void *arg, int node, struct bs_pid pid,
		     const char *pid_text, const char *label)
{
	struct app *a = arg;
	(void)node;
	(void)pid_text;
	store_set_label(&a->store, pid, label);
	if (!a->paused)
		a->dirty = true;
}

/* An export reopened: the process as it was, totals included. */
static void on_proc(void *arg, int node, const struct recording_proc *rp)
{
	struct app *a = arg;
	(void)node;
	store_set_info(&a->store, rp->pid, rp->pid_text, rp->name,
		       rp->current_function, rp->mqlen);
	store_set_label(&a->store, rp->pid, rp->label);
	struct proc *p = store_proc(&a->store, rp->pid);
	if (!p)
		return;
	/* the events kept counted some of it already */
	unsigned long s = rp->sends > p->sends ? rp->sends - p->sends : 0,
		r = rp->receives > p->receives ? rp->receives - p->receives : 0,
		sp = rp->spawns > p->spawns ? rp->spawns - p->spawns : 0;
	store_recorded_proc(&a->store, p, rp->initial_call, rp->has_parent,
			    rp->parent, rp->exited, rp->reason);
	/* last: p is the store's until it adds anything */
	if (s || r || sp)
		store_add_counts(&a->store, rp->pid, rp->pid_text, s, r, sp);
}

/* Kept for the log in focus only; the others (tagged processes, a log
 * just left) are not shown anywhere. */
static void on_relations(void *arg, int node, const struct relations *r)
{
	(void)node;
	log_relations(arg, r);
}

static void on_node_sample(void *arg, int node)
{
	struct app *a = arg;
	(void)node;
	if (!a->paused && a->header)
		a->dirty = true;
}

static void on_node_state(void *arg, int node)
{
	struct app *a = arg;
	const struct node_view *n = session_node(a->s, node);
	a->multi = session_multi(a->s);   /* a recording finds its nodes as it loads */
	if (n->state == SN_RECORDED) {   /* never traced */
		a->dirty = true;
		return;
	}
	/* a node traced afresh (again, or attached later): the process in
	 * focus there is in focus again */
	if (n->state == SN_TRACING && !a->refocused[node]) {
		a->refocused[node] = true;
		if (app_focus_open(a) && (int)log_focus(a).node == node)
			node_focus(a, log_focus(a), true);
		for (int i = 0; i < chart_ntags(a); i++)
			if ((int)chart_tag(a, i).node == node)
				node_focus(a, chart_tag(a, i), true);
	} else if (n->state != SN_TRACING) {
		a->refocused[node] = false;
	}
	a->dirty = true;
}

static void on_notice(void *arg, enum session_level level, const char *text)
{
	struct app *a = arg;
	if (level == SESSION_INFO)
		return;
	if (!a->screen_up) {
		esc_print(stderr, "beamscope: %s", text);
		return;
	}
	if (level == SESSION_REFUSED)
		/* a new call pattern or :match refused and taken back: the
		 * message stays when tracing starts again without it */
		a->refused_stays = true;
	app_msg(a, level >= SESSION_WARN, "%s", text);
}

static void on_started(void *arg, unsigned long traced, int nodes,
		       unsigned long skipped)
{
	struct app *a = arg;
	char also[96] = "";
	if (skipped)
		snprintf(also, sizeof(also), " (%lu skipped: traced by another "
			 "tracer)", skipped);
	a->started_traced = traced;
	a->started_nodes = nodes;
	a->started_skipped = skipped;
	if (!a->screen_up || a->refused_stays) {
		a->refused_stays = false;
		return;
	}
	if (a->attaching >= 0) {
		const struct node_view *n = session_node(a->s, a->attaching);
		a->attaching = -1;
		a->detaching = -1;
		if (n->state == SN_TRACING) {
			app_msg(a, false, "attached to %s (%s%sclock %+lld us "
				"+-%lld)", app_node_name(a, n->idx),
				n->tr->tracing, n->tr->tracing[0] ? ", " : "",
				n->clock_offset_us, n->clock_error_us);
			return;
		}
	}
	const char *procs = traced == 1 ? "process" : "processes";
	const char *paired = session_spec(a->s)->gen_calls && !session_is_recording(a->s) ?
		", gen calls paired" : "";
	if (a->multi)
		app_msg(a, false, "tracing %lu %s on %d nodes%s%s; ? for help",
			traced, procs, nodes, paired, also);
	else if (session_node(a->s, 0)->tr->tracing[0])
		app_msg(a, false, "tracing %lu %s on %s (%s)%s%s; ? for help",
			traced, procs, app_node_name(a, 0),
			session_node(a->s, 0)->tr->tracing, paired, also);
	else
		app_msg(a, false, "tracing %lu %s on %s%s%s; ? for help",
			traced, procs, app_node_name(a, 0), paired, also);
}

static void on_profile_sample(void *arg, int node, const struct prof_sample *p)
{
	struct app *a = arg;
	profile_sample(a, node, p);
	/* :record, --record: the stacks too, as batch --profile writes them */
	if (json_sink_is_open(&a->rec) && !a->rec.write_errno)
		json_profile_sample(json_sink_buf(&a->rec),
				    session_node_name(a->s, node), p);
}

static void on_profile_second(void *arg, int node, const struct prof_stats *st)
{
	profile_second(arg, node, st);
}

static void on_profile_calls(void *arg, int node, const struct prof_calls *c)
{
	exact_take(arg, node, c);
}

void ui_sink(struct app *a, struct session_sink *sink)
{
	*sink = (struct session_sink){
		.event = on_event, .counts = on_counts,
		.info = on_info, .sizes = on_sizes,
		.label = on_label, .proc = on_proc, .node_state = on_node_state,
		.notice = on_notice, .started = on_started,
		.node_sample = on_node_sample, .relations = on_relations,
		.profile_sample = on_profile_sample,
		.profile_second = on_profile_second,
		.profile_calls = on_profile_calls, .arg = a,
	};
}

void ui_say_started(struct app *a)
{
	on_started(a, a->started_traced, a->started_nodes, a->started_skipped);
}
