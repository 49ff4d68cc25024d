/* structs: Elixir struct modules and their fields, as a target said. */
#include "structs.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

#define STRUCTS_ASK_MAX 256

struct structs_slot {
	char *mod;
	size_t len;
	struct struct_def def;
	struct structs_slot *next;   /* the same hash */
};

static void def_free(struct struct_def *d)
{
	for (int i = 0; i < d->nfields; i++)
		free(d->fields[i]);
	free(d->fields);
	free(d->lens);
	memset(d, 0, sizeof(*d));
}

/* the map's drop: a chain of slots freed */
static void chain_free(void *val)
{
	struct structs_slot *s = *(struct structs_slot **)val, *next;
	for (; s; s = next) {
		next = s->next;
		free(s->mod);
		def_free(&s->def);
		free(s);
	}
}

void structs_init(struct structs *t)
{
	memset(t, 0, sizeof(*t));
	hmap_init(&t->map, sizeof(uint64_t), sizeof(struct structs_slot *),
		  chain_free);
}

void structs_release(struct structs *t)
{
	if (t->map.key_size)
		hmap_release(&t->map);
	for (int i = 0; i < t->nask; i++)
		free(t->ask[i]);
	free(t->ask);
	memset(t, 0, sizeof(*t));
}


static struct structs_slot *find(const struct structs *t, const char *mod,
				 size_t len)
{
	if (!t->map.key_size)
		return NULL;
	uint64_t h = hmap_hash_bytes(mod, len);
	struct structs_slot **chain = hmap_get(&t->map, &h), *s;
	for (s = chain ? *chain : NULL; s; s = s->next)
		if (s->len == len && !memcmp(s->mod, mod, len))
			return s;
	return NULL;
}

/* The slot for mod, made if need be; NULL when the table is full. */
static struct structs_slot *slot_for(struct structs *t, const char *mod,
				     size_t len)
{
	struct structs_slot *s = find(t, mod, len);
	if (s)
		return s;
	if (t->used >= STRUCTS_MAX)
		return NULL;
	if (!t->map.key_size)   /* zeroed, never made: made now */
		structs_init(t);
	uint64_t h = hmap_hash_bytes(mod, len);
	struct structs_slot **chain = hmap_put(&t->map, &h, NULL);
	s = xcalloc(1, sizeof(*s));
	s->mod = xstrndup(mod, len);
	s->len = len;
	s->def.kind = STRUCT_UNKNOWN;
	s->next = *chain;
	*chain = s;
	t->used++;
	return s;
}

int structs_set(struct structs *t, const char *mod, size_t len,
		const char *const *fields, const size_t *lens, int nfields)
{
	if (nfields > STRUCTS_FIELDS_MAX)
		return -1;
	struct structs_slot *s = slot_for(t, mod, len);
	if (!s)
		return -1;
	def_free(&s->def);
	if (nfields < 0) {
		s->def.kind = STRUCT_NONE;
		return 0;
	}
	s->def.kind = STRUCT_FIELDS;
	s->def.nfields = nfields;
	s->def.fields = xcalloc((size_t)nfields + 1, sizeof(char *));
	s->def.lens = xcalloc((size_t)nfields + 1, sizeof(size_t));
	for (int i = 0; i < nfields; i++) {
		s->def.fields[i] = xstrndup(fields[i], lens[i]);
		s->def.lens[i] = lens[i];
	}
	return 0;
}

const struct struct_def *structs_get(const struct structs *t, const char *mod,
				     size_t len)
{
	struct structs_slot *s = find(t, mod, len);
	return s ? &s->def : NULL;
}

void structs_met(struct structs *t, const char *mod, size_t len)
{
	struct structs_slot *s = find(t, mod, len);
	if (s || t->nask >= STRUCTS_ASK_MAX)
		return;
	if (!slot_for(t, mod, len))
		return;
	if (!t->ask)
		t->ask = xmalloc(STRUCTS_ASK_MAX * sizeof(*t->ask));
	t->ask[t->nask++] = xstrndup(mod, len);
}

int structs_take_asks(struct structs *t, char **mods, int max)
{
	int n = t->nask < max ? t->nask : max;
	memcpy(mods, t->ask, (size_t)n * sizeof(*mods));
	memmove(t->ask, t->ask + n, (size_t)(t->nask - n) * sizeof(*t->ask));
	t->nask -= n;
	return n;
}
