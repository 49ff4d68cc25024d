/* conn: ei connection set-up, sending, and reading one message at a time. */
#include "conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "redact.h"
#include "selfname.h"
#include "tls.h"

/* a node that answers TLS answers at once */
#define TLS_PROBE_MS 1500

void conn_init(struct conn *c)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->to.ready_fd = -1;
	ei_x_new(&c->rx);
}

/* connections are opened from several threads at once */
static pthread_once_t ei_ready = PTHREAD_ONCE_INIT;

static void ei_init_once(void)
{
	ei_init();
}

static void ei_once(void)
{
	pthread_once(&ei_ready, ei_init_once);
}

/* ei tells a closed port from a refused cookie by neither its result
 * nor its errno: these are what either gives */
static bool auth_like(int e)
{
	return e == EIO || e == EPROTO || e == EACCES;
}

/* a connection that another address of the host may make */
static bool try_next(int e)
{
	return e == ECONNREFUSED || e == ENETUNREACH || e == EHOSTUNREACH ||
		e == EADDRNOTAVAIL || e == EAFNOSUPPORT;
}

/* The connection to port at each address of the host in turn: the
 * descriptor, or -1 with erl_errno's value in *e. */
static int connect_addrs(struct conn *c, const struct node_name *target,
			 int port, unsigned tmo_ms, int *e, struct sbuf *err)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	int gai = getaddrinfo(target->host, NULL, &hints, &res);
	if (gai) {
		sbuf_addf(err, "cannot resolve host \"%s\": %s; check the name "
			  "after '@'", target->host, gai_strerror(gai));
		return -2;
	}
	/* ei wants an IPv4 address: of it, sock.c takes only the port */
	struct in_addr any = { .s_addr = htonl(INADDR_LOOPBACK) };
	int fd = -1;
	*e = EHOSTUNREACH;
	for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
		if (ai->ai_addrlen > sizeof(c->to.addr))
			continue;
		memcpy(&c->to.addr, ai->ai_addr, ai->ai_addrlen);
		c->to.len = ai->ai_addrlen;
		fd = ei_xconnect_host_port_tmo(&c->ec, &any, port, tmo_ms);
		if (fd < 0 && !try_next(*e = erl_errno))
			break;
	}
	freeaddrinfo(res);
	return fd;
}

/* What to do about a TLS failure, after it: "" if nothing to say.  A
 * node that wants our certificate says "certificate required" (TLS 1.3)
 * or only "handshake failure" (1.2). */
static const char *tls_hint(const char *why, bool have_cert)
{
	if (strstr(why, "certificate required") ||
	    (!have_cert && strstr(why, "handshake failure")))
		return "; the node wants a certificate of ours: give --tls-cert "
			"and --tls-key";
	if (strstr(why, "did not verify") && !strstr(why, "expired"))
		return "; is --tls-ca the CA that signed the node's certificate?";
	return "";
}

enum conn_status conn_open(struct conn *c, const struct node_name *target,
			   const char *cookie, const struct distopt *tls,
			   unsigned tmo_ms, struct sbuf *err)
{
	char host[256], alive[64];
	struct in_addr ip;

	ei_once();
	if (node_this_host(target->longnames, host, sizeof(host)) < 0) {
		sbuf_addf(err, "cannot find this host's name: %s", strerror(errno));
		return CONN_UNREACHABLE;
	}
	selfname_alive(alive, sizeof(alive));
	snprintf(c->self_name, sizeof(c->self_name), "%s@%s", alive, host);
	snprintf(c->target, sizeof(c->target), "%s", target->full);
	int port = target->port;
	if (!port && node_port(target->host, target->alive, &port) < 0) {
		sbuf_addf(err, "node \"%s\" went away while connecting; is it "
			  "running?", c->target);
		return CONN_UNREACHABLE;
	}
	inet_aton("127.0.0.1", &ip);
	/* every connection a new incarnation: a target that still holds an
	 * earlier attempt of ours must not take this one for it */
	static unsigned serial;
	unsigned creation = ((unsigned)time(NULL) ^ (unsigned)getpid() ^
			     (__atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED) << 20)) | 4u;
	redact_add(cookie);   /* whatever the target says, never shown */
	tls_release(&c->to);  /* an attempt before this one's */
	if (tls && tls->on && tls_setup(&c->to, tls, target->host, err) < 0)
		return CONN_CONFIG;
	ei_socket_callbacks *cbs = c->to.tls ? &sock_tls : &sock_tcp;
	if (ei_connect_xinit_ussi(&c->ec, host, alive, c->self_name,
				  (Erl_IpAddr)&ip, cookie, creation, cbs,
				  sizeof(*cbs), &c->to) < 0) {
		sbuf_addf(err, "cannot set up node \"%s\"", c->self_name);
		return CONN_UNREACHABLE;
	}
	int e = 0;
	int fd = connect_addrs(c, target, port, tmo_ms, &e, err);
	if (fd == -2)
		return CONN_UNREACHABLE;
	if (fd < 0 && c->to.err[0]) {
		sbuf_addf(err, "TLS with node \"%s\" at port %d: %s%s", c->target,
			  port, c->to.err, tls_hint(c->to.err, tls && tls->cert[0]));
		return CONN_UNREACHABLE;
	}
	if (fd < 0 && !c->to.tls && auth_like(e) &&
	    tls_answers(target->host, port, TLS_PROBE_MS)) {
		sbuf_addf(err, "node \"%s\" runs its distribution over TLS "
			  "(inet_tls), and this was plain TCP: give "
			  "--ssl-dist-optfile FILE (the node's), or --tls-ca, "
			  "--tls-cert and --tls-key", c->target);
		return CONN_UNREACHABLE;
	}
	if (fd < 0) {
		if (auth_like(e) && node_accepts(target->host, port) < 0) {
			if (target->port)
				sbuf_addf(err, "node \"%s\": nothing accepts "
					  "connections at port %d, the port given "
					  "(%s); is it the node's distribution port "
					  "(inet_dist_listen_min), and is the node "
					  "running?", c->target, port,
					  strerror(errno));
			else
				sbuf_addf(err, "node \"%s\" is registered with "
					  "epmd at port %d, but nothing accepts "
					  "connections there (%s); has it hung, or "
					  "is it still starting?", c->target, port,
					  strerror(errno));
			return CONN_UNREACHABLE;
		}
		if (auth_like(e)) {
			sbuf_addf(err, "node \"%s\" refused the cookie",
				  c->target);
			return CONN_AUTH;
		}
		sbuf_addf(err, "cannot connect to node \"%s\" at port %d: %s; "
			  "is it running, and reachable from here?", c->target,
			  port, e == ETIMEDOUT ? "timed out" : strerror(e));
		return CONN_UNREACHABLE;
	}
	c->fd = fd;
	c->port = port;
	c->by_port = target->port != 0;
	return CONN_OK;
}

void conn_close(struct conn *c)
{
	if (c->fd >= 0) {
		ei_close_connection(c->fd);
		c->fd = -1;
	}
}

void conn_release(struct conn *c)
{
	conn_close(c);
	tls_release(&c->to);
	ei_x_free(&c->rx);
}

int conn_poll_fd(const struct conn *c)
{
	return c->fd < 0 ? -1 : sock_poll_fd(&c->to, c->fd);
}

erlang_pid *conn_self(struct conn *c)
{
	return ei_self(&c->ec);
}

int conn_send(struct conn *c, const erlang_pid *to, const ei_x_buff *x,
	      unsigned tmo_ms)
{
	if (c->fd < 0)
		return -1;
	if (ei_send_tmo(c->fd, (erlang_pid *)to, x->buff, x->index, tmo_ms) < 0)
		return -1;
	return 0;
}

int conn_read(struct conn *c, unsigned tmo_ms)
{
	if (c->fd < 0)
		return -1;
	int r = ei_xreceive_msg_tmo(c->fd, &c->msg, &c->rx, tmo_ms);
	if (r == ERL_TICK)
		return 0;
	if (r == ERL_ERROR) {
		/* a timeout inside a message would desynchronise the stream */
		conn_close(c);
		return -1;
	}
	if (c->msg.msgtype == ERL_SEND || c->msg.msgtype == ERL_REG_SEND)
		return 1;
	return 0;
}
