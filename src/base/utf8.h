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
 * Characters that would steer a terminal or hide what the text says: the
 * C0 and C1 controls, DEL, the line and paragraph separators, and every
 * character a terminal shows as nothing: the format characters (Unicode
 * category Cf: the bidirectional marks, embeddings, overrides and
 * isolates, the zero-width space, joiners and the byte order mark, the
 * soft hyphen, the tags...) and the rest of the default-ignorable ones
 * (fillers, variation selectors, the combining grapheme joiner).
 */
static inline bool utf8_hidden(uint32_t c)
{
	/* sorted, first and last of each; from Unicode 15 */
	static const uint32_t hidden[][2] = {
		{ 0x00AD, 0x00AD }, { 0x034F, 0x034F }, { 0x0600, 0x0605 },
		{ 0x061C, 0x061C }, { 0x06DD, 0x06DD }, { 0x070F, 0x070F },
		{ 0x0890, 0x0891 }, { 0x08E2, 0x08E2 }, { 0x115F, 0x1160 },
		{ 0x17B4, 0x17B5 }, { 0x180B, 0x180F }, { 0x200B, 0x200F },
		{ 0x2028, 0x202E }, { 0x2060, 0x206F }, { 0x3164, 0x3164 },
		{ 0xFE00, 0xFE0F }, { 0xFEFF, 0xFEFF }, { 0xFFA0, 0xFFA0 },
		{ 0xFFF0, 0xFFFB }, { 0x110BD, 0x110BD }, { 0x110CD, 0x110CD },
		{ 0x13430, 0x1343F }, { 0x1BCA0, 0x1BCA3 }, { 0x1D173, 0x1D17A },
		{ 0xE0000, 0xE0FFF },
	};
	if (c < 0xAD)
		return c < 0x20 || (c >= 0x7F && c <= 0x9F);
	size_t lo = 0, hi = sizeof(hidden) / sizeof(hidden[0]);
	while (lo < hi) {   /* the first range that ends at c or after */
		size_t mid = (lo + hi) / 2;
		if (hidden[mid][1] < c)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < sizeof(hidden) / sizeof(hidden[0]) && c >= hidden[lo][0];
}

#endif
