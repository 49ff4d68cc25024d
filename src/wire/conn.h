/*
 * conn: one distribution connection to a target, as a hidden C node.
 * Owns the socket and the receive buffer.  Every ei call uses a _tmo
 * variant; ticks are answered inside conn_read.
 */
#ifndef BS_CONN_H
#define BS_CONN_H

#include <ei.h>
#include <stdbool.h>

#include "node.h"
#include "sbuf.h"
#include "distopt.h"
#include "sock.h"

struct conn {
	ei_cnode ec;
	int fd;                 /* -1 when closed */
	ei_x_buff rx;           /* last message read, version byte first */
	erlang_msg msg;
	char self_name[600];
	char target[520];
	struct sock_to to;      /* where the socket connects (sock.c) */
	int port;               /* the target's distribution port */
	bool by_port;           /* ... given, not epmd's */
};

enum conn_status {
	CONN_OK = 0,
	CONN_UNREACHABLE,       /* no epmd, unknown node, network */
	CONN_AUTH,              /* handshake refused: cookie */
	CONN_CONFIG,            /* TLS settings that cannot be used */
};

void conn_init(struct conn *c);
/* Connect to target; on failure err holds a one-line message. */
enum conn_status conn_open(struct conn *c, const struct node_name *target,
			   const char *cookie, const struct distopt *tls,
			   unsigned tmo_ms, struct sbuf *err);
/* What to poll for the next message (TLS may hold it already), or -1. */
int conn_poll_fd(const struct conn *c);
void conn_close(struct conn *c);
void conn_release(struct conn *c);

erlang_pid *conn_self(struct conn *c);
int conn_send(struct conn *c, const erlang_pid *to, const ei_x_buff *x,
	      unsigned tmo_ms);

/*
 * Read one message; call only when the socket is readable.  Returns 1 with
 * the message in c->rx, 0 for a tick or a control message, -1 when the
 * connection is gone.
 */
int conn_read(struct conn *c, unsigned tmo_ms);

#endif
