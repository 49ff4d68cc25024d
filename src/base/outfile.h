/*
 * outfile: every file beamscope writes goes through here: batch -o,
 * --record and :record, :export, :chart-export and --chart -o.
 *
 * What it guarantees, whatever the name given:
 *  - a symbolic link is never followed to a file (nor to where a file
 *    would be made): refused; a link to a pipe, a terminal or a device
 *    (-o /dev/stdout) is written through, it replaces nothing;
 *  - the output is never the input: a file open for reading (the
 *    recording of --open) is refused as output by its inode, whatever
 *    name reaches it (a link, a hard link, standard output);
 *  - nothing is emptied before these checks pass;
 *  - OUTFILE_REPLACE (documents written at the end): a file is written to
 *    a temporary beside it, made by mkstemp (a new name, O_EXCL, never a
 *    link), renamed over the file by outfile_commit and removed by
 *    outfile_abort: the file is the old one or the whole new one;
 *  - OUTFILE_STREAM (a live capture, read as it grows: tail -f): the file
 *    is written in place, emptied once the checks pass.
 * A pipe, a terminal or a device is written as it is, in either mode.
 */
#ifndef BS_OUTFILE_H
#define BS_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

#include "sbuf.h"

enum outfile_mode { OUTFILE_REPLACE, OUTFILE_STREAM };

struct outfile {
	int fd;             /* -1: not open */
	FILE *f;            /* outfile_file's stream on fd, or NULL */
	char *path;         /* as given; NULL: standard output */
	char *tmp;          /* the temporary, renamed at the end; or NULL */
	bool regular;       /* a regular file (the temporary, or in place) */
};

/*
 * Open path ("-" or NULL: standard output) for writing.  input_fd: a file
 * being read that must not be the output, or -1.  0, or -1 with what is
 * wrong in err (one line, without what to do: the caller knows which
 * option or command to name).
 */
int outfile_open(struct outfile *o, const char *path, enum outfile_mode mode,
		 int input_fd, struct sbuf *err);
/* A stdio stream on the file, owned by o (closed by commit or abort). */
FILE *outfile_file(struct outfile *o);
/* Done writing: close, and put the temporary in place.  0, or -1 with
 * err ("cannot write ...") and errno, and the temporary removed. */
int outfile_commit(struct outfile *o, struct sbuf *err);
/* Give up: close, remove the temporary; the file is as it was. */
void outfile_abort(struct outfile *o);
/* What the user named, for messages. */
const char *outfile_name(const struct outfile *o);

#endif
