/*
 * bench-syntax: what keeping each event's entry costs the view's ring, and
 * how long :syntax takes to render a full ring again.
 *
 *   build/bench-syntax [EVENTS]        (default 200000, the view's ring)
 *
 * Fills a ring of EVENTS events decoded from entries encoded as the
 * tracer's workers send them (ATOM_EXT atoms, NEW_PID_EXT pids): half
 * gen_server calls carrying an Elixir struct, half small replies, some
 * from a registered process.  Once with what is rendered again kept (as
 * the view keeps it: the message alone, or the whole entry), once without
 * (as before :syntax could render again), and prints the heap each ring
 * holds side by side.  Then times
 * rerender_store over the full ring, Elixir to Erlang and back, next to
 * decoding the same events in the first place.
 */
#include <ei.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decode.h"
#include "names.h"
#include "rerender.h"
#include "store.h"

#define NODE "bench@host"
#define BATCH 500

static void atom_ext(ei_x_buff *x, const char *a)
{
	size_t n = strlen(a);
	char hdr[3] = { 'd', (char)(n >> 8), (char)n };
	ei_x_append_buf(x, hdr, 3);
	ei_x_append_buf(x, a, (int)n);
}

static void pid_ext(ei_x_buff *x, unsigned num)
{
	unsigned char b[12] = { 0 };
	ei_x_append_buf(x, "X", 1);
	atom_ext(x, NODE);
	b[0] = (unsigned char)(num >> 24), b[1] = (unsigned char)(num >> 16);
	b[2] = (unsigned char)(num >> 8), b[3] = (unsigned char)num;
	b[11] = 1;   /* creation */
	ei_x_append_buf(x, (const char *)b, 12);
}

static void ref_ext(ei_x_buff *x, unsigned n)
{
	erlang_ref r = { .len = 3, .creation = 1, .n = { n, 7, 9 } };
	strcpy(r.node, NODE);
	ei_x_encode_ref(x, &r);
}

/* {:"$gen_call", {From, [:alias | Ref]}, {:put, %Shop.Order{...}}} */
static void call_payload(ei_x_buff *x, unsigned from, unsigned id)
{
	ei_x_encode_tuple_header(x, 3);
	atom_ext(x, "$gen_call");
	ei_x_encode_tuple_header(x, 2);
	pid_ext(x, from);
	ei_x_encode_list_header(x, 1);
	atom_ext(x, "alias");
	ref_ext(x, id);
	ei_x_encode_tuple_header(x, 2);
	atom_ext(x, "put");
	ei_x_encode_map_header(x, 5);
	atom_ext(x, "__struct__");
	atom_ext(x, "Elixir.Shop.Order");
	atom_ext(x, "id");
	ei_x_encode_long(x, id);
	atom_ext(x, "items");
	ei_x_encode_list_header(x, 2);
	ei_x_encode_binary(x, "book", 4);
	ei_x_encode_binary(x, "pen", 3);
	ei_x_encode_empty_list(x);
	atom_ext(x, "status");
	atom_ext(x, "new");
	atom_ext(x, "total");
	ei_x_encode_double(x, 300.0);
}

/* events i .. i+BATCH-1 as one list */
static void batch(ei_x_buff *x, unsigned i0)
{
	x->index = 0;
	ei_x_encode_list_header(x, BATCH);
	for (unsigned i = i0; i < i0 + BATCH; i++) {
		bool call = i % 2 == 0;
		unsigned self = call ? 100 + i % 50 : 90;
		ei_x_encode_tuple_header(x, 6);
		atom_ext(x, call ? "send" : "receive");
		pid_ext(x, self);
		ei_x_encode_longlong(x, 1700000000000000LL + i);
		if (call)
			pid_ext(x, 90);
		else
			ei_x_encode_empty_list(x);
		if (call) {
			call_payload(x, self, i);
		} else {
			ei_x_encode_tuple_header(x, 2);
			atom_ext(x, "ok");
			ei_x_encode_long(x, i);
		}
		atom_ext(x, "false");
	}
	ei_x_encode_empty_list(x);
}

static struct store *ring;
static bool keep_raw;

static void to_ring(void *arg, const struct event *ev)
{
	(void)arg;
	struct event e = *ev;
	if (!keep_raw) {
		e.raw = NULL;
		e.raw_len = 0;
	}
	store_add_event(ring, &e);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Fill st with n events; the seconds it took. */
static double fill(struct store *st, unsigned n, enum term_syntax syn)
{
	struct names nt;
	struct decoder d;
	ei_x_buff x;
	names_init(&nt);
	names_set(&nt, (struct bs_pid){ 90, 0, 0 }, "Elixir.Shop.Cache");
	decoder_init(&d, NODE, 1000, &nt);
	d.syn = syn;
	ei_x_new(&x);
	ring = st;
	double t0 = now();
	for (unsigned i = 0; i < n; i += BATCH) {
		batch(&x, i);
		int idx = 0;
		decode_events(&d, x.buff, &idx, 0, to_ring, NULL);
	}
	double t = now() - t0;
	ei_x_free(&x);
	decoder_release(&d);
	names_release(&nt);
	return t;
}

/* what malloc hands out, big blocks (the ring's array) included */
static size_t heap(void)
{
	struct mallinfo2 m = mallinfo2();
	return m.uordblks + m.hblkhd;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 200000;
	n = (n + BATCH - 1) / BATCH * BATCH;
	struct store st;

	size_t h0 = heap();
	store_init(&st, n);
	keep_raw = false;
	fill(&st, n, TERM_ELIXIR);
	size_t text_only = heap() - h0;
	store_release(&st);

	h0 = heap();
	store_init(&st, n);
	keep_raw = true;
	double t_decode = fill(&st, n, TERM_ELIXIR);
	size_t with_raw = heap() - h0;
	size_t raw_bytes = 0;
	for (uint64_t s = store_oldest_seq(&st); s < st.next_seq; s++)
		raw_bytes += store_event(&st, s)->raw_len;

	printf("ring of %u events        text only    with terms   ratio\n", n);
	printf("heap, MB                %10.1f %14.1f %7.2f\n",
	       text_only / 1e6, with_raw / 1e6, (double)with_raw / (double)text_only);
	printf("per event, bytes        %10.0f %14.0f   (terms kept: %.0f bytes each)\n",
	       (double)text_only / n, (double)with_raw / n, (double)raw_bytes / n);

	struct rerender_node rn = { TERM_ELIXIR, TERM_ERLANG, NODE, 1000, { 0, NULL } };
	double t0 = now();
	size_t k = rerender_store(&st, &rn, 1);
	double t_erl = now() - t0;
	rn = (struct rerender_node){ TERM_ERLANG, TERM_ELIXIR, NODE, 1000, { 0, NULL } };
	t0 = now();
	k += rerender_store(&st, &rn, 1);
	double t_ex = now() - t0;
	if (k != 2 * (size_t)n) {
		fprintf(stderr, "bench-syntax: %zu of %u events rendered again\n",
			k / 2, n);
		return 1;
	}
	printf("\n                        decode     :syntax erlang  :syntax elixir\n");
	printf("whole ring, ms          %10.1f %14.1f %15.1f\n", t_decode * 1e3,
	       t_erl * 1e3, t_ex * 1e3);
	printf("per event, ns           %10.0f %14.0f %15.0f\n", t_decode * 1e9 / n,
	       t_erl * 1e9 / n, t_ex * 1e9 / n);
	store_release(&st);
	return 0;
}
