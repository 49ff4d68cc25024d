/*
 * term: render an ei-encoded term as text, bounded in size, in one of two
 * syntaxes: Erlang, as io_lib:format("~0tp", [T]) prints it, or Elixir, as
 * inspect(T, limit: :infinity, printable_limit: :infinity) prints it.
 *
 * The renderer never trusts its input: it always leaves *index just past the
 * whole term (or reports the term malformed), never emits more than the limit,
 * and stops recursing at a fixed depth.  Output is UTF-8.  The markers the
 * tracer NIF leaves where it cut a term ('...' and '#Fun') print as "..."
 * and as "#Fun" (Erlang) or "#Function<...>" (Elixir).
 */
#ifndef BS_TERM_H
#define BS_TERM_H

#include <stdbool.h>
#include <stddef.h>

#include "sbuf.h"

enum term_syntax {
	TERM_ERLANG,
	TERM_ELIXIR,
};

/* "erlang" or "elixir" */
const char *term_syntax_name(enum term_syntax syn);

/*
 * Append the text of the term at buf[*index] to out, at most max bytes
 * (0: no limit).  local_node names the node whose pids print as <0.N.S>.
 * Returns 0 and advances *index past the term, or -1 if it is malformed.
 * *cut (may be NULL) is set when the text was shortened.
 */
int term_render(const char *buf, int *index, const char *local_node,
		struct sbuf *out, size_t max, bool *cut);
/* The same in the syntax given. */
int term_render_in(enum term_syntax syn, const char *buf, int *index,
		   const char *local_node, struct sbuf *out, size_t max,
		   bool *cut);

/*
 * The same through ei's decoders only, never reading in place: the
 * reference that term_render is tested against.
 */
int term_render_reference(const char *buf, int *index, const char *local_node,
			  struct sbuf *out, size_t max, bool *cut);
int term_render_reference_in(enum term_syntax syn, const char *buf, int *index,
			     const char *local_node, struct sbuf *out,
			     size_t max, bool *cut);

/*
 * The same for a list of arguments (of a call or a spawn): always written
 * as a list, each argument on its own, so [9] is "[9]", never "\"\\t\"";
 * with reference, through ei's decoders only.
 */
int term_render_args(enum term_syntax syn, const char *buf, int *index,
		     const char *local_node, struct sbuf *out, size_t max,
		     bool *cut, bool reference);

/*
 * A call as the code reads it, from "m:f/N" and its arguments as
 * term_render_args writes them: "m:f(9, x)", or "m:f(9, ..." when the
 * arguments were cut; "m:f/N" itself when there are none to show.
 */
void term_call_text(struct sbuf *out, const char *mfa, const char *args,
		    bool cut);

/* Append a pid as the target's shell prints it. */
void term_pid_text(struct sbuf *out, const char *local_node, const char *node,
		   unsigned num, unsigned serial);
/* Append "<0.N.S>", a pid of the local node. */
void term_pid_text_local(struct sbuf *out, unsigned num, unsigned serial);

/* Does this atom (UTF-8) print without quotes in Erlang? */
bool term_atom_is_bare(const char *name);

/* Append an atom (UTF-8) as a literal: foo, 'it''s' / :foo, Shop.Cache. */
void term_atom_text(struct sbuf *out, enum term_syntax syn, const char *name);

/*
 * Append a function: m:f/N (Erlang) or M.f/N, :m.f/N (Elixir); arity < 0
 * leaves "/N" out.
 */
void term_mfa_text(struct sbuf *out, enum term_syntax syn, const char *mod,
		   const char *fun, long arity);


#endif
