/*
 * profile: sampled stacks folded into a tree (see profile.h).
 *
 * Frame names are interned: a table by the hash of the text, whose
 * records sharing a hash are chained and compared in full; a name is then
 * known by its pointer.  The children of a node are found through one map
 * keyed by (parent, name), so a node with thousands of children costs no
 * more than one with two; each node also keeps its last child, so that a
 * new one goes at the end and the children stay in the order first seen.
 *
 * A sample is kept in the ring as its leaf in the cumulative tree (the
 * node stands for the whole stack, since the cumulative tree only grows
 * until profile_clear) and its time.  profile_window() makes the window's
 * tree from those leaves: each cumulative node seen points to its window
 * node for the build under way (marked by the build's number), so that a
 * stack is found again without looking at its frames.
 *
 * Nodes come from pools of fixed-size chunks, handed out in order; a
 * parent is always handed out before its children, which the window's
 * totals use.
 */
#include "profile.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hmap.h"
#include "utf8.h"
#include "xalloc.h"

#define NODE_CHUNK 1024
#define RING_FIRST 1024

struct pname {
	struct pname *next;   /* the same hash */
	size_t len;
	char s[];
};

struct pnode {
	struct profile_node n;   /* first: a profile_node is its pnode */
	struct pnode *last;      /* last child */
	struct pnode *win;       /* its window node, when gen is the build's */
	unsigned long gen;
};

/* nodes handed out in order from chunks of NODE_CHUNK */
struct pool {
	struct pnode **chunk;
	size_t nchunk;
	size_t n;
};

struct kid_key {
	const struct pnode *parent;
	const char *name;
};

struct psample {
	struct pnode *leaf;   /* in the cumulative tree */
	int64_t t_ms;
};

struct profile {
	struct hmap names;       /* hash -> struct pname * (a chain) */
	struct hmap kids;        /* struct kid_key -> struct pnode * */
	struct pool cum, win;
	struct pnode *root, *wroot;
	unsigned long gen;       /* the last window build */
	unsigned long added;
	struct psample *ring;    /* oldest at start */
	size_t cap, start, count;
};

/* ---------------------------------------------------------------------------
 * Names and nodes.
 */


/* the names map's drop: a chain freed */
static void chain_free(void *val)
{
	struct pname *c = *(struct pname **)val, *next;
	for (; c; c = next) {
		next = c->next;
		free(c);
	}
}

static const char *intern(struct profile *p, const char *s)
{
	size_t len = strlen(s);
	uint64_t h = hmap_hash_bytes(s, len);
	struct pname **chain = hmap_put(&p->names, &h, NULL), *c;
	for (c = *chain; c; c = c->next)
		if (c->len == len && !memcmp(c->s, s, len))
			return c->s;
	c = xmalloc(sizeof(*c) + len + 1);
	c->len = len;
	memcpy(c->s, s, len + 1);
	c->next = *chain;
	*chain = c;
	return c->s;
}

/* A zeroed node, the pool's next. */
static struct pnode *pool_take(struct pool *pl)
{
	size_t i = pl->n / NODE_CHUNK;
	if (i == pl->nchunk) {
		pl->chunk = xrealloc(pl->chunk, (i + 1) * sizeof(*pl->chunk));
		pl->chunk[i] = xmalloc(NODE_CHUNK * sizeof(struct pnode));
		pl->nchunk++;
	}
	struct pnode *v = &pl->chunk[i][pl->n % NODE_CHUNK];
	pl->n++;
	memset(v, 0, sizeof(*v));
	return v;
}

static struct pnode *pool_at(const struct pool *pl, size_t i)
{
	return &pl->chunk[i / NODE_CHUNK][i % NODE_CHUNK];
}

static void pool_free(struct pool *pl)
{
	for (size_t i = 0; i < pl->nchunk; i++)
		free(pl->chunk[i]);
	free(pl->chunk);
	memset(pl, 0, sizeof(*pl));
}

/* A tree's root, first of its pool (emptied, its room kept). */
static struct pnode *pool_root(struct pool *pl)
{
	pl->n = 0;
	struct pnode *r = pool_take(pl);
	r->n.name = "";
	return r;
}

/* A new last child of parent. */
static struct pnode *add_child(struct pool *pl, struct pnode *parent,
			       const char *name)
{
	struct pnode *v = pool_take(pl);
	v->n.name = name;
	v->n.parent = &parent->n;
	if (parent->last)
		parent->last->n.next = &v->n;
	else
		parent->n.child = &v->n;
	parent->last = v;
	return v;
}

/* The child of parent named name (interned), made if need be. */
static struct pnode *child_of(struct profile *p, struct pnode *parent,
			      const char *name)
{
	struct kid_key k;
	bool fresh;
	memset(&k, 0, sizeof(k));
	k.parent = parent;
	k.name = name;
	struct pnode **slot = hmap_put(&p->kids, &k, &fresh);
	if (fresh)
		*slot = add_child(&p->cum, parent, name);
	return *slot;
}

/* ---------------------------------------------------------------------------
 * The profile.
 */

struct profile *profile_new(void)
{
	struct profile *p = xcalloc(1, sizeof(*p));
	hmap_init(&p->names, sizeof(uint64_t), sizeof(struct pname *),
		  chain_free);
	hmap_init(&p->kids, sizeof(struct kid_key), sizeof(struct pnode *),
		  NULL);
	p->root = pool_root(&p->cum);
	p->wroot = pool_root(&p->win);
	return p;
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	hmap_release(&p->names);
	hmap_release(&p->kids);
	pool_free(&p->cum);
	pool_free(&p->win);
	free(p->ring);
	free(p);
}

/* The names are kept: a pointer to one stays valid, as the header says. */
void profile_clear(struct profile *p)
{
	hmap_clear(&p->kids);
	p->root = pool_root(&p->cum);
	p->wroot = pool_root(&p->win);
	p->added = 0;
	p->start = p->count = 0;
}

static void ring_put(struct profile *p, struct pnode *leaf, int64_t t_ms)
{
	if (p->count == PROFILE_SAMPLES_MAX) {
		/* full: the oldest goes */
		p->ring[p->start].leaf = leaf;
		p->ring[p->start].t_ms = t_ms;
		p->start = (p->start + 1) % PROFILE_SAMPLES_MAX;
		return;
	}
	if (p->count == p->cap) {
		/* not full yet, so start is 0 and the ring is in order */
		size_t cap = p->cap ? 2 * p->cap : RING_FIRST;
		if (cap > PROFILE_SAMPLES_MAX)
			cap = PROFILE_SAMPLES_MAX;
		p->ring = xrealloc(p->ring, cap * sizeof(*p->ring));
		p->cap = cap;
	}
	p->ring[p->count].leaf = leaf;
	p->ring[p->count].t_ms = t_ms;
	p->count++;
}

void profile_add(struct profile *p, const char *const *frames, int n,
		 int64_t t_ms)
{
	if (n <= 0)
		return;
	bool cut = n > PROFILE_DEPTH_MAX;
	int keep = cut ? PROFILE_DEPTH_MAX - 1 : n;
	struct pnode *v = p->root;
	v->n.total++;
	for (int i = 0; i < keep; i++) {
		v = child_of(p, v, intern(p, frames[i] ? frames[i] : ""));
		v->n.total++;
	}
	if (cut) {
		v = child_of(p, v, intern(p, "..."));
		v->n.total++;
	}
	v->n.self++;
	p->added++;
	ring_put(p, v, t_ms);
}

unsigned long profile_samples(const struct profile *p)
{
	return p->added;
}

const struct profile_node *profile_tree(const struct profile *p)
{
	return &p->root->n;
}

/* The window node of c, made (with those of its callers) if need be. */
static struct pnode *win_node(struct profile *p, struct pnode *c)
{
	if (c == p->root)
		return p->wroot;
	if (c->gen == p->gen)
		return c->win;
	struct pnode *parent = win_node(p, (struct pnode *)c->n.parent);
	c->win = add_child(&p->win, parent, c->n.name);
	c->gen = p->gen;
	return c->win;
}

/*
 * The times are monotonic (profile.h), so the window's samples are the
 * newest ones up to the first older than since_ms.  Each sample adds to
 * its leaf's self; the totals are summed last, children into parents, from
 * the last node handed out to the first.
 */
const struct profile_node *profile_window(struct profile *p, int64_t since_ms)
{
	p->wroot = pool_root(&p->win);
	p->gen++;
	size_t first = p->count;
	while (first > 0 &&
	       p->ring[(p->start + first - 1) % PROFILE_SAMPLES_MAX].t_ms >=
	       since_ms)
		first--;
	for (size_t i = first; i < p->count; i++) {
		const struct psample *s = &p->ring[(p->start + i) %
						   PROFILE_SAMPLES_MAX];
		win_node(p, s->leaf)->n.self++;
	}
	for (size_t i = p->win.n; i-- > 0;) {
		struct pnode *w = pool_at(&p->win, i);
		w->n.total += w->n.self;
		if (w->n.parent)
			w->n.parent->total += w->n.total;
	}
	return &p->wroot->n;
}

/* ---------------------------------------------------------------------------
 * Walking a tree: every node below root once, parents first, children in
 * order; leave() of a node after its children's.
 */

struct walk {
	void (*enter)(struct walk *w, const struct profile_node *v);
	void (*leave)(struct walk *w, const struct profile_node *v);
};

static void walk_tree(const struct profile_node *root, struct walk *w)
{
	const struct profile_node *v = root->child;
	while (v) {
		w->enter(w, v);
		if (v->child) {
			v = v->child;
			continue;
		}
		for (;;) {
			if (w->leave)
				w->leave(w, v);
			if (v->next) {
				v = v->next;
				break;
			}
			v = v->parent;
			if (v == root) {
				v = NULL;
				break;
			}
		}
	}
}

/* ---------------------------------------------------------------------------
 * Functions: by name (a name is its pointer: every name of a tree is
 * interned), self summed over every node, total over the nodes with no
 * caller of the same name (a sample through one goes through no other),
 * known by a count of the name on the current path.
 */

struct fn_slot {
	size_t row;
	unsigned long on_path;
};

struct fn_walk {
	struct walk w;
	struct hmap by_name;   /* name pointer -> struct fn_slot */
	struct profile_fn *rows;
	size_t n, cap;
};

/* rows (n of size sz, room for *cap) with room for one more */
static void *grow_rows(void *rows, size_t n, size_t *cap, size_t sz)
{
	if (n < *cap)
		return rows;
	*cap = *cap ? 2 * *cap : 16;
	return xrealloc(rows, *cap * sz);
}

static void fn_enter(struct walk *w, const struct profile_node *v)
{
	struct fn_walk *f = (struct fn_walk *)w;
	bool fresh;
	struct fn_slot *s = hmap_put(&f->by_name, &v->name, &fresh);
	if (fresh) {
		f->rows = grow_rows(f->rows, f->n, &f->cap, sizeof(*f->rows));
		s->row = f->n++;
		f->rows[s->row].name = v->name;
		f->rows[s->row].self = 0;
		f->rows[s->row].total = 0;
	}
	struct profile_fn *r = &f->rows[s->row];
	r->self += v->self;
	if (s->on_path++ == 0)
		r->total += v->total;
}

static void fn_leave(struct walk *w, const struct profile_node *v)
{
	struct fn_walk *f = (struct fn_walk *)w;
	struct fn_slot *s = hmap_get(&f->by_name, &v->name);
	s->on_path--;
}

static int fn_cmp(const void *a, const void *b)
{
	const struct profile_fn *x = a, *y = b;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return strcmp(x->name, y->name);
}

size_t profile_functions(const struct profile_node *root,
			 struct profile_fn **out)
{
	struct fn_walk f;
	memset(&f, 0, sizeof(f));
	f.w.enter = fn_enter;
	f.w.leave = fn_leave;
	hmap_init(&f.by_name, sizeof(const char *), sizeof(struct fn_slot),
		  NULL);
	walk_tree(root, &f.w);
	hmap_release(&f.by_name);
	if (f.n > 1)
		qsort(f.rows, f.n, sizeof(*f.rows), fn_cmp);
	*out = f.rows ? f.rows : xmalloc(sizeof(**out));
	return f.n;
}

/* ---------------------------------------------------------------------------
 * Callers and callees: summed over every node of the name.
 */

struct edge_walk {
	struct walk w;
	const char *name;
	bool callers;
	const struct profile_node *root;
	struct hmap by_name;   /* name pointer -> row */
	struct profile_edge *rows;
	size_t n, cap;
};

static void edge_add(struct edge_walk *e, const char *name,
		     unsigned long samples)
{
	bool fresh;
	size_t *row = hmap_put(&e->by_name, &name, &fresh);
	if (fresh) {
		e->rows = grow_rows(e->rows, e->n, &e->cap, sizeof(*e->rows));
		*row = e->n++;
		e->rows[*row].name = name;
		e->rows[*row].samples = 0;
	}
	e->rows[*row].samples += samples;
}

static void edge_enter(struct walk *w, const struct profile_node *v)
{
	struct edge_walk *e = (struct edge_walk *)w;
	if (v->name != e->name && strcmp(v->name, e->name))
		return;
	if (e->callers) {
		if (v->parent != e->root)
			edge_add(e, v->parent->name, v->total);
		return;
	}
	for (const struct profile_node *c = v->child; c; c = c->next)
		edge_add(e, c->name, c->total);
}

static int edge_cmp(const void *a, const void *b)
{
	const struct profile_edge *x = a, *y = b;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(x->name, y->name);
}

static size_t edges(const struct profile_node *root, const char *name,
		    bool callers, struct profile_edge **out)
{
	struct edge_walk e;
	memset(&e, 0, sizeof(e));
	e.w.enter = edge_enter;
	e.name = name;
	e.callers = callers;
	e.root = root;
	hmap_init(&e.by_name, sizeof(const char *), sizeof(size_t), NULL);
	walk_tree(root, &e.w);
	hmap_release(&e.by_name);
	if (e.n > 1)
		qsort(e.rows, e.n, sizeof(*e.rows), edge_cmp);
	*out = e.rows ? e.rows : xmalloc(sizeof(**out));
	return e.n;
}

size_t profile_callers(const struct profile_node *root, const char *name,
		       struct profile_edge **out)
{
	return edges(root, name, true, out);
}

size_t profile_callees(const struct profile_node *root, const char *name,
		       struct profile_edge **out)
{
	return edges(root, name, false, out);
}

/* ---------------------------------------------------------------------------
 * Collapsed stacks: the path so far in one buffer, a frame's text as long
 * as its name, so that leaving a node cuts the buffer by that much.
 */

struct fold_walk {
	struct walk w;
	const struct profile_node *root;
	struct sbuf path, *out;
};

/* what the format cannot carry, and control bytes (a recording's frame
 * may hold any): written as '_' */
static bool fold_special(char c)
{
	return c == ';' || c == ' ' || (unsigned char)c < 0x20 || c == 0x7f;
}

static void fold_enter(struct walk *w, const struct profile_node *v)
{
	struct fold_walk *f = (struct fold_walk *)w;
	if (v->parent != f->root)
		sbuf_addch(&f->path, ';');
	for (const char *s = v->name; *s; s++)
		sbuf_addch(&f->path, fold_special(*s) ? '_' : *s);
	if (v->self) {
		sbuf_add(f->out, f->path.buf, f->path.len);
		sbuf_addf(f->out, " %lu\n", v->self);
	}
}

static void fold_leave(struct walk *w, const struct profile_node *v)
{
	struct fold_walk *f = (struct fold_walk *)w;
	size_t cut = strlen(v->name) + (v->parent != f->root);
	sbuf_truncate(&f->path, f->path.len - cut);
}

void profile_collapsed(const struct profile_node *root, struct sbuf *out)
{
	struct fold_walk f;
	memset(&f, 0, sizeof(f));
	f.w.enter = fold_enter;
	f.w.leave = fold_leave;
	f.root = root;
	f.out = out;
	sbuf_init(&f.path);
	walk_tree(root, &f.w);
	sbuf_release(&f.path);
}

/* ---------------------------------------------------------------------------
 * speedscope: every name a frame (numbered as first met), every node with
 * samples ending there a sample (its path of frame numbers) weighed by
 * them.
 */

/* s as a JSON string: well-formed UTF-8 as it is, a byte that is not
 * U+FFFD */
static void json_str(struct sbuf *out, const char *str)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t n = strlen((const char *)s);
	sbuf_addch(out, '"');
	while (n > 0) {
		uint32_t cp;
		int len;
		if (*s == '"' || *s == '\\') {
			sbuf_addch(out, '\\');
			sbuf_addch(out, (char)*s);
			len = 1;
		} else if (*s < 0x20) {
			sbuf_addf(out, "\\u00%c%c", hex[*s >> 4], hex[*s & 15]);
			len = 1;
		} else if ((len = utf8_decode(s, n, &cp)) > 0) {
			sbuf_add(out, s, (size_t)len);
		} else {
			sbuf_addstr(out, "\\ufffd");
			len = 1;
		}
		s += len;
		n -= (size_t)len;
	}
	sbuf_addch(out, '"');
}

struct scope_walk {
	struct walk w;
	struct hmap frame;    /* name pointer -> its number */
	struct sbuf frames;   /* the frames' objects */
	struct sbuf samples;  /* the samples' arrays */
	struct sbuf weights;
	size_t nframes, nsamples;
	size_t *path;         /* frame numbers from the root */
	size_t depth, cap;
};

static void scope_enter(struct walk *w, const struct profile_node *v)
{
	struct scope_walk *s = (struct scope_walk *)w;
	bool fresh;
	size_t *num = hmap_put(&s->frame, &v->name, &fresh);
	if (fresh) {
		*num = s->nframes++;
		sbuf_addstr(&s->frames, *num ? ",{\"name\":" : "{\"name\":");
		json_str(&s->frames, v->name);
		sbuf_addch(&s->frames, '}');
	}
	s->path = grow_rows(s->path, s->depth, &s->cap, sizeof(*s->path));
	s->path[s->depth++] = *num;
	if (!v->self)
		return;
	const char *sep = s->nsamples++ ? "," : "";
	sbuf_addf(&s->samples, "%s[", sep);
	for (size_t i = 0; i < s->depth; i++)
		sbuf_addf(&s->samples, "%s%zu", i ? "," : "", s->path[i]);
	sbuf_addch(&s->samples, ']');
	sbuf_addf(&s->weights, "%s%lu", sep, v->self);
}

static void scope_leave(struct walk *w, const struct profile_node *v)
{
	(void)v;
	((struct scope_walk *)w)->depth--;
}

void profile_speedscope(const struct profile_node *root, const char *name,
			struct sbuf *out)
{
	struct scope_walk s;
	memset(&s, 0, sizeof(s));
	s.w.enter = scope_enter;
	s.w.leave = scope_leave;
	hmap_init(&s.frame, sizeof(const char *), sizeof(size_t), NULL);
	sbuf_init(&s.frames);
	sbuf_init(&s.samples);
	sbuf_init(&s.weights);
	walk_tree(root, &s.w);

	sbuf_addstr(out, "{\"$schema\":\"https://www.speedscope.app/"
		    "file-format-schema.json\",\"shared\":{\"frames\":[");
	sbuf_addstr(out, sbuf_str(&s.frames));
	sbuf_addstr(out, "]},\"profiles\":[{\"type\":\"sampled\",\"name\":");
	json_str(out, name);
	sbuf_addf(out, ",\"unit\":\"none\",\"startValue\":0,"
		  "\"endValue\":%lu,\"samples\":[", root->total);
	sbuf_addstr(out, sbuf_str(&s.samples));
	sbuf_addstr(out, "],\"weights\":[");
	sbuf_addstr(out, sbuf_str(&s.weights));
	sbuf_addstr(out, "]}],\"name\":");
	json_str(out, name);
	sbuf_addstr(out, ",\"exporter\":\"beamscope\"}\n");

	hmap_release(&s.frame);
	sbuf_release(&s.frames);
	sbuf_release(&s.samples);
	sbuf_release(&s.weights);
	free(s.path);
}
