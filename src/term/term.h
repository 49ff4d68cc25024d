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

/*
 * What one target's own printers do that releases do differently, read
 * from the target when its agent starts (nif/beamscope_printer.erl,
 * printer/0, which tries each printer on a known term); all zero prints
 * as OTP 25 and Elixir 1.14 do.
 */
enum {
	/* ~tp reads a binary as UTF-8 from its start: a character there
	 * that is not printable makes it bytes; only a byte that is no UTF-8
	 * sends it to the Latin-1 test (OTP 29; before, a binary that was
	 * not UTF-8 throughout was judged as Latin-1 at once) */
	TD_BIN_UTF8_LEAD = 1u << 0,
	/* io_lib walks a map of more than 32 pairs in the order it was
	 * encoded (every release seen walks it the other way round) */
	TD_ERL_MAP_AS_SENT = 1u << 1,
	/* Elixir walks a map of more than 32 pairs the other way round from
	 * the order it was encoded (OTP 29) */
	TD_EX_MAP_BACK = 1u << 2,
	/* Elixir writes a list of printable characters ~c"abc", not 'abc'
	 * (Elixir 1.15) */
	TD_EX_SIGIL_C = 1u << 3,
	/* the target says which modules are structs and their fields
	 * (structs below): a map with __struct__ is a struct only when its
	 * keys are its module's fields, written in the order defined */
	TD_EX_STRUCTS = 1u << 4,
	/* Elixir writes characters that show as nothing or as a blank
	 * (U+00A0, U+2000-U+200F, ...) as \uXXXX in strings and atoms
	 * (Elixir 1.18; before, U+FEFF only) */
	TD_EX_ESC_INVISIBLE = 1u << 5,
};

struct structs;

struct term_dialect {
	unsigned flags;             /* TD_* */
	struct structs *structs;    /* with TD_EX_STRUCTS; modules met and
				     * not known are noted there, to ask */
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

/* The same as one target's printers print (dia may be NULL). */
int term_render_dia(enum term_syntax syn, const struct term_dialect *dia,
		    const char *buf, int *index, const char *local_node,
		    struct sbuf *out, size_t max, bool *cut, bool reference);

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
int term_render_args_dia(enum term_syntax syn, const struct term_dialect *dia,
			 const char *buf, int *index, const char *local_node,
			 struct sbuf *out, size_t max, bool *cut,
			 bool reference);

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
