/* esc: see esc.h. */
#include "esc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>

/* The code point of the valid UTF-8 sequence at s (at most n bytes, s[0]
 * >= 0x80) and its length, or 0. */
static int utf8_char(const unsigned char *s, size_t n, uint32_t *cp)
{
	int len;
	uint32_t c;
	if (s[0] >= 0xC2 && s[0] <= 0xDF) { len = 2; c = s[0] & 0x1F; }
	else if (s[0] >= 0xE0 && s[0] <= 0xEF) { len = 3; c = s[0] & 0x0F; }
	else if (s[0] >= 0xF0 && s[0] <= 0xF4) { len = 4; c = s[0] & 0x07; }
	else return 0;
	if ((size_t)len > n)
		return 0;
	for (int i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3F);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10FFFF)) ||
	    (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	*cp = c;
	return len;
}

/* Characters that steer a terminal or hide the order of the text. */
static bool hostile(uint32_t c)
{
	return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0x061C ||
		c == 0x200E || c == 0x200F || (c >= 0x2028 && c <= 0x202E) ||
		(c >= 0x2066 && c <= 0x2069);
}

size_t esc_char(const char *str, size_t n, bool *shown)
{
	const unsigned char *s = (const unsigned char *)str;
	uint32_t c = s[0];
	int len = 1;
	if (c >= 0x80 && !(len = utf8_char(s, n, &c))) {
		*shown = false;
		return 1;
	}
	*shown = !hostile(c);
	return (size_t)len;
}

bool esc_needed(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	for (size_t i = 0; i < n; ) {
		uint32_t c = s[i];
		int len = 1;
		if (c >= 0x80 && !(len = utf8_char(s + i, n - i, &c)))
			return true;
		if (hostile(c))
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
			if (c >= 0x80 && !(len = utf8_char(s + plain, n - plain, &c)))
				break;
			if (hostile(c))
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
	if (!out->buf)
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
