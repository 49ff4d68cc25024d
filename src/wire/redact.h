/*
 * redact: no cookie is ever shown.  Every cookie beamscope connects with
 * is registered here, and so is every cookie the target's auth process is
 * seen handing out; an event whose payload holds one of them, or that
 * auth sends or receives, has its payload replaced by REDACT_TEXT before
 * it reaches any sink (batch output, the view, recordings, exports).
 *
 * A cookie is looked for in the term the payload was rendered from, where
 * the event still has it (struct event's raw): as its bytes (an atom, a
 * string, a binary) and as a list of its byte values, whatever the syntax
 * makes of them.  It is also looked for in the text, as it would be
 * rendered: as it is (a bare atom, or inside a quoted atom, a string or a
 * binary), escaped as a quoted atom or a string, and as byte values
 * (Erlang's "1,2" and Elixir's "1, 2"); a recording has the text only.
 * A payload that was cut is redacted when it holds the first
 * REDACT_PREFIX bytes of one, as the cut may have kept only the start of
 * it (or fewer, at its very end).
 *
 * The registry is process-wide, append-only and safe to add to from the
 * connection threads while the loop reads it.
 */
#ifndef BS_REDACT_H
#define BS_REDACT_H

#include <stdbool.h>
#include <stddef.h>

#include "event.h"

#define REDACT_TEXT "<redacted: it holds a cookie>"
#define REDACT_PREFIX 6

/* Never show s (a cookie) again. */
void redact_add(const char *s);
/* Does text (n bytes) hold a registered cookie?  cut: the text was cut
 * short, a cookie's start is enough. */
bool redact_holds(const char *text, size_t n, bool cut);
/* The same for a term, in the external format (n bytes; none when NULL):
 * a cookie's bytes wherever it holds them.  at_end: the term is the one
 * that was cut, so a cookie's first bytes may end it. */
bool redact_holds_term(const char *term, size_t n, bool cut, bool at_end);
/* Replace what e shows of a cookie; learns the cookies auth hands out.
 * True if e was changed. */
bool redact_event(struct event *e);
/* Forget every cookie (tests). */
void redact_reset(void);

#endif
