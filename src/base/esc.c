/* esc: see esc.h. */
#include "esc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>

#include "utf8.h"

size_t esc_char(const char *str, size_t n, bool *shown)
{
	const unsigned char *s = (const unsigned char *)str;
	uint32_t c = s[0];
	int len = 1;
	if (c >= 0x80 && !(len = utf8_decode(s, n, &c))) {
		*shown = false;
		return 1;
	}
	*shown = !utf8_hidden(c);
	return (size_t)len;
}

bool esc_needed(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	for (size_t i = 0; i < n; ) {
		uint32_t c = s[i];
		int len = 1;
		if (c >= 0x80 && !(len = utf8_decode(s + i, n - i, &c)))
			return true;
		if (utf8_hidden(c))
			return true;
		i += (size_t)len;
	}
	return false;
}

void esc_add(struct sbuf *out, const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	while (i < n) {
		size_t plain = i;
		uint32_t c = 0;
		int len = 0;
		/* the run that stands for itself */
		while (plain < n) {
			c = s[plain];
			len = 1;
			if (c >= 0x80 && !(len = utf8_decode(s + plain, n - plain, &c)))
				break;
			if (utf8_hidden(c))
				break;
			plain += (size_t)len;
		}
		sbuf_add(out, s + i, plain - i);
		if (plain == n)
			break;
		if (!len) {   /* not UTF-8: the byte */
			c = s[plain];
			len = 1;
		}
		sbuf_addf(out, "\\x{%X}", (unsigned)c);
		i = plain + (size_t)len;
	}
	if (!out->buf)   /* nothing to add: still a string, "" */
		sbuf_grow(out, 0);
}

void esc_addstr(struct sbuf *out, const char *s)
{
	esc_add(out, s ? s : "", s ? strlen(s) : 0);
}

void esc_print(FILE *f, const char *fmt, ...)
{
	char tmp[2048], *big = NULL;
	const char *text = tmp;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(tmp)) {
		big = malloc((size_t)n + 1);
		if (!big)
			return;
		va_start(ap, fmt);
		vsnprintf(big, (size_t)n + 1, fmt, ap);
		va_end(ap);
		text = big;
	}
	struct sbuf line = SBUF_INIT;
	esc_add(&line, text, (size_t)n);
	sbuf_addch(&line, '\n');
	fputs(line.buf, f);
	fflush(f);
	sbuf_release(&line);
	free(big);
}
