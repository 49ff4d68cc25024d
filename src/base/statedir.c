/* statedir: the user's state directory for beamscope, made on demand. */
#include "statedir.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int statedir_path(char *out, size_t n)
{
	const char *state = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	int k;
	if (state && *state)
		k = snprintf(out, n, "%s/beamscope", state);
	else if (home && *home)
		k = snprintf(out, n, "%s/.local/state/beamscope", home);
	else
		return -1;
	if (k < 0 || (size_t)k >= n)
		return -1;
	/* mkdir -p */
	for (char *p = out + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(out, 0700);
			*p = '/';
		}
	if (mkdir(out, 0700) < 0 && errno != EEXIST)
		return -1;
	struct stat st;
	return stat(out, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}
