/* event: tables generated from EVENT_TYPES / EVENT_KINDS. */
#include "event.h"

#include <stdio.h>
#include <string.h>

const struct event_type_info event_types[EV__COUNT] = {
#define X(id, tag, json, kind) [EV_##id] = { tag, json, kind },
	EVENT_TYPES(X)
#undef X
};

/* EVENT_FIELDS has a row for every type, in EVENT_TYPES' order */
enum {
#define X(id, peer, peer_name, mfa, extra, payload, is) EVF_##id,
	EVENT_FIELDS(X)
#undef X
	EVF__COUNT
};
_Static_assert((int)EVF__COUNT == (int)EV__COUNT, "EVENT_FIELDS: one row per event type");
#define X(id, peer, peer_name, mfa, extra, payload, is) \
	_Static_assert((int)EVF_##id == (int)EV_##id, "EVENT_FIELDS: " #id " out of order");
EVENT_FIELDS(X)
#undef X

/* a key longer than the room fails the build (a negative array size) */
#define KEY(k) { k, ",\"" k "\":", sizeof(",\"" k "\":") - 1 + \
	0 * sizeof(char[EVENT_KEY_ROOM - (int)sizeof(",\"" k "\":")]) }
const struct event_fields event_fields[EV__COUNT] = {
#define X(id, peer, peer_name, mfa, extra, payload, is) \
	[EV_##id] = { KEY(peer), KEY(peer_name), KEY(extra), KEY(payload), mfa, is },
	EVENT_FIELDS(X)
#undef X
};
#undef KEY

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
