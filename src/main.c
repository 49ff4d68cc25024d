/* main: parse options and run the requested mode. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "conffile.h"
#include "esc.h"
#include "exitcode.h"
#include "node.h"
#include "opts.h"
#include "sig.h"
#include "frontend.h"

#ifndef BS_VERSION
#define BS_VERSION "0.1.0"
#endif
#ifndef BS_OTP_RELEASE
#define BS_OTP_RELEASE "?"
#endif

static void this_host(const char *host_arg, char *host, size_t hostsz)
{
	if (host_arg)
		snprintf(host, hostsz, "%s", host_arg);
	else if (node_this_host(false, host, hostsz) < 0)
		snprintf(host, hostsz, "localhost");
}

/* --list: the names alone, one a line, for people and for completions. */
static int list_nodes(const char *host_arg)
{
	char host[256];
	char **names = NULL;
	struct sbuf err = SBUF_INIT;

	this_host(host_arg, host, sizeof(host));
	int n = epmd_names(host, &names, &err);
	if (n < 0) {
		esc_print(stderr, "beamscope: %s", err.buf);
		sbuf_release(&err);
		return EXIT_CONNECT;
	}
	for (char **p = names; *p; p++)
		esc_print(stdout, "%s", *p);
	node_names_free(names);
	sbuf_release(&err);
	return EXIT_OK;
}

/* No NODE: what is there to attach to, and how. */
static int no_node(void)
{
	char host[256];
	char **names = NULL;
	struct sbuf err = SBUF_INIT;

	this_host(NULL, host, sizeof(host));
	int n = epmd_names(host, &names, &err);
	if (n < 0)
		esc_print(stderr, "beamscope: no node given, and %s", err.buf);
	else if (n == 0)
		esc_print(stderr, "beamscope: no node given, and epmd on \"%s\" "
			  "knows no nodes; start one (erl -sname NAME), then run "
			  "beamscope NAME", host);
	else {
		esc_print(stderr, "beamscope: no node given; epmd on \"%s\" knows:",
			  host);
		for (char **p = names; *p; p++)
			esc_print(stderr, "  %s", *p);
		esc_print(stderr, "attach with: beamscope %s   (beamscope --help "
			  "for more, man beamscope for all)", names[0]);
	}
	node_names_free(names);
	sbuf_release(&err);
	return EXIT_USAGE;
}

/*
 * Started with 0, 1 or 2 closed, the first files and sockets opened would
 * take their place: a progress line would go into the distribution
 * stream, a read of the terminal into the signal pipe.  They are opened
 * on /dev/null before anything else is.
 */
static void std_fds_open(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
		if (n < 0)
			_exit(EXIT_FAIL);   /* nowhere to say so */
		if (n != fd) {
			dup2(n, fd);
			close(n);
		}
	}
}

int main(int argc, char **argv)
{
	struct config cfg;
	struct sbuf err = SBUF_INIT;
	int rc;

	std_fds_open();

	char conf[4096];
	if (opts_parse(argc, argv, conffile_path(conf, sizeof(conf)) == 0 ?
		       conf : NULL, &cfg, &err) < 0) {
		esc_print(stderr, "beamscope: %s", err.buf);
		rc = EXIT_USAGE;
		goto out;
	}
	if (cfg.help) {
		opts_help(stdout);
		rc = EXIT_OK;
	} else if (cfg.version) {
		printf("beamscope %s (built against OTP %s; targets need OTP %d "
		       "or newer)\n", BS_VERSION, BS_OTP_RELEASE, AGENT_MIN_OTP);
		rc = EXIT_OK;
	} else if (cfg.list) {
		rc = list_nodes(cfg.node);
	} else if (!cfg.node && !cfg.open) {
		rc = no_node();
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
