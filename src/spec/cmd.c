/* cmd: the command table, parsing and name completion. */
#include "cmd.h"

#include <stdio.h>
#include <string.h>

const struct cmd_info cmd_table[CMD__COUNT] = {
#define X(id, name, args, help, fn) [CMD_##id] = { name, args, help },
	COMMANDS(X)
#undef X
};

int cmd_parse(const char *line, struct cmd_line *cl, struct sbuf *err)
{
	memset(cl, 0, sizeof(*cl));
	size_t linelen = strlen(line);
	if (linelen >= sizeof(cl->buf)) {
		sbuf_addstr(err, "command too long");
		return -1;
	}
	memcpy(cl->buf, line, linelen + 1);

	char *words[CMD_MAX_ARGS + 1];
	int n = 0;
	for (char *p = strtok(cl->buf, " \t"); p; p = strtok(NULL, " \t")) {
		if (n == CMD_MAX_ARGS + 1) {
			sbuf_addstr(err, "too many arguments");
			return -1;
		}
		words[n++] = p;
	}
	if (n == 0) {
		sbuf_addstr(err, "empty command; :help lists them");
		return -1;
	}

	int found = -1, matches = 0;
	size_t len = strlen(words[0]);
	for (int i = 0; i < CMD__COUNT; i++) {
		if (!strcmp(cmd_table[i].name, words[0])) {
			found = i;
			matches = 1;
			break;
		}
		if (!strncmp(cmd_table[i].name, words[0], len)) {
			found = i;
			matches++;
		}
	}
	if (matches == 0) {
		sbuf_addf(err, "unknown command \"%s\"; :help lists them", words[0]);
		return -1;
	}
	if (matches > 1) {
		sbuf_addf(err, "\"%s\" is ambiguous:", words[0]);
		for (int i = 0; i < CMD__COUNT; i++)
			if (!strncmp(cmd_table[i].name, words[0], len))
				sbuf_addf(err, " %s", cmd_table[i].name);
		return -1;
	}
	cl->id = (enum cmd_id)found;
	cl->argc = n - 1;
	for (int i = 1; i < n; i++)
		cl->argv[i - 1] = words[i];
	return 0;
}

const char *cmd_complete(const char *prefix, int state)
{
	static int next;
	if (!state)
		next = 0;
	size_t len = strlen(prefix);
	while (next < CMD__COUNT) {
		const char *name = cmd_table[next++].name;
		if (!strncmp(name, prefix, len))
			return name;
	}
	return NULL;
}
