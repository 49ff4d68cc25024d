/*
 * keys: the request table (keys.h) and the key map read from it.  The map
 * is the table itself: a key is looked up by reading the key lists, which
 * costs nothing next to a redraw and leaves no second copy to drift.
 */
#include "keys.h"

#include <curses.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

const struct request_info request_table[REQ__COUNT] = {
	[REQ_NONE] = { "", "", "" },
#define X(id, keys, hint, help) [REQ_##id] = { keys, hint, help },
	REQUESTS(X)
#undef X
};

/* the keys with names; one name may stand for several codes */
static const struct {
	const char *name;
	int code;
} key_names[] = {
	{ "Enter", '\r' }, { "Enter", '\n' }, { "Enter", KEY_ENTER },
	{ "Esc", 27 },
	{ "Space", ' ' },
	{ "C-l", 'L' & 0x1f },
	{ "Up", KEY_UP }, { "Down", KEY_DOWN },
	{ "Left", KEY_LEFT }, { "Right", KEY_RIGHT },
	{ "PgUp", KEY_PPAGE }, { "PgDn", KEY_NPAGE },
	{ "Home", KEY_HOME }, { "End", KEY_END },
};

/* Does the key name s (len bytes) stand for the curses key ch? */
static bool key_is(const char *s, size_t len, int ch)
{
	if (len == 1)
		return (unsigned char)s[0] == ch;
	if (s[0] == 'F' && len <= 3 && strspn(s + 1, "0123456789") >= len - 1) {
		int n = 0;
		for (size_t i = 1; i < len; i++)
			n = n * 10 + (s[i] - '0');
		return n >= 1 && n <= 12 && ch == KEY_F(n);
	}
	for (size_t i = 0; i < sizeof(key_names) / sizeof(key_names[0]); i++)
		if (strlen(key_names[i].name) == len &&
		    !strncmp(key_names[i].name, s, len) && key_names[i].code == ch)
			return true;
	return false;
}

enum request keys_request(int ch)
{
	for (int r = REQ_NONE + 1; r < REQ__COUNT; r++) {
		const char *s = request_table[r].keys;
		for (;;) {
			const char *end = strstr(s, ", ");
			size_t len = end ? (size_t)(end - s) : strlen(s);
			if (key_is(s, len, ch))
				return (enum request)r;
			if (!end)
				break;
			s = end + 2;
		}
	}
	return REQ_NONE;
}

void keys_hint(char *out, size_t outsz)
{
	size_t n = 0;
	out[0] = '\0';
	for (int r = REQ_NONE + 1; r < REQ__COUNT && n < outsz; r++) {
		const struct request_info *q = &request_table[r];
		if (!q->hint[0])
			continue;
		int first = (int)strcspn(q->keys, ",");
		int k = snprintf(out + n, outsz - n, "%s%.*s %s", n ? "  " : "",
				 first, q->keys, q->hint);
		if (k < 0)
			break;
		n += (size_t)k;
	}
}
