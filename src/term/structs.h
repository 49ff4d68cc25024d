/*
 * structs: what a target's Elixir knows of its struct modules, as its
 * agent said: each module's fields in the order its defstruct gave them
 * (Elixir's inspect prints a struct's fields in that order, never in the
 * order the map holds them), or that the module is no struct there, or
 * that the target could not say (the module not loaded).  Keyed by the
 * module's atom text (UTF-8, "Elixir.Shop.Order").  Owns its strings;
 * bounded (STRUCTS_MAX modules, STRUCTS_FIELDS_MAX fields each).
 */
#ifndef BS_STRUCTS_H
#define BS_STRUCTS_H

#include <stdbool.h>
#include <stddef.h>

#include "hmap.h"

#define STRUCTS_MAX 8192
#define STRUCTS_FIELDS_MAX 512

enum struct_kind {
	STRUCT_UNKNOWN,   /* never said, or the target could not say */
	STRUCT_NONE,      /* the module is loaded and defines no struct */
	STRUCT_FIELDS,    /* a struct: nfields fields, in order */
};

struct struct_def {
	enum struct_kind kind;
	int nfields;
	char **fields;    /* UTF-8 atom texts; __exception__ among them for
			   * an exception, as the target lists it */
	size_t *lens;
};

struct structs {
	/* hash of a module's name -> a chain of struct structs_slot *
	 * (made at the first use; owned) */
	struct hmap map;
	size_t used;
	/* modules met that the target was not asked about yet */
	char **ask;
	int nask;
};

void structs_init(struct structs *t);
void structs_release(struct structs *t);

/*
 * What the target said of mod: its fields (nfields >= 0, fields[i] of
 * lens[i] bytes) or, with nfields < 0, that it defines no struct.  A
 * module said again is replaced.  -1 when the table is full or the
 * fields too many (nothing kept).
 */
int structs_set(struct structs *t, const char *mod, size_t len,
		const char *const *fields, const size_t *lens, int nfields);

/* What is known of mod: NULL when nothing (never said, never met). */
const struct struct_def *structs_get(const struct structs *t, const char *mod,
				     size_t len);

/*
 * mod was met in a term and nothing is known of it: it is kept to be
 * asked about once (structs_take_asks), then known as STRUCT_UNKNOWN
 * until the answer replaces that.  Nothing when it is known or asked.
 */
void structs_met(struct structs *t, const char *mod, size_t len);

/*
 * The modules met since the last call, at most max, into mods (owned by
 * the caller now: free each); their number.
 */
int structs_take_asks(struct structs *t, char **mods, int max);

#endif
