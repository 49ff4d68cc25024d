/*
 * Unit tests: decoding and JSON of a fixed pseudo-random corpus, byte for
 * byte against test/unit/decode.golden.
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
static bool render(size_t limit, struct sbuf *out)
{
	struct corpus c = { 0x9e3779b97f4a7c15ULL ^ limit, 7 };
	struct names names;
	struct decoder d;
	bool valid = true;

	names_init(&names);
	names_set(&names, (struct bs_pid){ 5, 0 }, "five");
	names_set(&names, (struct bs_pid){ 7, 0 }, "it's seven");
	decoder_init(&d, CORPUS_NODE, limit, &names);
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

int main(int argc, char **argv)
{
	struct sbuf all = SBUF_INIT;
	bool valid = true;

	for (size_t i = 0; i < NLIMITS; i++) {
		sbuf_addf(&all, "# payload limit %zu\n", payload_limits[i]);
		valid = render(payload_limits[i], &all) && valid;
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

	plan(3);
	ok(valid, "every corpus batch passes the wire check");
	size_t len = 0;
	char *want = slurp(GOLDEN, &len);
	ok(want != NULL, "the golden file is there (run from the top directory)");
	if (!ok(want && len == all.len && !memcmp(want, all.buf, len),
		"decoding and JSON equal the golden rendering") && want)
		first_difference(all.buf, want);
	free(want);
	sbuf_release(&all);
	return done_testing();
}
