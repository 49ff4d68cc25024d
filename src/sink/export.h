/*
 * export: the process table and every captured event as one JSON document.
 * Event objects use exactly the batch-mode schema (json_event).
 */
#ifndef BS_EXPORT_H
#define BS_EXPORT_H

#include "sbuf.h"
#include "store.h"

/* Write to path through outfile (a temporary beside it, renamed at the
 * end; never through a link to a file, never over input_fd's file, or
 * -1).  0, or -1 with a message in err; a failed export leaves no partial
 * file. */
int export_write(const char *path, const struct store *st,
		 const char *const *nodes, int nnodes, int input_fd,
		 struct sbuf *err);
/* The document itself, for tests.  nodes[i] names the node whose pids
 * carry node index i. */
void export_json(struct sbuf *out, const struct store *st,
		 const char *const *nodes, int nnodes);

#endif
