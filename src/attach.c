/* attach: from a node name on the command line to a running agent. */
#include "attach.h"

#include <stdio.h>
#include <string.h>

#include "exitcode.h"
#include "node.h"

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

/* Name, epmd and cookie checks, then the connection.  EXIT_* code. */
static int connect_target(const struct config *cfg, const char *node,
			  struct conn *c, struct sbuf *err)
{
	struct node_name nn;
	char cookie[1024];
	struct sbuf warn = SBUF_INIT, from = SBUF_INIT;
	char **names = NULL;

	if (node_name_parse(node, cfg->longnames, &nn, err) < 0)
		return EXIT_USAGE;
	if (cookie_load(cfg->cookie_file, cfg->cookie, cookie, sizeof(cookie),
			err, &warn, &from) < 0) {
		sbuf_release(&warn);
		return EXIT_USAGE;
	}
	if (warn.len)
		fprintf(stderr, "beamscope: warning: %s\n", warn.buf);
	sbuf_release(&warn);

	if (epmd_names(nn.host, &names, err) < 0) {
		sbuf_release(&from);
		return EXIT_CONNECT;
	}
	bool found = false;
	for (char **p = names; *p; p++)
		found |= !strcmp(*p, nn.alive);
	if (!found) {
		sbuf_addf(err, "node \"%s\" not found", nn.full);
		list_known(err, nn.host, names);
		node_names_free(names);
		sbuf_release(&from);
		return EXIT_CONNECT;
	}
	node_names_free(names);

	enum conn_status cs = conn_open(c, &nn, cookie, CONNECT_TMO_MS, err);
	memset(cookie, 0, sizeof(cookie));
	if (cs == CONN_AUTH)
		sbuf_addf(err, " from %s; pass the target's with --cookie-file "
			  "FILE (erl keeps it in ~/.erlang.cookie of the user "
			  "running the node, unless started with -setcookie)",
			  sbuf_str(&from));
	sbuf_release(&from);
	if (cs == CONN_AUTH)
		return EXIT_AUTH;
	if (cs != CONN_OK)
		return EXIT_CONNECT;
	return EXIT_OK;
}

int attach_open(const struct config *cfg, struct conn *c, struct agent *a,
		struct sbuf *err)
{
	return attach_open_node(cfg, cfg->node, c, a, err);
}

int attach_open_node(const struct config *cfg, const char *node,
		     struct conn *c, struct agent *a, struct sbuf *err)
{
	int rc = connect_target(cfg, node, c, err);
	if (rc != EXIT_OK)
		return rc;
	struct agent_opts ao = {
		.workers = cfg->workers,
		.dep_timeout_ms = (unsigned)(cfg->dep_timeout * 1000),
		.high_water = cfg->high_water,
		.batch_max = 2000,
		.batch_ms = 5,
	};
	return agent_attach(a, &ao, err);
}
