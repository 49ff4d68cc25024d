/*
 * fuzz_decode: libFuzzer target for everything that arrives from a target:
 * the validator first, then, for what it lets through, message shapes,
 * event batches, counts and samples, rendered and written as JSON.  Event
 * batches are decoded twice, with the in-place fast paths and with ei's
 * decoders only; any difference in the JSON or the counts aborts.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "json.h"
#include "nodestat.h"
#include "wire.h"

static struct sbuf out, ref_out;

static void on_event(void *arg, const struct event *ev)
{
	struct sbuf *o = arg;
	json_event(o, ev, "fuzz@host");
	sbuf_addf(o, "%u.%u %d\n", ev->pid.num, ev->pid.serial, ev->worker);
}

/* The batch at body, the fast way and the reference way: equal or abort. */
static void both_ways(const char *buf, int body)
{
	struct names names, ref_names;
	struct decoder d, ref;
	names_init(&names);
	names_init(&ref_names);
	decoder_init(&d, "fuzz@host", 64, &names);
	decoder_init(&ref, "fuzz@host", 64, &ref_names);
	ref.reference = true;
	int idx = body, ref_idx = body;
	long n = decode_events(&d, buf, &idx, 0, on_event, &out);
	long ref_n = decode_events(&ref, buf, &ref_idx, 0, on_event, &ref_out);
	if (n != ref_n || idx != ref_idx || d.malformed != ref.malformed ||
	    out.len != ref_out.len || memcmp(sbuf_str(&out), sbuf_str(&ref_out), out.len))
		abort();
	decoder_release(&d);
	decoder_release(&ref);
	names_release(&names);
	names_release(&ref_names);
	sbuf_reset(&ref_out);
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

static void on_sizes(void *arg, struct bs_pid pid, struct psize memory,
		     long reductions, struct psize heap)
{
	(void)arg; (void)pid;
	sbuf_addf(&out, "%s%ld %ld %s%ld", memory.at_least ? ">" : "",
		  memory.bytes, reductions, heap.at_least ? ">" : "", heap.bytes);
}

static void on_relations(void *arg, const struct relations *r)
{
	(void)arg;
	json_string(&out, r->link_list);
	json_string(&out, r->monitor_list);
	json_string(&out, r->ancestors);
}

static void on_prof(void *arg, const struct prof_sample *s)
{
	(void)arg;
	json_string(&out, s->pid_text);
	json_string(&out, s->status);
	for (int i = 0; i < s->nframes; i++)
		json_string(&out, s->frames[i]);
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
			both_ways(buf, m.body);
			break;
		case WIRE_COUNTS:
			idx = m.body;
			decode_counts(&d, buf, &idx, on_count, NULL);
			break;
		case WIRE_INFO:
			idx = m.body;
			decode_info_sizes(&d, buf, &idx, on_info, on_sizes, NULL);
			break;
		case WIRE_RELATIONS:
			idx = m.body;
			decode_relations(&d, buf, &idx, on_relations, NULL);
			break;
		case WIRE_NODE: {
			static struct node_sample ns;
			idx = m.body;
			nodestat_decode(buf, &idx, &ns);
			break;
		}
		case WIRE_PROFILE: {
			struct prof_stats st;
			idx = m.body;
			/* in Elixir too: frames go through retext */
			d.syn = size % 2 ? TERM_ELIXIR : TERM_ERLANG;
			decode_profile(&d, buf, &idx, &st, on_prof, NULL);
			break;
		}
		case WIRE_ALARMS:
			idx = m.body;
			d.syn = size % 2 ? TERM_ELIXIR : TERM_ERLANG;
			decode_alarms(&d, buf, &idx, on_event, &out);
			break;
		case WIRE_ALARM_STATE: {
			struct alarm_state as;
			idx = m.body;
			decode_alarm_state(&d, buf, &idx, &as);
			break;
		}
		case WIRE_CALLS: {
			static struct prof_calls pc;
			idx = m.body;
			d.syn = size % 2 ? TERM_ELIXIR : TERM_ERLANG;
			if (decode_calls(&d, buf, &idx, &pc) == 0)
				for (int i = 0; i < pc.n; i++)
					sbuf_addstr(&out, pc.rows[i].name);
			break;
		}
		case WIRE_CALLS_STATE: {
			struct calls_state cs;
			idx = m.body;
			decode_calls_state(buf, &idx, &cs);
			break;
		}
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
