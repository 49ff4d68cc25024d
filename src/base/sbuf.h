/* sbuf: a growable byte buffer, always NUL-terminated.  Owns its memory. */
#ifndef BS_SBUF_H
#define BS_SBUF_H

#include <stddef.h>
#include <string.h>

struct sbuf {
	char *buf;   /* NUL-terminated; NULL until the first append */
	size_t len;
	size_t cap;
};

#define SBUF_INIT { NULL, 0, 0 }

void sbuf_init(struct sbuf *sb);
void sbuf_release(struct sbuf *sb);
void sbuf_reset(struct sbuf *sb);
void sbuf_grow(struct sbuf *sb, size_t extra);
void sbuf_addstr(struct sbuf *sb, const char *s);
void sbuf_addf(struct sbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sbuf_truncate(struct sbuf *sb, size_t len);
/* The contents, "" when empty. */
const char *sbuf_str(const struct sbuf *sb);

/* Inline: they run for every piece of every event. */
static inline void sbuf_add(struct sbuf *sb, const void *data, size_t n)
{
	if (sb->len + n >= sb->cap)
		sbuf_grow(sb, n);
	memcpy(sb->buf + sb->len, data, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

static inline void sbuf_addch(struct sbuf *sb, char c)
{
	if (sb->len + 1 >= sb->cap)
		sbuf_grow(sb, 1);
	sb->buf[sb->len++] = c;
	sb->buf[sb->len] = '\0';
}

#endif
