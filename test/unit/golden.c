/*
 * Unit tests: decoding and JSON of a fixed pseudo-random corpus, byte for
 * byte against test/unit/decode.golden; then a larger corpus, odd
 * encodings included, decoded both ways (the in-place fast paths, and
 * ei's decoders only), which must agree on every field of every event.
 *
 *   build/test/golden.t            compare (run from the top directory)
 *   build/test/golden.t --write F  write the rendering to F
 *
 * Each event is one line: "<num>.<serial> " and its JSON line; each batch
 * ends with a "# batch" line giving what decode_events returned and the
 * malformed count.  Only a deliberate change of the output format may
 * change the golden file.
 */
#include <ei.h>
#include <stdio.h>

#include "corpus.h"
#include "decode.h"
#include "json.h"
#include "tap.h"
#include "wire.h"

#define GOLDEN "test/unit/decode.golden"

static const size_t payload_limits[] = { 0, 12, 64, 256 };
#define NLIMITS (sizeof(payload_limits) / sizeof(payload_limits[0]))
#define BATCHES 6
#define EVENTS 30

static void line(void *arg, const struct event *ev)
{
	struct sbuf *out = arg;
	sbuf_addf(out, "%u.%u ", ev->pid.num, ev->pid.serial);
	json_event(out, ev, CORPUS_NODE);
}

/* The rendering for one payload limit; false if a batch failed the check. */
static bool render(size_t limit, enum term_syntax syn, struct sbuf *out)
{
	struct corpus c = { 0x9e3779b97f4a7c15ULL ^ limit, 7, false };
	struct names names;
	struct decoder d;
	bool valid = true;

	names_init(&names);
	names_set(&names, (struct bs_pid){ 5, 0, 0 }, "five");
	names_set(&names, (struct bs_pid){ 7, 0, 0 }, "it's seven");
	decoder_init(&d, CORPUS_NODE, limit, &names);
	d.syn = syn;
	for (long b = 0; b < BATCHES; b++) {
		ei_x_buff x;
		struct msg m;
		ei_x_new(&x);
		corpus_batch(&c, &x, b == 0 ? 0 : EVENTS, b);
		if (wire_check(x.buff, (size_t)x.index) < 0 ||
		    decode_msg(x.buff, &m) != WIRE_BATCH) {
			valid = false;
			ei_x_free(&x);
			continue;
		}
		int idx = m.body;
		long n = decode_events(&d, x.buff, &idx, 0, line, out);
		sbuf_addf(out, "# batch %ld: %ld events, %lu malformed, %s\n", b, n,
			  d.malformed, idx == x.index ? "all read" : "not all read");
		ei_x_free(&x);
	}
	decoder_release(&d);
	names_release(&names);
	return valid;
}

/* The first line where a and b differ, for the diagnostics. */
static void first_difference(const char *a, const char *b)
{
	int lineno = 1;
	const char *la = a, *lb = b;
	while (*a && *a == *b) {
		if (*a == '\n') {
			lineno++;
			la = a + 1;
			lb = b + 1;
		}
		a++;
		b++;
	}
	printf("#   line %d differs\n#        got: %.*s\n#   expected: %.*s\n",
	       lineno, (int)strcspn(la, "\n"), la, (int)strcspn(lb, "\n"), lb);
}

/* Every field of an event, strings included, as one line. */
static void dump(void *arg, const struct event *ev)
{
	struct sbuf *out = arg;
	const char *const strs[] = {
		ev->pid_text, ev->name, ev->peer, ev->peer_name, ev->mfa,
		ev->payload, ev->extra,
	};
	sbuf_addf(out, "%d %lld %d %u.%u %lld %ld %ld %ld %ld %d", (int)ev->type,
		  (long long)ev->ts, ev->worker, ev->pid.num, ev->pid.serial,
		  (long long)ev->elapsed_us, ev->heap[0], ev->heap[1], ev->heap[2],
		  ev->heap[3], (int)ev->truncated);
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
		sbuf_addch(out, ' ');
		if (strs[i])
			json_string(out, strs[i]);
		else
			sbuf_addstr(out, "-");
	}
	sbuf_addch(out, '\n');
}

struct side {
	struct names names;
	struct decoder d;
	struct sbuf out;
};

static void side_batch(struct side *s, const ei_x_buff *x, int body)
{
	int idx = body;
	long n = decode_events(&s->d, x->buff, &idx, 3, dump, &s->out);
	sbuf_addf(&s->out, "# %ld %lu %d\n", n, s->d.malformed, idx);
}

/* How a side reads its copy of the batch. */
static void side_read(struct side *s, const ei_x_buff *x)
{
	struct msg m;
	if (wire_check(x->buff, (size_t)x->index) == 0 &&
	    decode_msg(x->buff, &m) == WIRE_BATCH)
		side_batch(s, x, m.body);
	else
		sbuf_addstr(&s->out, "# not a batch\n");
}

/* Output up to the last line's final field (where the body ended, which
 * differs between a list and a binary). */
static size_t comparable(const struct sbuf *sb)
{
	const char *h = strrchr(sbuf_str(sb), '#');
	const char *sp = h ? strrchr(h, ' ') : NULL;
	return sp ? (size_t)(sp - sb->buf) : sb->len;
}

/*
 * Every batch three ways: the reference from the list form, the fast
 * paths from the list form and from the binary the workers send; all
 * three must agree.  0, or the batch that differs + 1.
 */
static long differential(size_t limit, bool odd, enum term_syntax syn,
			 long batches, struct sbuf *why)
{
	struct corpus c = { 0x2545f4914f6cdd1dULL + limit, 5, odd };
	struct side fast, ref, bin;
	long bad = 0;
	struct side *all[3] = { &ref, &fast, &bin };
	for (int i = 0; i < 3; i++) {
		names_init(&all[i]->names);
		names_set(&all[i]->names, (struct bs_pid){ 5, 0, 0 }, "five");
		decoder_init(&all[i]->d, CORPUS_NODE, limit, &all[i]->names);
		all[i]->d.syn = syn;
		sbuf_init(&all[i]->out);
	}
	ref.d.reference = true;
	for (long b = 0; b < batches && !bad; b++) {
		ei_x_buff x, xb;
		ei_x_new(&x);
		ei_x_new(&xb);
		corpus_batch_pair(&c, &x, &xb, 40, b);
		side_read(&ref, &x);
		side_read(&fast, &x);
		side_read(&bin, &xb);
		size_t lr = comparable(&ref.out);
		for (int i = 1; i < 3 && !bad; i++) {
			struct side *o = all[i];
			if (comparable(&o->out) != lr || memcmp(o->out.buf, ref.out.buf, lr)) {
				bad = b + 1;
				first_difference(o->out.buf, ref.out.buf);
				sbuf_addf(why, "%s, payload limit %zu, batch %ld, %s",
					  term_syntax_name(syn), limit, b,
					  o == &bin ? "binary form" : "list form");
			}
		}
		for (int i = 0; i < 3; i++)
			sbuf_reset(&all[i]->out);
		ei_x_free(&x);
		ei_x_free(&xb);
	}
	for (int i = 0; i < 3; i++) {
		decoder_release(&all[i]->d);
		names_release(&all[i]->names);
		sbuf_release(&all[i]->out);
	}
	return bad;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	struct sbuf sb = SBUF_INIT;
	char tmp[4096];
	size_t n;
	if (!fp)
		return NULL;
	while ((n = fread(tmp, 1, sizeof(tmp), fp)) > 0)
		sbuf_add(&sb, tmp, n);
	fclose(fp);
	*len = sb.len;
	return sb.buf;
}

int main(int argc, char **argv)
{
	struct sbuf all = SBUF_INIT;
	bool valid = true;

	for (size_t i = 0; i < NLIMITS; i++) {
		sbuf_addf(&all, "# payload limit %zu\n", payload_limits[i]);
		valid = render(payload_limits[i], TERM_ERLANG, &all) && valid;
	}
	for (size_t i = 0; i < NLIMITS; i += 2) {
		sbuf_addf(&all, "# elixir, payload limit %zu\n", payload_limits[i]);
		valid = render(payload_limits[i], TERM_ELIXIR, &all) && valid;
	}
	if (argc == 3 && !strcmp(argv[1], "--write")) {
		FILE *fp = fopen(argv[2], "wb");
		if (!fp || fwrite(all.buf, 1, all.len, fp) != all.len || fclose(fp)) {
			fprintf(stderr, "golden: cannot write \"%s\"\n", argv[2]);
			return 1;
		}
		sbuf_release(&all);
		return valid ? 0 : 1;
	}

	plan(7);
	ok(valid, "every corpus batch passes the wire check");
	size_t len = 0;
	char *want = slurp(GOLDEN, &len);
	ok(want != NULL, "the golden file is there (run from the top directory)");
	if (!ok(want && len == all.len && !memcmp(want, all.buf, len),
		"decoding and JSON equal the golden rendering") && want)
		first_difference(all.buf, want);
	free(want);
	sbuf_release(&all);

	struct sbuf why = SBUF_INIT;
	long bad = 0;
	for (size_t i = 0; i < NLIMITS && !bad; i++)
		bad = differential(payload_limits[i], false, TERM_ERLANG, 400, &why);
	if (!ok(!bad, "fast paths, from lists and from binaries, equal the reference on 64000 events"))
		printf("#   %s\n", why.buf);
	sbuf_reset(&why);
	bad = 0;
	for (size_t i = 0; i < NLIMITS && !bad; i++)
		bad = differential(payload_limits[i], true, TERM_ERLANG, 400, &why);
	if (!ok(!bad, "... and on 64000 with odd encodings"))
		printf("#   %s\n", why.buf);
	for (int odd = 0; odd < 2; odd++) {
		sbuf_reset(&why);
		bad = 0;
		for (size_t i = 0; i < NLIMITS && !bad; i++)
			bad = differential(payload_limits[i], odd, TERM_ELIXIR, 400, &why);
		if (!ok(!bad, odd ? "... in Elixir syntax with odd encodings" :
			"... and in Elixir syntax"))
			printf("#   %s\n", why.buf);
	}
	sbuf_release(&why);
	return done_testing();
}
