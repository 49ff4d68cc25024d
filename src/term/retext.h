/*
 * retext: names and functions already rendered in one syntax, read back
 * and rendered in the other; and names as people type them.
 *
 * What term.c writes for an atom or a function (term_atom_text,
 * term_mfa_text) is read back here into the atoms it came from.  A text
 * is taken as read only when rendering what was read gives the very same
 * text again, so nothing is ever turned into another name: a text that
 * does not read back (a label of proc_lib:set_label/1, a cut text) is
 * left as it is.
 *
 * A registered name is kept as the atom's own text in Erlang syntax
 * (my_server, Elixir.Shop.Cache: what the decoder writes), and as Elixir
 * writes the atom in Elixir syntax (:my_server, Shop.Cache).
 */
#ifndef BS_RETEXT_H
#define BS_RETEXT_H

#include <stdbool.h>
#include <stddef.h>

#include "sbuf.h"
#include "term.h"

/* The longest atom text read back (255 characters of UTF-8). */
#define RETEXT_ATOM_MAX 1024

/*
 * A name as typed or shown, into the atom it stands for (out, outsz
 * bytes): Shop.Cache and Elixir.Shop.Cache are 'Elixir.Shop.Cache';
 * :my_server, :"my server", 'my server' and my_server are what they say.
 * False when text is no atom literal of either syntax (then out holds
 * text as it is, when it fits).
 */
bool retext_atom_parse(const char *text, char *out, size_t outsz);

/* A registered name as shown in syntax from, as shown in syntax to. */
bool retext_name(struct sbuf *out, enum term_syntax from,
		 enum term_syntax to, const char *text);
/* A function "m:f/N" (or M.f/N) as rendered in from, rendered in to. */
bool retext_mfa(struct sbuf *out, enum term_syntax from,
		enum term_syntax to, const char *text);
/*
 * What the agent says a process is ("m:f/N" of the atoms' own texts, as
 * io_lib:format("~ts:~ts/~b") writes it, or any other label), as shown in
 * syntax to.  False, out untouched, when it is no function.
 */
bool retext_label(struct sbuf *out, enum term_syntax to, const char *label);

#endif
