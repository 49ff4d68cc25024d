/*
 * attach: everything between a node name and a running agent: name and
 * cookie checks, epmd, the connection, the bootstrap.  Shared by batch mode
 * and the UI.
 */
#ifndef BS_ATTACH_H
#define BS_ATTACH_H

#include "agent.h"
#include "conn.h"
#include "opts.h"
#include "sbuf.h"

/* Returns an EXIT_* code; on failure err holds one line for the user. */
int attach_open(const struct config *cfg, struct conn *c, struct agent *a,
		struct sbuf *err);
/* The same for one of several nodes. */
int attach_open_node(const struct config *cfg, const char *node,
		     struct conn *c, struct agent *a, struct sbuf *err);

#endif
