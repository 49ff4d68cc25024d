/*
 * view_tree: who spawned whom.  Roots are processes whose parent was not
 * seen; exited processes are marked with their exit reason.  Only processes
 * that took part in a spawn are shown.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "xalloc.h"

struct tline {
	const struct proc *p;
	int depth;
};

static bool is_parent(const struct store *st, const struct proc *p, size_t *kids)
{
	size_t n = 0;
	for (size_t i = 0; i < st->nprocs; i++) {
		const struct proc *c = st->procs[i];
		if (c->has_parent && bs_pid_eq(c->parent, p->pid))
			n++;
	}
	if (kids)
		*kids = n;
	return n > 0;
}

static void walk(const struct store *st, const struct proc *p, int depth,
		 struct tline **v, size_t *n, size_t *cap)
{
	if (depth > 64)
		return;
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[(*n)++] = (struct tline){ p, depth };
	for (size_t i = 0; i < st->nprocs; i++) {
		const struct proc *c = st->procs[i];
		if (c->has_parent && bs_pid_eq(c->parent, p->pid) && c != p)
			walk(st, c, depth + 1, v, n, cap);
	}
}

static void tree_draw(struct app *a, int y, int h)
{
	const struct store *st = &a->store;
	struct list *l = &a->pos[VIEW_TREE];
	struct tline *v = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < st->nprocs; i++) {
		const struct proc *p = st->procs[i];
		bool root = !p->has_parent || !store_proc(st, p->parent);
		if (root && is_parent(st, p, NULL))
			walk(st, p, 0, &v, &n, &cap);
	}
	draw_text(y, 0, COLS, " spawn tree: who spawned whom (exited processes "
		  "show their reason)", draw_attr(a, ROLE_HEADER));
	y++;
	h--;
	list_fit(l, LIST_SCROLL, (int)n, h);
	for (int r = 0; r < h; r++) {
		move(y + r, 0);
		clrtoeol();
		size_t i = (size_t)(l->top + r);
		if (i >= n) {
			if (!n && r == 0)
				draw_text(y, 0, COLS, "  no spawns captured yet",
					  draw_attr(a, ROLE_DIM));
			continue;
		}
		// NOLINTNEXTLINE(clang-analyzer-core.NullDereference): i < n, and v holds n
		const struct proc *p = v[i].p;
		char text[1024];
		int ind = v[i].depth * 2 < 40 ? v[i].depth * 2 : 40;
		snprintf(text, sizeof(text), "%*s%s%s %s%s%s", ind, "",
			 v[i].depth ? "`- " : "", p->pid_text,
			 p->name ? p->name : p->initial ? p->initial : "",
			 p->exited ? "  exited: " : "",
			 p->exited && p->reason ? p->reason : "");
		draw_text(y + r, 0, COLS, text, p->exited ?
			  draw_attr(a, ROLE_DIM) : (int)A_NORMAL);
	}
	free(v);
}

static int tree_request(struct app *a, enum request req)
{
	return list_request(&a->pos[VIEW_TREE], LIST_SCROLL, req) ?
		ACT_REDRAW : ACT_NONE;
}

/* opened again, the tree starts at its first root */
static void tree_enter(struct app *a)
{
	list_reset(&a->pos[VIEW_TREE]);
}

const struct view_ops tree_view_ops = {
	.draw = tree_draw,
	.request = tree_request,
	.enter = tree_enter,
};
