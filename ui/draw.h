/*
 * draw: curses helpers every view draws with, and the status line.
 */
#ifndef BS_UI_DRAW_H
#define BS_UI_DRAW_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h"

void draw_text(int y, int x, int width, const char *s, int attr);
/* The columns draw_text takes for all of s. */
int draw_width(const char *s);
int draw_attr(struct app *a, int role);
enum { ROLE_HEADER = 1, ROLE_SELECTED, ROLE_STATUS, ROLE_ERROR, ROLE_DIM,
       ROLE_SEND, ROLE_RECEIVE, ROLE_PROC };
void draw_init_colors(struct app *a);
/* Wall-clock text of a target timestamp: HH:MM:SS.mmm (local time). */
void draw_time(char *out, size_t outsz, long long ts_us);

/* the status line (status.c) */
void status_draw(struct app *a, int y);

#endif
