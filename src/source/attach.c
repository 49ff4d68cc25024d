/* attach: from a node name on the command line to a connection. */
#include "attach.h"

#include <string.h>

#include "exitcode.h"
#include "distopt.h"
#include "node.h"
#include <stdio.h>

#define CONNECT_TMO_MS 5000

static void list_known(struct sbuf *err, const char *host, char **names)
{
	sbuf_addf(err, "; epmd on \"%s\" knows: ", host);
	if (!names || !names[0]) {
		sbuf_addstr(err, "no nodes; is the node running?");
		return;
	}
	for (char **p = names; *p; p++)
		sbuf_addf(err, "%s%s", p == names ? "" : ", ", *p);
}

static int known(const struct node_name *nn, struct sbuf *err)
{
	char **names = NULL;
	if (epmd_names(nn->host, &names, err) < 0)
		return EXIT_CONNECT;
	bool found = false;
	for (char **p = names; *p; p++)
		found |= !strcmp(*p, nn->alive);
	if (!found) {
		sbuf_addf(err, "node \"%s\" not found", nn->full);
		list_known(err, nn->host, names);
	}
	node_names_free(names);
	return found ? EXIT_OK : EXIT_CONNECT;
}

/* NODE as given, and --port for the one node it was given with (not a
 * node :attach names later, nor one found on the way) */
static int parse(const struct config *cfg, const char *node,
		 struct node_name *nn, struct sbuf *err)
{
	if (node_name_parse(node, cfg->longnames, nn, err) < 0)
		return -1;
	if (!nn->port && cfg->port && cfg->nnodes == 1 &&
	    !strcmp(node, cfg->nodes[0]))
		nn->port = cfg->port;
	return 0;
}

int attach_known(const struct config *cfg, const char *node, struct sbuf *err)
{
	struct node_name nn;
	if (parse(cfg, node, &nn, err) < 0)
		return EXIT_USAGE;
	/* a port given: no epmd to ask, the connection will tell */
	return nn.port ? EXIT_OK : known(&nn, err);
}

/* The TLS settings: the options file, then what the command line says
 * one by one.  0, or -1 with err. */
static int tls_opts(const struct config *cfg, struct distopt *o,
		    struct sbuf *err)
{
	memset(o, 0, sizeof(*o));
	if (cfg->ssl_optfile && distopt_read_file(cfg->ssl_optfile, o, err) < 0)
		return -1;
	const struct { const char *v; char *to; size_t n; } files[] = {
		{ cfg->tls_cert, o->cert, sizeof(o->cert) },
		{ cfg->tls_key, o->key, sizeof(o->key) },
		{ cfg->tls_ca, o->ca, sizeof(o->ca) },
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (!files[i].v)
			continue;
		if (strlen(files[i].v) >= files[i].n) {
			sbuf_addf(err, "TLS: the file name \"%.40s...\" is too long",
				  files[i].v);
			return -1;
		}
		snprintf(files[i].to, files[i].n, "%s", files[i].v);
		o->on = true;
	}
	if (cfg->tls_verify) {
		o->verify_none = cfg->tls_verify == 2;
		o->on = true;
	}
	return 0;
}

/* Name, epmd and cookie checks, then the connection.  EXIT_* code. */
int attach_connect(const struct config *cfg, const char *node, struct conn *c,
		   struct sbuf *err, struct sbuf *warn)
{
	struct node_name nn;
	char cookie[1024];
	struct sbuf from = SBUF_INIT;
	int rc;

	if (parse(cfg, node, &nn, err) < 0)
		return EXIT_USAGE;
	if (cookie_load(cfg->cookie_file, cfg->cookie, cookie, sizeof(cookie),
			err, warn, &from) < 0)
		return EXIT_USAGE;

	if (!nn.port && (rc = known(&nn, err)) != EXIT_OK) {
		sbuf_release(&from);
		return rc;
	}

	struct distopt tls;
	if (tls_opts(cfg, &tls, err) < 0) {
		memset(cookie, 0, sizeof(cookie));
		sbuf_release(&from);
		return EXIT_USAGE;
	}
	enum conn_status cs = conn_open(c, &nn, cookie, &tls, CONNECT_TMO_MS,
					err);
	memset(&tls.password, 0, sizeof(tls.password));
	memset(cookie, 0, sizeof(cookie));
	if (cs == CONN_AUTH)
		sbuf_addf(err, " from %s; pass the target's with --cookie-file "
			  "FILE (erl keeps it in ~/.erlang.cookie of the user "
			  "running the node, unless started with -setcookie)",
			  sbuf_str(&from));
	sbuf_release(&from);
	if (cs == CONN_AUTH)
		return EXIT_AUTH;
	if (cs == CONN_CONFIG)
		return EXIT_USAGE;
	if (cs != CONN_OK)
		return EXIT_CONNECT;
	return EXIT_OK;
}
