/* event: tables generated from EVENT_TYPES / EVENT_KINDS. */
#include "event.h"

#include <stdio.h>
#include <string.h>

const struct event_type_info event_types[EV__COUNT] = {
#define X(id, tag, json, kind) [EV_##id] = { tag, json, kind },
	EVENT_TYPES(X)
#undef X
};

static const struct { const char *name; int bit; } kinds[] = {
#define X(id, name, bit) { name, bit },
	EVENT_KINDS(X)
#undef X
};

const char *event_kind_name(int bit)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].bit == bit)
			return kinds[i].name;
	return NULL;
}

const char *event_kinds_list(void)
{
	static char list[160];
	if (!list[0])
		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
			size_t n = strlen(list);
			snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "",
				 kinds[i].name);
		}
	return list;
}

int event_kinds_parse(const char *list, char *bad, unsigned badsz)
{
	int mask = 0;
	const char *p = list;

	if (!*list) {
		snprintf(bad, badsz, "%s", "");
		return -1;
	}
	while (*p) {
		size_t n = strcspn(p, ",");
		size_t i;
		for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
			if (strlen(kinds[i].name) == n &&
			    !strncmp(kinds[i].name, p, n))
				break;
		if (i == sizeof(kinds) / sizeof(kinds[0])) {
			snprintf(bad, badsz, "%.*s", (int)n, p);
			return -1;
		}
		mask |= kinds[i].bit;
		p += n;
		if (*p == ',')
			p++;
	}
	return mask;
}
