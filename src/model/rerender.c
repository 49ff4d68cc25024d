/*
 * rerender: the store's text in another syntax.  See rerender.h.
 */
#include "rerender.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decode.h"
#include "gencall.h"
#include "names.h"
#include "pidtext.h"
#include "redact.h"
#include "retext.h"
#include "xalloc.h"

/* *s rendered again as a name or function, in place; s owned */
static void retext_owned(char **s, enum term_syntax from, enum term_syntax to,
			 bool mfa)
{
	struct sbuf sb = SBUF_INIT;
	if (*s && (mfa ? retext_mfa(&sb, from, to, *s) :
		   retext_name(&sb, from, to, *s))) {
		free(*s);
		*s = xstrdup(sbuf_str(&sb));
	}
	sbuf_release(&sb);
}

/* A name of an event: its new text at the end of sb (offset), or -1 to
 * keep the old one. */
static long name_again(struct sbuf *sb, enum term_syntax from,
		       enum term_syntax to, const char *text)
{
	long off = (long)sb->len;
	if (!text || !retext_name(sb, from, to, text))
		return -1;
	sbuf_addch(sb, '\0');
	return off;
}

/* A decoder per node, set as the node's, in the syntax wanted, with a
 * table of names of its own (see decode_again). */
static struct decoder *decoders_new(const struct rerender_node *nodes,
				    int nnodes, struct names **names)
{
	size_t n = (size_t)(nnodes > 0 ? nnodes : 1);
	struct decoder *dec = xcalloc(n, sizeof(*dec));
	*names = xcalloc(n, sizeof(**names));
	for (int i = 0; i < nnodes; i++) {
		names_init(&(*names)[i]);
		decoder_init(&dec[i], nodes[i].node, nodes[i].payload_max,
			     &(*names)[i]);
		dec[i].syn = nodes[i].to;
		dec[i].dia = nodes[i].dia;
	}
	return dec;
}

static void decoders_free(struct decoder *dec, struct names *names,
			  int nnodes)
{
	for (int i = 0; i < nnodes; i++) {
		decoder_release(&dec[i]);
		names_release(&names[i]);
	}
	free(dec);
	free(names);
}

static bool is_pid_text(const char *s)
{
	struct pidtext pt;
	return s && pidtext_parse(s, &pt) == 0;
}

static void event_again(struct store *st, struct sevent *e,
			enum term_syntax to, struct decoder *dec, struct sbuf *sb)
{
	enum term_syntax from = (enum term_syntax)e->syn;
	struct event ev = {
		.type = e->type, .ts = e->ts, .pid = e->pid,
		.pid_text = e->pid_text, .name = e->name, .peer = e->peer,
		.peer_name = e->peer_name, .mfa = e->mfa, .payload = e->payload,
		.extra = e->extra, .from = e->from, .truncated = e->truncated,
		.raw = e->raw, .raw_len = e->raw_len, .raw_part = e->raw_part,
	};
	struct event fresh;
	sbuf_reset(sb);
	long o_mfa = -1;
	bool again = e->raw && decode_again(dec, e->type, e->raw, e->raw_len,
					    e->raw_part, &fresh) == 0;
	if (again) {
		ev.payload = fresh.payload;
		ev.truncated = fresh.truncated;
	}
	long o_extra = -1;
	if (again && !(e->raw_part & RAW_PAYLOAD)) {
		ev.mfa = fresh.mfa;
		/* the caller: a term; a spawn's initial call: a function */
		if (e->type == EV_CALL || e->type == EV_SPAWN ||
		    e->type == EV_SPAWNED)
			ev.extra = fresh.extra;
		/* a pid reads the same in either syntax; a name does not */
		if (e->peer && fresh.peer && !is_pid_text(e->peer))
			ev.peer = fresh.peer;
	} else if (e->mfa) {
		o_mfa = (long)sb->len;
		if (retext_mfa(sb, from, to, e->mfa))
			sbuf_addch(sb, '\0');
		else
			o_mfa = -1;
		if (e->extra && (e->type == EV_SPAWN || e->type == EV_SPAWNED)) {
			o_extra = (long)sb->len;
			if (retext_mfa(sb, from, to, e->extra))
				sbuf_addch(sb, '\0');
			else
				o_extra = -1;
		}
	}
	long o_name = name_again(sb, from, to, e->name);
	long o_peer = name_again(sb, from, to, e->peer_name);
	/* sb no longer moves */
	if (o_mfa >= 0)
		ev.mfa = sb->buf + o_mfa;
	if (o_extra >= 0)
		ev.extra = sb->buf + o_extra;
	if (o_name >= 0)
		ev.name = sb->buf + o_name;
	if (o_peer >= 0)
		ev.peer_name = sb->buf + o_peer;
	/* a cookie is looked for in the new text as in the first */
	if (e->raw)
		redact_event(&ev);
	store_set_text(st, e, &ev);
	e->truncated = ev.truncated;
	e->syn = (uint8_t)to;
	if (e->type == EV_EXIT && ev.payload) {
		struct proc *p = store_proc(st, e->pid);
		if (p && p->exited) {
			free(p->reason);
			p->reason = xstrdup(ev.payload);
		}
	}
}

void rerender_proc(struct proc *p, enum term_syntax from, enum term_syntax to)
{
	if (from == to)
		return;
	retext_owned(&p->name, from, to, false);
	retext_owned(&p->initial, from, to, true);
	retext_owned(&p->current, from, to, true);
	retext_owned(&p->label, from, to, true);
}

void rerender_names(struct store *st, const struct rerender_node *nodes,
		    int nnodes)
{
	bool any = false;
	for (int i = 0; i < nnodes; i++)
		any |= nodes[i].from != nodes[i].to;
	for (size_t i = 0; any && i < st->nprocs; i++) {
		struct proc *p = st->procs[i];
		int n = (int)p->pid.node;
		if (n < nnodes)
			rerender_proc(p, nodes[n].from, nodes[n].to);
	}
	/* the calls view: one syntax for all, the first node's */
	for (size_t i = 0; any && nnodes && i < st->nfuncs; i++)
		retext_owned(&st->funcs[i]->mfa, nodes[0].from, nodes[0].to, true);
	st->generation++;
	st->tree_gen++;
}

static long long now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

size_t rerender_events(struct store *st, const struct rerender_node *nodes,
		       int nnodes, uint64_t *cursor, long budget_us)
{
	struct names *names;
	struct decoder *dec = decoders_new(nodes, nnodes, &names);
	struct sbuf sb = SBUF_INIT;
	long long end = budget_us > 0 ? now_us() + budget_us : 0;
	uint64_t oldest = store_oldest_seq(st), seq = *cursor;
	size_t done = 0;
	if (seq > st->next_seq)
		seq = st->next_seq;
	for (; seq > oldest; seq--) {
		struct sevent *e = &st->ring[(seq - 1) % st->cap];
		int n = (int)e->pid.node;
		if (e->seq != seq - 1 || n >= nnodes || e->syn == nodes[n].to)
			continue;
		event_again(st, e, nodes[n].to, &dec[n], &sb);
		/* the clock is read once in a while: it costs as much as a
		 * small event */
		if (++done % 64 == 0 && end && now_us() >= end) {
			seq--;
			break;
		}
	}
	*cursor = seq > oldest ? seq : 0;
	sbuf_release(&sb);
	decoders_free(dec, names, nnodes);
	if (done)
		st->generation++;
	return done;
}

void rerender_one(struct store *st, uint64_t seq,
		  const struct rerender_node *node)
{
	if (seq < store_oldest_seq(st) || seq >= st->next_seq)
		return;
	struct sevent *e = &st->ring[seq % st->cap];
	if (e->seq != seq || e->syn == node->to)
		return;
	struct names *names;
	struct decoder *dec = decoders_new(node, 1, &names);
	struct sbuf sb = SBUF_INIT;
	event_again(st, e, node->to, dec, &sb);
	sbuf_release(&sb);
	decoders_free(dec, names, 1);
}

size_t rerender_store(struct store *st, const struct rerender_node *nodes,
		      int nnodes)
{
	uint64_t cursor = st->next_seq;
	rerender_names(st, nodes, nnodes);
	return rerender_events(st, nodes, nnodes, &cursor, 0);
}

struct gc_ctx {
	const struct rerender_node *nodes;
	int nnodes;
	struct decoder *dec;
};

static bool gc_text_again(void *arg, int node, enum gc_text what,
			  const char *raw, uint32_t len, uint8_t part,
			  const char *text, struct sbuf *out)
{
	struct gc_ctx *c = arg;
	if (node < 0 || node >= c->nnodes ||
	    c->nodes[node].from == c->nodes[node].to)
		return false;
	if (what == GC_TEXT_NAME)
		return retext_name(out, c->nodes[node].from, c->nodes[node].to,
				   text);
	struct event ev;
	enum event_type type = what == GC_TEXT_REQUEST ? EV_GEN_CALL :
		EV_GEN_REPLY;
	if (decode_again(&c->dec[node], type, raw, len, part, &ev) < 0)
		return false;
	const char *t = what == GC_TEXT_SERVER ? ev.peer : ev.payload;
	if (!t)
		return false;
	/* what held a cookie once holds it in any syntax */
	bool cookie = redact_holds(t, strlen(t), ev.truncated) ||
		redact_holds_term(raw, len, ev.truncated, part & RAW_PAYLOAD);
	sbuf_addstr(out, cookie ? REDACT_TEXT : t);
	return true;
}

void rerender_gencalls(struct gencalls *g, const struct rerender_node *nodes,
		       int nnodes)
{
	struct names *names;
	struct gc_ctx c = { nodes, nnodes, decoders_new(nodes, nnodes, &names) };
	gencall_retext(g, gc_text_again, &c);
	decoders_free(c.dec, names, nnodes);
}
