/* names: open-addressing hash table pid -> registered name. */
#include "names.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

struct names_slot {
	struct bs_pid pid;
	int state;        /* 0 empty, 1 live, 2 deleted */
	char *name;       /* NULL: empty (state 0) or deleted (state 2) */
};

/* "" is kept without an allocation: a table of processes asked about and
 * not named holds hundreds of thousands of them */
static char empty[1];

static char *keep(const char *name)
{
	return *name ? xstrdup(name) : empty;
}

static void let_go(char *name)
{
	if (name != empty)
		free(name);
}

void names_init(struct names *nt)
{
	nt->slots = NULL;
	nt->cap = nt->used = 0;
}

void names_release(struct names *nt)
{
	for (size_t i = 0; i < nt->cap; i++)
		let_go(nt->slots[i].name);
	free(nt->slots);
	names_init(nt);
}

static size_t hash(struct bs_pid p)
{
	uint64_t h = ((uint64_t)p.num << 32) ^ p.serial;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (size_t)h;
}

static struct names_slot *find(const struct names *nt, struct bs_pid pid)
{
	if (!nt->cap)
		return NULL;
	for (size_t i = hash(pid) & (nt->cap - 1);; i = (i + 1) & (nt->cap - 1)) {
		struct names_slot *s = &nt->slots[i];
		if (s->state == 0)
			return NULL;
		if (s->state == 1 && s->pid.num == pid.num &&
		    s->pid.serial == pid.serial)
			return s;
	}
}

static void grow(struct names *nt)
{
	struct names old = *nt;
	nt->cap = old.cap ? old.cap * 2 : 64;
	nt->slots = xcalloc(nt->cap, sizeof(*nt->slots));
	nt->used = 0;
	for (size_t i = 0; i < old.cap; i++)
		if (old.slots[i].state == 1) {
			names_set(nt, old.slots[i].pid, old.slots[i].name);
			let_go(old.slots[i].name);
		}
	free(old.slots);
}

void names_set(struct names *nt, struct bs_pid pid, const char *name)
{
	struct names_slot *s = find(nt, pid);
	if (s) {
		let_go(s->name);
		s->name = keep(name);
		return;
	}
	if ((nt->used + 1) * 2 > nt->cap)
		grow(nt);
	for (size_t i = hash(pid) & (nt->cap - 1);; i = (i + 1) & (nt->cap - 1)) {
		s = &nt->slots[i];
		if (s->state != 1) {
			if (s->state == 0)
				nt->used++;
			s->state = 1;
			s->pid = pid;
			s->name = keep(name);
			return;
		}
	}
}

void names_unset(struct names *nt, struct bs_pid pid)
{
	struct names_slot *s = find(nt, pid);
	if (s) {
		let_go(s->name);
		s->name = NULL;
		s->state = 2;
	}
}

const char *names_get(const struct names *nt, struct bs_pid pid)
{
	struct names_slot *s = find(nt, pid);
	return s ? s->name : NULL;
}

const char *names_slot(const struct names *nt, size_t i, struct bs_pid *pid)
{
	if (i >= nt->cap || nt->slots[i].state != 1)
		return NULL;
	if (pid)
		*pid = nt->slots[i].pid;
	return nt->slots[i].name;
}
