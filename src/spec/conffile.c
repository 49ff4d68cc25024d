/* conffile: find the config file and apply its lines through opts. */
#include "conffile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xalloc.h"

#define CONFFILE_MAX (64 * 1024)

int conffile_path(char *buf, size_t bufsz)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	int n;

	/* the XDG spec ignores a relative XDG_CONFIG_HOME */
	if (xdg && xdg[0] == '/')
		n = snprintf(buf, bufsz, "%s/beamscope/config", xdg);
	else if (home && *home)
		n = snprintf(buf, bufsz, "%s/.config/beamscope/config", home);
	else
		return -1;
	return n > 0 && (size_t)n < bufsz ? 0 : -1;
}

static char *trim(char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		s[--n] = '\0';
	return s;
}

/* The whole file, NUL-terminated, or NULL (errno; ENOENT: no file). */
static char *slurp(const char *path, struct sbuf *err)
{
	/* not blocking: a FIFO would wait for a writer in open(2) */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0) {
		if (errno != ENOENT)
			sbuf_addf(err, "cannot read config file \"%s\": %s; fix "
				  "it or use --no-config", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		sbuf_addf(err, "config file \"%s\" is not a file; fix it or use "
			  "--no-config", path);
		return NULL;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		sbuf_addf(err, "cannot read config file \"%s\": %s; fix it or "
			  "use --no-config", path, strerror(errno));
		return NULL;
	}
	char *text = xmalloc(CONFFILE_MAX + 1);
	size_t n = fread(text, 1, CONFFILE_MAX + 1, f);
	int bad = ferror(f) ? errno : 0;
	fclose(f);
	if (bad || n > CONFFILE_MAX) {
		sbuf_addf(err, "cannot read config file \"%s\": %s; fix it or "
			  "use --no-config", path,
			  bad ? strerror(bad) : "larger than 64 KiB");
		free(text);
		return NULL;
	}
	text[n] = '\0';
	if (memchr(text, '\0', n)) {
		sbuf_addf(err, "config file \"%s\" is not text (it holds a NUL "
			  "byte); fix it or use --no-config", path);
		free(text);
		return NULL;
	}
	return text;
}

int conffile_read(const char *path, struct config *cfg, struct sbuf *err)
{
	char *text = slurp(path, err);
	if (!text)
		return err->len ? -1 : 0;
	free(cfg->conf_text);
	cfg->conf_text = text;

	struct sbuf why = SBUF_INIT;
	int lineno = 0, rc = 0;
	for (char *line = text; line && rc == 0; ) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		lineno++;
		char *s = trim(line);
		line = nl ? nl + 1 : NULL;
		if (!*s || *s == '#')
			continue;
		char *eq = strchr(s, '=');
		char *name = s, *value = NULL;
		if (eq) {
			*eq = '\0';
			name = trim(s);
			value = trim(eq + 1);
		}
		if (!eq || !*name || !*value) {
			sbuf_addstr(&why, "expected \"option = value\", e.g. "
				    "\"duration = 30\"");
			rc = -1;
			break;
		}
		rc = opts_set_conf(cfg, name, value, &why);
	}
	if (rc < 0)
		sbuf_addf(err, "%s:%d: %s", path, lineno, sbuf_str(&why));
	sbuf_release(&why);
	return rc;
}
