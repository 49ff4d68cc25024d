/* pidsel: parse --pids. */
#include "pidsel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "pidtext.h"
#include "xalloc.h"

static int parse_pid(const char *s, size_t n, struct pidsel_item *it)
{
	struct pidtext pt;
	if (pidtext_parse_n(s, n, &pt) < 0) {
		/* "<1.2.3>": well formed, but a pid of another node */
		unsigned a, b, c;
		char end;
		if (n < 64 && sscanf(s, "<%u.%u.%u%c", &a, &b, &c, &end) == 4 &&
		    end == '>' && a != 0)
			return -2;
		return -1;
	}
	if (pt.node_len)
		return -2;
	if (pt.num > PIDSEL_NUM_MAX)
		return -3;
	it->is_pid = true;
	it->num = pt.num;
	it->serial = pt.serial;
	return 0;
}

/* Registered names are atoms; Elixir's look like Elixir.MyApp.Worker.  A
 * bare name holds no blank, control or ','; any other is written as Erlang
 * prints it, quoted: 'my name', 'it\'s'; :my_server is my_server, as Elixir
 * writes it. */
static bool name_ok(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return false;
	return true;
}

/* A quoted atom at p (*p == '\''): its text into name; the bytes it takes,
 * or 0 if it is not one. */
static size_t quoted_name(const char *p, char *name, size_t namesz)
{
	size_t i = 1, k = 0;
	for (; p[i] && p[i] != '\''; i++) {
		if (p[i] == '\\' && (p[i + 1] == '\'' || p[i + 1] == '\\'))
			i++;
		else if (p[i] == '\\')
			return 0;
		if (k + 1 >= namesz)
			return 0;
		name[k++] = p[i];
	}
	if (p[i] != '\'' || k == 0 || (p[i + 1] && p[i + 1] != ','))
		return 0;
	name[k] = '\0';
	return i + 1;
}

int pidsel_parse(const char *s, struct pidsel *sel, struct sbuf *err)
{
	memset(sel, 0, sizeof(*sel));
	if (!strcmp(s, "all")) { sel->mode = SEL_ALL; return 0; }
	if (!strcmp(s, "new")) { sel->mode = SEL_NEW; return 0; }
	if (!strcmp(s, "existing")) { sel->mode = SEL_EXISTING; return 0; }

	sel->mode = SEL_LIST;
	const char *p = s;
	if (!*p) {
		sbuf_addstr(err, "--pids needs all, new, existing, or a list of "
			    "pids (<0.123.0>) and registered names");
		return -1;
	}
	while (*p) {
		size_t n = strcspn(p, ",");
		struct pidsel_item it;
		memset(&it, 0, sizeof(it));
		if (*p == '\'') {
			n = quoted_name(p, it.name, sizeof(it.name));
			if (!n) {
				sbuf_addf(err, "--pids \"%s\": a quoted name is "
					  "written 'like this', with \\' for a "
					  "quote inside", s);
				goto fail;
			}
			goto add;
		}
		if (n == 0) {
			sbuf_addf(err, "--pids \"%s\": empty item", s);
			goto fail;
		}
		if (*p == '<') {
			int r = parse_pid(p, n, &it);
			if (r == -2) {
				sbuf_addf(err, "--pids: \"%.*s\" is a pid on another "
					  "node; give pids of the target as <0.N.S>",
					  (int)n, p);
				goto fail;
			}
			if (r == -3) {
				sbuf_addf(err, "--pids: \"%.*s\" cannot be a pid: "
					  "the number of a process is below %u",
					  (int)n, p, PIDSEL_NUM_MAX + 1);
				goto fail;
			}
			if (r < 0) {
				sbuf_addf(err, "--pids: \"%.*s\" is not a pid; write it "
					  "as the shell prints it, e.g. <0.123.0>",
					  (int)n, p);
				goto fail;
			}
		} else {
			if (n >= sizeof(it.name)) {
				sbuf_addf(err, "--pids: name \"%.*s...\" is too long",
					  20, p);
				goto fail;
			}
			memcpy(it.name, p, n);
			if (!strcmp(it.name, "all") || !strcmp(it.name, "new") ||
			    !strcmp(it.name, "existing")) {
				sbuf_addf(err, "--pids: \"%s\" cannot be mixed with "
					  "other items", it.name);
				goto fail;
			}
			if (!name_ok(it.name)) {
				sbuf_addf(err, "--pids: \"%s\" is neither a pid nor "
					  "a registered name", it.name);
				goto fail;
			}
			/* :my_server, as Elixir writes an atom */
			if (it.name[0] == ':' && it.name[1] && it.name[1] != '"' &&
			    it.name[1] != ':')
				memmove(it.name, it.name + 1, n);
		}
add:
		sel->items = xrealloc(sel->items,
				      (size_t)(sel->n + 1) * sizeof(*sel->items));
		sel->items[sel->n++] = it;
		p += n;
		if (*p == ',')
			p++;
	}
	return 0;
fail:
	pidsel_release(sel);
	return -1;
}

/* before OTP 26 a local pid holds 28 bits: a 15-bit number and a 13-bit
 * serial; from OTP 26 on, 28 and 32 bits (64-bit systems) */
static unsigned num_max(int otp)
{
	return otp >= 26 ? PIDSEL_NUM_MAX : 0x7fff;
}

static unsigned serial_max(int otp)
{
	return otp >= 26 ? 0xffffffffu : 0x1fff;
}

bool pidsel_fits(int otp, unsigned num, unsigned serial)
{
	return num <= num_max(otp) && serial <= serial_max(otp);
}

void pidsel_why_not(struct sbuf *err, const char *what, int otp, unsigned num,
		    unsigned serial)
{
	sbuf_addf(err, "%s: <0.%u.%u> cannot be a pid on OTP %d: the number of "
		  "a process is at most %u, the serial at most %u", what, num,
		  serial, otp, num_max(otp), serial_max(otp));
}

int pidsel_check_otp(const struct pidsel *sel, int otp, const char *what,
		     struct sbuf *err)
{
	for (int i = 0; sel->mode == SEL_LIST && i < sel->n; i++) {
		const struct pidsel_item *it = &sel->items[i];
		if (it->is_pid && !pidsel_fits(otp, it->num, it->serial)) {
			pidsel_why_not(err, what, otp, it->num, it->serial);
			return -1;
		}
	}
	return 0;
}

void pidsel_copy(struct pidsel *dst, const struct pidsel *src)
{
	*dst = *src;
	dst->items = NULL;
	if (src->n > 0) {
		dst->items = xcalloc((size_t)src->n, sizeof(*dst->items));
		memcpy(dst->items, src->items, (size_t)src->n * sizeof(*dst->items));
	}
}

void pidsel_release(struct pidsel *sel)
{
	free(sel->items);
	sel->items = NULL;
	sel->n = 0;
}

static bool registered(const struct names *names, const char *name)
{
	for (size_t k = 0; k < names_slots(names); k++) {
		const char *s = names_slot(names, k, NULL);
		if (s && !strcmp(s, name))
			return true;
	}
	return false;
}

const char *pidsel_missing(const struct pidsel *sel,
			   const struct names *const *tables, int ntables)
{
	if (sel->mode != SEL_LIST)
		return NULL;
	for (int i = 0; i < sel->n; i++) {
		bool found = sel->items[i].is_pid;
		for (int t = 0; !found && t < ntables; t++)
			found = tables[t] && registered(tables[t], sel->items[i].name);
		if (!found)
			return sel->items[i].name;
	}
	return NULL;
}

void pidsel_on_node(const struct pidsel *sel, const struct names *names,
		    struct pidsel *out)
{
	out->mode = sel->mode;
	out->n = 0;
	out->items = xcalloc((size_t)(sel->n > 0 ? sel->n : 1),
			     sizeof(*out->items));
	for (int i = 0; i < sel->n; i++) {
		const struct pidsel_item *it = &sel->items[i];
		if (it->is_pid || registered(names, it->name))
			out->items[out->n++] = *it;
	}
}
