/*
 * control: what the view asks of the session and of itself: messages,
 * pausing, the nodes and the process in focus (sampled with the rows on
 * screen), tracing on and off, nodes attached and detached, :record.
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
#include "control.h"
#include "esc.h"
#include "exitcode.h"
#include "keys.h"
#include "prompt.h"
#include "sig.h"
#include "spark.h"
#include "ui.h"
#include "view_chart.h"
#include "view_proc.h"
#include "view_procs.h"
#include "xalloc.h"

void app_msg(struct app *a, bool error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(a->message, sizeof(a->message), fmt, ap);
	va_end(ap);
	a->message_is_error = error;
	if (error)
		snprintf(a->last_error, sizeof(a->last_error), "%s", a->message);
	a->dirty = true;
}

int app_pause(struct app *a, bool on)
{
	if (on && !a->paused)
		a->pause_seq = a->store.next_seq;
	if (on != a->paused)
		procs_freeze(a, on);
	a->paused = on;
	a->view_due = true;
	app_msg(a, false, on ? "display paused (tracing goes on); p or :resume "
		"resumes" : "display resumed");
	return ACT_REDRAW;
}


/* ---- nodes ---- */

bool app_attached(const struct app *a)
{
	return session_tracing(a->s);
}

bool app_lost(const struct app *a)
{
	return session_any_lost(a->s);
}

const char *app_node_name(const struct app *a, int i)
{
	return session_node_name(a->s, i);
}

void app_local_pid(struct bs_pid pid, char *out, size_t outsz)
{
	snprintf(out, outsz, "<0.%u.%u>", pid.num, pid.serial);
}

bool app_live(struct app *a, const char *what)
{
	if (!session_is_recording(a->s))
		return true;
	app_msg(a, true, "%s needs a live node; this is a recording (%s); "
		"run beamscope NODE to trace one", what, session_recording_path(a->s));
	return false;
}

void node_focus(struct app *a, struct bs_pid pid, bool on)
{
	session_focus(a->s, pid, on);
}

int app_pop(struct app *a)
{
	if (a->depth > 1)
		view_leave(a, a->stack[--a->depth]);
	return ACT_REDRAW;
}

void app_home(struct app *a)
{
	while (a->depth > 1)
		app_pop(a);
}

enum view_id app_view(const struct app *a)
{
	return a->stack[a->depth - 1];
}

bool app_focus_open(const struct app *a)
{
	for (int i = 0; i < a->depth; i++)
		if (a->stack[i] == VIEW_PROC)
			return true;
	return false;
}

int app_focus(struct app *a, struct bs_pid pid, const char *text)
{
	if (app_view(a) == VIEW_PROC)
		app_pop(a);
	node_focus(a, pid, true);
	/* tagged, it is in focus since it was tagged */
	int tag = app_tagged(a, pid);
	log_set_focus(a, pid, text,
		      tag >= 0 ? chart_tag_seq(a, tag) : a->store.next_seq);
	if (app_view(a) != VIEW_PROC)
		app_push(a, VIEW_PROC);
	app_keep_shown(a);
	return ACT_REDRAW;
}


/* ---- tracing control ---- */

int app_stop_tracing(struct app *a, const char *why)
{
	session_stop(a->s, why);
	return ACT_REDRAW;
}

int app_retrace(struct app *a)
{
	if (!app_live(a, "tracing"))
		return ACT_REDRAW;
	session_start(a->s);
	app_msg(a, false, "starting: %s", "waiting for the target");
	return ACT_REDRAW;
}

int app_attach_node(struct app *a, const char *name)
{
	if (!app_live(a, ":attach"))
		return ACT_REDRAW;
	if (!a->multi) {
		app_msg(a, true, "this view was opened on one node; open it on "
			"several (beamscope A B, or --cluster) to add nodes");
		return ACT_REDRAW;
	}
	int idx = session_attach_node(a->s, name);
	if (idx == SESSION_ATTACHED_ALREADY) {
		app_msg(a, true, "%s is already in this session", name);
		return ACT_REDRAW;
	}
	if (idx < 0) {
		app_msg(a, true, "at most %d nodes at once", BS_MAX_NODES);
		return ACT_REDRAW;
	}
	a->attaching = idx;
	session_start(a->s);
	app_msg(a, false, "attaching to %s", name);
	return ACT_REDRAW;
}

int app_detach_node(struct app *a, const char *name)
{
	if (!app_live(a, ":detach"))
		return ACT_REDRAW;
	int k = session_find_node(a->s, name);
	const struct node_view *n = k >= 0 ? session_node(a->s, k) : NULL;
	if (!n || !n->present) {
		app_msg(a, true, "%s is not in this session", name);
		return ACT_REDRAW;
	}
	if (session_present_nodes(a->s) == 1) {
		app_msg(a, true, "%s is the last node; q quits", name);
		return ACT_REDRAW;
	}
	if (a->node_filter == n->idx)
		a->node_filter = -1;
	session_drop_node(a->s, n->idx);
	a->detaching = n->idx;   /* told once it is clean */
	app_msg(a, false, "detaching from %s", app_node_name(a, n->idx));
	return ACT_REDRAW;
}

int app_record(struct app *a, const char *path)
{
	struct sbuf err = SBUF_INIT;
	if (!path) {
		if (!json_sink_is_open(&a->rec)) {
			app_msg(a, true, "not recording; :record FILE starts");
			return ACT_REDRAW;
		}
		json_sink_tick(&a->rec, true);
		json_sink_close(&a->rec);
		if (a->rec.write_errno)
			app_msg(a, true, "recording to %s stopped: %s; the %llu "
				"bytes written are whole lines", a->rec.name,
				json_sink_error(&a->rec), a->rec.good);
		else
			app_msg(a, false, "recorded %lu events to %s; beamscope "
				"--open %s reopens it", a->rec.events,
				a->rec.name, a->rec.name);
		return ACT_REDRAW;
	}
	if (!app_live(a, ":record"))
		return ACT_REDRAW;
	if (json_sink_open(&a->rec, path, OUTFILE_STREAM,
			   session_recording_fd(a->s), &err) < 0)
		app_msg(a, true, "%s; choose another file", err.buf);
	else
		app_msg(a, false, "recording to %s; :record alone stops", path);
	sbuf_release(&err);
	return ACT_REDRAW;
}

