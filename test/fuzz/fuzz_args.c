/*
 * fuzz_args: libFuzzer target for what the command line parses: the
 * options as a whole (the input is argv, its entries split at NUL bytes),
 * --pids lists, and pid texts.  A pid text that parses must format back to
 * itself and come back from ei's decoder as beamscope encodes it for the
 * wire; a --pids list that parses must hold only pids a target can have;
 * a number option that parses must be in its range.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "esc.h"
#include "opts.h"
#include "pidsel.h"
#include "pidtext.h"
#include "wire.h"

/* The pid on the wire, decoded by ei: what was encoded, or abort.  ei
 * refuses a node name that is no UTF-8 (a real one always is). */
static void check_encoding(const char *node, uint32_t num, uint32_t serial,
			   uint32_t creation)
{
	ei_x_buff x;
	erlang_pid q;
	int idx = 1;
	ei_x_new_with_version(&x);
	if (wire_encode_pid(&x, node, num, serial, creation) < 0) {
		ei_x_free(&x);
		return;
	}
	if (wire_check(x.buff, (size_t)x.index) < 0 ||
	    ei_decode_pid(x.buff, &idx, &q) < 0 || idx != x.index ||
	    strcmp(q.node, node) || q.num != num || q.serial != serial ||
	    q.creation != creation)
		abort();
	ei_x_free(&x);
}

static void check_pidtext(const char *s, size_t n)
{
	struct pidtext pt;
	if (pidtext_parse_n(s, n, &pt) < 0)
		return;
	char node[PIDTEXT_NODE_MAX + 1];
	memcpy(node, pt.node, pt.node_len);
	node[pt.node_len] = '\0';
	char buf[PIDTEXT_MAX];
	size_t len = pidtext_format(buf, sizeof(buf), node, pt.num, pt.serial);
	if (len != n || memcmp(buf, s, n))
		abort();
	/* a local pid goes out with the target's node name and creation */
	check_encoding(pt.node_len ? node : "target@host", pt.num, pt.serial,
		       pt.num ^ pt.serial);
}

static void check_pidsel(const char *s)
{
	struct pidsel sel;
	struct sbuf err = SBUF_INIT;
	if (pidsel_parse(s, &sel, &err) == 0) {
		for (int i = 0; i < sel.n; i++)
			if (sel.items[i].is_pid && sel.items[i].num > PIDSEL_NUM_MAX)
				abort();
		struct sbuf e2 = SBUF_INIT;
		(void)pidsel_check_otp(&sel, 25, "--pids", &e2);
		(void)pidsel_check_otp(&sel, 26, "--pids", &e2);
		sbuf_release(&e2);
		pidsel_release(&sel);
	} else if (!err.len) {
		abort();   /* every refusal says why */
	}
	sbuf_release(&err);
}

static void check_opts(const char *data, size_t size)
{
	char *copy = malloc(size + 1);
	memcpy(copy, data, size);
	copy[size] = '\0';
	char *argv[66];
	int argc = 0;
	argv[argc++] = (char *)"beamscope";
	for (char *p = copy; p < copy + size + 1 && argc < 65; p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	struct config cfg;
	struct sbuf err = SBUF_INIT;
	if (opts_parse(argc, argv, NULL, &cfg, &err) == 0) {
		if (!(cfg.duration >= 0 && cfg.duration <= BS_MAX_SECONDS) ||
		    !(cfg.interval >= 0.05 && cfg.interval <= BS_MAX_SECONDS) ||
		    !(cfg.dep_timeout >= 1 && cfg.dep_timeout <= BS_MAX_DEP_TIMEOUT) ||
		    cfg.payload_bytes > 65536 || cfg.workers > 1024)
			abort();
	} else {
		if (!err.len)
			abort();
		/* the message escapes what it quotes */
		struct sbuf safe = SBUF_INIT;
		esc_addstr(&safe, err.buf);
		if (esc_needed(safe.buf, safe.len))
			abort();
		sbuf_release(&safe);
	}
	opts_release(&cfg);
	sbuf_release(&err);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *s = malloc(size + 1);
	memcpy(s, data, size);
	s[size] = '\0';
	check_pidtext(s, size);
	if (!memchr(s, '\0', size))
		check_pidsel(s);
	check_opts((const char *)data, size);
	free(s);
	return 0;
}
