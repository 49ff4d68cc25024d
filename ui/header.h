/*
 * header: the node at a glance above the process table.
 */
#ifndef BS_UI_HEADER_H
#define BS_UI_HEADER_H

#include <stdbool.h>
#include <stddef.h>

#include "app.h"

/* the header above the process table (header.c): the rows it takes of
 * a view of h rows (0: none), drawing them, and turning it on or off
 * (the node's samples with it); ACT_* flags */
int header_lines(struct app *a, int h);
void header_draw(struct app *a, int y, int h);
int app_header(struct app *a, bool on);

#endif
