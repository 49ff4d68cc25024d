/*
 * conffile: the config file, $XDG_CONFIG_HOME/beamscope/config: default
 * option values, one "option = value" line each, "#" starts a comment
 * line.  The options and their checks are opts'; this module finds the
 * file and reads its lines.
 */
#ifndef BS_CONFFILE_H
#define BS_CONFFILE_H

#include <stddef.h>

#include "opts.h"
#include "sbuf.h"

/* The path into buf: 0, or -1 when neither XDG_CONFIG_HOME nor HOME is set. */
int conffile_path(char *buf, size_t bufsz);

/*
 * Read path and set each line's option in cfg; the values point into
 * cfg->conf_text.  A missing file is not an error.  0, or -1 with
 * "PATH:LINE: what" in err.
 */
int conffile_read(const char *path, struct config *cfg, struct sbuf *err);

#endif
