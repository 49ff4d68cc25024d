/*
 * view_alarms: the VM's recent alarms, newest first (view_alarms.h).
 */
#include "view_alarms.h"

#include <curses.h>
#include <stdio.h>
#include <string.h>

#include "alarm.h"
#include "app.h"
#include "draw.h"
#include "sbuf.h"

struct kept {
	int64_t ts;
	struct bs_pid pid;
	char pid_text[48];
	char name[64];
	char text[200];
};

static struct {
	struct kept ring[ALARMS_KEPT];
	unsigned long n;   /* added in all: the newest is ring[(n-1) % KEPT] */
} al;

void alarms_add(struct app *a, const struct event *ev)
{
	struct kept *k = &al.ring[al.n % ALARMS_KEPT];
	struct sbuf t = SBUF_INIT;
	const char *name = ev->name ? ev->name : session_proc_name(a->s, ev->pid);
	alarm_text(&t, ev->extra, ev->elapsed_us, ev->heap[0], ev->heap[1],
		   ev->peer, ev->peer_name, ev->payload);
	k->ts = ev->ts;
	k->pid = ev->pid;
	snprintf(k->pid_text, sizeof(k->pid_text), "%s",
		 ev->pid_text ? ev->pid_text : "");
	snprintf(k->name, sizeof(k->name), "%s", name ? name :
		 ev->label ? ev->label : "");
	snprintf(k->text, sizeof(k->text), "%s", sbuf_str(&t));
	sbuf_release(&t);
	al.n++;
	if (app_view(a) == VIEW_ALARMS && !a->paused)
		a->dirty = true;
}

static int kept_count(void)
{
	return al.n < ALARMS_KEPT ? (int)al.n : ALARMS_KEPT;
}

/* the i-th newest, 0 the newest */
static const struct kept *kept_at(int i)
{
	return &al.ring[(al.n - 1 - (unsigned long)i) % ALARMS_KEPT];
}

static void alarms_draw(struct app *a, int y, int h)
{
	struct list *l = &a->pos[VIEW_ALARMS];
	char line[512];
	int n = kept_count();
	snprintf(line, sizeof(line), "%-12s  %-14s %-22s  %s", "TIME", "PID",
		 "NAME", "ALARM");
	draw_text(y, 0, COLS, line, draw_attr(a, ROLE_HEADER));
	y++;
	h--;
	list_fit(l, LIST_SELECT, n, h);
	for (int r = 0; r < h; r++) {
		int i = l->top + r;
		move(y + r, 0);
		clrtoeol();
		if (i >= n) {
			if (i == 0)
				draw_text(y, 0, COLS, session_alarm_spec(a->s) ?
					  "  no alarm yet: the VM has said nothing "
					  "past the thresholds (:alarms sets them)" :
					  "  the alarms are off: :alarms turns them on",
					  draw_attr(a, ROLE_DIM));
			continue;
		}
		const struct kept *k = kept_at(i);
		char tm[32];
		draw_time(tm, sizeof(tm), k->ts);
		snprintf(line, sizeof(line), "%-12s  %-14s %-22.22s  %s", tm,
			 k->pid_text, k->name, k->text);
		draw_text(y + r, 0, COLS, line, i == l->sel ?
			  draw_attr(a, ROLE_SELECTED) : (int)A_NORMAL);
	}
}

static int alarms_request(struct app *a, enum request req)
{
	struct list *l = &a->pos[VIEW_ALARMS];
	if (list_request(l, LIST_SELECT, req))
		return ACT_REDRAW;
	if (req != REQ_ENTER || l->sel < 0 || l->sel >= kept_count())
		return ACT_NONE;
	const struct kept *k = kept_at(l->sel);
	return app_focus(a, k->pid, k->pid_text);
}

static void alarms_where(struct app *a, char *out, size_t outsz)
{
	unsigned long sup;
	unsigned long n = session_alarm_count(a->s, &sup);
	snprintf(out, outsz, "%lu alarm%s%s", n, n == 1 ? "" : "s",
		 sup ? ", more not shipped (over 100 a second)" : "");
}

/* On at --alarm's thresholds, else the defaults, if they are off. */
static void alarms_on(struct app *a)
{
	struct alarm_spec sp;
	if (session_alarm_spec(a->s))
		return;
	if (a->cfg->alarm)
		sp = a->cfg->alarms;
	else
		alarm_spec_default(&sp);
	session_alarms(a->s, &sp);
	struct sbuf t = SBUF_INIT;
	alarm_spec_text(&sp, &t);
	app_msg(a, false, "alarms on: %s (:alarms off turns them off)",
		sbuf_str(&t));
	sbuf_release(&t);
}

int alarms_toggle(struct app *a)
{
	if (app_view(a) == VIEW_ALARMS)
		return app_pop(a);
	if (!session_is_recording(a->s))
		alarms_on(a);
	app_push(a, VIEW_ALARMS);
	return ACT_REDRAW;
}

int alarms_command(struct app *a, int argc, const char *const *argv)
{
	if (argc == 0 || !strcmp(argv[0], "on")) {
		if (app_view(a) != VIEW_ALARMS)
			return alarms_toggle(a);
		alarms_on(a);
		return ACT_REDRAW;
	}
	if (!strcmp(argv[0], "off")) {
		session_alarms(a->s, NULL);
		app_msg(a, false, "alarms off: nothing of them is left on the node");
		return ACT_REDRAW;
	}
	struct alarm_spec sp;
	struct sbuf err = SBUF_INIT;
	if (alarm_spec_parse(&sp, argv[0], &err) < 0) {
		/* the parser speaks of --alarm; here it is :alarms */
		const char *e = sbuf_str(&err);
		app_msg(a, true, ":alarms%s", strncmp(e, "--alarm", 7) ? e : e + 7);
		sbuf_release(&err);
		return ACT_REDRAW;
	}
	sbuf_release(&err);
	session_alarms(a->s, alarm_spec_any(&sp) ? &sp : NULL);
	struct sbuf t = SBUF_INIT;
	alarm_spec_text(&sp, &t);
	app_msg(a, false, "alarms: %s", alarm_spec_any(&sp) ? sbuf_str(&t) :
		"all off");
	sbuf_release(&t);
	if (app_view(a) != VIEW_ALARMS)
		app_push(a, VIEW_ALARMS);
	return ACT_REDRAW;
}

const struct view_ops alarms_view_ops = {
	.draw = alarms_draw,
	.request = alarms_request,
	.where = alarms_where,
};
