/*
 * commands: what each entry of the command table (src/spec/cmd.h) does.
 * Handlers return ACT_* flags; messages go to the status area.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "callpat.h"
#include "cmd.h"
#include "commands.h"
#include "control.h"
#include "event.h"
#include "export.h"
#include "header.h"
#include "pidsel.h"
#include "pidtext.h"
#include "rerender.h"
#include "retext.h"
#include "syntax.h"
#include "top.h"
#include "view_chart.h"
#include "view_procs.h"
#include "view_alarms.h"
#include "view_profile.h"
#include "xalloc.h"

typedef int (*cmd_fn)(struct app *a, const struct cmd_line *cl);

static int need_args(struct app *a, const struct cmd_line *cl, int min, int max)
{
	if (cl->argc < min || cl->argc > max) {
		const struct cmd_info *c = &cmd_table[cl->id];
		app_msg(a, true, "usage: %s %s", c->name, c->args);
		return -1;
	}
	return 0;
}

static int c_events(struct app *a, const struct cmd_line *cl)
{
	char bad[64];
	if (need_args(a, cl, 1, 1) < 0)
		return ACT_REDRAW;
	int k = event_kinds_parse(cl->argv[0], bad, sizeof(bad));
	if (k < 0) {
		app_msg(a, true, "unknown kind \"%s\"; kinds are %s", bad,
			event_kinds_list());
		return ACT_REDRAW;
	}
	if (!app_live(a, ":events"))
		return ACT_REDRAW;
	/* call patterns keep their kind, the servers view its records */
	session_set_kinds(a->s, k);
	return app_retrace(a);
}

static int c_pids(struct app *a, const struct cmd_line *cl)
{
	struct pidsel sel;
	struct sbuf err = SBUF_INIT;
	if (need_args(a, cl, 1, 1) < 0)
		return ACT_REDRAW;
	if (pidsel_parse(cl->argv[0], &sel, &err) < 0) {
		app_msg(a, true, "%s", err.buf);
		sbuf_release(&err);
		return ACT_REDRAW;
	}
	pidsel_release(&sel);
	if (session_check_pids(a->s, cl->argv[0], ":pids", &err) < 0) {
		app_msg(a, true, "%s", err.buf);
		sbuf_release(&err);
		return ACT_REDRAW;
	}
	if (!app_live(a, ":pids"))
		return ACT_REDRAW;
	session_set_pids(a->s, cl->argv[0], false);
	return app_retrace(a);
}

static int c_follow(struct app *a, const struct cmd_line *cl)
{
	struct pidsel sel;
	struct sbuf err = SBUF_INIT;
	if (need_args(a, cl, 1, 1) < 0)
		return ACT_REDRAW;
	if (pidsel_parse(cl->argv[0], &sel, &err) < 0 || sel.mode != SEL_LIST ||
	    sel.n != 1) {
		app_msg(a, true, "follow takes one process: a pid <0.123.0> or a "
			"registered name");
		if (sel.mode == SEL_LIST)
			pidsel_release(&sel);
		sbuf_release(&err);
		return ACT_REDRAW;
	}
	pidsel_release(&sel);
	if (session_check_pids(a->s, cl->argv[0], ":follow", &err) < 0) {
		app_msg(a, true, "%s", err.buf);
		sbuf_release(&err);
		return ACT_REDRAW;
	}
	if (!app_live(a, ":follow"))
		return ACT_REDRAW;
	session_set_pids(a->s, cl->argv[0], true);
	return app_retrace(a);
}

static int c_unfollow(struct app *a, const struct cmd_line *cl)
{
	if (need_args(a, cl, 0, 0) < 0)
		return ACT_REDRAW;
	if (!app_live(a, ":unfollow"))
		return ACT_REDRAW;
	if (!session_spec(a->s)->follow || !app_attached(a)) {
		app_msg(a, true, "not following anything; :follow PID|NAME");
		return ACT_REDRAW;
	}
	session_unfollow(a->s);
	session_set_pids(a->s, "all", false);
	app_msg(a, false, "unfollowed: each follower drops its flags at its next "
		"event; :on traces all processes");
	return ACT_REDRAW;
}

static int c_on(struct app *a, const struct cmd_line *cl)
{
	if (need_args(a, cl, 0, 0) < 0)
		return ACT_REDRAW;
	if (app_attached(a) && !session_stopped_why(a->s)[0]) {
		app_msg(a, false, "already tracing");
		return ACT_REDRAW;
	}
	return app_retrace(a);
}

static int c_off(struct app *a, const struct cmd_line *cl)
{
	if (need_args(a, cl, 0, 0) < 0)
		return ACT_REDRAW;
	if (!app_live(a, ":off"))
		return ACT_REDRAW;
	if (!app_attached(a) && !session_wants_tracing(a->s)) {
		app_msg(a, false, "not tracing");
		return ACT_REDRAW;
	}
	app_stop_tracing(a, "stopped with :off");
	a->stop_pending = true;   /* told when every node has stopped */
	app_msg(a, false, "stopping; the status line shows what is pending");
	return ACT_REDRAW;
}

static int c_focus(struct app *a, const struct cmd_line *cl)
{
	if (need_args(a, cl, 1, 1) < 0)
		return ACT_REDRAW;
	return app_focus_text(a, cl->argv[0]);
}

static int c_unfocus(struct app *a, const struct cmd_line *cl)
{
	(void)cl;
	if (app_view(a) == VIEW_PROC)
		return app_pop(a);
	return ACT_NONE;
}

static int c_pause(struct app *a, const struct cmd_line *cl)
{
	(void)cl;
	return app_pause(a, true);
}

static int c_resume(struct app *a, const struct cmd_line *cl)
{
	(void)cl;
	return app_pause(a, false);
}

static int c_clear(struct app *a, const struct cmd_line *cl)
{
	(void)cl;
	store_clear(&a->store);
	session_forget_calls(a->s);   /* the servers' calls too */
	views_clear(a);
	app_msg(a, false, "cleared");
	return ACT_REDRAW;
}

static int c_filter(struct app *a, const struct cmd_line *cl)
{
	char filter[256] = "";
	for (int i = 0; i < cl->argc; i++) {
		size_t n = strlen(filter);
		snprintf(filter + n, sizeof(filter) - n, "%s%s", i ? " " : "",
			 cl->argv[i]);
	}
	procs_set_filter(a, filter);
	return ACT_REDRAW;
}

/* The process table's column a word names: its key, else the first key
 * it begins ("reds" is a key and begins "redsps"); -1 if none. */
static int column_named(const char *word)
{
	for (int i = 0; i < COL__COUNT; i++)
		if (!strcmp(proc_cols[i].key, word))
			return i;
	for (int i = 0; i < COL__COUNT; i++)
		if (*word && !strncmp(proc_cols[i].key, word, strlen(word)))
			return i;
	return -1;
}

static int c_sort(struct app *a, const struct cmd_line *cl)
{
	if (need_args(a, cl, 1, 1) < 0)
		return ACT_REDRAW;
	int i = column_named(cl->argv[0]);
	if (i < 0) {
		app_msg(a, true, "unknown column \"%s\"; columns: pid name "
			"current sends sps receives rps spawns mq mem reds redsps "
			"heap sent30 recv30", cl->argv[0]);
		return ACT_REDRAW;
	}
	if (i == COL_NODE && !a->multi) {
		app_msg(a, true, "the node column sorts only with several "
			"nodes; this view is on one node");
		return ACT_REDRAW;
	}
	procs_set_sort(a, i, i <= COL_CURRENT);
	return ACT_REDRAW;
}

static int c_top(struct app *a, const struct cmd_line *cl)
{
	if (need_args(a, cl, 0, 2) < 0)
		return ACT_REDRAW;
	if (!cl->argc)
		return app_top(a, top_col(a) >= 0 ? -1 : procs_sort_col(a), top_n(a));
	if (!strcmp(cl->argv[0], "off") && cl->argc == 1)
		return app_top(a, -1, top_n(a));
	int col = column_named(cl->argv[0]);
	int n = top_n(a);
	if (cl->argc == 2) {
		char *end;
		long v = strtol(cl->argv[1], &end, 10);
		if (*end || v < 1 || v > TOP_MAX) {
			app_msg(a, true, "top: N is a number from 1 to %d, not "
				"\"%s\"", TOP_MAX, cl->argv[1]);
			return ACT_REDRAW;
		}
		n = (int)v;
	}
	if (col < 0) {
		app_msg(a, true, "top: unknown column \"%s\"; top ranks by mem, "
			"redsps, mq, sps or rps", cl->argv[0]);
		return ACT_REDRAW;
	}
	return app_top(a, col, n);
}

static int c_syntax(struct app *a, const struct cmd_line *cl)
{
	static const char *const words[] = { "auto", "erlang", "elixir" };
	if (need_args(a, cl, 0, 1) < 0)
		return ACT_REDRAW;
	int syn = session_spec(a->s)->syntax;
	if (cl->argc) {
		size_t l = strlen(cl->argv[0]);
		int w = -1;
		for (int i = 0; i < 3; i++)
			if (l && !strncmp(words[i], cl->argv[0], l))
				w = i;
		if (w < 0) {
			app_msg(a, true, "syntax \"%s\": auto, erlang or elixir",
				cl->argv[0]);
			return ACT_REDRAW;
		}
		syn = w == 0 ? -1 : w == 2 ? TERM_ELIXIR : TERM_ERLANG;
	}
	if (!cl->argc) {
		app_msg(a, false, "%s syntax%s", term_syntax_name(
				(enum term_syntax)session_set_syntax(a->s, syn)),
			syn < 0 ? " (the target's own)" : "");
		return ACT_REDRAW;
	}
	if (session_is_recording(a->s)) {
		/* its text is all it has: nothing to render again from */
		app_msg(a, true, "a recording keeps the syntax it was written "
			"in; --syntax applies when attaching to a node");
		return ACT_REDRAW;
	}
	int nn = session_nnodes(a->s);
	struct rerender_node *rn = xcalloc((size_t)(nn ? nn : 1), sizeof(*rn));
	for (int i = 0; i < nn; i++)
		session_rerender_node(a->s, i, &rn[i]);
	int now = session_set_syntax(a->s, syn);
	for (int i = 0; i < nn; i++)
		rn[i].to = session_node(a->s, i)->syn;
	char what[64];
	snprintf(what, sizeof(what), "%s syntax%s",
		 term_syntax_name((enum term_syntax)now),
		 syn < 0 ? " (the target's own)" : "");
	app_rerender(a, rn, nn, what);
	return ACT_REDRAW;
}

static int c_limit(struct app *a, const struct cmd_line *cl)
{
	if (need_args(a, cl, 2, 2) < 0)
		return ACT_REDRAW;
	char *end;
	double v = strtod(cl->argv[1], &end);
	if (*end || v < 0 || v > 1e9) {
		app_msg(a, true, "limit: \"%s\" is not a number", cl->argv[1]);
		return ACT_REDRAW;
	}
	const char *what = cl->argv[0];
	if (!strncmp("duration", what, strlen(what))) {
		session_set_duration(a->s, v);
		app_msg(a, false, "duration limit %gs from the start of tracing%s",
			v, v == 0 ? " (none)" : "");
	} else if (!strncmp("events", what, strlen(what))) {
		session_set_max_events(a->s, (unsigned long)v);
		app_msg(a, false, "event limit %lu%s", (unsigned long)v,
			v == 0 ? " (none)" : "");
		/* the tracer enforces it, counting from its start */
		if (app_attached(a))
			return app_retrace(a);
	} else if (!strncmp("payload", what, strlen(what))) {
		if (v > 65536) {
			app_msg(a, true, "payload limit is at most 65536 bytes");
			return ACT_REDRAW;
		}
		session_set_payload(a->s, (unsigned)v);
		if (app_attached(a))
			return app_retrace(a);
	} else if (!strncmp("stuck", what, strlen(what))) {
		if (v <= 0) {
			app_msg(a, true, "limit stuck: more than 0 seconds");
			return ACT_REDRAW;
		}
		session_set_stuck(a->s, (int64_t)(v * 1e6));
		app_msg(a, false, "a gen call in flight for more than %gs is stuck", v);
	} else {
		app_msg(a, true, "limit: duration, events, payload or stuck");
	}
	return ACT_REDRAW;
}

/* "~/x" as a shell reads it: in $HOME */
static void expand_home(const char *path, char *out, size_t outsz)
{
	const char *home = getenv("HOME");
	if (path[0] == '~' && (path[1] == '/' || !path[1]) && home && *home)
		snprintf(out, outsz, "%s%s", home, path + 1);
	else
		snprintf(out, outsz, "%s", path);
}

static int c_export(struct app *a, const struct cmd_line *cl)
{
	struct sbuf err = SBUF_INIT;
	char path[4096];
	if (need_args(a, cl, 1, 1) < 0)
		return ACT_REDRAW;
	expand_home(cl->argv[0], path, sizeof(path));
	const char **names = xmalloc((size_t)(session_nnodes(a->s) > 0 ? session_nnodes(a->s) : 1) *
				     sizeof(*names));
	names[0] = "";   /* a recording that has named no node yet */
	for (int i = 0; i < session_nnodes(a->s); i++)
		names[i] = app_node_name(a, i);
	if (export_write(path, &a->store, names, session_nnodes(a->s),
			 session_recording_fd(a->s), &err) < 0)
		app_msg(a, true, "%s", err.buf);
	else
		app_msg(a, false, "exported %zu processes to %s", a->store.nprocs,
			path);
	free(names);
	sbuf_release(&err);
	return ACT_REDRAW;
}

static int c_tree(struct app *a, const struct cmd_line *cl)
{
	(void)cl;
	if (app_view(a) != VIEW_TREE)
		app_push(a, VIEW_TREE);
	return ACT_REDRAW;
}

static int c_chart(struct app *a, const struct cmd_line *cl)
{
	(void)cl;
	if (app_view(a) != VIEW_CHART)
		app_push(a, VIEW_CHART);
	return ACT_REDRAW;
}

static int c_chart_export(struct app *a, const struct cmd_line *cl)
{
	char path[4096];
	if (need_args(a, cl, 1, 1) < 0)
		return ACT_REDRAW;
	expand_home(cl->argv[0], path, sizeof(path));
	return app_chart_export(a, path);
}

static int c_profile(struct app *a, const struct cmd_line *cl)
{
	if (need_args(a, cl, 0, 2) < 0)
		return ACT_REDRAW;
	return profile_command(a, cl->argc, (const char *const *)cl->argv);
}

static int c_profile_export(struct app *a, const struct cmd_line *cl)
{
	char path[4096];
	if (need_args(a, cl, 1, 1) < 0)
		return ACT_REDRAW;
	expand_home(cl->argv[0], path, sizeof(path));
	return profile_export(a, path);
}

static int c_alarms(struct app *a, const struct cmd_line *cl)
{
	if (need_args(a, cl, 0, 1) < 0)
		return ACT_REDRAW;
	return alarms_command(a, cl->argc, (const char *const *)cl->argv);
}

static int c_procs(struct app *a, const struct cmd_line *cl)
{
	(void)cl;
	app_home(a);
	return ACT_REDRAW;
}

static int c_help(struct app *a, const struct cmd_line *cl)
{
	(void)cl;
	if (app_view(a) != VIEW_HELP)
		app_push(a, VIEW_HELP);
	return ACT_REDRAW;
}

static int c_reconnect(struct app *a, const struct cmd_line *cl)
{
	(void)cl;
	return app_retrace(a);
}

static int c_attach(struct app *a, const struct cmd_line *cl)
{
	if (need_args(a, cl, 1, 1) < 0)
		return ACT_REDRAW;
	return app_attach_node(a, cl->argv[0]);
}

static int c_detach(struct app *a, const struct cmd_line *cl)
{
	if (need_args(a, cl, 1, 1) < 0)
		return ACT_REDRAW;
	return app_detach_node(a, cl->argv[0]);
}

static int c_node(struct app *a, const struct cmd_line *cl)
{
	if (need_args(a, cl, 0, 1) < 0)
		return ACT_REDRAW;
	if (!cl->argc) {
		a->node_filter = -1;
		app_msg(a, false, "showing every node");
		return ACT_REDRAW;
	}
	for (int i = 0; i < session_nnodes(a->s); i++) {
		const char *nm = app_node_name(a, i);
		const char *at = strchr(nm, '@');
		size_t l = strlen(cl->argv[0]);
		if (session_node(a->s, i)->present && (!strcmp(nm, cl->argv[0]) ||
		    (at && (size_t)(at - nm) == l && !strncmp(nm, cl->argv[0], l)))) {
			a->node_filter = i;
			app_msg(a, false, "showing the processes of %s; :node shows "
				"every node", nm);
			return ACT_REDRAW;
		}
	}
	app_msg(a, true, "no node %s in this session", cl->argv[0]);
	return ACT_REDRAW;
}

static int c_nodes(struct app *a, const struct cmd_line *cl)
{
	char line[sizeof(a->message)] = "";
	if (need_args(a, cl, 0, 0) < 0)
		return ACT_REDRAW;
	for (int i = 0; i < session_nnodes(a->s); i++) {
		const struct node_view *n = session_node(a->s, i);
		size_t l = strlen(line);
		if (!n->present)
			continue;
		snprintf(line + l, sizeof(line) - l, "%s%s %s", l ? "; " : "",
			 app_node_name(a, i), n->state_name);
		l = strlen(line);
		if (n->clock_error_us >= 0)
			snprintf(line + l, sizeof(line) - l, ", clock %+lld us +-%lld",
				 n->clock_offset_us, n->clock_error_us);
		l = strlen(line);
		if (n->stats_ready)
			snprintf(line + l, sizeof(line) - l, ", %lu dropped",
				 stats_dropped(n->st));
	}
	app_msg(a, false, "%s", line);
	return ACT_REDRAW;
}

static int c_record(struct app *a, const struct cmd_line *cl)
{
	if (need_args(a, cl, 0, 1) < 0)
		return ACT_REDRAW;
	return app_record(a, cl->argc ? cl->argv[0] : NULL);
}

static int c_quit(struct app *a, const struct cmd_line *cl)
{
	(void)a; (void)cl;
	return ACT_QUIT;
}

/* The rest of the line, as typed: a pattern may hold spaces. */
static int pattern_arg(struct app *a, const struct cmd_line *cl, char *out,
		       size_t n)
{
	out[0] = '\0';
	for (int i = 0; i < cl->argc; i++) {
		size_t len = strlen(out);
		snprintf(out + len, n - len, "%s%s", i ? " " : "", cl->argv[i]);
	}
	if (!out[0]) {
		app_msg(a, true, "usage: %s PATTERN, e.g. %s mod:fun/2",
			cmd_table[cl->id].name, cmd_table[cl->id].name);
		return -1;
	}
	return 0;
}

static int c_call(struct app *a, const struct cmd_line *cl)
{
	char pat[1024];
	if (pattern_arg(a, cl, pat, sizeof(pat)) < 0)
		return ACT_REDRAW;
	if (!app_live(a, ":call"))
		return ACT_REDRAW;
	/* refused at the start: the session says why and traces without it */
	struct sbuf why = SBUF_INIT;
	int r = session_add_call(a->s, pat, &why);
	if (r < 0)
		app_msg(a, true, "%s", sbuf_str(&why));
	sbuf_release(&why);
	return r < 0 ? ACT_REDRAW : app_retrace(a);
}

static int c_uncall(struct app *a, const struct cmd_line *cl)
{
	char pat[1024];
	if (pattern_arg(a, cl, pat, sizeof(pat)) < 0)
		return ACT_REDRAW;
	if (!app_live(a, ":uncall"))
		return ACT_REDRAW;
	if (session_remove_call(a->s, pat) == 0)
		return app_retrace(a);
	const struct session_spec *sp = session_spec(a->s);
	app_msg(a, true, "no call pattern \"%s\"; :call gave these: %s%s", pat,
		sp->ncalls ? sp->calls[0] : "none", sp->ncalls > 1 ? ", ..." : "");
	return ACT_REDRAW;
}

/*
 * The target filters the messages (PROTOCOL.md, Matching messages): a new
 * pattern is a new trace.  One the target refuses is said, and tracing
 * goes on with the one before.
 */
static int c_match(struct app *a, const struct cmd_line *cl)
{
	const struct session_spec *sp = session_spec(a->s);
	char pat[1024];
	if (cl->argc == 0) {
		if (sp->match[0])
			app_msg(a, false, "shipping only messages matching %s; "
				":match off ships them all", sp->match);
		else
			app_msg(a, false, "every message is shipped; :match "
				"PATTERN [when GUARD] keeps the matching ones");
		return ACT_REDRAW;
	}
	if (pattern_arg(a, cl, pat, sizeof(pat)) < 0)
		return ACT_REDRAW;
	bool off = !strcmp(pat, "off");
	if (off && !sp->match[0]) {
		app_msg(a, true, "no :match pattern to remove");
		return ACT_REDRAW;
	}
	if (strlen(pat) > BS_MAX_MATCH) {
		app_msg(a, true, "a :match pattern has at most %d characters",
			BS_MAX_MATCH);
		return ACT_REDRAW;
	}
	if (!app_live(a, ":match"))
		return ACT_REDRAW;
	session_set_match(a->s, off ? "" : pat);
	return app_retrace(a);
}

static int c_calls(struct app *a, const struct cmd_line *cl)
{
	(void)cl;
	if (app_view(a) != VIEW_CALLS)
		app_push(a, VIEW_CALLS);
	return ACT_REDRAW;
}

/*
 * Pairing gen calls makes the tracer look at every send, which costs the
 * target more than counting (see scripts/bench-gencalls), so it starts
 * when the servers view is first opened, or with --gen-calls, and stops
 * with ":servers off".
 */
int app_gen_calls(struct app *a, bool on)
{
	if (!session_set_gen_calls(a->s, on))
		return ACT_REDRAW;
	session_start(a->s);
	app_msg(a, false, on ? "pairing gen_server calls from now on; "
		":servers off stops it" : "gen_server calls are no longer "
		"paired; :servers starts again");
	return ACT_REDRAW;
}

static int c_servers(struct app *a, const struct cmd_line *cl)
{
	if (need_args(a, cl, 0, 1) < 0)
		return ACT_REDRAW;
	if (cl->argc == 1 && strcmp(cl->argv[0], "off") == 0) {
		if (app_view(a) == VIEW_SERVERS)
			app_pop(a);
		return app_gen_calls(a, false);
	}
	if (cl->argc == 1) {
		app_msg(a, true, "usage: servers [off]");
		return ACT_REDRAW;
	}
	if (app_view(a) != VIEW_SERVERS)
		app_push(a, VIEW_SERVERS);
	return app_gen_calls(a, true);
}

static int c_header(struct app *a, const struct cmd_line *cl)
{
	if (need_args(a, cl, 0, 1) < 0)
		return ACT_REDRAW;
	if (!cl->argc)
		return app_header(a, !a->header);
	if (strcmp(cl->argv[0], "on") && strcmp(cl->argv[0], "off")) {
		app_msg(a, true, "usage: header [on|off]");
		return ACT_REDRAW;
	}
	return app_header(a, !strcmp(cl->argv[0], "on"));
}

/* from the command table: a handler it names that is not defined above
 * stops the build */
static const cmd_fn handlers[CMD__COUNT] = {
#define X(id, name, args, help, fn) [CMD_##id] = (fn),
	COMMANDS(X)
#undef X
};

int cmd_run(struct app *a, const char *line)
{
	struct cmd_line cl;
	struct sbuf err = SBUF_INIT;
	if (cmd_parse(line, &cl, &err) < 0) {
		app_msg(a, true, "%s", err.buf);
		sbuf_release(&err);
		return ACT_REDRAW;
	}
	/* a command that works clears the error of one that did not */
	a->message_is_error = false;
	int act = handlers[cl.id](a, &cl);
	if (!a->message_is_error)
		a->last_error[0] = '\0';
	return act;
}

const char *app_complete_proc(struct app *a, const char *prefix, int state)
{
	static size_t i;
	static int fixed;
	static const char *const words[] = { "all", "new", "existing", NULL };
	size_t len = strlen(prefix);
	if (!state) {
		i = 0;
		fixed = 0;
	}
	for (; words[fixed]; fixed++)
		if (!strncmp(words[fixed], prefix, len))
			return words[fixed++];
	for (; i < a->store.nprocs * 2; i++) {
		struct proc *p = a->store.procs[i / 2];
		// NOLINTNEXTLINE(clang-analyzer-core.NullDereference): procs[0..nprocs) are set
		const char *s = i % 2 ? p->name : p->pid_text;
		if (s && !strncmp(s, prefix, len)) {
			i++;
			return s;
		}
	}
	/* then every registered name the targets have, busy or not, as
	 * the node's syntax writes it (valid until the next call) */
	static struct sbuf shown;
	size_t base = a->store.nprocs * 2;
	for (int k = 0; k < session_nnodes(a->s); k++) {
		const struct names *nt = session_node(a->s, k)->names;
		for (; i < base + names_slots(nt); i++) {
			const char *s = names_slot(nt, i - base, NULL);
			if (!s)
				continue;
			sbuf_reset(&shown);
			retext_name(&shown, TERM_ERLANG, session_node(a->s, k)->syn, s);
			if (!strncmp(sbuf_str(&shown), prefix, len)) {
				i++;
				return sbuf_str(&shown);
			}
		}
		base += names_slots(nt);
	}
	return NULL;
}
