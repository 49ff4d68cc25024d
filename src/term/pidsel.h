/*
 * pidsel: the --pids vocabulary: all | new | existing | PID|NAME[,...].
 * PIDs are written as the target's shell prints them: <0.123.0>.
 */
#ifndef BS_PIDSEL_H
#define BS_PIDSEL_H

#include <stdbool.h>

#include "sbuf.h"

enum pidsel_mode { SEL_ALL, SEL_NEW, SEL_EXISTING, SEL_LIST };

struct pidsel_item {
	bool is_pid;
	unsigned num, serial;   /* is_pid */
	char name[256];         /* !is_pid: a registered name */
};

struct pidsel {
	enum pidsel_mode mode;
	int n;
	struct pidsel_item *items;  /* owned */
};

/* the largest number of a local pid any target has (OTP 26 on) */
#define PIDSEL_NUM_MAX 0x0fffffffu

/* Parse --pids: 0, or -1 with a one-line message in err. */
int pidsel_parse(const char *s, struct pidsel *sel, struct sbuf *err);
/*
 * Can <0.num.serial> be a process of a node that runs OTP release otp?  A
 * node drops the connection that sends it one of its own pids it cannot
 * have.
 */
bool pidsel_fits(int otp, unsigned num, unsigned serial);
/* Why it cannot, one line after "what: " into err. */
void pidsel_why_not(struct sbuf *err, const char *what, int otp, unsigned num,
		    unsigned serial);
/* Can every pid of sel be a process of a node that runs OTP release otp?
 * 0, or -1 with a one-line message in err, what (e.g. "--pids") first. */
int pidsel_check_otp(const struct pidsel *sel, int otp, const char *what,
		     struct sbuf *err);
void pidsel_release(struct pidsel *sel);
/* dst, a copy of src of its own (release it too) */
void pidsel_copy(struct pidsel *dst, const struct pidsel *src);

struct names;
/*
 * Several nodes: the part of a list of names that is registered on one
 * node (names is that node's table), into out.  Anything but a list is
 * copied as it is.  Release out with pidsel_release.
 */
void pidsel_on_node(const struct pidsel *sel, const struct names *names,
		    struct pidsel *out);
/* A name of a list that none of the tables has, or NULL. */
const char *pidsel_missing(const struct pidsel *sel,
			   const struct names *const *tables, int ntables);

#endif
