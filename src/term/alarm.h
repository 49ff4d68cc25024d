/*
 * alarm: the VM's alarms (its system monitor) that beamscope reports as
 * events, their thresholds (--alarm, :alarms), and how they are written.
 *
 * ALARM_KINDS is the one list: the VM's name, what its threshold is
 * (ms, bytes, a queue's length, or on), and the default.  An alarm is an
 * event of type EV_ALARM (event.h) whose extra is the kind's name.
 */
#ifndef BS_ALARM_H
#define BS_ALARM_H

#include <stdbool.h>
#include <stddef.h>

#include "sbuf.h"

enum alarm_unit { ALARM_MS, ALARM_BYTES, ALARM_COUNT, ALARM_FLAG };

/*  id                   the VM's name            unit         default */
#define ALARM_KINDS(X) \
	X(LONG_GC,            "long_gc",            ALARM_MS,    100) \
	X(LONG_SCHEDULE,      "long_schedule",      ALARM_MS,    100) \
	X(LARGE_HEAP,         "large_heap",         ALARM_BYTES, 256LL << 20) \
	X(LONG_MESSAGE_QUEUE, "long_message_queue", ALARM_COUNT, 10000) \
	X(BUSY_PORT,          "busy_port",          ALARM_FLAG,  1) \
	X(BUSY_DIST_PORT,     "busy_dist_port",     ALARM_FLAG,  1)

enum alarm_kind {
#define X(id, name, unit, dflt) ALARM_##id,
	ALARM_KINDS(X)
#undef X
	ALARM__COUNT
};

struct alarm_kind_info {
	const char *name;
	enum alarm_unit unit;
	long long dflt;
};

extern const struct alarm_kind_info alarm_kinds[ALARM__COUNT];

/* Thresholds: 0 is off; ms, bytes, messages, or 1 (on). */
struct alarm_spec {
	long long v[ALARM__COUNT];
};

/* Every alarm at its default. */
void alarm_spec_default(struct alarm_spec *sp);
/* Parse "on" (the defaults), "off" (none) or "k=v,..." (each named one
 * as given, a value or off; the others at their defaults): 0, or -1 with
 * a one-line message in err. */
int alarm_spec_parse(struct alarm_spec *sp, const char *text, struct sbuf *err);
/* The settings as --alarm takes them, the ones on: "long_gc=100ms,...". */
void alarm_spec_text(const struct alarm_spec *sp, struct sbuf *out);
/* Any alarm on. */
bool alarm_spec_any(const struct alarm_spec *sp);
/* An alarm for people, one line: "long_gc: a collection took 812 ms
 * (heap 64.0 MB)".  kind is the VM's name; the rest as in an EV_ALARM
 * event (-1, NULL: not known). */
void alarm_text(struct sbuf *out, const char *kind, long long elapsed_us,
		long bytes, long qlen, const char *port, const char *node,
		const char *info);
/* The kind named name, or -1. */
int alarm_kind_of(const char *name);

#endif
