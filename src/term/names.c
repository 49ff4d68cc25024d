/* names: pid -> registered name, an owning hmap keyed by (num, serial). */
#include "names.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

struct names_key {
	uint32_t num, serial;
};

/* "" is kept without an allocation: a table of processes asked about and
 * not named holds hundreds of thousands of them */
static char empty[1];

static char *keep(const char *name)
{
	return *name ? xstrdup(name) : empty;
}

static void let_go(void *val)
{
	char *name = *(char **)val;
	if (name != empty)
		free(name);
}

static struct names_key key_of(struct bs_pid pid)
{
	return (struct names_key){ pid.num, pid.serial };
}

static size_t seen_bit(struct bs_pid pid)
{
	return (size_t)(((uint64_t)pid.num * 0x9e3779b97f4a7c15ULL) >> 52) &
		(NAMES_SEEN_BITS - 1);
}

void names_init(struct names *nt)
{
	memset(nt->seen, 0, sizeof(nt->seen));
	hmap_init(&nt->map, sizeof(struct names_key), sizeof(char *), let_go);
}

void names_release(struct names *nt)
{
	hmap_release(&nt->map);
}

void names_set(struct names *nt, struct bs_pid pid, const char *name)
{
	struct names_key k = key_of(pid);
	bool fresh;
	if (!nt->map.key_size)   /* zeroed, never made: made now */
		names_init(nt);
	size_t b = seen_bit(pid);
	nt->seen[b / 64] |= 1ULL << (b % 64);
	char **v = hmap_put(&nt->map, &k, &fresh);
	if (!fresh)
		let_go(v);
	*v = keep(name);
}

void names_unset(struct names *nt, struct bs_pid pid)
{
	struct names_key k = key_of(pid);
	hmap_del(&nt->map, &k);
}

const char *names_get(const struct names *nt, struct bs_pid pid)
{
	size_t b = seen_bit(pid);
	if (!(nt->seen[b / 64] & (1ULL << (b % 64))))
		return NULL;    /* never named (bits are never cleared) */
	struct names_key k = key_of(pid);
	char **v = hmap_get(&nt->map, &k);
	return v ? *v : NULL;
}

const char *names_slot(const struct names *nt, size_t i, struct bs_pid *pid)
{
	const void *key;
	char **v = hmap_slot(&nt->map, i, &key);
	if (!v)
		return NULL;
	if (pid) {
		struct names_key k;
		memcpy(&k, key, sizeof(k));
		*pid = (struct bs_pid){ .num = k.num, .serial = k.serial };
	}
	return *v;
}
