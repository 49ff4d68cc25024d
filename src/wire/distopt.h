/*
 * distopt: the TLS settings of a connection to a node whose distribution
 * runs over TLS (-proto_dist inet_tls), read from the file the node's own
 * -ssl_dist_optfile names (Erlang terms: [{server, Opts}, {client, Opts}])
 * or given one by one.  No OpenSSL here: tls.c uses what this gathers.
 */
#ifndef BS_DISTOPT_H
#define BS_DISTOPT_H

#include <stdbool.h>

#include "sbuf.h"

#define DISTOPT_PATH 1024

struct distopt {
	bool on;                      /* TLS asked for */
	char cert[DISTOPT_PATH];      /* certfile: ours, shown to the node */
	char key[DISTOPT_PATH];       /* keyfile; empty: in certfile */
	char ca[DISTOPT_PATH];        /* cacertfile: what the node's is signed by */
	char password[256];           /* the key's, if it is encrypted */
	bool verify_none;             /* {verify, verify_none}: not checked */
	bool no_host_check;           /* {server_name_indication, disable} */
};

/*
 * Read an -ssl_dist_optfile: the client options (beamscope connects),
 * else the server's.  0, or -1 with a one-line message in err; options
 * that do not concern a client's certificate checks are skipped.
 */
int distopt_read_file(const char *path, struct distopt *o, struct sbuf *err);

/* The same from the file's text (for tests). */
int distopt_parse(const char *text, const char *path, struct distopt *o,
		  struct sbuf *err);

#endif
