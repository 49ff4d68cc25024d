/*
 * esc: text that came from outside (epmd, a target, a file, the command
 * line), made safe to show to a person.
 *
 * Whatever passes through here reaches a terminal with nothing that could
 * steer it or hide what it says: C0 controls and DEL, the C1 controls
 * (U+0080 to U+009F), the line and paragraph separators (U+2028, U+2029),
 * every character a terminal shows as nothing (the format characters, as
 * the bidirectional marks, embeddings, overrides and isolates, the
 * zero-width space U+200B, the byte order mark U+FEFF, the soft hyphen
 * U+00AD, and the other default-ignorable ones: utf8_hidden), and bytes
 * that are not UTF-8 are written as \x{HH} (a byte, for a byte that is
 * not UTF-8) or \x{HHHH} (a character).  Everything else is copied as it
 * is, so escaping twice changes nothing.
 *
 * Every message for people is one line and goes through esc_print(), or
 * through session_notice(), which escapes the same way.
 */
#ifndef BS_ESC_H
#define BS_ESC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sbuf.h"

/* Append s (n bytes) to out, escaped. */
void esc_add(struct sbuf *out, const char *s, size_t n);
/* The same for a NUL-terminated s. */
void esc_addstr(struct sbuf *out, const char *s);
/*
 * The character at s (n > 0 bytes left): its length in bytes (1 for a
 * byte that is not UTF-8), and in *shown whether it may reach a terminal
 * as it is.
 */
size_t esc_char(const char *s, size_t n, bool *shown);
/* Does s (n bytes) need escaping? */
bool esc_needed(const char *s, size_t n);
/*
 * Format, escape the result, and write it to f as one line (a newline is
 * added).  Messages for people are written with this.
 */
void esc_print(FILE *f, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
