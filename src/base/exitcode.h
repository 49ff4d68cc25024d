/* exitcode: beamscope's exit statuses; man/beamscope.1 documents them. */
#ifndef BS_EXITCODE_H
#define BS_EXITCODE_H

enum {
	EXIT_OK = 0,        /* a limit or the user ended the run */
	EXIT_FAIL = 1,      /* anything else: output not writable, internal error */
	EXIT_USAGE = 2,     /* bad arguments */
	EXIT_CONNECT = 3,   /* no epmd, unknown node, unreachable host */
	EXIT_AUTH = 4,      /* the target refused our cookie */
	EXIT_LOST = 5,      /* the target went away mid-run */
	EXIT_REFUSED = 6,   /* target unsupported, busy, or processes not traceable */
	EXIT_INCOMPLETE = 7,/* --exact: the final counts of a worker never came */
};

#endif
