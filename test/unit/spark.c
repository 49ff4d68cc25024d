/* spark: a series of rates as a line of characters. */
#include <string.h>

#include "spark.h"

#include "tap.h"

static const char *line(const struct spark *s, unsigned width, uint32_t scale,
			bool ascii)
{
	static struct sbuf out = SBUF_INIT;
	sbuf_reset(&out);
	spark_text(&out, s, width, scale, ascii);
	return sbuf_str(&out);
}

int main(void)
{
	struct spark s;
	memset(&s, 0, sizeof s);
	plan(13);

	is(line(&s, 4, 0, true), "    ", "nothing held: blanks");
	spark_push(&s, 0);
	spark_push(&s, 1);
	spark_push(&s, 4);
	spark_push(&s, 8);
	is(line(&s, 4, 0, true), " .~#", "zero blank, others in eighths of the largest");
	is(line(&s, 6, 0, true), "   .~#", "wider than held: padded on the left");
	is(line(&s, 2, 0, true), "~#", "narrower: the newest, scaled to what is drawn");
	is(line(&s, 4, 16, true), " .,~", "a scale given");
	is(line(&s, 4, 0, false), " \xe2\x96\x81\xe2\x96\x84\xe2\x96\x88",
	   "Unicode blocks");
	is(line(&s, 0, 0, false), "", "no room");

	memset(&s, 0, sizeof s);
	for (unsigned long v = 1; v <= 70; v++)
		spark_push(&s, v);
	is_num(s.n, SPARK_MAX, "holds at most SPARK_MAX");
	is_num(spark_at(&s, 0), 70, "the newest");
	is_num(spark_at(&s, SPARK_MAX - 1), 11, "the oldest held");
	is_num(spark_at(&s, SPARK_MAX), 0, "beyond what is held");
	is_num(spark_max(&s, 5), 70, "largest of the newest");
	spark_push(&s, 5000000000UL);
	is_num(spark_at(&s, 0), UINT32_MAX, "a huge rate is held at the top");
	return done_testing();
}
