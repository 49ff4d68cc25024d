/* main: parse options and run the requested mode. */
#include <stdio.h>
#include <string.h>

#include "batch.h"
#include "conffile.h"
#include "exitcode.h"
#include "node.h"
#include "opts.h"
#include "sig.h"
#include "ui.h"

#ifndef BS_VERSION
#define BS_VERSION "0.1.0"
#endif
#ifndef BS_OTP_RELEASE
#define BS_OTP_RELEASE "?"
#endif
#define BS_MIN_OTP "25"

static int list_nodes(const char *host_arg)
{
	char host[256];
	char **names = NULL;
	struct sbuf err = SBUF_INIT;

	if (host_arg)
		snprintf(host, sizeof(host), "%s", host_arg);
	else if (node_this_host(false, host, sizeof(host)) < 0)
		snprintf(host, sizeof(host), "localhost");
	int n = epmd_names(host, &names, &err);
	if (n < 0) {
		fprintf(stderr, "beamscope: %s\n", err.buf);
		sbuf_release(&err);
		return EXIT_CONNECT;
	}
	for (char **p = names; *p; p++)
		printf("%s\n", *p);
	node_names_free(names);
	sbuf_release(&err);
	return EXIT_OK;
}

int main(int argc, char **argv)
{
	struct config cfg;
	struct sbuf err = SBUF_INIT;
	int rc;

	char conf[4096];
	if (opts_parse(argc, argv, conffile_path(conf, sizeof(conf)) == 0 ?
		       conf : NULL, &cfg, &err) < 0) {
		fprintf(stderr, "beamscope: %s\n", err.buf);
		rc = EXIT_USAGE;
		goto out;
	}
	if (cfg.help) {
		opts_help(stdout);
		rc = EXIT_OK;
	} else if (cfg.version) {
		printf("beamscope %s (built against OTP %s; targets need OTP %s "
		       "or newer)\n", BS_VERSION, BS_OTP_RELEASE, BS_MIN_OTP);
		rc = EXIT_OK;
	} else if (cfg.list) {
		rc = list_nodes(cfg.node);
	} else if (!cfg.node) {
		fprintf(stderr, "beamscope: no node given; these are the nodes "
			"epmd knows here:\n");
		list_nodes(NULL);
		fprintf(stderr, "attach with: beamscope NAME (see beamscope "
			"--help)\n");
		rc = EXIT_USAGE;
	} else if (!cfg.batch) {
		sig_setup();
		rc = ui_run(&cfg);
	} else {
		sig_setup();
		rc = batch_run(&cfg);
	}
out:
	opts_release(&cfg);
	sbuf_release(&err);
	return rc;
}
