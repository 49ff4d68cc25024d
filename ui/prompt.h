/*
 * prompt: the ':' command line and the '/' filter line, on GNU readline in
 * callback mode, so tracing keeps flowing while the user types.  readline
 * never touches the terminal: keys are fed from curses and the line is
 * drawn by us on the last screen line.
 */
#ifndef BS_PROMPT_H
#define BS_PROMPT_H

struct app;

void prompt_init(struct app *a);
void prompt_done(void);
void prompt_open(struct app *a, char kind);
/* Feed one curses key; returns ACT_* flags. */
int prompt_key(struct app *a, int ch);
/* Draw the line being edited on row y and place the cursor. */
void prompt_draw(struct app *a, int y);

#endif
