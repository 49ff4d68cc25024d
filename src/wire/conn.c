/* conn: ei connection set-up, sending, and reading one message at a time. */
#include "conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "redact.h"
#include "selfname.h"

void conn_init(struct conn *c)
{
	memset(c, 0, sizeof(*c));
	c->fd = -1;
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

enum conn_status conn_open(struct conn *c, const struct node_name *target,
			   const char *cookie, unsigned tmo_ms, struct sbuf *err)
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
	inet_aton("127.0.0.1", &ip);
	/* every connection a new incarnation: a target that still holds an
	 * earlier attempt of ours must not take this one for it */
	static unsigned serial;
	unsigned creation = ((unsigned)time(NULL) ^ (unsigned)getpid() ^
			     (__atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED) << 20)) | 4u;
	redact_add(cookie);   /* whatever the target says, never shown */
	if (ei_connect_xinit(&c->ec, host, alive, c->self_name,
			     (Erl_IpAddr)&ip, cookie, creation) < 0) {
		sbuf_addf(err, "cannot set up node \"%s\"", c->self_name);
		return CONN_UNREACHABLE;
	}
	int fd = ei_connect_tmo(&c->ec, c->target, tmo_ms);
	if (fd < 0) {
		int e = erl_errno, port;
		/* ei tells a closed port from a refused cookie by neither
		 * its result nor its errno: see whether anyone listens */
		if ((e == EIO || e == EPROTO || e == EACCES) &&
		    node_probe(target->host, target->alive, &port) < 0) {
			e = errno;
			if (port > 0)
				sbuf_addf(err, "node \"%s\" is registered with epmd "
					  "at port %d, but nothing accepts "
					  "connections there (%s); has it hung, "
					  "or is it still starting?", c->target,
					  port, strerror(e));
			else
				sbuf_addf(err, "node \"%s\" went away while "
					  "connecting; is it running?", c->target);
			return CONN_UNREACHABLE;
		}
		if (e == EIO || e == EPROTO || e == EACCES) {
			sbuf_addf(err, "node \"%s\" refused the cookie",
				  c->target);
			return CONN_AUTH;
		}
		sbuf_addf(err, "cannot connect to node \"%s\": %s; is it "
			  "running, and reachable from here?", c->target,
			  e == ETIMEDOUT ? "timed out" : strerror(e));
		return CONN_UNREACHABLE;
	}
	c->fd = fd;
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
	ei_x_free(&c->rx);
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
