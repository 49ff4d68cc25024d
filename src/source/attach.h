/*
 * attach: everything between a node name and a connection: name and cookie
 * checks, epmd, the handshake.  The agent's bootstrap follows on that
 * connection (agent_attach_begin).
 */
#ifndef BS_ATTACH_H
#define BS_ATTACH_H

#include "conn.h"
#include "opts.h"
#include "sbuf.h"

/* Returns an EXIT_* code; on failure err holds one line for the user.  A
 * warning about the cookie (say, a file others may read) goes to warn. */
int attach_connect(const struct config *cfg, const char *node, struct conn *c,
		   struct sbuf *err, struct sbuf *warn);
/* Does epmd know the node?  EXIT_OK, or an EXIT_* code with one line in
 * err (the names epmd knows, when it was reached). */
int attach_known(const struct config *cfg, const char *node, struct sbuf *err);

#endif
