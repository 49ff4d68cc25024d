/* tls: ei's distribution connection over TLS, on OpenSSL. */
#include "tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* A connection: its socket, its TLS, and its setup. */
struct tls_conn {
	int fd;
	SSL *ssl;
	struct sock_to *to;
};

/* ei's "no time-out" is either */
static int poll_ms(unsigned tmo)
{
	return tmo == EI_SCLBK_INF_TMO || tmo == 0 ? -1 :
		tmo > 0x7fffffffu ? 0x7fffffff : (int)tmo;
}

/* wait until fd is ready for ev: 0, or an errno value */
static int wait_fd(int fd, short ev, unsigned tmo)
{
	struct pollfd p = { .fd = fd, .events = ev };
	for (;;) {
		int r = poll(&p, 1, poll_ms(tmo));
		if (r > 0)
			return 0;
		if (r == 0)
			return ETIMEDOUT;
		if (errno != EINTR)
			return errno;
	}
}

/* what OpenSSL said went wrong, into the setup, once */
static void say(struct tls_conn *t, const char *what)
{
	if (t->to->err[0])
		return;
	long v = SSL_get_verify_result(t->ssl);
	unsigned long e = ERR_peek_last_error();
	if (v != X509_V_OK && SSL_get_verify_mode(t->ssl) != SSL_VERIFY_NONE)
		snprintf(t->to->err, sizeof(t->to->err), "the node's certificate "
			 "did not verify: %s", X509_verify_cert_error_string(v));
	else if (e && ERR_reason_error_string(e))
		snprintf(t->to->err, sizeof(t->to->err), "%s: %s", what,
			 ERR_reason_error_string(e));
	else
		snprintf(t->to->err, sizeof(t->to->err), "%s: the node closed "
			 "the connection", what);
	ERR_clear_error();
}

/*
 * One TLS operation until it is done, waiting on the socket as it asks:
 * its result (> 0), 0 for the end of the stream, or -errno.
 */
static int settle(struct tls_conn *t, int (*op)(SSL *, void *, int),
		  void *buf, int len, unsigned tmo, const char *what)
{
	for (;;) {
		ERR_clear_error();
		int n = op(t->ssl, buf, len);
		if (n > 0)
			return n;
		int e = SSL_get_error(t->ssl, n), w;
		if (e == SSL_ERROR_ZERO_RETURN)
			return 0;
		if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
			w = wait_fd(t->fd, e == SSL_ERROR_WANT_READ ? POLLIN :
				    POLLOUT, tmo);
			if (w)
				return -w;
			continue;
		}
		if (e == SSL_ERROR_SYSCALL && !ERR_peek_error())
			return n < 0 && errno ? -errno : 0;
		/* the peer closed without TLS's notice: the end all the same
		 * (a node refusing our cookie does so) */
		if (e == SSL_ERROR_SSL && ERR_GET_REASON(ERR_peek_error()) ==
		    SSL_R_UNEXPECTED_EOF_WHILE_READING) {
			ERR_clear_error();
			return 0;
		}
		say(t, what);
		return -EIO;
	}
}

static int op_read(SSL *s, void *buf, int len)
{
	return SSL_read(s, buf, len);
}

static int op_write(SSL *s, void *buf, int len)
{
	return SSL_write(s, buf, len);
}

static int op_connect(SSL *s, void *buf, int len)
{
	(void)buf, (void)len;
	return SSL_connect(s);
}

static int t_socket(void **ctx, void *setup)
{
	struct sock_to *to = setup;
	if (!to || !to->tls)
		return EINVAL;
	struct tls_conn *t = calloc(1, sizeof(*t));
	if (!t)
		return ENOMEM;
	t->fd = socket(to->addr.ss_family,
		       SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (t->fd < 0 || !(t->ssl = SSL_new(to->tls))) {
		int e = errno ? errno : ENOMEM;
		if (t->fd >= 0)
			close(t->fd);
		free(t);
		return e;
	}
	t->to = to;
	to->live = t;
	*ctx = t;
	return 0;
}

static int t_close(void *ctx)
{
	struct tls_conn *t = ctx;
	SSL_shutdown(t->ssl);   /* the notice, if it goes at once */
	SSL_free(t->ssl);
	close(t->fd);
	if (t->to->live == t)
		t->to->live = NULL;
	free(t);
	return 0;
}

static int t_listen(void *ctx, void *addr, int *len, int backlog)
{
	(void)ctx, (void)addr, (void)len, (void)backlog;
	return EOPNOTSUPP;
}

static int t_accept(void **ctx, void *addr, int *len, unsigned tmo)
{
	(void)ctx, (void)addr, (void)len, (void)tmo;
	return EOPNOTSUPP;
}

/* The name or address the node's certificate must hold. */
static void check_host(SSL *ssl, const char *host)
{
	unsigned char ip[16];
	if (inet_pton(AF_INET, host, ip) == 1 || inet_pton(AF_INET6, host, ip) == 1) {
		X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host);
		return;
	}
	SSL_set_tlsext_host_name(ssl, host);
	SSL_set1_host(ssl, host);
}

/* TCP to the address resolved (the port from ei's), then the handshake. */
static int t_connect(void *ctx, void *addr, int len, unsigned tmo)
{
	struct tls_conn *t = ctx;
	if (len < (int)sizeof(struct sockaddr_in))
		return EINVAL;
	struct sockaddr_storage to;
	sock_dest(t->to, addr, &to);
	if (connect(t->fd, (struct sockaddr *)&to, t->to->len) < 0) {
		if (errno != EINPROGRESS)
			return errno;
		int e = wait_fd(t->fd, POLLOUT, tmo), soerr = 0;
		socklen_t sl = sizeof(soerr);
		if (e)
			return e;
		getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
		if (soerr)
			return soerr;
	}
	if (!SSL_set_fd(t->ssl, t->fd))
		return EIO;
	if (t->to->host[0])
		check_host(t->ssl, t->to->host);
	int r = settle(t, op_connect, NULL, 0, tmo, "the TLS handshake");
	if (r == -ETIMEDOUT && !t->to->err[0])
		snprintf(t->to->err, sizeof(t->to->err), "no TLS answer in %u ms; "
			 "does the node run its distribution over TLS "
			 "(-proto_dist inet_tls)?", tmo);
	else if (r == 0 && !t->to->err[0])
		snprintf(t->to->err, sizeof(t->to->err), "the node closed the "
			 "connection in the TLS handshake");
	return r > 0 ? 0 : r == 0 ? ECONNRESET : -r;
}

static int t_write(void *ctx, const char *buf, ssize_t *len, unsigned tmo)
{
	int want = *len > 0x40000000 ? 0x40000000 : (int)*len;
	int n = settle(ctx, op_write, (void *)buf, want, tmo, "the node said");
	if (n <= 0)
		return n == 0 ? EPIPE : -n;
	*len = n;
	return 0;
}

static int t_read(void *ctx, char *buf, ssize_t *len, unsigned tmo)
{
	int want = *len > 0x40000000 ? 0x40000000 : (int)*len;
	int n = settle(ctx, op_read, buf, want, tmo, "the node said");
	if (n < 0)
		return -n;
	*len = n;
	return 0;
}

/* inet_tls_dist frames its handshake with 4-byte lengths, not TCP's 2 */
static int t_header_size(void *ctx, int *sz)
{
	(void)ctx;
	*sz = 4;
	return 0;
}

static int t_handshake_done(void *ctx)
{
	return sock_tune(((struct tls_conn *)ctx)->fd) < 0 ? errno : 0;
}

static int t_get_fd(void *ctx, int *fd)
{
	*fd = ((struct tls_conn *)ctx)->fd;
	return 0;
}

/* time-outs are ours: the socket is non-blocking and TLS may hold bytes
 * the socket no longer shows */
ei_socket_callbacks sock_tls = {
	.flags = EI_SCLBK_FLG_FULL_IMPL,
	.socket = t_socket,
	.close = t_close,
	.listen = t_listen,
	.EI_ACCEPT_NAME = t_accept,
	.connect = t_connect,
	.writev = NULL,
	.write = t_write,
	.read = t_read,
	.handshake_packet_header_size = t_header_size,
	.connect_handshake_complete = t_handshake_done,
	.accept_handshake_complete = t_handshake_done,
	.get_fd = t_get_fd,
};

bool tls_pending(void *live)
{
	return SSL_pending(((struct tls_conn *)live)->ssl) > 0;
}

/* a file that cannot be read is said as such, before OpenSSL's words */
static bool unreadable(const char *what, const char *path, struct sbuf *err)
{
	if (!path[0] || access(path, R_OK) == 0)
		return false;
	sbuf_addf(err, "TLS: cannot read %s \"%s\": %s", what, path,
		  strerror(errno));
	return true;
}

static const char *ssl_reason(void)
{
	const char *r = ERR_reason_error_string(ERR_get_error());
	ERR_clear_error();
	return r ? r : "unknown error";
}

int tls_setup(struct sock_to *to, const struct distopt *o, const char *host,
	      struct sbuf *err)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	if (!ctx) {
		sbuf_addf(err, "TLS: cannot set up: %s", ssl_reason());
		return -1;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
			 SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	const char *key = o->key[0] ? o->key : o->cert;
	if (o->password[0])   /* the default callback takes it as the password */
		SSL_CTX_set_default_passwd_cb_userdata(ctx, (void *)o->password);
	if (unreadable("the certificate", o->cert, err) ||
	    unreadable("the key", o->cert[0] ? key : "", err) ||
	    unreadable("the CA certificates", o->verify_none ? "" : o->ca, err))
		;
	else if (o->cert[0] && SSL_CTX_use_certificate_chain_file(ctx, o->cert) != 1)
		sbuf_addf(err, "TLS: cannot use the certificate \"%s\": %s",
			  o->cert, ssl_reason());
	else if (o->cert[0] &&
		 SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1)
		sbuf_addf(err, "TLS: cannot use the key \"%s\": %s", key,
			  ssl_reason());
	else if (o->cert[0] && SSL_CTX_check_private_key(ctx) != 1)
		sbuf_addf(err, "TLS: the key \"%s\" is not the certificate "
			  "\"%s\"'s", key, o->cert);
	else if (!o->verify_none && !o->ca[0])
		sbuf_addstr(err, "TLS: no CA to check the node's certificate "
			    "against: give --tls-ca FILE (cacertfile in the "
			    "node's options), or --tls-verify verify_none to "
			    "take any");
	else if (!o->verify_none &&
		 SSL_CTX_load_verify_locations(ctx, o->ca, NULL) != 1)
		sbuf_addf(err, "TLS: cannot read the CA certificates \"%s\": %s",
			  o->ca, ssl_reason());
	SSL_CTX_set_default_passwd_cb_userdata(ctx, NULL);
	if (err->len) {
		SSL_CTX_free(ctx);
		return -1;
	}
	SSL_CTX_set_verify(ctx, o->verify_none ? SSL_VERIFY_NONE :
			   SSL_VERIFY_PEER, NULL);
	to->tls = ctx;
	to->err[0] = '\0';
	snprintf(to->host, sizeof(to->host), "%s",
		 o->verify_none || o->no_host_check ? "" : host);
	to->ready_fd = eventfd(1, EFD_CLOEXEC);   /* readable for good */
	return 0;
}

void tls_release(struct sock_to *to)
{
	if (to->tls)
		SSL_CTX_free(to->tls);
	to->tls = NULL;
	if (to->ready_fd >= 0)
		close(to->ready_fd);
	to->ready_fd = -1;
}

bool tls_answers(const char *host, int port, int ms)
{
	char ps[16];
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	snprintf(ps, sizeof(ps), "%d", port);
	if (getaddrinfo(host, ps, &hints, &res) || !res)
		return false;
	struct sock_to to = { .ready_fd = -1 };
	bool yes = false;
	to.tls = SSL_CTX_new(TLS_client_method());
	if (to.tls)
		SSL_CTX_set_verify(to.tls, SSL_VERIFY_NONE, NULL);
	/* the first address that takes the connection */
	for (struct addrinfo *ai = res; to.tls && ai; ai = ai->ai_next) {
		void *ctx = NULL;
		if (ai->ai_addrlen > sizeof(to.addr))
			continue;
		memcpy(&to.addr, ai->ai_addr, ai->ai_addrlen);
		to.len = ai->ai_addrlen;
		to.err[0] = '\0';
		if (t_socket(&ctx, &to) || !ctx)
			break;
		struct sockaddr_in port_only = { .sin_port = htons((uint16_t)port) };
		int r = t_connect(ctx, &port_only, sizeof(port_only), (unsigned)ms);
		t_close(ctx);
		if (r == ECONNREFUSED || r == EHOSTUNREACH || r == ENETUNREACH ||
		    r == EADDRNOTAVAIL)
			continue;
		/* a handshake done, or refused in TLS's own words (a node
		 * that is not TLS says nothing first: a time-out, or EOF) */
		yes = r == 0 || (r == EIO && !strstr(to.err, "wrong version"));
		break;
	}
	freeaddrinfo(res);
	if (to.tls)
		SSL_CTX_free(to.tls);
	ERR_clear_error();
	return yes;
}
