/* node: name parsing, cookie lookup, and the epmd NAMES request. */
#include "node.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xalloc.h"

#define EPMD_DEFAULT_PORT 4369
#define EPMD_NAMES_REQ 110
#define EPMD_PORT_REQ 122
#define EPMD_PORT_RESP 119
#define EPMD_TIMEOUT_MS 3000

int node_this_host(bool longnames, char *out, size_t outsz)
{
	char host[256];
	if (gethostname(host, sizeof(host)) < 0)
		return -1;
	host[sizeof(host) - 1] = '\0';
	if (!longnames) {
		host[strcspn(host, ".")] = '\0';
		snprintf(out, outsz, "%s", host);
		return 0;
	}
	if (strchr(host, '.')) {
		snprintf(out, outsz, "%s", host);
		return 0;
	}
	struct addrinfo hints = { .ai_flags = AI_CANONNAME }, *res = NULL;
	if (getaddrinfo(host, NULL, &hints, &res) == 0 && res &&
	    res->ai_canonname && strchr(res->ai_canonname, '.')) {
		snprintf(out, outsz, "%s", res->ai_canonname);
		freeaddrinfo(res);
		return 0;
	}
	if (res)
		freeaddrinfo(res);
	/* no fully qualified name: a dotted address is a valid long name host */
	snprintf(out, outsz, "127.0.0.1");
	return 0;
}

static bool valid_alive(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			return false;
	return true;
}

int node_name_parse(const char *arg, bool longnames, struct node_name *out,
		    struct sbuf *err)
{
	const char *at = strchr(arg, '@');
	memset(out, 0, sizeof(*out));
	size_t alen = at ? (size_t)(at - arg) : strlen(arg);
	if (alen == 0 || alen >= sizeof(out->alive)) {
		sbuf_addf(err, "bad node name \"%s\": expected NAME or NAME@HOST", arg);
		return -1;
	}
	memcpy(out->alive, arg, alen);
	if (!valid_alive(out->alive)) {
		sbuf_addf(err, "bad node name \"%s\": the part before '@' may hold "
			  "only letters, digits, '_' and '-'", arg);
		return -1;
	}
	if (at) {
		if (!at[1] || strlen(at + 1) >= sizeof(out->host) ||
		    strchr(at + 1, '@')) {
			sbuf_addf(err, "bad node name \"%s\": expected NAME@HOST", arg);
			return -1;
		}
		snprintf(out->host, sizeof(out->host), "%s", at + 1);
		/* HOST:PORT, a node without epmd; an IPv6 address has more
		 * than one colon and no port */
		char *colon = strchr(out->host, ':');
		if (colon && !strchr(colon + 1, ':')) {
			char *end;
			long port = strtol(colon + 1, &end, 10);
			if (colon == out->host || !colon[1] || *end ||
			    port <= 0 || port > 65535) {
				sbuf_addf(err, "bad node name \"%s\": expected "
					  "NAME@HOST:PORT, PORT from 1 to 65535",
					  arg);
				return -1;
			}
			*colon = '\0';
			out->port = (int)port;
		}
		/* a dotted name or an address, IPv6 included, is a long name */
		out->longnames = longnames || strpbrk(out->host, ".:") != NULL;
	} else {
		out->longnames = longnames;
		if (node_this_host(longnames, out->host, sizeof(out->host)) < 0) {
			sbuf_addf(err, "cannot find this host's name: %s; "
				  "give the node as NAME@HOST", strerror(errno));
			return -1;
		}
	}
	snprintf(out->full, sizeof(out->full), "%s@%s", out->alive, out->host);
	return 0;
}

static int read_cookie_file(const char *path, char *out, size_t outsz,
			    struct sbuf *err, struct sbuf *warn, bool quiet_enoent)
{
	/* not blocking: a FIFO would wait for a writer in open(2) */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	FILE *f = NULL;
	if (fd < 0) {
		if (!(quiet_enoent && errno == ENOENT))
			sbuf_addf(err, "cannot read cookie file \"%s\": %s; "
				  "pass the target's with --cookie-file FILE "
				  "(erl keeps it in ~/.erlang.cookie of the user "
				  "running the node)", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		sbuf_addf(err, "cookie file \"%s\" is not a file; pass the "
			  "file that holds the target's cookie with "
			  "--cookie-file FILE", path);
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	if (!(f = fdopen(fd, "r"))) {
		close(fd);
		sbuf_addf(err, "cannot read cookie file \"%s\": %s", path,
			  strerror(errno));
		return -1;
	}
	if ((st.st_mode & 077) && warn)
		sbuf_addf(warn, "cookie file \"%s\" is readable by others; "
			  "erl insists on 'chmod 400 %s'", path, path);
	char line[1024];
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	line[strcspn(line, "\r\n")] = '\0';
	/* erl ignores surrounding blanks */
	char *s = line;
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
	int rc = -1;
	if (!n)
		sbuf_addf(err, "cookie file \"%s\" is empty; put the target's "
			  "cookie on its first line", path);
	else if (n >= outsz)
		sbuf_addf(err, "cookie in \"%s\" is too long", path);
	else {
		memcpy(out, s, n + 1);
		rc = 0;
	}
	explicit_bzero(line, sizeof(line));
	return rc;
}

static int cookie_from_file(const char *path, char *out, size_t outsz,
			    struct sbuf *err, struct sbuf *warn,
			    struct sbuf *from, bool quiet_enoent)
{
	if (read_cookie_file(path, out, outsz, err, warn, quiet_enoent) < 0)
		return -1;
	if (from)
		sbuf_addf(from, "\"%s\"", path);
	return 0;
}

int cookie_load(const char *file, const char *literal, char *out, size_t outsz,
		struct sbuf *err, struct sbuf *warn, struct sbuf *from)
{
	if (file)
		return cookie_from_file(file, out, outsz, err, warn, from, false);
	if (literal) {
		if (!*literal || strlen(literal) >= outsz) {
			sbuf_addstr(err, "--cookie needs a non-empty cookie");
			return -1;
		}
		snprintf(out, outsz, "%s", literal);
		if (from)
			sbuf_addstr(from, "--cookie");
		return 0;
	}
	const char *home = getenv("HOME");
	char path[4096];
	if (home && *home) {
		snprintf(path, sizeof(path), "%s/.erlang.cookie", home);
		if (cookie_from_file(path, out, outsz, err, warn, from, true) == 0)
			return 0;
		if (err->len)
			return -1;
	}
	const char *xdg = getenv("XDG_CONFIG_HOME");
	if (xdg && *xdg)
		snprintf(path, sizeof(path), "%s/erlang/.erlang.cookie", xdg);
	else if (home && *home)
		snprintf(path, sizeof(path), "%s/.config/erlang/.erlang.cookie", home);
	else
		path[0] = '\0';
	if (path[0] && cookie_from_file(path, out, outsz, err, warn, from,
					true) == 0)
		return 0;
	if (err->len)
		return -1;
	sbuf_addstr(err, "no cookie: ~/.erlang.cookie does not exist; pass the "
		    "target's with --cookie-file FILE (erl keeps it in "
		    "~/.erlang.cookie of the user running the node)");
	return -1;
}

static int epmd_port(void)
{
	const char *p = getenv("ERL_EPMD_PORT");
	if (p && *p) {
		int v = atoi(p);
		if (v > 0 && v < 65536)
			return v;
	}
	return EPMD_DEFAULT_PORT;
}

static int connect_tmo(const struct addrinfo *ai, int ms)
{
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	int fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
		if (errno != EINPROGRESS) {
			int e = errno;
			close(fd);
			errno = e;
			return -1;
		}
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		int r = poll(&pfd, 1, ms);
		int soerr = 0;
		socklen_t len = sizeof(soerr);
		if (r <= 0) {
			close(fd);
			errno = r == 0 ? ETIMEDOUT : errno;
			return -1;
		}
		getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
		if (soerr) {
			close(fd);
			errno = soerr;
			return -1;
		}
	}
	fcntl(fd, F_SETFL, fl);
	return fd;
}

static int read_all_tmo(int fd, struct sbuf *out, int ms)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int r = poll(&pfd, 1, ms);
		if (r <= 0) {
			errno = r == 0 ? ETIMEDOUT : errno;
			return -1;
		}
		char buf[4096];
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (n == 0)
			return 0;
		sbuf_add(out, buf, (size_t)n);
		if (out->len > (1 << 20)) {
			errno = EMSGSIZE;
			return -1;
		}
	}
}

/* A connection to port on host, or -1 (errno; *gai: a resolver error). */
static int tcp_open(const char *host, int portno, int *gai)
{
	char port[16];
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	snprintf(port, sizeof(port), "%d", portno);
	*gai = getaddrinfo(host, port, &hints, &res);
	if (*gai)
		return -1;
	int fd = -1, e = 0;
	for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
		fd = connect_tmo(ai, EPMD_TIMEOUT_MS);
		if (fd < 0)
			e = errno;
	}
	freeaddrinfo(res);
	if (fd < 0)
		errno = e;
	return fd;
}

static int epmd_open(const char *host, struct sbuf *err)
{
	int gai;
	int fd = tcp_open(host, epmd_port(), &gai);
	if (fd >= 0)
		return fd;
	if (gai)
		sbuf_addf(err, "cannot resolve host \"%s\": %s; check the name "
			  "after '@'", host, gai_strerror(gai));
	else
		sbuf_addf(err, "cannot reach epmd on \"%s\" (port %d): %s; is an "
			  "Erlang node running there? start one with "
			  "'erl -sname NAME'", host, epmd_port(), strerror(errno));
	return -1;
}

int node_port(const char *host, const char *alive, int *port)
{
	struct sbuf err = SBUF_INIT;
	*port = -1;
	int fd = epmd_open(host, &err);
	sbuf_release(&err);
	if (fd < 0)
		return -1;
	/* PORT_PLEASE2_REQ: length, 122, the name */
	unsigned char req[3 + 256];
	size_t n = strlen(alive);
	if (n > 255)
		n = 255;
	req[0] = (unsigned char)((n + 1) >> 8);
	req[1] = (unsigned char)(n + 1);
	req[2] = EPMD_PORT_REQ;
	for (size_t i = 0; i < n; i++)   /* the name, not a C string */
		req[3 + i] = (unsigned char)alive[i];
	struct sbuf reply = SBUF_INIT;
	bool ok = write(fd, req, n + 3) == (ssize_t)(n + 3) &&
		read_all_tmo(fd, &reply, EPMD_TIMEOUT_MS) == 0;
	close(fd);
	/* PORT2_RESP: 119, result, then the port */
	if (ok && reply.len >= 4 && (unsigned char)reply.buf[0] == EPMD_PORT_RESP &&
	    reply.buf[1] == 0)
		*port = (unsigned char)reply.buf[2] << 8 | (unsigned char)reply.buf[3];
	sbuf_release(&reply);
	if (*port <= 0) {
		errno = ENOENT;
		return -1;
	}
	return 0;
}

int node_accepts(const char *host, int port)
{
	int gai;
	int fd = tcp_open(host, port, &gai);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

int epmd_names(const char *host, char ***names, struct sbuf *err)
{
	*names = NULL;
	int fd = epmd_open(host, err);
	if (fd < 0)
		return -1;
	unsigned char req[3] = { 0, 1, EPMD_NAMES_REQ };
	struct sbuf reply = SBUF_INIT;
	if (write(fd, req, sizeof(req)) != (ssize_t)sizeof(req) ||
	    read_all_tmo(fd, &reply, EPMD_TIMEOUT_MS) < 0 || reply.len < 4) {
		sbuf_addf(err, "epmd on \"%s\" did not answer: %s; see if "
			  "'epmd -names' answers there", host,
			  strerror(errno ? errno : EPROTO));
		close(fd);
		sbuf_release(&reply);
		return -1;
	}
	close(fd);

	/* 4 bytes: epmd's own port; then "name NAME at port N\n" lines */
	int count = 0, cap = 8;
	char **v = xcalloc((size_t)cap, sizeof(*v));
	char *p = reply.buf + 4;
	while (p && *p) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		char name[256];
		if (sscanf(p, "name %255s at port", name) == 1) {
			if (count + 1 >= cap) {
				cap *= 2;
				v = xrealloc(v, (size_t)cap * sizeof(*v));
			}
			v[count++] = xstrdup(name);
		}
		p = nl ? nl + 1 : NULL;
	}
	v[count] = NULL;
	sbuf_release(&reply);
	*names = v;
	return count;
}

void node_names_free(char **names)
{
	if (!names)
		return;
	for (char **p = names; *p; p++)
		free(*p);
	free(names);
}
