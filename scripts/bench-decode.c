/*
 * bench-decode: how fast beamscope turns event batches into events, and
 * events into JSON lines, on one core.  Batches are encoded the way the
 * tracer's workers send them (500 sends and receives with small payloads).
 */
#include <ei.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "decode.h"
#include "json.h"

static unsigned long seen;
static struct sbuf out = SBUF_INIT;
static int do_json;

static void count(void *arg, const struct event *ev)
{
	(void)arg;
	seen++;
	if (do_json) {
		json_event(&out, ev, "bench@host");
		if (out.len > (1 << 20))
			sbuf_reset(&out);
	}
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double run(ei_x_buff *x, int body, struct decoder *d, int json)
{
	do_json = json;
	seen = 0;
	double t0 = now(), t1;
	do {
		for (int i = 0; i < 100; i++) {
			int idx = body;
			decode_events(d, x->buff, &idx, 0, count, NULL);
		}
		t1 = now();
	} while (t1 - t0 < 1.0);
	return (double)seen / (t1 - t0);
}

int main(void)
{
	ei_x_buff x;
	struct names names;
	struct decoder d;
	erlang_pid a = { .num = 85, .serial = 0, .creation = 3 }, b = a;
	strcpy(a.node, "bench@host");
	strcpy(b.node, "bench@host");
	b.num = 86;

	ei_x_new_with_version(&x);
	ei_x_encode_tuple_header(&x, 5);
	ei_x_encode_atom(&x, "beamscope_batch");
	ei_x_encode_long(&x, 0);
	ei_x_encode_long(&x, 0);
	ei_x_encode_long(&x, 0);
	int body = x.index;
	ei_x_encode_list_header(&x, 500);
	for (int i = 0; i < 500; i++) {
		ei_x_encode_tuple_header(&x, 6);
		ei_x_encode_atom(&x, i % 2 ? "receive" : "send");
		ei_x_encode_pid(&x, i % 2 ? &b : &a);
		ei_x_encode_longlong(&x, 1763790000000000LL + i);
		if (i % 2)
			ei_x_encode_empty_list(&x);
		else
			ei_x_encode_pid(&x, &b);
		ei_x_encode_tuple_header(&x, 2);
		ei_x_encode_atom(&x, "ping");
		ei_x_encode_pid(&x, &a);
		ei_x_encode_atom(&x, "false");
	}
	ei_x_encode_empty_list(&x);

	names_init(&names);
	decoder_init(&d, "bench@host", 256, &names);
	double dec = run(&x, body, &d, 0);
	double js = run(&x, body, &d, 1);
	printf("decode: %.2f M events/s on one core (goal: 10 M)\n", dec / 1e6);
	printf("decode + JSON: %.2f M events/s on one core\n", js / 1e6);
	decoder_release(&d);
	names_release(&names);
	sbuf_release(&out);
	ei_x_free(&x);
	return 0;
}
