/*
 * view: the table of views, opening them, and the requests every view
 * shares.  A view's own requests go to its request op; the ones below
 * (closing, the views that toggle, the prompt, pausing) mean the same
 * everywhere and are answered here, from one table.  Handlers only change
 * state and return ACT_* flags; the loop redraws.
 */
#include "view.h"

#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "commands.h"
#include "control.h"
#include "header.h"
#include "prompt.h"
#include "view_alarms.h"
#include "view_profile.h"

static const struct view_ops *const views[VIEW__COUNT] = {
	[VIEW_PROCS] = &procs_view_ops,
	[VIEW_PROC] = &proc_view_ops,
	[VIEW_TREE] = &tree_view_ops,
	[VIEW_HELP] = &help_view_ops,
	[VIEW_CALLS] = &calls_view_ops,
	[VIEW_EVENT] = &event_view_ops,
	[VIEW_SERVERS] = &servers_view_ops,
	[VIEW_SRV_CALLS] = &srv_calls_view_ops,
	[VIEW_CHART] = &chart_view_ops,
	[VIEW_PROFILE] = &profile_view_ops,
	[VIEW_ALARMS] = &alarms_view_ops,
};

void app_push(struct app *a, enum view_id v)
{
	a->dirty = true;
	if (a->depth == (int)(sizeof(a->stack) / sizeof(a->stack[0])))
		return;
	a->stack[a->depth++] = v;
	if (views[v]->enter)
		views[v]->enter(a);
}

void view_leave(struct app *a, enum view_id v)
{
	if (views[v]->leave)
		views[v]->leave(a);
}

void view_where(struct app *a, char *out, size_t outsz)
{
	out[0] = '\0';
	if (views[app_view(a)]->where)
		views[app_view(a)]->where(a, out, outsz);
}

void view_draw(struct app *a, int y, int h)
{
	views[app_view(a)]->draw(a, y, h);
}

/* A view that is its own key's toggle: open it, or close it if on top. */
static int toggle(struct app *a, enum view_id v)
{
	if (app_view(a) == v)
		return app_pop(a);
	app_push(a, v);
	return ACT_REDRAW;
}

static int req_close(struct app *a)
{
	return a->depth > 1 ? app_pop(a) : ACT_QUIT;
}

static int req_back(struct app *a)
{
	const struct view_ops *v = views[app_view(a)];
	if (v->back && v->back(a))
		return ACT_REDRAW;
	return app_pop(a);
}

static int req_quit(struct app *a)
{
	(void)a;
	return ACT_QUIT;
}

static int req_help(struct app *a)
{
	return toggle(a, VIEW_HELP);
}

static int req_tree(struct app *a)
{
	return toggle(a, VIEW_TREE);
}

static int req_calls(struct app *a)
{
	return toggle(a, VIEW_CALLS);
}

static int req_chart(struct app *a)
{
	return toggle(a, VIEW_CHART);
}

static int req_servers(struct app *a)
{
	bool opening = app_view(a) != VIEW_SERVERS;
	int r = toggle(a, VIEW_SERVERS);
	return opening ? app_gen_calls(a, true) : r;
}

/* the filter is the process table's: it is shown while typing; in a
 * process log, / searches the log instead */
static int req_filter(struct app *a)
{
	if (app_view(a) == VIEW_PROC) {
		prompt_open(a, 's');
		return ACT_REDRAW;
	}
	if (app_view(a) == VIEW_PROFILE) {
		prompt_open(a, 'h');
		return ACT_REDRAW;
	}
	app_home(a);
	prompt_open(a, '/');
	return ACT_REDRAW;
}

static int req_prompt(struct app *a)
{
	prompt_open(a, ':');
	return ACT_REDRAW;
}

static int req_profile(struct app *a)
{
	return profile_toggle(a);
}

static int req_alarms(struct app *a)
{
	return alarms_toggle(a);
}

static int req_pause(struct app *a)
{
	return app_pause(a, !a->paused);
}

static int req_header(struct app *a)
{
	return app_header(a, !a->header);
}

static int req_redraw(struct app *a)
{
	(void)a;
	return ACT_REDRAW | ACT_CLEAR;
}

static int (*const shared[REQ__COUNT])(struct app *a) = {
	[REQ_CLOSE] = req_close, [REQ_BACK] = req_back, [REQ_QUIT] = req_quit,
	[REQ_HELP] = req_help, [REQ_TREE] = req_tree, [REQ_CALLS] = req_calls,
	[REQ_SERVERS] = req_servers, [REQ_CHART] = req_chart,
	[REQ_FILTER] = req_filter, [REQ_PROMPT] = req_prompt,
	[REQ_PAUSE] = req_pause, [REQ_REDRAW] = req_redraw,
	[REQ_HEADER] = req_header, [REQ_PROFILE] = req_profile,
	[REQ_ALARMS] = req_alarms,
};

int view_request(struct app *a, enum request req)
{
	if (req == REQ_NONE)
		return ACT_NONE;
	if (shared[req])
		return shared[req](a);
	return views[app_view(a)]->request(a, req);
}

void views_clear(struct app *a)
{
	for (int v = 0; v < VIEW__COUNT; v++) {
		list_reset(&a->pos[v]);
		if (views[v]->clear)
			views[v]->clear(a);
	}
}

void views_release(struct app *a)
{
	for (int v = 0; v < VIEW__COUNT; v++)
		if (views[v]->release)
			views[v]->release(a);
}
