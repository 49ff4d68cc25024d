/* pidtext: parse and format "<0.N.S>" and "<name@host.N.S>". */
#include "pidtext.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/*
 * The decimal field that ends just before end, read backwards as far as
 * start: its value in *v and its first byte in *first; false unless it is
 * 1 to 10 digits, without a leading zero, that fit in 32 bits.
 */
static bool field_before(const char *start, const char *end, uint32_t *v,
			 const char **first)
{
	const char *p = end;
	while (p > start && p[-1] >= '0' && p[-1] <= '9')
		p--;
	size_t n = (size_t)(end - p);
	if (n == 0 || n > 10 || (n > 1 && *p == '0'))
		return false;
	uint64_t x = 0;
	for (const char *q = p; q < end; q++)
		x = x * 10 + (uint64_t)(*q - '0');
	if (x > UINT32_MAX)
		return false;
	*v = (uint32_t)x;
	*first = p;
	return true;
}

static bool node_ok(const char *s, size_t n)
{
	bool at = false;
	if (n == 0 || n > PIDTEXT_NODE_MAX)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c <= ' ' || c == '<' || c == '>' || c == 0x7f)
			return false;
		if (c == '@')
			at = true;
	}
	return at;
}

int pidtext_parse_n(const char *s, size_t n, struct pidtext *out)
{
	uint32_t num, serial;
	const char *p;
	/* "<0.0.0>" is the shortest */
	if (!s || n < 7 || s[0] != '<' || s[n - 1] != '>')
		return -1;
	const char *open = s + 1;
	if (!field_before(open, s + n - 1, &serial, &p) || p - 1 <= open ||
	    p[-1] != '.')
		return -1;
	if (!field_before(open, p - 1, &num, &p) || p - 1 <= open || p[-1] != '.')
		return -1;
	size_t node_len = (size_t)(p - 1 - open);
	if (node_len == 1 && *open == '0')
		node_len = 0;
	else if (!node_ok(open, node_len))
		return -1;
	out->node = node_len ? open : "";
	out->node_len = node_len;
	out->num = num;
	out->serial = serial;
	return 0;
}

int pidtext_parse(const char *s, struct pidtext *out)
{
	return s ? pidtext_parse_n(s, strlen(s), out) : -1;
}

size_t pidtext_format(char *buf, size_t size, const char *node, uint32_t num,
		      uint32_t serial)
{
	int n = snprintf(buf, size, "<%s.%" PRIu32 ".%" PRIu32 ">",
			 node && *node ? node : "0", num, serial);
	return n < 0 ? 0 : (size_t)n;
}

void pidtext_add(struct sbuf *out, const char *node, uint32_t num,
		 uint32_t serial)
{
	size_t need = (node ? strlen(node) : 1) + 2 * 10 + 5;
	sbuf_grow(out, need);
	out->len += pidtext_format(out->buf + out->len, out->cap - out->len, node,
				   num, serial);
}
