/*
 * view_tree: who spawned whom.  Roots are processes that spawned and whose
 * parent is not kept; exited processes are marked with their exit reason.
 * Only processes that took part in a spawn are shown.
 *
 * The store keeps the tree as links, so the rows are one walk of it, done
 * again only when a link changed (tree.gen); a draw then costs the rows
 * on screen.  A cursor selects a process, and stays on it when rows move.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "draw.h"
#include "xalloc.h"

/* deeper than this, a branch is not shown (a cycle of reused pids ends) */
#define TREE_DEPTH 64

/* the spawn tree as last walked: its rows in order */
static struct tree_rows {
	struct tree_row {
		struct proc *p;  /* the store's; valid while gen is the
				  * store's tree_gen */
		int depth;
	} *v;
	size_t n, cap;
	uint64_t gen;           /* the store's tree_gen when walked */
	bool walked;            /* v is a walk of the store at gen */
	bool have_sel;
	struct bs_pid sel_pid;  /* keeps the cursor on its process */
} tree;

static void add_row(struct tree_rows *t, struct proc *p, int depth)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 256;
		t->v = xrealloc(t->v, t->cap * sizeof(*t->v));
	}
	t->v[t->n++] = (struct tree_row){ p, depth };
}

static void walk(struct tree_rows *t, struct proc *p, int depth)
{
	add_row(t, p, depth);
	if (depth < TREE_DEPTH)
		for (struct proc *k = p->kids; k; k = k->next_sib)
			walk(t, k, depth + 1);
}

/* The rows, walked again if the tree changed; the cursor on its process. */
static void tree_rows(struct app *a)
{
	struct store *st = &a->store;
	struct tree_rows *t = &tree;
	struct list *l = &a->pos[VIEW_TREE];
	if (!t->walked || t->gen != st->tree_gen) {
		t->n = 0;
		for (size_t i = 0; i < st->nprocs; i++) {
			struct proc *p = st->procs[i];
			if (p->kids && !p->up)
				walk(t, p, 0);
		}
		t->gen = st->tree_gen;
		t->walked = true;
		if (t->have_sel)
			for (size_t i = 0; i < t->n; i++)
				if (bs_pid_eq(t->v[i].p->pid, t->sel_pid)) {
					l->sel = (int)i;
					break;
				}
	}
	list_fit(l, LIST_SELECT, (int)t->n, l->page);
	t->have_sel = t->n > 0;
	if (t->n)
		t->sel_pid = t->v[l->sel].p->pid;
}

static void tree_draw(struct app *a, int y, int h)
{
	struct tree_rows *t = &tree;
	struct list *l = &a->pos[VIEW_TREE];

	draw_text(y, 0, COLS, " spawn tree: who spawned whom (exited processes "
		  "show their reason)", draw_attr(a, ROLE_HEADER));
	y++;
	h--;
	tree_rows(a);
	list_fit(l, LIST_SELECT, (int)t->n, h);
	for (int r = 0; r < h; r++) {
		move(y + r, 0);
		clrtoeol();
		size_t i = (size_t)(l->top + r);
		if (i >= t->n) {
			if (!t->n && r == 0)
				draw_text(y, 0, COLS, "  no spawns captured yet",
					  draw_attr(a, ROLE_DIM));
			continue;
		}
		const struct proc *p = t->v[i].p;
		char text[1024];
		int ind = t->v[i].depth * 2 < 40 ? t->v[i].depth * 2 : 40;
		snprintf(text, sizeof(text), "%*s%s%s %s%s%s", ind, "",
			 t->v[i].depth ? "`- " : "", p->pid_text,
			 store_proc_title(p), p->exited ? "  exited: " : "",
			 p->exited && p->reason ? p->reason : "");
		int attr = (int)i == l->sel ? draw_attr(a, ROLE_SELECTED) :
			p->exited ? draw_attr(a, ROLE_DIM) : (int)A_NORMAL;
		draw_text(y + r, 0, COLS, text, attr);
	}
}

static int tree_request(struct app *a, enum request req)
{
	struct tree_rows *t = &tree;
	struct list *l = &a->pos[VIEW_TREE];
	tree_rows(a);
	if (list_request(l, LIST_SELECT, req)) {
		if (t->n)
			t->sel_pid = t->v[l->sel].p->pid;
		return ACT_REDRAW;
	}
	if (req == REQ_ENTER && t->n) {
		const struct proc *p = t->v[l->sel].p;
		return app_focus(a, p->pid, p->pid_text);
	}
	return ACT_NONE;
}

/* opened again, the tree starts at its first root, the cursor on it */
static void tree_enter(struct app *a)
{
	list_reset(&a->pos[VIEW_TREE]);
	tree.have_sel = false;
	tree.walked = false;
}

/* the store was emptied: nothing walked */
static void tree_clear(struct app *a)
{
	(void)a;
	tree.n = 0;
	tree.walked = false;
	tree.have_sel = false;
}

static void tree_release(struct app *a)
{
	(void)a;
	free(tree.v);
	memset(&tree, 0, sizeof(tree));
}

/* "3/120": the cursor and the rows, as last walked */
static void tree_where(struct app *a, char *out, size_t outsz)
{
	snprintf(out, outsz, "%d/%zu", tree.n ? a->pos[VIEW_TREE].sel + 1 : 0,
		 tree.n);
}

const struct view_ops tree_view_ops = {
	.draw = tree_draw,
	.request = tree_request,
	.enter = tree_enter,
	.where = tree_where,
	.clear = tree_clear,
	.release = tree_release,
};
