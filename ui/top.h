/*
 * top: top mode, the table ranked over the whole node.
 */
#ifndef BS_UI_TOP_H
#define BS_UI_TOP_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h"
#include "sbuf.h"

/* Top mode on column col with n rows, or off (col -1); a column it cannot
 * rank by is refused with a message. */
int app_top(struct app *a, int col, int n);
/* The column top mode ranks by (-1: off), and how many rows it keeps. */
int top_col(const struct app *a);
int top_n(const struct app *a);
/* Is the column ranked from the agents' samples (not from the counts)? */
bool top_sampled(int col);
/* what top mode ranks and how far the agents' look has come, for the
 * table's status line */
void top_where(const struct app *a, struct sbuf *sb);
#define TOP_DEFAULT 20
#define TOP_MAX 200

#endif
