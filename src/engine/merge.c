/* merge: a timestamp-ordered buffer over several nodes, and send pairing. */
#include "merge.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

enum { PEND_SEND, PEND_RECV };

struct pend {
	struct pend *chain;         /* the same hash, arrival order */
	struct pend *prev, *next;   /* arrival order, all of them */
	uint64_t h;
	int kind;
	int dest_node;              /* the receiving process ... */
	uint32_t num, serial;
	const char *payload;        /* ... and the message */
	/* PEND_SEND */
	char *sender;
	int sender_node;
	int64_t ts;
	/* PEND_RECV */
	struct mitem *item;
	char buf[];                 /* a send's own copies */
};

#define FNV_OFFSET 1469598103934665603ULL
#define FNV_PRIME 1099511628211ULL

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * FNV_PRIME;
	return h;
}

static uint64_t key_hash(int node, uint32_t num, uint32_t serial,
			 const char *payload)
{
	uint64_t h = FNV_OFFSET;
	h = fnv(h, &node, sizeof(node));
	h = fnv(h, &num, sizeof(num));
	h = fnv(h, &serial, sizeof(serial));
	return fnv(h, payload, strlen(payload));
}

static bool same_key(const struct pend *p, uint64_t h, int node, uint32_t num,
		     uint32_t serial, const char *payload)
{
	return p->h == h && p->dest_node == node && p->num == num &&
		p->serial == serial && !strcmp(p->payload, payload);
}

void merge_init(struct merge *m, size_t max_items, node_of_fn node_of,
		void *arg)
{
	memset(m, 0, sizeof(*m));
	m->max_items = max_items ? max_items : 1;
	hmap_init(&m->waiting, sizeof(uint64_t), sizeof(struct pend *), NULL);
	m->send_ttl_us = 10 * 1000000LL;
	m->node_of = node_of;
	m->node_of_arg = arg;
}

static void item_free(struct mitem *it)
{
	free((char *)it->ev.from);
	free(it);
}

static void pend_unlink(struct merge *m, struct pend *p)
{
	struct pend **head = hmap_get(&m->waiting, &p->h), **pp = head;
	while (*pp != p)
		pp = &(*pp)->chain;
	*pp = p->chain;
	if (!*head)
		hmap_del(&m->waiting, &p->h);
	if (p->prev)
		p->prev->next = p->next;
	else
		m->oldest = p->next;
	if (p->next)
		p->next->prev = p->prev;
	else
		m->newest = p->prev;
	if (p->item)
		p->item->waiting = NULL;
	m->npend--;
	free(p);
}

void merge_release(struct merge *m)
{
	while (m->oldest)
		pend_unlink(m, m->oldest);
	for (size_t i = 0; i < m->n; i++)
		item_free(m->heap[i]);
	free(m->heap);
	hmap_release(&m->waiting);
	memset(m, 0, sizeof(*m));
}

/* ---- the heap, ordered by (ts, arrival) ---- */

static bool before(const struct mitem *a, const struct mitem *b)
{
	return a->ev.ts < b->ev.ts || (a->ev.ts == b->ev.ts && a->seq < b->seq);
}

static void heap_push(struct merge *m, struct mitem *it)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 1024;
		m->heap = xrealloc(m->heap, m->cap * sizeof(*m->heap));
	}
	size_t i = m->n++;
	while (i > 0) {
		size_t up = (i - 1) / 2;
		if (!before(it, m->heap[up]))
			break;
		m->heap[i] = m->heap[up];
		i = up;
	}
	m->heap[i] = it;
}

static struct mitem *heap_pop(struct merge *m)
{
	struct mitem *top = m->heap[0], *last = m->heap[--m->n];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= m->n)
			break;
		if (c + 1 < m->n && before(m->heap[c + 1], m->heap[c]))
			c++;
		if (!before(m->heap[c], last))
			break;
		m->heap[i] = m->heap[c];
		i = c;
	}
	if (m->n)
		m->heap[i] = last;
	return top;
}

/* ---- copying an event ---- */

static size_t slen(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

static const char *put(char **at, const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *d = *at;
	memcpy(d, s, n);
	*at += n;
	return d;
}

static struct mitem *item_copy(const struct event *ev)
{
	size_t n = slen(ev->pid_text) + slen(ev->name) + slen(ev->label) +
		slen(ev->peer) +
		slen(ev->peer_name) + slen(ev->mfa) + slen(ev->payload) +
		slen(ev->extra) + (ev->raw ? ev->raw_len : 0);
	struct mitem *it = xmalloc(sizeof(*it) + n);
	char *at = (char *)(it + 1);
	it->ev = *ev;
	if (ev->raw) {   /* first: it is bytes, not a string */
		memcpy(at, ev->raw, ev->raw_len);
		it->ev.raw = at;
		at += ev->raw_len;
	}
	it->ev.pid_text = put(&at, ev->pid_text);
	it->ev.name = put(&at, ev->name);
	it->ev.label = put(&at, ev->label);
	it->ev.peer = put(&at, ev->peer);
	it->ev.peer_name = put(&at, ev->peer_name);
	it->ev.mfa = put(&at, ev->mfa);
	it->ev.payload = put(&at, ev->payload);
	it->ev.extra = put(&at, ev->extra);
	it->ev.from = NULL;
	it->ev.latency_us = 0;
	it->from_node = -1;
	it->waiting = NULL;
	return it;
}

/* "<name@host.N.S>": N and S; -1 if the text is not a pid. */
static int pid_numbers(const char *text, uint32_t *num, uint32_t *serial)
{
	size_t n = strlen(text);
	if (n < 5 || text[0] != '<' || text[n - 1] != '>')
		return -1;
	const char *dot2 = NULL, *dot1 = NULL;
	for (const char *p = text + n - 1; p > text; p--)
		if (*p == '.') {
			if (!dot2) {
				dot2 = p;
			} else {
				dot1 = p;
				break;
			}
		}
	if (!dot1)
		return -1;
	char *end;
	unsigned long a = strtoul(dot1 + 1, &end, 10);
	if (end != dot2)
		return -1;
	unsigned long b = strtoul(dot2 + 1, &end, 10);
	if (*end != '>')
		return -1;
	*num = (uint32_t)a;
	*serial = (uint32_t)b;
	return 0;
}

static struct pend *pend_add(struct merge *m, int kind, uint64_t h, int node,
			     uint32_t num, uint32_t serial, size_t extra)
{
	struct pend *p = xcalloc(1, sizeof(*p) + extra);
	p->h = h;
	p->kind = kind;
	p->dest_node = node;
	p->num = num;
	p->serial = serial;
	struct pend **pp = hmap_put(&m->waiting, &h, NULL);
	while (*pp)
		pp = &(*pp)->chain;
	*pp = p;
	p->prev = m->newest;
	if (m->newest)
		m->newest->next = p;
	else
		m->oldest = p;
	m->newest = p;
	m->npend++;
	return p;
}

static struct pend *pend_find(struct merge *m, int kind, uint64_t h, int node,
			      uint32_t num, uint32_t serial, const char *payload)
{
	struct pend **head = hmap_get(&m->waiting, &h);
	for (struct pend *p = head ? *head : NULL; p; p = p->chain)
		if (p->kind == kind && same_key(p, h, node, num, serial, payload))
			return p;
	return NULL;
}

static void pair(struct merge *m, struct mitem *recv, const char *sender,
		 int sender_node, int64_t sent_ts)
{
	free((char *)recv->ev.from);
	recv->ev.from = xstrdup(sender);
	recv->from_node = sender_node;
	recv->ev.latency_us = recv->ev.ts - sent_ts;
	m->st.paired++;
}

static void add_send(struct merge *m, int node, const struct mitem *it)
{
	uint32_t num, serial;
	int dest = m->node_of(m->node_of_arg, it->ev.peer);
	if (dest < 0 || dest == node || pid_numbers(it->ev.peer, &num, &serial) < 0)
		return;
	uint64_t h = key_hash(dest, num, serial, it->ev.payload);
	struct pend *r = pend_find(m, PEND_RECV, h, dest, num, serial,
				   it->ev.payload);
	if (r) {
		pair(m, r->item, it->ev.pid_text, node, it->ev.ts);
		pend_unlink(m, r);
		return;
	}
	size_t pl = strlen(it->ev.payload) + 1, sl = strlen(it->ev.pid_text) + 1;
	struct pend *s = pend_add(m, PEND_SEND, h, dest, num, serial, pl + sl);
	memcpy(s->buf, it->ev.payload, pl);
	memcpy(s->buf + pl, it->ev.pid_text, sl);
	s->payload = s->buf;
	s->sender = s->buf + pl;
	s->sender_node = node;
	s->ts = it->ev.ts;
}

static void add_receive(struct merge *m, int node, struct mitem *it)
{
	uint32_t num = it->ev.pid.num, serial = it->ev.pid.serial;
	uint64_t h = key_hash(node, num, serial, it->ev.payload);
	struct pend *s = pend_find(m, PEND_SEND, h, node, num, serial,
				   it->ev.payload);
	if (!s) {
		struct pend *r = pend_add(m, PEND_RECV, h, node, num, serial, 0);
		r->payload = it->ev.payload;
		r->item = it;
		it->waiting = r;
		return;
	}
	/* another sender with the very same message: cannot tell */
	for (struct pend *o = s->chain; o; o = o->chain)
		if (o->kind == PEND_SEND &&
		    same_key(o, h, node, num, serial, it->ev.payload) &&
		    strcmp(o->sender, s->sender)) {
			m->st.ambiguous++;
			pend_unlink(m, s);
			return;
		}
	pair(m, it, s->sender, s->sender_node, s->ts);
	pend_unlink(m, s);
}

void merge_add(struct merge *m, int node, const struct event *ev)
{
	struct mitem *it = item_copy(ev);
	it->node = node;
	it->seq = m->seq++;
	heap_push(m, it);
	if (!it->ev.payload)
		return;
	if (it->ev.type == EV_SEND && it->ev.peer)
		add_send(m, node, it);
	else if (it->ev.type == EV_RECEIVE)
		add_receive(m, node, it);
}

void merge_flush(struct merge *m, int64_t watermark, mitem_fn fn, void *arg)
{
	while (m->n && (m->n > m->max_items || m->heap[0]->ev.ts <= watermark)) {
		if (m->heap[0]->ev.ts > watermark)
			m->st.forced++;
		struct mitem *it = heap_pop(m);
		if (it->waiting)
			pend_unlink(m, it->waiting);
		fn(arg, it);
		item_free(it);
	}
	/* sends nobody received (or whose receiver is not traced) */
	/* a popped item's pend was unlinked before the item was freed */
	while (m->oldest && m->oldest->kind == PEND_SEND && // NOLINT(clang-analyzer-unix.Malloc)
	       (watermark == INT64_MAX ||
		m->oldest->ts + m->send_ttl_us < watermark)) {
		m->st.expired++;
		pend_unlink(m, m->oldest);
	}
}
