/*
 * node: node names, cookies and epmd, everything needed before a
 * distribution connection is attempted.  No ei here.
 */
#ifndef BS_NODE_H
#define BS_NODE_H

#include <stdbool.h>
#include <stddef.h>

#include "sbuf.h"

struct node_name {
	char alive[256];    /* part before '@' */
	char host[256];     /* part after '@' */
	char full[520];     /* alive@host */
	bool longnames;
	int port;           /* the distribution's port; 0: ask epmd */
};

/*
 * Parse NODE as given on the command line: "name" (this host), "name@host",
 * or a long name (host with a dot, or longnames set).  0, or -1 with a
 * message in err.
 */
int node_name_parse(const char *arg, bool longnames, struct node_name *out,
		    struct sbuf *err);

/* This machine's host name in the form a short or long name needs. */
int node_this_host(bool longnames, char *out, size_t outsz);

/*
 * Find the cookie the way erl does: file, else literal, else
 * ~/.erlang.cookie, else $XDG_CONFIG_HOME/erlang/.erlang.cookie.
 * 0, or -1 with err.  warn gets a line when the file is readable by others;
 * from (may be NULL) says where the cookie was found, for messages.
 */
int cookie_load(const char *file, const char *literal, char *out, size_t outsz,
		struct sbuf *err, struct sbuf *warn, struct sbuf *from);

/*
 * Ask epmd on host which node names it knows.  Returns the count and sets
 * *names to a NULL-terminated array (free with node_names_free), or -1 with
 * a message in err.
 */
int epmd_names(const char *host, char ***names, struct sbuf *err);
void node_names_free(char **names);

/*
 * The port epmd on host has for the node called alive: 0 with *port, or
 * -1 with errno (ENOENT: epmd does not know the name) and *port -1.
 */
int node_port(const char *host, const char *alive, int *port);

/* Does anything accept connections at port on host?  0, or -1 with errno.
 * For telling a refused cookie from a closed door. */
int node_accepts(const char *host, int port);

#endif
