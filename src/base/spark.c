/*
 * spark: rates over time as a line of block characters (see spark.h).
 */
#include <langinfo.h>
#include <string.h>
#include <strings.h>

#include "spark.h"

/* U+2581 .. U+2588, lowest to full */
static const char *const blocks[8] = {
	"\xe2\x96\x81", "\xe2\x96\x82", "\xe2\x96\x83", "\xe2\x96\x84",
	"\xe2\x96\x85", "\xe2\x96\x86", "\xe2\x96\x87", "\xe2\x96\x88",
};
static const char ascii_steps[8] = { '.', ',', '-', '~', '=', '+', '*', '#' };

void spark_push(struct spark *s, unsigned long v)
{
	s->v[s->pos] = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
	s->pos = (uint8_t)((s->pos + 1) % SPARK_MAX);
	if (s->n < SPARK_MAX)
		s->n++;
}

uint32_t spark_at(const struct spark *s, unsigned i)
{
	if (i >= s->n)
		return 0;
	return s->v[(s->pos + SPARK_MAX - 1 - i) % SPARK_MAX];
}

uint32_t spark_max(const struct spark *s, unsigned n)
{
	uint32_t m = 0;
	for (unsigned i = 0; i < n && i < s->n; i++) {
		uint32_t v = spark_at(s, i);
		if (v > m)
			m = v;
	}
	return m;
}

void spark_text(struct sbuf *out, const struct spark *s, unsigned width,
		uint32_t scale, bool ascii)
{
	unsigned shown = width < SPARK_MAX ? width : SPARK_MAX;
	if (!scale)
		scale = spark_max(s, shown);
	for (unsigned col = 0; col < width; col++) {
		/* the rightmost column is the newest sample */
		unsigned age = width - 1 - col;
		uint32_t v = age < shown ? spark_at(s, age) : 0;
		if (!v || age >= s->n || !scale) {
			sbuf_addch(out, ' ');
			continue;
		}
		/* 1..8 eighths, never 0 for a value that is not 0 */
		uint64_t h = ((uint64_t)v * 8 + scale - 1) / scale;
		if (h < 1)
			h = 1;
		if (h > 8)
			h = 8;
		if (ascii)
			sbuf_addch(out, ascii_steps[h - 1]);
		else
			sbuf_addstr(out, blocks[h - 1]);
	}
}

bool spark_utf8_terminal(void)
{
	const char *cs = nl_langinfo(CODESET);
	return cs && (!strcasecmp(cs, "UTF-8") || !strcasecmp(cs, "utf8"));
}
