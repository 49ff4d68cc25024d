/* sock: TCP over IPv4 or IPv6 for ei's distribution connection. */
#include "sock.h"
#include "tls.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

/* A connection: its socket, and where it goes. */
struct sock_ctx {
	int fd;
	struct sock_to *to;
};

void sock_dest(const struct sock_to *to, const void *ei_addr,
	       struct sockaddr_storage *out)
{
	in_port_t port = ((const struct sockaddr_in *)ei_addr)->sin_port;
	*out = to->addr;
	if (out->ss_family == AF_INET6)
		((struct sockaddr_in6 *)out)->sin6_port = port;
	else
		((struct sockaddr_in *)out)->sin_port = port;
}

int sock_tune(int fd)
{
	int one = 1;
	return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0 ||
		setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one)) < 0 ?
		-1 : 0;
}

static int fail(void)
{
	return errno ? errno : EIO;
}

static int s_socket(void **ctx, void *setup)
{
	struct sock_to *to = setup;
	if (!to)
		return EINVAL;
	struct sock_ctx *s = malloc(sizeof(*s));
	if (!s)
		return ENOMEM;
	s->fd = socket(to->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0) {
		int e = fail();
		free(s);
		return e;
	}
	s->to = to;
	*ctx = s;
	return 0;
}

static int s_close(void *ctx)
{
	struct sock_ctx *s = ctx;
	int r = close(s->fd) < 0 ? fail() : 0;
	free(s);
	return r;
}

/* beamscope connects; it never listens */
static int s_listen(void *ctx, void *addr, int *len, int backlog)
{
	(void)ctx, (void)addr, (void)len, (void)backlog;
	return EOPNOTSUPP;
}

static int s_accept(void **ctx, void *addr, int *len, unsigned tmo)
{
	(void)ctx, (void)addr, (void)len, (void)tmo;
	return EOPNOTSUPP;
}

/* ei gives an IPv4 address of its own making: of it, only the port is
 * the target's; the address is the one resolved for the connection.  ei
 * has made the socket non-blocking and waits for it (EINPROGRESS). */
static int s_connect(void *ctx, void *addr, int len, unsigned tmo)
{
	struct sock_ctx *s = ctx;
	(void)tmo;
	if (len < (int)sizeof(struct sockaddr_in))
		return EINVAL;
	struct sockaddr_storage to;
	sock_dest(s->to, addr, &to);
	return connect(s->fd, (struct sockaddr *)&to, s->to->len) < 0 ? fail() : 0;
}

static int s_writev(void *ctx, const void *iov, int iovcnt, ssize_t *len,
		    unsigned tmo)
{
	struct sock_ctx *s = ctx;
	(void)tmo;
	ssize_t n = writev(s->fd, iov, iovcnt);
	if (n < 0)
		return fail();
	*len = n;
	return 0;
}

static int s_write(void *ctx, const char *buf, ssize_t *len, unsigned tmo)
{
	struct sock_ctx *s = ctx;
	(void)tmo;
	ssize_t n = write(s->fd, buf, (size_t)*len);
	if (n < 0)
		return fail();
	*len = n;
	return 0;
}

static int s_read(void *ctx, char *buf, ssize_t *len, unsigned tmo)
{
	struct sock_ctx *s = ctx;
	(void)tmo;
	ssize_t n = read(s->fd, buf, (size_t)*len);
	if (n < 0)
		return fail();
	*len = n;
	return 0;
}

/* the handshake's messages have a 2-byte length, as over TCP */
static int s_header_size(void *ctx, int *sz)
{
	(void)ctx;
	*sz = 2;
	return 0;
}

static int s_handshake_done(void *ctx)
{
	return sock_tune(((struct sock_ctx *)ctx)->fd) < 0 ? fail() : 0;
}

static int s_get_fd(void *ctx, int *fd)
{
	*fd = ((struct sock_ctx *)ctx)->fd;
	return 0;
}

/* no EI_SCLBK_FLG_FULL_IMPL: ei waits on the descriptor for timeouts */
ei_socket_callbacks sock_tcp = {
	.flags = 0,
	.socket = s_socket,
	.close = s_close,
	.listen = s_listen,
	.EI_ACCEPT_NAME = s_accept,
	.connect = s_connect,
	.writev = s_writev,
	.write = s_write,
	.read = s_read,
	.handshake_packet_header_size = s_header_size,
	.connect_handshake_complete = s_handshake_done,
	.accept_handshake_complete = s_handshake_done,
	.get_fd = s_get_fd,
};

int sock_poll_fd(const struct sock_to *to, int fd)
{
	return to->tls && to->live && tls_pending(to->live) ? to->ready_fd : fd;
}
