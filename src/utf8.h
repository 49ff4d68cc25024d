/*
 * utf8: the one reading of UTF-8 text that came from outside, for the
 * escaper, the JSON writer and the term renderer.
 */
#ifndef BS_UTF8_H
#define BS_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The character at s (n > 0 bytes left): its length in bytes and its code
 * point in *cp, or 0 when s[0] starts no well-formed character (a stray
 * continuation byte, an overlong form, a surrogate, past U+10FFFF, or a
 * sequence cut by the end).
 */
static inline int utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
	int len;
	uint32_t c = s[0], min;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xC2 && c <= 0xDF) { len = 2; c &= 0x1F; min = 0x80; }
	else if (c >= 0xE0 && c <= 0xEF) { len = 3; c &= 0x0F; min = 0x800; }
	else if (c >= 0xF0 && c <= 0xF4) { len = 4; c &= 0x07; min = 0x10000; }
	else return 0;
	if ((size_t)len > n)
		return 0;
	for (int i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3F);
	}
	if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	*cp = c;
	return len;
}

/*
 * Characters that would steer a terminal or hide the order of the text:
 * the C0 and C1 controls, DEL, the line and paragraph separators, the
 * bidirectional marks, embeddings, overrides and isolates.
 */
static inline bool utf8_hidden(uint32_t c)
{
	return c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0x061C ||
		c == 0x200E || c == 0x200F || (c >= 0x2028 && c <= 0x202E) ||
		(c >= 0x2066 && c <= 0x2069);
}

#endif
