/*
 * draw: small curses helpers shared by the views.  Every string from the
 * target goes through draw_text, which never lets a control character reach
 * the terminal (no escape injection) and never writes past its width.
 *
 * Widths are display columns, as the terminal will use them: wcwidth() of
 * each character in the locale the view runs in (a wide CJK character
 * takes two, a combining mark none).  A character the locale cannot show
 * is drawn as ?, like the ones esc.c escapes, so what is drawn always
 * takes the columns counted.
 */
#include <curses.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <wchar.h>

#include "app.h"
#include "draw.h"
#include "esc.h"
#include "utf8.h"

/* The character at p (len bytes, as esc_char found it): the columns it
 * takes, and in *shown whether it is drawn as it is (else as ?). */
static int char_cols(const char *p, size_t len, bool *shown)
{
	uint32_t cp;
	int w;
	if (!*shown || len == 1)   /* ASCII that may be shown: one column */
		return 1;
	if (!utf8_decode((const unsigned char *)p, len, &cp) ||
	    (w = wcwidth((wchar_t)cp)) < 0) {
		*shown = false;
		return 1;
	}
	return w;
}

void draw_text(int y, int x, int width, const char *s, int attr)
{
	char buf[1024];
	int n = 0, cols = 0;

	if (width <= 0)
		return;
	if (width > (int)sizeof(buf) - 1)
		width = (int)sizeof(buf) - 1;
	const char *p = s ? s : "";
	size_t left = strlen(p);
	while (left && n < (int)sizeof(buf) - 5) {
		bool shown;
		size_t len = esc_char(p, left, &shown);
		int w = char_cols(p, len, &shown);
		if (cols + w > width)   /* a wide one that does not fit: a space */
			break;
		if (!shown) {   /* controls, bidi marks, bytes that are not UTF-8 */
			buf[n++] = '?';
		} else {
			memcpy(buf + n, p, len);
			n += (int)len;
		}
		cols += w;
		p += len;
		left -= len;
	}
	/* finish a UTF-8 sequence that was started */
	buf[n] = '\0';
	while (n > 0 && ((unsigned char)buf[n - 1] & 0xC0) == 0xC0)
		buf[--n] = '\0';
	while (cols < width && n < (int)sizeof(buf) - 1) {
		buf[n++] = ' ';
		cols++;
	}
	buf[n] = '\0';
	attron(attr);
	mvaddstr(y, x, buf);
	attroff(attr);
}

int draw_width(const char *s)
{
	int cols = 0;
	size_t left = s ? strlen(s) : 0;
	while (left) {
		bool shown;
		size_t len = esc_char(s, left, &shown);
		cols += char_cols(s, len, &shown);
		s += len;
		left -= len;
	}
	return cols;
}

void draw_init_colors(struct app *a)
{
	const char *nc = getenv("NO_COLOR");
	a->color = has_colors() && !(nc && *nc);
	if (!a->color)
		return;
	start_color();
	use_default_colors();
	init_pair(ROLE_HEADER, COLOR_BLACK, COLOR_GREEN);
	init_pair(ROLE_SELECTED, COLOR_BLACK, COLOR_CYAN);
	init_pair(ROLE_STATUS, COLOR_BLACK, COLOR_WHITE);
	init_pair(ROLE_ERROR, COLOR_WHITE, COLOR_RED);
	init_pair(ROLE_DIM, COLOR_BLUE, -1);
	init_pair(ROLE_SEND, COLOR_YELLOW, -1);
	init_pair(ROLE_RECEIVE, COLOR_GREEN, -1);
	init_pair(ROLE_PROC, COLOR_MAGENTA, -1);
}

int draw_attr(struct app *a, int role)
{
	if (a->color)
		return COLOR_PAIR(role) | (role == ROLE_HEADER ? A_BOLD : 0);
	switch (role) {
	case ROLE_HEADER:
	case ROLE_STATUS:
	case ROLE_SELECTED:
		return A_REVERSE;
	case ROLE_ERROR:
		return A_REVERSE | A_BOLD;
	case ROLE_DIM:
		return A_DIM;
	default:
		return A_NORMAL;
	}
}

void draw_time(char *out, size_t outsz, long long ts_us)
{
	time_t secs = (time_t)(ts_us / 1000000);
	struct tm tm;
	localtime_r(&secs, &tm);
	snprintf(out, outsz, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min,
		 tm.tm_sec, (int)((ts_us / 1000) % 1000));
}
