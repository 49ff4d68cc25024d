/*
 * sock: the sockets ei's distribution connection runs on, given to ei as
 * its socket callbacks.  ei's own sockets are TCP over IPv4 to an address
 * it resolves itself; these connect to an address resolved here, IPv4 or
 * IPv6, at the port ei is told (by epmd, or the one given).
 */
#ifndef BS_SOCK_H
#define BS_SOCK_H

#include <ei.h>
#include <sys/socket.h>

/* Where a connection goes: the setup context of an ei_cnode. */
struct sock_to {
	struct sockaddr_storage addr;   /* the port is ei's */
	socklen_t len;
	/* TLS (tls.c): the context, the name the node's certificate must
	 * hold (empty: not checked), what went wrong */
	void *tls;
	char host[256];
	char err[320];
	void *live;                     /* the connection's socket context */
	int ready_fd;                   /* always readable; -1: none */
};

extern ei_socket_callbacks sock_tcp;

/* Where ei's connect goes: to's address, at the port of ei's address. */
void sock_dest(const struct sock_to *to, const void *ei_addr,
	       struct sockaddr_storage *out);

/* Small messages go at once, and a peer that vanished is noticed: 0, or
 * -1 with errno. */
int sock_tune(int fd);

/* What to poll for the connection's next message: its socket, or
 * ready_fd while TLS holds bytes already read. */
int sock_poll_fd(const struct sock_to *to, int fd);

#endif
