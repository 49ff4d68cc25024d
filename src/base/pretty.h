/*
 * pretty: a term's text (as term.c renders it, Erlang or Elixir syntax)
 * laid out on lines of a given width, the way ~p does: a group that fits
 * stays on one line, one that does not has one element per line, aligned
 * after its opening bracket; a group of plain elements (numbers, atoms)
 * is filled instead.  Text that is longer than a line (a long string) is
 * cut across lines, so that nothing is ever lost, but for groups nested
 * deeper than PRETTY_MAX_DEPTH.  The text may have been cut: groups left
 * open are fine.  Time and memory are linear in the text.
 */
#ifndef BS_PRETTY_H
#define BS_PRETTY_H

#include <stdbool.h>

#include "sbuf.h"

/* groups nested deeper than this are written "...", as term.c cuts a term */
#define PRETTY_MAX_DEPTH 64

/* Append the lines of text, each ended by '\n', at most width columns
 * (UTF-8 sequences count as one) unless width is below 8.  True when
 * groups deeper than PRETTY_MAX_DEPTH were left out. */
bool pretty_term(const char *text, int width, struct sbuf *out);

#endif
