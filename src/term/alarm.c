/*
 * alarm: the thresholds of the VM's alarms, read and written (alarm.h).
 */
#include "alarm.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const struct alarm_kind_info alarm_kinds[ALARM__COUNT] = {
#define X(id, name, unit, dflt) [ALARM_##id] = { name, unit, dflt },
	ALARM_KINDS(X)
#undef X
};

void alarm_spec_default(struct alarm_spec *sp)
{
	for (int k = 0; k < ALARM__COUNT; k++)
		sp->v[k] = alarm_kinds[k].dflt;
}

int alarm_kind_of(const char *name)
{
	for (int k = 0; k < ALARM__COUNT; k++)
		if (!strcmp(alarm_kinds[k].name, name))
			return k;
	return -1;
}

bool alarm_spec_any(const struct alarm_spec *sp)
{
	for (int k = 0; k < ALARM__COUNT; k++)
		if (sp->v[k] > 0)
			return true;
	return false;
}

/* A value in the kind's unit: > 0, or -1. */
static long long value_of(enum alarm_unit unit, const char *s)
{
	static const struct { const char *suffix; long long mul; } ms[] = {
		{ "ms", 1 }, { "s", 1000 }, { "", 1 },
	}, bytes[] = {
		{ "KB", 1LL << 10 }, { "MB", 1LL << 20 }, { "GB", 1LL << 30 },
		{ "K", 1LL << 10 }, { "M", 1LL << 20 }, { "G", 1LL << 30 },
		{ "B", 1 }, { "", 1 },
	};
	if (unit == ALARM_FLAG)
		return !strcasecmp(s, "on") || !strcmp(s, "true") ? 1 : -1;
	if (*s < '0' || *s > '9')
		return -1;
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || v <= 0 || v > (1LL << 40))
		return -1;
	if (unit == ALARM_COUNT)
		return *end ? -1 : v;
	const size_t n = unit == ALARM_MS ? sizeof(ms) / sizeof(ms[0]) :
		sizeof(bytes) / sizeof(bytes[0]);
	for (size_t i = 0; i < n; i++) {
		const char *sfx = unit == ALARM_MS ? ms[i].suffix : bytes[i].suffix;
		long long mul = unit == ALARM_MS ? ms[i].mul : bytes[i].mul;
		if (!strcasecmp(end, sfx))
			return v * mul;
	}
	return -1;
}

static const char *unit_hint(enum alarm_unit unit)
{
	switch (unit) {
	case ALARM_MS: return "a time such as 100ms or 2s";
	case ALARM_BYTES: return "a size such as 256MB or 1GB";
	case ALARM_COUNT: return "a number of messages";
	case ALARM_FLAG: return "on";
	}
	return "";
}

int alarm_spec_parse(struct alarm_spec *sp, const char *text, struct sbuf *err)
{
	alarm_spec_default(sp);
	if (!text || !strcmp(text, "on") || !strcmp(text, "default"))
		return 0;
	if (!strcmp(text, "off")) {   /* over the config file's */
		memset(sp, 0, sizeof(*sp));
		return 0;
	}
	char buf[512];
	if (strlen(text) >= sizeof(buf)) {
		sbuf_addstr(err, "--alarm: too long");
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", text);
	char *save = NULL;
	for (char *item = strtok_r(buf, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(item, '=');
		if (eq)
			*eq = '\0';
		int k = alarm_kind_of(item);
		if (k < 0) {
			sbuf_addf(err, "--alarm: unknown alarm \"%.64s\"; the VM's "
				  "are long_gc, long_schedule, large_heap, "
				  "long_message_queue, busy_port, busy_dist_port",
				  item);
			return -1;
		}
		const char *val = eq ? eq + 1 : "on";
		if (!strcmp(val, "off")) {
			sp->v[k] = 0;
			continue;
		}
		long long v = !strcmp(val, "on") && alarm_kinds[k].unit != ALARM_FLAG ?
			alarm_kinds[k].dflt : value_of(alarm_kinds[k].unit, val);
		if (v <= 0) {
			sbuf_addf(err, "--alarm: %s=%.64s: give %s, or off",
				  alarm_kinds[k].name, val,
				  unit_hint(alarm_kinds[k].unit));
			return -1;
		}
		sp->v[k] = v;
	}
	return 0;
}

static void add_value(struct sbuf *out, enum alarm_unit unit, long long v)
{
	switch (unit) {
	case ALARM_MS:
		if (v % 1000 == 0)
			sbuf_addf(out, "%llds", v / 1000);
		else
			sbuf_addf(out, "%lldms", v);
		break;
	case ALARM_BYTES:
		if (v % (1LL << 30) == 0)
			sbuf_addf(out, "%lldGB", v >> 30);
		else if (v % (1LL << 20) == 0)
			sbuf_addf(out, "%lldMB", v >> 20);
		else if (v % (1LL << 10) == 0)
			sbuf_addf(out, "%lldKB", v >> 10);
		else
			sbuf_addf(out, "%lld", v);
		break;
	case ALARM_COUNT:
		sbuf_addf(out, "%lld", v);
		break;
	case ALARM_FLAG:
		sbuf_addstr(out, "on");
		break;
	}
}

void alarm_spec_text(const struct alarm_spec *sp, struct sbuf *out)
{
	bool first = true;
	for (int k = 0; k < ALARM__COUNT; k++) {
		if (sp->v[k] <= 0)
			continue;
		sbuf_addf(out, "%s%s=", first ? "" : ",", alarm_kinds[k].name);
		add_value(out, alarm_kinds[k].unit, sp->v[k]);
		first = false;
	}
}

static void add_bytes(struct sbuf *out, long b)
{
	if (b >= (1L << 30))
		sbuf_addf(out, "%.1f GB", (double)b / (double)(1L << 30));
	else if (b >= (1L << 20))
		sbuf_addf(out, "%.1f MB", (double)b / (double)(1L << 20));
	else
		sbuf_addf(out, "%ld KB", b >> 10);
}

void alarm_text(struct sbuf *out, const char *kind, long long elapsed_us,
		long bytes, long qlen, const char *port, const char *node,
		const char *info)
{
	long long ms = elapsed_us >= 0 ? elapsed_us / 1000 : -1;
	switch (alarm_kind_of(kind ? kind : "")) {
	case ALARM_LONG_GC:
		sbuf_addf(out, "long_gc: a garbage collection took %lld ms", ms);
		if (bytes >= 0) {
			sbuf_addstr(out, " (heap ");
			add_bytes(out, bytes);
			sbuf_addstr(out, ")");
		}
		return;
	case ALARM_LARGE_HEAP:
		sbuf_addstr(out, "large_heap: its heap is ");
		add_bytes(out, bytes);
		return;
	case ALARM_LONG_SCHEDULE:
		sbuf_addf(out, "long_schedule: %lld ms on a scheduler without "
			  "a break", ms);
		if (port)
			sbuf_addf(out, " (its port %s)", port);
		if (info)
			sbuf_addf(out, ", %s", info);
		return;
	case ALARM_LONG_MESSAGE_QUEUE:
		if (info && !strcmp(info, "short"))
			sbuf_addstr(out, "long_message_queue: its queue is short "
				    "again");
		else
			sbuf_addstr(out, "long_message_queue: its queue is long");
		if (qlen >= 0)
			sbuf_addf(out, " (%ld messages)", qlen);
		return;
	case ALARM_BUSY_PORT:
		sbuf_addf(out, "busy_port: suspended, sending to the busy port "
			  "%s", port ? port : "?");
		if (info)
			sbuf_addf(out, " (%s)", info);
		return;
	case ALARM_BUSY_DIST_PORT:
		sbuf_addf(out, "busy_dist_port: suspended, sending to %s, whose "
			  "distribution port is busy", node ? node : "a node");
		return;
	default:
		sbuf_addf(out, "%s", kind ? kind : "?");
		return;
	}
}
