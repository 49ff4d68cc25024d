/*
 * fake: nodes for the engine's unit test (fake.h).  One struct fake per
 * node added; the engine's struct agent and struct conn are the ones it
 * made, filled as the real code fills them.
 */
#include "fake.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "attach.h"
#include "clock.h"
#include "conn.h"
#include "corpus.h"
#include "exitcode.h"

#define FAKES 8

struct fake {
	struct fake_node cfg;
	char name[64];
	struct fake_seen seen;
	int rfd, wfd;           /* the connection: -1 when closed */
	struct agent *a;
	bool tracing;           /* batches are due */
	bool eos_due;           /* stopped: every worker's last word */
	long sent;              /* batches sent, all workers */
	long seq[8];            /* per worker */
	long long ts_us;        /* the next event's time */
	struct corpus c;
};

static struct fake fakes[FAKES];
static int nfakes;
static long long base_us;   /* the first trace's time: every node's ts0 */

void fake_reset(void)
{
	for (int i = 0; i < nfakes; i++) {
		if (fakes[i].wfd >= 0)
			close(fakes[i].wfd);
		if (fakes[i].rfd >= 0)
			close(fakes[i].rfd);
	}
	memset(fakes, 0, sizeof(fakes));
	nfakes = 0;
	base_us = 0;
}

void fake_add(const struct fake_node *f)
{
	if (nfakes == FAKES)
		abort();
	struct fake *k = &fakes[nfakes++];
	memset(k, 0, sizeof(*k));
	k->cfg = *f;
	snprintf(k->name, sizeof(k->name), "%s", f->name);
	k->cfg.name = k->name;
	if (k->cfg.workers < 1 || k->cfg.workers > 8)
		k->cfg.workers = 1;
	k->rfd = k->wfd = -1;
	k->c = (struct corpus){ 0x51ed270b27a3c3d5ULL ^ (uint64_t)nfakes, 0, false };
}

static struct fake *by_name(const char *name)
{
	for (int i = 0; i < nfakes; i++)
		if (!strcmp(fakes[i].name, name))
			return &fakes[i];
	return NULL;
}

struct fake_seen fake_seen(const char *name)
{
	struct fake *k = by_name(name);
	return k ? k->seen : (struct fake_seen){ 0 };
}

/* The fake behind an agent: by its connection's read end. */
static struct fake *of(const struct agent *a)
{
	if (!a->conn || a->conn->fd < 0)
		return NULL;
	for (int i = 0; i < nfakes; i++)
		if (fakes[i].rfd == a->conn->fd)
			return &fakes[i];
	return NULL;
}

/* Something to say: the connection is readable. */
static void poke(struct fake *k)
{
	char b = 1;
	if (k->wfd >= 0)
		while (write(k->wfd, &b, 1) < 0 && errno == EINTR)
			;
}

static bool has_more(const struct fake *k)
{
	return (k->tracing && k->sent < (long)k->cfg.batches * k->cfg.workers) ||
		k->eos_due;
}

/* ---- the connection ---- */

void conn_init(struct conn *c)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

void conn_close(struct conn *c)
{
	if (c->fd < 0)
		return;
	for (int i = 0; i < nfakes; i++)
		if (fakes[i].rfd == c->fd) {
			close(fakes[i].wfd);
			fakes[i].rfd = fakes[i].wfd = -1;
			fakes[i].tracing = fakes[i].eos_due = false;
		}
	close(c->fd);
	c->fd = -1;
}

void conn_release(struct conn *c)
{
	conn_close(c);
}

/* a fake node's pipe is all there is to poll */
int conn_poll_fd(const struct conn *c)
{
	return c->fd;
}

int attach_connect(const struct config *cfg, const char *node, struct conn *c,
		   struct sbuf *err, struct sbuf *warn)
{
	(void)cfg;
	(void)warn;
	struct fake *k = by_name(node);
	int p[2];
	if (!k) {
		sbuf_addf(err, "node \"%s\" is not known (a fake node)", node);
		return EXIT_CONNECT;
	}
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0) {
		sbuf_addf(err, "no pipe for %s", node);
		return EXIT_FAIL;
	}
	k->rfd = p[0];
	k->wfd = p[1];
	k->seen.connects++;
	c->fd = p[0];
	snprintf(c->target, sizeof(c->target), "%s", node);
	return EXIT_OK;
}

/* ---- the agent ---- */

void agent_init(struct agent *a, struct conn *c, const struct agent_stream *s)
{
	memset(a, 0, sizeof(*a));
	a->conn = c;
	a->stream = *s;
	names_init(&a->names);
	structs_init(&a->structs);
	ei_x_new(&a->rpc_reply);
	ei_x_new(&a->req_reply);
	sbuf_init(&a->op.err);
}

void agent_op_end(struct agent *a)
{
	node_names_free(a->op.nodes);
	sbuf_release(&a->op.err);
	memset(&a->op, 0, sizeof(a->op));
	sbuf_init(&a->op.err);
	a->op.kind = AOP_NONE;
}

void agent_release(struct agent *a)
{
	agent_op_end(a);
	free(a->worker_pids);
	a->worker_pids = NULL;
	names_release(&a->names);
	structs_release(&a->structs);
	ei_x_free(&a->rpc_reply);
	ei_x_free(&a->req_reply);
}

static void begin(struct agent *a, enum agent_op kind)
{
	agent_op_end(a);
	a->op.kind = kind;
}

void agent_attach_begin(struct agent *a, const struct agent_opts *o)
{
	begin(a, AOP_ATTACH);
	a->op.opts = *o;
}

void agent_trace_begin(struct agent *a, const struct trace_spec *spec,
		       struct trace_result *res)
{
	(void)spec;
	begin(a, AOP_TRACE);
	a->op.trace = res;
}

void agent_clock_begin(struct agent *a, int samples)
{
	begin(a, AOP_CLOCK);
	a->op.samples = samples;
}

void agent_gone_begin(struct agent *a, int ms)
{
	(void)ms;
	begin(a, AOP_GONE);
}

void agent_nodes_begin(struct agent *a)
{
	begin(a, AOP_NODES);
}

void agent_alive_begin(struct agent *a)
{
	begin(a, AOP_ALIVE);
}

void agent_modules_begin(struct agent *a)
{
	begin(a, AOP_MODULES);
}

/* Every operation is answered at its first step. */
bool agent_op_step(struct agent *a)
{
	struct agent_op_state *op = &a->op;
	struct fake *k = of(a);
	if (op->kind == AOP_NONE || op->done)
		return true;
	op->done = true;
	if (!k) {
		op->rc = EXIT_LOST;
		sbuf_addstr(&op->err, "the fake connection is gone");
		return true;
	}
	switch (op->kind) {
	case AOP_ATTACH:
		k->seen.attaches++;
		snprintf(a->node, sizeof(a->node), "%s", k->name);
		snprintf(a->otp, sizeof(a->otp), "25");
		a->workers = k->cfg.workers;
		a->schedulers = k->cfg.workers;
		a->started = true;
		a->heard_ms = clock_mono_ms();
		break;
	case AOP_TRACE:
		k->seen.traces++;
		if (k->cfg.refuse_trace) {
			op->rc = EXIT_REFUSED;
			sbuf_addstr(&op->err, "the fake node refuses to trace");
			break;
		}
		op->trace->traced = 42;
		snprintf(op->trace->tracing, sizeof(op->trace->tracing), "session");
		k->tracing = true;
		k->sent = 0;
		memset(k->seq, 0, sizeof(k->seq));
		if (!base_us)
			base_us = clock_wall_us();
		k->ts_us = base_us + k->cfg.ts0_us;
		poke(k);
		break;
	case AOP_CLOCK:
		op->offset_us = k->cfg.offset_us;
		op->error_us = 50;
		break;
	case AOP_GONE:
		k->seen.gones++;
		break;
	case AOP_ALIVE:
		op->alive = 1;
		break;
	case AOP_NODES:
	case AOP_MODULES:
		op->nodes = calloc(1, sizeof(char *));
		break;
	default:
		break;
	}
	return true;
}

const char *agent_op_text(const struct agent *a)
{
	return a->op.kind == AOP_NONE || a->op.done ? "" : "waiting for the fake";
}

int agent_stop_send(struct agent *a)
{
	struct fake *k = of(a);
	agent_op_end(a);
	if (!k)
		return -1;
	k->seen.stops++;
	k->tracing = false;
	k->eos_due = true;
	a->req_want = true;
	a->req_got = true;
	poke(k);
	return 0;
}

bool agent_reply_arrived(const struct agent *a)
{
	return a->req_got;
}

/* One batch of worker w: sends and receives, messages from the corpus. */
static void batch(struct fake *k, int w, ei_x_buff *x)
{
	erlang_pid self = { .num = 100 + (unsigned)w, .serial = 0, .creation = 1 };
	erlang_pid peer = { .num = 200, .serial = 0, .creation = 1 };
	snprintf(self.node, sizeof(self.node), "%s", k->name);
	snprintf(peer.node, sizeof(peer.node), "%s", k->name);
	ei_x_encode_version(x);
	ei_x_encode_tuple_header(x, 5);
	ei_x_encode_atom(x, "beamscope_batch");
	ei_x_encode_long(x, w);
	ei_x_encode_long(x, ++k->seq[w]);
	ei_x_encode_long(x, 0);
	ei_x_encode_list_header(x, k->cfg.events);
	for (int i = 0; i < k->cfg.events; i++) {
		bool send = i % 2 == 0;
		ei_x_encode_tuple_header(x, 6);
		ei_x_encode_atom(x, send ? "send" : "receive");
		ei_x_encode_pid(x, &self);
		ei_x_encode_longlong(x, k->ts_us);
		k->seen.last_ts_us = k->ts_us;
		k->ts_us += 10;
		if (send)
			ei_x_encode_pid(x, &peer);
		else
			ei_x_encode_empty_list(x);
		corpus_term(&k->c, x, 3);
		ei_x_encode_atom(x, "false");
	}
	ei_x_encode_empty_list(x);
	k->seen.shipped += k->cfg.events;
}

/* Every worker's last word: its batch count, no drops, what it took. */
static void eos(struct fake *k, int w, ei_x_buff *x)
{
	ei_x_encode_version(x);
	ei_x_encode_tuple_header(x, 5);
	ei_x_encode_atom(x, "beamscope_eos");
	ei_x_encode_long(x, w);
	ei_x_encode_long(x, k->seq[w]);
	ei_x_encode_long(x, 0);
	ei_x_encode_long(x, k->seq[w] * k->cfg.events);
}

static void deliver(struct agent *a, ei_x_buff *x)
{
	struct msg m;
	enum wire_kind kind = decode_msg(x->buff, &m);
	if (kind == WIRE_BATCH)
		a->stream.batch(a->stream.arg, x->buff, &m);
	else if (kind == WIRE_EOS)
		a->stream.eos(a->stream.arg, &m);
	else
		abort();   /* the fake's own message is wrong */
}

enum pump_result agent_read(struct agent *a, int budget)
{
	struct fake *k = of(a);
	char drain[64];
	if (!k)
		return PUMP_LOST;
	while (read(k->rfd, drain, sizeof(drain)) > 0)
		;
	a->heard_ms = clock_mono_ms();
	for (int n = 0; n < budget && has_more(k); n++) {
		ei_x_buff x;
		if (!k->tracing) {
			for (int w = 0; w < k->cfg.workers; w++) {
				ei_x_new(&x);
				eos(k, w, &x);
				deliver(a, &x);
				ei_x_free(&x);
			}
			k->eos_due = false;
			continue;
		}
		if (k->cfg.lose_after && k->sent == k->cfg.lose_after)
			return PUMP_LOST;
		ei_x_new(&x);
		batch(k, (int)(k->sent % k->cfg.workers), &x);
		k->sent++;
		deliver(a, &x);
		ei_x_free(&x);
	}
	if (has_more(k))
		poke(k);
	return PUMP_OK;
}

enum pump_result agent_pump(struct agent *a, int ms)
{
	(void)ms;
	return agent_read(a, 16);
}

/* ---- requests with no answer ---- */

int agent_ping(struct agent *a)
{
	return of(a) ? 0 : -1;
}

int agent_focus(struct agent *a, unsigned num, unsigned serial, bool on)
{
	(void)num, (void)serial, (void)on;
	return of(a) ? 0 : -1;
}

int agent_sample(struct agent *a, const struct bs_pid *pids, int n)
{
	(void)pids, (void)n;
	return of(a) ? 0 : -1;
}

int agent_structs(struct agent *a, char *const *mods, int n)
{
	(void)mods, (void)n;
	return of(a) ? 0 : -1;
}

int agent_describe(struct agent *a, const struct bs_pid *pids, int n,
		   bool again)
{
	(void)pids, (void)n, (void)again;
	return of(a) ? 0 : -1;
}

int agent_node_stats(struct agent *a, bool on)
{
	(void)on;
	return of(a) ? 0 : -1;
}

int agent_top(struct agent *a, const char *metric, int n)
{
	(void)metric, (void)n;
	return of(a) ? 0 : -1;
}

int agent_profile(struct agent *a, const struct pidsel *who, int top_n,
		  int hz, long budget_us)
{
	struct fake *k = of(a);
	(void)hz, (void)budget_us, (void)top_n;
	if (!k)
		return -1;
	k->seen.profiles++;
	k->seen.profile_procs = who ? who->n : -1;
	return 0;
}

int agent_alarms(struct agent *a, const struct alarm_spec *sp)
{
	struct fake *k = of(a);
	if (!k)
		return -1;
	k->seen.alarms++;
	k->seen.alarms_on = sp != NULL;
	return 0;
}

int agent_profile_calls(struct agent *a, const char *const *patterns, int n)
{
	struct fake *k = of(a);
	(void)patterns;
	if (!k)
		return -1;
	k->seen.exacts++;
	k->seen.exact_patterns = n;
	return 0;
}

int agent_unfollow(struct agent *a)
{
	return of(a) ? 0 : -1;
}

int agent_visible_nodes(struct agent *a, char ***out)
{
	(void)a;
	*out = calloc(1, sizeof(char *));
	return 0;
}

void agent_set_lost(struct agent *a, const char *reason)
{
	if (a->gone)
		return;
	a->gone = true;
	snprintf(a->gone_why, sizeof(a->gone_why), "agent_lost");
	snprintf(a->gone_reason, sizeof(a->gone_reason), "%s", reason);
}

void agent_gone_text(const struct agent *a, struct sbuf *out)
{
	sbuf_addf(out, "the fake agent on \"%s\" left (%s)", a->node, a->gone_why);
}

void trace_result_release(struct trace_result *r)
{
	for (int i = 0; i < r->nskipped; i++)
		free(r->skipped[i]);
	free(r->skipped);
	for (int i = 0; i < r->nskipped_functions; i++)
		free(r->skipped_functions[i]);
	free(r->skipped_functions);
	free(r->new_skipped);
	memset(r, 0, sizeof(*r));
}
