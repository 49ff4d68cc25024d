/*
 * fuzz_decode: libFuzzer target for everything that arrives from a target:
 * the validator first, then, for what it lets through, message shapes,
 * event batches, counts and samples, rendered and written as JSON.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "json.h"
#include "wire.h"

static struct sbuf out;

static void on_event(void *arg, const struct event *ev)
{
	(void)arg;
	json_event(&out, ev, "fuzz@host");
}

static void on_count(void *arg, struct bs_pid pid, const char *text,
		     unsigned long s, unsigned long r)
{
	(void)arg; (void)pid; (void)s; (void)r;
	json_string(&out, text);
}

static void on_info(void *arg, struct bs_pid pid, const char *text,
		    const char *name, const char *current, long mq)
{
	(void)arg; (void)pid; (void)mq;
	json_string(&out, text);
	if (name)
		json_string(&out, name);
	if (current)
		json_string(&out, current);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* ei reads what it is given: give it a private copy of exactly size */
	char *buf = malloc(size ? size : 1);
	struct names names;
	struct decoder d;
	struct msg m;

	memcpy(buf, data, size);
	if (wire_check(buf, size) == 0) {
		names_init(&names);
		decoder_init(&d, "fuzz@host", 64, &names);
		int idx;
		switch (decode_msg(buf, &m)) {
		case WIRE_BATCH:
			idx = m.body;
			decode_events(&d, buf, &idx, 0, on_event, NULL);
			break;
		case WIRE_COUNTS:
			idx = m.body;
			decode_counts(&d, buf, &idx, on_count, NULL);
			break;
		case WIRE_INFO:
			idx = m.body;
			decode_info(&d, buf, &idx, on_info, NULL);
			break;
		default:
			break;
		}
		decoder_release(&d);
		names_release(&names);
	}
	sbuf_reset(&out);
	free(buf);
	return 0;
}
