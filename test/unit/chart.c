/* Unit tests: the chart's rows from a store (pairing sends with their
 * receives), the exports' escaping, and the time a ring full of messages
 * takes to chart; no terminal. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "chart.h"
#include "tap.h"

static const char *const texts[] = { "<0.1.0>", "<0.2.0>", "<0.3.0>",
				     "<0.4.0>" };

static void add(struct store *st, enum event_type t, unsigned num,
		const char *peer, const char *payload, int64_t ts)
{
	struct event e = { .type = t, .ts = ts, .pid = { num, 0, 0 },
			   .pid_text = texts[num - 1], .peer = peer,
			   .payload = payload, .elapsed_us = -1,
			   .latency_us = -1 };
	store_add_event(st, &e);
}

static struct bs_pid pidn(unsigned num)
{
	return (struct bs_pid){ num, 0, 0 };
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void pairing(void)
{
	struct store st;
	struct chart c;
	store_init(&st, 1000);
	chart_init(&c);
	chart_add_line(&c, pidn(1), texts[0], "a", 0);
	chart_add_line(&c, pidn(2), texts[1], "b", 0);
	/* b's receive is shipped before a's send: still one arrow */
	add(&st, EV_RECEIVE, 2, NULL, "{ping,1}", 110);
	add(&st, EV_SEND, 1, texts[1], "{ping,1}", 100);
	add(&st, EV_SEND, 1, texts[1], "{ping,2}", 120);   /* never received */
	add(&st, EV_SEND_DEAD, 1, "<0.9.0>", "boom", 130);
	add(&st, EV_SEND, 1, "<0.3.0>", "{away}", 140);    /* to others */
	add(&st, EV_RECEIVE, 1, NULL, "hello", 150);       /* from others */
	add(&st, EV_EXIT, 2, NULL, "{shutdown,bye}", 160);
	chart_build(&c, &st, st.next_seq);
	is_num(c.nmsgs, 5, "five messages: every send once, the lone receive once");
	is_num(c.nrows, 6, "and the exit");
	ok(c.rows[0].kind == CHART_MSG && c.rows[0].from == 0 && c.rows[0].to == 1 &&
	   c.rows[0].state == CHART_PLAIN && c.rows[0].paired,
	   "a send paired with a receive shipped before it is delivered");
	ok(c.rows[1].state == CHART_WAITING, "a send not received is waiting");
	ok(c.rows[2].state == CHART_DEAD && c.rows[2].to == 2,
	   "a send to a dead process is dead, to others");
	ok(c.rows[3].state == CHART_PLAIN && c.rows[3].to == 2,
	   "a send to others is not judged");
	ok(c.rows[4].from == 2 && c.rows[4].to == 0, "a lone receive comes from others");
	ok(c.rows[5].kind == CHART_EXIT && c.rows[5].from == 1 &&
	   !strcmp(c.rows[5].text, "{shutdown,bye}"), "the exit on b, with its reason");

	/* spawns and links: on the parent's lifeline, to the child's or the
	 * peer's when charted; the child's spawned and the peer's
	 * getting_linked are the same thing, drawn once */
	store_clear(&st);
	add(&st, EV_SPAWN, 1, texts[1], NULL, 200);
	add(&st, EV_SPAWNED, 2, texts[0], NULL, 201);
	add(&st, EV_LINK, 1, texts[1], NULL, 202);
	add(&st, EV_GETTING_LINKED, 2, texts[0], NULL, 203);
	add(&st, EV_LINK, 2, "<0.3.0>", NULL, 204);
	chart_build(&c, &st, st.next_seq);
	is_num(c.nrows, 3, "a spawn and a link between lifelines drawn once each");
	ok(c.rows[0].kind == CHART_SPAWN && c.rows[0].from == 0 && c.rows[0].to == 1,
	   "the spawn from the parent to the child");
	ok(c.rows[1].kind == CHART_LINK && c.rows[1].from == 0 && c.rows[1].to == 1,
	   "the link between the two");
	ok(c.rows[2].kind == CHART_LINK && c.rows[2].to == 2, "a link to others");
	is_num(c.nmsgs, 0, "none of them is a message");
	store_clear(&st);
	add(&st, EV_RECEIVE, 2, NULL, "{ping,1}", 110);
	add(&st, EV_SEND, 1, texts[1], "{ping,1}", 100);
	add(&st, EV_SEND, 1, texts[1], "{ping,2}", 120);

	/* a receive that timed out: a row on its lifeline, not an arrow */
	add(&st, EV_TIMEOUT, 2, NULL, "timeout", 130);
	chart_build(&c, &st, st.next_seq);
	ok(c.nrows == 3 && c.rows[2].kind == CHART_TIMEOUT && c.rows[2].from == 1 &&
	   c.nmsgs == 2, "a receive timeout on b's lifeline, no message");
	store_clear(&st);
	add(&st, EV_RECEIVE, 2, NULL, "{ping,1}", 110);
	add(&st, EV_SEND, 1, texts[1], "{ping,1}", 100);
	add(&st, EV_SEND, 1, texts[1], "{ping,2}", 120);

	/* b charted only from the second send on: the first is not judged,
	 * nor paired (both ends were not shipped when it was sent) */
	c.lines[1].since = store_oldest_seq(&st) + 2;
	chart_build(&c, &st, st.next_seq);
	ok(c.nrows == 3 && c.rows[0].state == CHART_PLAIN && !c.rows[0].paired &&
	   c.rows[1].from == c.nlines && c.rows[2].state == CHART_WAITING,
	   "a send before its receiver was charted is not judged nor paired");
	/* the end: paused, the rows stop there */
	chart_build(&c, &st, store_oldest_seq(&st) + 2);
	is_num(c.nmsgs, 2, "rows end where the chart was paused");
	chart_release(&c);
	store_release(&st);
}

/* the rows of c from time ts on, as text: "from>to state text", one a line */
static void rows_from(const struct chart *c, int64_t ts, char *out, size_t n)
{
	size_t len = 0;
	out[0] = '\0';
	for (size_t i = 0; i < c->nrows && len < n; i++) {
		const struct chart_row *r = &c->rows[i];
		if (r->ts < ts)
			continue;
		len += (size_t)snprintf(out + len, n - len, "%d>%d %d %d %s\n",
					r->from, r->to, r->kind, r->state, r->text);
	}
}

/* A ping-pong (1 pings 2, 2 pongs back) from ts on, n rounds, 10 us
 * apart; with lost, the first ping's receive and the first pong's send
 * are not there (2's focus was not in effect yet). */
static void ping_pong(struct store *st, int64_t ts, int n, bool lost)
{
	for (int k = 0; k < n; k++, ts += 10) {
		add(st, EV_SEND, 1, texts[1], "ping", ts);
		if (!(lost && k == 0)) {
			add(st, EV_RECEIVE, 2, NULL, "ping", ts + 1);
			add(st, EV_SEND, 2, texts[0], "pong", ts + 2);
		}
		add(st, EV_RECEIVE, 1, NULL, "pong", ts + 3);
	}
}

static size_t count_rows(const struct chart *c, int64_t from_ts, int from,
			 int state)
{
	size_t n = 0;
	for (size_t i = 0; i < c->nrows; i++)
		n += c->rows[i].ts >= from_ts && c->rows[i].kind == CHART_MSG &&
			(from < 0 || c->rows[i].from == from) &&
			(state < 0 || (int)c->rows[i].state == state);
	return n;
}

/* Processes charted at different times: pong's log was open a while
 * (its receives and sends stored, ping's not), then both were charted.
 * What was stored before cannot pair with what came after, a receive
 * never pairs with a later send, and a receive lost while the focus took
 * effect does not shift the pairs that follow. */
static void tagged_apart(void)
{
	struct store st;
	struct chart c;
	store_init(&st, 10000);
	for (int k = 0; k < 10; k++) {   /* pong in focus alone */
		add(&st, EV_RECEIVE, 2, NULL, "ping", 1000 + 10 * k + 1);
		add(&st, EV_SEND, 2, texts[0], "pong", 1000 + 10 * k + 2);
	}
	uint64_t since = st.next_seq;    /* q, then s: both charted */
	ping_pong(&st, 2000, 20, true);
	chart_init(&c);
	chart_add_line(&c, pidn(1), texts[0], "ping", since);
	chart_add_line(&c, pidn(2), texts[1], "pong", since);
	chart_build(&c, &st, st.next_seq);
	is_num(c.nmsgs, 20 + 40, "every message once: the 20 old ones, 20 pings, "
	       "19 pongs since and the pong pong's focus missed");
	is_num(count_rows(&c, 2000, c.nlines, -1), 1,
	       "since both were charted, one arrow from others: the pong sent "
	       "before pong's focus took effect");
	is_num(count_rows(&c, 0, -1, CHART_WAITING), 0, "no pong left not received");
	is_num(count_rows(&c, 0, 0, -1), 20, "each ping drawn once, from ping");
	is_num(count_rows(&c, 0, 1, -1), 10 + 19, "each pong drawn once, from pong");
	is_num(count_rows(&c, 0, c.nlines, -1), 11,
	       "the receives stored before ping was charted come from others");
	size_t lone = 0;
	for (size_t i = 0; i < c.nrows; i++)
		lone += c.rows[i].ts == 2000 && c.rows[i].state == CHART_PLAIN &&
			c.rows[i].from == 0;
	is_num(lone, 1, "the ping whose receive was lost is not judged");

	/* the same events as batch --chart sees them, both charted from the
	 * start: the same rows from then on */
	struct store st2;
	struct chart c2;
	store_init(&st2, 10000);
	ping_pong(&st2, 2000, 20, true);
	chart_init(&c2);
	chart_add_line(&c2, pidn(1), texts[0], "ping", 0);
	chart_add_line(&c2, pidn(2), texts[1], "pong", 0);
	chart_build(&c2, &st2, st2.next_seq);
	static char got[8192], want[8192];
	rows_from(&c, 2000, got, sizeof(got));
	rows_from(&c2, 2000, want, sizeof(want));
	ok(!strcmp(got, want) && strlen(got) > 100,
	   "the view's rows equal batch's for the same events");
	if (strcmp(got, want))
		printf("# want:\n%s# got:\n%s", want, got);
	chart_release(&c2);
	store_release(&st2);

	/* a receive never pairs with a send made after it */
	store_clear(&st);
	add(&st, EV_RECEIVE, 2, NULL, "x", 100);
	add(&st, EV_SEND, 1, texts[1], "x", 200);
	c.lines[0].since = c.lines[1].since = 0;
	chart_build(&c, &st, st.next_seq);
	ok(c.nrows == 2 && c.rows[0].from == c.nlines && c.rows[1].from == 0 &&
	   c.rows[1].state == CHART_WAITING,
	   "a receive before the same text is sent comes from others; the "
	   "send waits");

	/* a process that has done nothing since it was charted: a send to
	 * it waits (it may be stuck); one quiet past the grace: what was
	 * sent in the first second is not judged, what came after is */
	store_clear(&st);
	add(&st, EV_SEND, 1, texts[1], "m1", 10000);
	c.lines[1].since = store_oldest_seq(&st);
	chart_build(&c, &st, st.next_seq);
	ok(c.nrows == 1 && c.rows[0].state == CHART_WAITING,
	   "a send to a process silent since it was charted waits");
	add(&st, EV_SEND, 1, texts[1], "m2", 10000 + 1500000);
	add(&st, EV_RECEIVE, 2, NULL, "m2", 10000 + 1600000);
	chart_build(&c, &st, st.next_seq);
	ok(c.nrows == 2 && c.rows[0].state == CHART_PLAIN && c.rows[1].paired,
	   "its first message a while later: sends of its first second are not "
	   "judged, a later one pairs");
	chart_release(&c);
	store_release(&st);
}

static char *written(const struct chart *c, enum chart_format f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	chart_write(c, f, m);
	fclose(m);
	return buf;
}

static void escaping(void)
{
	struct store st;
	struct chart c;
	store_init(&st, 100);
	chart_init(&c);
	chart_add_line(&c, pidn(1), texts[0], "a\"b", 0);
	char big[600];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	add(&st, EV_SEND, 1, "<0.5.0>", "q\";#<>\n\x1b[2J**b** //i// \\n [[l]] %%", 1);
	add(&st, EV_SEND, 1, "<0.5.0>", big, 2);
	chart_build(&c, &st, st.next_seq);

	char *m = written(&c, CHART_MERMAID);
	ok(strstr(m, "    participant P0 as a#34;b #60;0.1.0#62;\n") != NULL,
	   "mermaid: a participant's name escaped");
	ok(strstr(m, "    P0->>P1: q#34;#59;#35;#60;#62;#92;x#123;A#125;#92;x#123;1B#125;#91;2J") != NULL,
	   "mermaid: quotes, ;, #, <, >, newlines and escapes become entities");
	ok(!strchr(strchr(m, '\n') + 1, '\x1b'), "mermaid: no escape character");
	ok(strstr(m, "xxx...\n") && strlen(strstr(m, "    P0->>P1: xx")) < 260,
	   "mermaid: a long message cut with an ellipsis");
	free(m);

	char *p = written(&c, CHART_PLANTUML);
	ok(!strncmp(p, "@startuml\n", 10) && strstr(p, "@enduml\n"), "plantuml: framed");
	ok(strstr(p, "P0 -> P1 : q<U+0022><U+003B><U+0023><U+003C><U+003E>") != NULL,
	   "plantuml: markup characters as <U+XXXX>");
	ok(!strstr(p, "**b**") && !strstr(p, "//i//") && !strstr(p, "[[l]]") &&
	   !strstr(p, "\\n [") && !strchr(p, '\x1b'),
	   "plantuml: no creole, link, newline escape or control gets through");
	free(p);
	is_num(chart_format_of_path("x/c.puml"), CHART_PLANTUML, ".puml is PlantUML");
	is_num(chart_format_of_path("c.mmd"), CHART_MERMAID, ".mmd is Mermaid");
	is_num(chart_format_of_path("c.mmd/x"), -1, "a directory's dot is no format");
	is_num(chart_format_parse("svg"), -1, "svg is no format");
	chart_release(&c);
	store_release(&st);
}

/* A full ring of ping-pong, two of the four processes charted: what the
 * view does on every redraw. */
static void speed(void)
{
	struct store st;
	struct chart c;
	store_init(&st, 200000);
	chart_init(&c);
	chart_add_line(&c, pidn(1), texts[0], "a", 0);
	chart_add_line(&c, pidn(2), texts[1], "b", 0);
	char msg[32];
	for (int i = 0; i < 50000; i++) {
		snprintf(msg, sizeof(msg), "{ping,%d}", i % 97);
		add(&st, EV_SEND, 1, texts[1], msg, 10 * i);
		add(&st, EV_RECEIVE, 2, NULL, msg, 10 * i + 1);
		add(&st, EV_SEND, 3, texts[3], msg, 10 * i + 2);
		add(&st, EV_RECEIVE, 4, NULL, msg, 10 * i + 3);
	}
	double t0 = now_ms();
	chart_build(&c, &st, st.next_seq);
	double took = now_ms() - t0;
	is_num(c.nmsgs, 50000, "every message of the two charted, once");
	size_t waiting = 0;
	for (size_t i = 0; i < c.nrows; i++)
		waiting += c.rows[i].state == CHART_WAITING;
	is_num(waiting, 0, "every one delivered");
	/* the time is for people (valgrind runs this too); each receive
	 * compares at most PAIR_WINDOW waiting sends */
	printf("# charting a full ring took %.1f ms\n", took);
	chart_release(&c);
	store_release(&st);
}

int main(void)
{
	plan(40);
	pairing();
	tagged_apart();
	escaping();
	speed();
	return done_testing();
}
