/*
 * bench-decode: how fast beamscope turns event batches into events, and
 * events into JSON lines, on one core.  Batches are encoded the way the
 * tracer's workers send them: 500 sends and receives with small payloads,
 * each event encoded whole as term_to_binary does on the target (atoms as
 * ATOM_EXT), back to back in one binary.
 *
 *   build/bench-decode                  each stage for a second of CPU time
 *   build/bench-decode -n N [STAGE]     exactly N batches of each stage, or
 *                                       of one (decode, check, json, elixir):
 *                                       for callgrind's instruction counts
 *
 * Stages, each including the one before:
 *   decode          decode_events on the event list
 *   check + decode  what the receive path does with a message: the wire
 *                   check, the message shape, then decode_events
 *   + JSON          and a JSON line per event
 *   elixir          decode, the terms in Elixir syntax
 *
 * Rates are events per second of this process's CPU time, so they say
 * what one core can do however loaded the machine is; each is the best of
 * five rounds of a fifth of a second, as other work on the machine (a
 * sibling hyperthread, a shared cache) can only slow a round down.
 */
#include <ei.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decode.h"
#include "json.h"
#include "wire.h"

#define EVENTS 500

enum stage { DECODE, CHECK, JSON };

static unsigned long seen;
static struct sbuf out = SBUF_INIT;

static void count(void *arg, const struct event *ev)
{
	(void)arg;
	(void)ev;
	seen++;
}

static void to_json(void *arg, const struct event *ev)
{
	(void)arg;
	seen++;
	json_event(&out, ev, "bench@host");
}

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void one_batch(const ei_x_buff *x, int body, struct decoder *d,
		      enum stage st)
{
	struct msg m;
	int idx = body;
	if (st == DECODE) {
		decode_events(d, x->buff, &idx, 0, count, NULL);
		return;
	}
	if (wire_check(x->buff, (size_t)x->index) < 0 ||
	    decode_msg(x->buff, &m) != WIRE_BATCH) {
		fprintf(stderr, "bench-decode: the batch does not pass the check\n");
		exit(1);
	}
	idx = m.body;
	if (st == CHECK) {
		decode_events(d, x->buff, &idx, (int)m.worker, count, NULL);
	} else {
		decode_events(d, x->buff, &idx, (int)m.worker, to_json, NULL);
		sbuf_reset(&out);   /* as batch mode does after its write */
	}
}

/* Events per CPU second in one round; n > 0: exactly n batches. */
static double round_rate(const ei_x_buff *x, int body, struct decoder *d,
			 enum stage st, long n)
{
	seen = 0;
	double t0 = cpu_now(), t1;
	if (n > 0) {
		for (long i = 0; i < n; i++)
			one_batch(x, body, d, st);
		t1 = cpu_now();
	} else {
		do {
			for (int i = 0; i < 20; i++)
				one_batch(x, body, d, st);
			t1 = cpu_now();
		} while (t1 - t0 < 0.2);
	}
	if (seen % EVENTS || d->malformed) {
		fprintf(stderr, "bench-decode: events went missing\n");
		exit(1);
	}
	return (double)seen / (t1 - t0 > 1e-9 ? t1 - t0 : 1e-9);
}

/* The best of five rounds, or one round of exactly n batches. */
static double run(const ei_x_buff *x, int body, struct decoder *d,
		  enum stage st, long n)
{
	double best = 0;
	for (int r = 0; r < (n > 0 ? 1 : 5); r++) {
		double rate = round_rate(x, body, d, st, n);
		if (rate > best)
			best = rate;
	}
	return best;
}

/* As term_to_binary writes an atom on OTP 25: ATOM_EXT. */
static void atom_ext(ei_x_buff *x, const char *a)
{
	size_t n = strlen(a);
	char hdr[3] = { 'd', (char)(n >> 8), (char)n };
	ei_x_append_buf(x, hdr, 3);
	ei_x_append_buf(x, a, (int)n);
}

static void pid_ext(ei_x_buff *x, const erlang_pid *p)
{
	char b[12];
	ei_x_append_buf(x, "X", 1);
	atom_ext(x, p->node);
	for (int i = 0; i < 4; i++) {
		b[i] = (char)(p->num >> (24 - 8 * i));
		b[4 + i] = (char)(p->serial >> (24 - 8 * i));
		b[8 + i] = (char)(p->creation >> (24 - 8 * i));
	}
	ei_x_append_buf(x, b, 12);
}

int main(int argc, char **argv)
{
	ei_x_buff x;
	struct names names;
	struct decoder d;
	long n = 0;
	int only = -1;
	erlang_pid a = { .num = 85, .serial = 0, .creation = 3 }, b = a;
	strcpy(a.node, "bench@host");
	strcpy(b.node, "bench@host");
	b.num = 86;

	static const char *const stages[] = { "decode", "check", "json", "elixir" };
	if (argc >= 3 && !strcmp(argv[1], "-n"))
		n = atol(argv[2]);
	for (int i = 0; argc == 4 && i < 4; i++)
		if (!strcmp(argv[3], stages[i]))
			only = i;
	if (!(argc == 1 || (argc == 3 && n > 0) || (argc == 4 && n > 0 && only >= 0))) {
		fprintf(stderr, "usage: bench-decode [-n BATCHES [decode|check|json|elixir]]\n");
		return 2;
	}

	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 5);
	ei_x_encode_atom(&x, "beamscope_batch");
	ei_x_encode_long(&x, 0);
	ei_x_encode_long(&x, 0);
	ei_x_encode_long(&x, 0);
	int body = x.index;
	ei_x_buff recs;
	ei_x_new(&recs);
	for (int i = 0; i < EVENTS; i++) {
		ei_x_encode_version(&recs);
		ei_x_encode_tuple_header(&recs, 6);
		atom_ext(&recs, i % 2 ? "receive" : "send");
		pid_ext(&recs, i % 2 ? &b : &a);
		ei_x_encode_longlong(&recs, 1763790000000000LL + i);
		if (i % 2)
			ei_x_encode_empty_list(&recs);
		else
			pid_ext(&recs, &b);
		ei_x_encode_tuple_header(&recs, 2);
		atom_ext(&recs, "ping");
		pid_ext(&recs, &a);
		atom_ext(&recs, "false");
	}
	ei_x_encode_binary(&x, recs.buff, recs.index);
	ei_x_free(&recs);

	names_init(&names);
	decoder_init(&d, "bench@host", 256, &names);
	if (only >= 0) {
		if (only == 3)
			d.syn = TERM_ELIXIR;
		double r = run(&x, body, &d, only == 3 ? DECODE : (enum stage)only, n);
		printf("%s: %.2f M events/s per core\n", stages[only], r / 1e6);
	} else {
		double chk = run(&x, body, &d, CHECK, n);
		double dec = run(&x, body, &d, DECODE, n);
		double js = run(&x, body, &d, JSON, n);
		printf("check + decode: %.2f M events/s per core (goal: 10 M)\n",
		       chk / 1e6);
		printf("decode only: %.2f M events/s per core\n", dec / 1e6);
		printf("check + decode + JSON: %.2f M events/s per core\n", js / 1e6);
		d.syn = TERM_ELIXIR;
		double ex = run(&x, body, &d, DECODE, n);
		printf("decode only, Elixir syntax: %.2f M events/s per core "
		       "(%.2f of Erlang's)\n", ex / 1e6, ex / dec);
	}
	decoder_release(&d);
	names_release(&names);
	sbuf_release(&out);
	ei_x_free(&x);
	return 0;
}
