/* Unit tests: pid texts, parsed and formatted, and what is refused. */
#include <stdint.h>

#include "pidtext.h"
#include "tap.h"

/* s parses to node, num, serial, and formats back to itself */
static void good(const char *s, const char *node, uint32_t num, uint32_t serial)
{
	struct pidtext pt = { 0 };
	char name[200], nodebuf[PIDTEXT_NODE_MAX + 1], back[PIDTEXT_MAX];
	int rc = pidtext_parse(s, &pt);
	snprintf(name, sizeof(name), "%s parses", s);
	if (!ok(rc == 0, name))
		return;
	snprintf(nodebuf, sizeof(nodebuf), "%.*s", (int)pt.node_len, pt.node);
	snprintf(name, sizeof(name), "%s: node, number and serial", s);
	ok(!strcmp(nodebuf, node) && pt.num == num && pt.serial == serial, name);
	pidtext_format(back, sizeof(back), nodebuf, pt.num, pt.serial);
	snprintf(name, sizeof(name), "%s formats back", s);
	is(back, s, name);
}

static void bad(const char *s, const char *why)
{
	struct pidtext pt = { 0 };
	char name[200];
	snprintf(name, sizeof(name), "refused: %s", why);
	ok(pidtext_parse(s, &pt) == -1, name);
}

int main(void)
{
	plan(48);

	good("<0.85.0>", "", 85, 0);
	good("<0.0.0>", "", 0, 0);
	good("<a@h.1.2>", "a@h", 1, 2);
	good("<a@127.0.0.1.85.3>", "a@127.0.0.1", 85, 3);
	good("<0.4294967295.4294967295>", "", UINT32_MAX, UINT32_MAX);
	good("<nonode@nohost.7.0>", "nonode@nohost", 7, 0);

	bad(NULL, "NULL");
	bad("", "empty");
	bad("<0.85>", "two fields");
	bad("<0.85.0", "no closing >");
	bad("<0.85.0> ", "text after >");
	bad("0.85.0>", "no opening <");
	bad("<0.85.0>>", "two closing >");
	bad("<0.4294967296.0>", "number over 32 bits");
	bad("<0.1.99999999999>", "serial of 11 digits");
	bad("<0.085.0>", "leading zero");
	bad("<0.-1.0>", "a sign");
	bad("<0.+1.0>", "a plus sign");
	bad("<0. 1.0>", "a space");
	bad("<0.1x.0>", "a letter in the number");
	bad("<.85.0>", "no node");
	bad("<0..0>", "no number");
	bad("<0.1.>", "no serial");
	bad("<1.85.0>", "a node number, not a name");
	bad("<a.85.0>", "a node name without @");
	bad("<a b@h.85.0>", "a space in the node name");
	bad("<a<@h.85.0>", "a < in the node name");
	bad("<<0.1.2>>", "nested");
	bad("<0.1.2.>", "a dot before >");

	/* a node name as long as an atom can be, and one byte more */
	char big[PIDTEXT_MAX + 8];
	memset(big, 'x', sizeof(big));
	big[0] = '<';
	big[1] = '@';
	memcpy(big + 1 + PIDTEXT_NODE_MAX, ".1.2>", 6);
	struct pidtext pt;
	ok(pidtext_parse(big, &pt) == 0 && pt.node_len == PIDTEXT_NODE_MAX,
	   "a node name of PIDTEXT_NODE_MAX bytes");
	ok(strlen(big) + 1 <= PIDTEXT_MAX, "its text fits in PIDTEXT_MAX");
	memset(big, 'x', sizeof(big));
	big[0] = '<';
	big[1] = '@';
	memcpy(big + 2 + PIDTEXT_NODE_MAX, ".1.2>", 6);
	ok(pidtext_parse(big, &pt) == -1, "refused: a node name one byte longer");

	ok(pidtext_parse_n("<0.5.6>xyz", 7, &pt) == 0 && pt.num == 5 && pt.serial == 6,
	   "parse_n stops at its length");

	/* formatting: snprintf rules */
	char small[6];
	is_num(pidtext_format(small, sizeof(small), NULL, 123, 4), 9,
	       "format returns the length it needs");
	is(small, "<0.12", "and cuts to the buffer");
	struct sbuf sb = SBUF_INIT;
	pidtext_add(&sb, "b@h", 9, 1);
	pidtext_add(&sb, "", 10, 0);
	is(sbuf_str(&sb), "<b@h.9.1><0.10.0>", "pidtext_add appends");
	sbuf_release(&sb);
	return done_testing();
}
