/*
 * pidtext: pids as beamscope writes them, the one parser and formatter.
 *
 *   "<0.85.0>"              a pid of the node being traced (node text "0")
 *   "<name@host.85.0>"      a pid of a named node; the name may hold dots
 *                           ("<a@127.0.0.1.85.0>"): number and serial are
 *                           always the last two dot-separated fields
 *
 * Parsing is strict: number and serial are decimal digits without leading
 * zeros that fit in 32 bits, the text ends at '>', and a node name holds an
 * '@', no '<', '>' or byte below '!', and is at most PIDTEXT_NODE_MAX bytes
 * (an atom's limit).  So pidtext_format(pidtext_parse(s)) gives s back.
 */
#ifndef BS_PIDTEXT_H
#define BS_PIDTEXT_H

#include <stddef.h>
#include <stdint.h>

#include "sbuf.h"

/* longest node name, in bytes: 255 characters of up to 4 bytes */
#define PIDTEXT_NODE_MAX 1020
/* longest pid text, its NUL included */
#define PIDTEXT_MAX (PIDTEXT_NODE_MAX + 2 * 10 + 5)

struct pidtext {
	const char *node;   /* inside the parsed text; not NUL-terminated */
	size_t node_len;    /* 0: a local pid, "<0.N.S>" */
	uint32_t num;
	uint32_t serial;
};

/* Parse the NUL-terminated s; 0, or -1 when s is not a pid text. */
int pidtext_parse(const char *s, struct pidtext *out);
/* The same for the n bytes at s (no NUL needed). */
int pidtext_parse_n(const char *s, size_t n, struct pidtext *out);

/*
 * "<node.N.S>", or "<0.N.S>" when node is NULL or "", into buf as
 * snprintf does: the length it needs, NUL excluded; cut (and terminated)
 * when size is too small.  PIDTEXT_MAX is always enough for a node
 * name that pidtext_parse accepts.
 */
size_t pidtext_format(char *buf, size_t size, const char *node, uint32_t num,
		      uint32_t serial);
/* The same, appended to out. */
void pidtext_add(struct sbuf *out, const char *node, uint32_t num,
		 uint32_t serial);

#endif
