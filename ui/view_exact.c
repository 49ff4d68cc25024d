/*
 * view_exact: exact mode (nif/beamscope_prof.erl) as the profile view
 * shows it: the agent times every call of the functions named, and its
 * totals, once a second, become three columns of the profile's table.
 */
#include "view_exact.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "session.h"
#include "xalloc.h"

static struct {
	bool on;
	int node;
	char what[300];          /* the patterns, said on the status line */
	struct exact_row *rows;
	int n;
	long functions, read, read_us;
	bool have;
} ex;

static void rows_free(void)
{
	for (int i = 0; i < ex.n; i++)
		free(ex.rows[i].name);
	free(ex.rows);
	ex.rows = NULL;
	ex.n = 0;
	ex.have = false;
}

void exact_stop(struct app *a)
{
	if (!ex.on)
		return;
	struct sbuf err = SBUF_INIT;
	(void)session_profile_calls(a->s, -1, NULL, 0, &err);
	sbuf_release(&err);
	ex.on = false;
}

int exact_command(struct app *a, int node, int argc, const char *const *argv)
{
	if (argc == 1 && !strcmp(argv[0], "off")) {
		bool was = ex.on;
		exact_stop(a);
		app_msg(a, false, was ? "exact mode is off: its session on the "
			"node is gone" : "exact mode was not on");
		return ACT_REDRAW;
	}
	if (session_is_recording(a->s)) {
		app_msg(a, true, "exact mode times the calls of a live node; a "
			"recording has none to time");
		return ACT_REDRAW;
	}
	char list[SESSION_EXACT_MAX * SESSION_EXACT_LEN];
	const char *pats[SESSION_EXACT_MAX + 1];
	int n = 0;
	list[0] = '\0';
	for (int i = 0; i < argc; i++) {
		size_t l = strlen(list);
		snprintf(list + l, sizeof(list) - l, "%s%s", l ? "," : "",
			 argv[i]);
	}
	char copy[sizeof(list)];
	snprintf(copy, sizeof(copy), "%s", list);
	for (char *save = NULL, *w = strtok_r(copy, ", ", &save);
	     w && n <= SESSION_EXACT_MAX; w = strtok_r(NULL, ", ", &save))
		pats[n++] = w;
	if (n == 0) {
		app_msg(a, true, ":profile calls MOD, MOD:FUN or MOD:FUN/N "
			"(comma-separated), or off");
		return ACT_REDRAW;
	}
	struct sbuf err = SBUF_INIT;
	if (session_profile_calls(a->s, node, pats, n, &err) < 0) {
		app_msg(a, true, ":profile calls: %s", err.buf);
		sbuf_release(&err);
		return ACT_REDRAW;
	}
	sbuf_release(&err);
	rows_free();
	ex.on = true;
	ex.node = node;
	snprintf(ex.what, sizeof(ex.what), "%s", list);
	app_msg(a, false, "timing every call of %s (exact mode): its totals "
		"come once a second; :profile calls off ends it", list);
	return ACT_REDRAW;
}

bool exact_on(void)
{
	return ex.on;
}

int exact_nrows(void)
{
	return ex.n;
}

const struct exact_row *exact_row_at(int i)
{
	return i >= 0 && i < ex.n ? &ex.rows[i] : NULL;
}

const struct exact_row *exact_find(const char *name)
{
	for (int i = 0; i < ex.n; i++)
		if (!strcmp(ex.rows[i].name, name))
			return &ex.rows[i];
	return NULL;
}

static int by_time(const void *pa, const void *pb)
{
	const struct exact_row *x = pa, *y = pb;
	if (x->us != y->us)
		return x->us < y->us ? 1 : -1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return strcmp(x->name, y->name);
}

void exact_take(struct app *a, int node, const struct prof_calls *c)
{
	if (!ex.on || node != ex.node)
		return;
	rows_free();
	ex.rows = xcalloc((size_t)(c->n ? c->n : 1), sizeof(*ex.rows));
	for (int i = 0; i < c->n; i++)
		ex.rows[i] = (struct exact_row){ xstrdup(c->rows[i].name),
			c->rows[i].calls, c->rows[i].us, c->rows[i].words };
	ex.n = c->n;
	qsort(ex.rows, (size_t)ex.n, sizeof(*ex.rows), by_time);
	ex.functions = c->functions;
	ex.read = c->read;
	ex.read_us = c->read_us;
	ex.have = true;
	a->dirty = true;
}

void exact_where(char *out, size_t outsz)
{
	if (!ex.on)
		snprintf(out, outsz, "%s", "");
	else if (!ex.have)
		snprintf(out, outsz, "; exact: %s, waiting for totals", ex.what);
	else
		snprintf(out, outsz, "; exact: %ld functions, %ld read in %ld us",
			 ex.functions, ex.read, ex.read_us);
}

void exact_release(void)
{
	rows_free();
	memset(&ex, 0, sizeof(ex));
}
