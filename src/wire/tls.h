/*
 * tls: the distribution over TLS (a node started with -proto_dist
 * inet_tls), as ei socket callbacks on OpenSSL.  The node's certificate
 * is checked against the CA given and the node's host name unless told
 * otherwise; ours is shown when the node asks for one.  Never plain TCP
 * instead.
 */
#ifndef BS_TLS_H
#define BS_TLS_H

#include <stdbool.h>

#include "distopt.h"
#include "sbuf.h"
#include "sock.h"

extern ei_socket_callbacks sock_tls;

/* The TLS context of a connection to host from o, in to: 0, or -1 with a
 * one-line message in err (a file that cannot be read, a key that is not
 * the certificate's, no CA). */
int tls_setup(struct sock_to *to, const struct distopt *o, const char *host,
	      struct sbuf *err);
void tls_release(struct sock_to *to);

/* Does TLS hold bytes of the connection (a sock_to's live) already read? */
bool tls_pending(void *live);

/* Does something at host:port answer a TLS handshake within ms?  For
 * telling a node that wants TLS from one that refused a cookie. */
bool tls_answers(const char *host, int port, int ms);

#endif
