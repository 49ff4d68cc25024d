/*
 * Unit tests: names and functions read back from their text (retext.c),
 * and the store's events rendered again in the other syntax from the
 * entries they came in (rerender.c), against what decoding them in that
 * syntax in the first place gives.
 */
#include <ei.h>

#include "decode.h"
#include "gencall.h"
#include "names.h"
#include "pidsel.h"
#include "rerender.h"
#include "retext.h"
#include "store.h"
#include "tap.h"

#define NODE "t@h"

static const char *name(enum term_syntax from, enum term_syntax to,
			const char *text)
{
	static struct sbuf sb;
	sbuf_reset(&sb);
	if (!retext_name(&sb, from, to, text))
		return "(kept)";
	return sbuf_str(&sb);
}

static const char *mfa(enum term_syntax from, enum term_syntax to,
		       const char *text)
{
	static struct sbuf sb;
	sbuf_reset(&sb);
	if (!retext_mfa(&sb, from, to, text))
		return "(kept)";
	return sbuf_str(&sb);
}

static const char *label(enum term_syntax to, const char *text)
{
	static struct sbuf sb;
	sbuf_reset(&sb);
	if (!retext_label(&sb, to, text))
		return "(kept)";
	return sbuf_str(&sb);
}

static const char *typed(const char *text)
{
	static char atom[RETEXT_ATOM_MAX];
	retext_atom_parse(text, atom, sizeof(atom));
	return atom;
}

static void test_retext(void)
{
	const enum term_syntax E = TERM_ERLANG, X = TERM_ELIXIR;
	is(name(E, X, "my_server"), ":my_server", "name: atom to Elixir");
	is(name(E, X, "Elixir.Shop.Cache"), "Shop.Cache", "name: alias to Elixir");
	is(name(E, X, "my server"), ":\"my server\"", "name: quoted in Elixir");
	is(name(X, E, ":my_server"), "my_server", "name: back to Erlang");
	is(name(X, E, "Shop.Cache"), "Elixir.Shop.Cache", "name: alias back");
	is(name(X, E, ":\"my server\""), "my server", "name: quoted back");
	is(name(X, E, ":\"a\\\"b\""), "a\"b", "name: an escaped quote back");
	is(name(X, E, "nil"), "nil", "name: nil is nil");
	is(name(X, E, "shop cache"), "(kept)", "name: no Elixir atom: kept");
	is(name(X, E, ":Shop.Cache"), "(kept)", "name: does not render back: kept");

	is(mfa(E, X, "'Elixir.Shop.Cache':init/1"), "Shop.Cache.init/1",
	       "mfa: an Elixir module");
	is(mfa(E, X, "gen_server:loop/7"), ":gen_server.loop/7",
	       "mfa: an Erlang module");
	is(mfa(E, X, "'Elixir.Foo':'with space'/2"), "Foo.\"with space\"/2",
	       "mfa: a quoted function");
	is(mfa(E, X, "erlang:'+'/2"), ":erlang.+/2", "mfa: an operator");
	is(mfa(E, X, "proc_lib:init_p"), ":proc_lib.init_p", "mfa: no arity");
	is(mfa(X, E, "Shop.Cache.init/1"), "'Elixir.Shop.Cache':init/1",
	       "mfa: back to Erlang");
	is(mfa(X, E, ":gen_server.loop/7"), "gen_server:loop/7",
	       "mfa: an Erlang module back");
	is(mfa(X, E, "Foo.\"with space\"/2"), "'Elixir.Foo':'with space'/2",
	       "mfa: a quoted function back");
	is(mfa(X, E, ":\"my mod\".f/0"), "'my mod':f/0",
	       "mfa: a quoted module back");
	is(mfa(E, X, "gen_server:lo..."), "(kept)", "mfa: a cut text is kept");
	is(mfa(X, E, "whatever it is"), "(kept)", "mfa: no function: kept");

	is(label(X, "Elixir.Shop.Worker:init/1"), "Shop.Worker.init/1",
	       "label: an initial call in Elixir");
	is(label(E, "Elixir.Shop.Worker:init/1"), "'Elixir.Shop.Worker':init/1",
	       "label: an initial call in Erlang, quoted as ~p quotes");
	is(label(E, "supervisor:bs_lbl_sup/1"), "supervisor:bs_lbl_sup/1",
	       "label: an Erlang one as it was");
	is(label(X, "{worker, 3}"), "(kept)", "label: any other label is kept");

	is(typed("Shop.Cache"), "Elixir.Shop.Cache", "typed: an alias");
	is(typed("Elixir.Shop.Cache"), "Elixir.Shop.Cache", "typed: the atom itself");
	is(typed(":my_server"), "my_server", "typed: :atom");
	is(typed(":\"my server\""), "my server", "typed: :\"atom\"");
	is(typed("'my server'"), "my server", "typed: 'atom'");
	is(typed("my_server"), "my_server", "typed: a bare atom");
	is(typed("<0.85.0>"), "<0.85.0>", "typed: a pid stays");

	struct pidsel sel;
	struct sbuf err = SBUF_INIT;
	ok(pidsel_parse(":my_server,Shop.Cache", &sel, &err) == 0 && sel.n == 2,
	   "--pids: :my_server and Shop.Cache");
	is(sel.n == 2 ? sel.items[0].name : NULL, "my_server",
	   "--pids: :my_server is my_server");
	is(sel.n == 2 ? sel.items[1].name : NULL, "Shop.Cache",
	   "--pids: Shop.Cache is left to the agent, which knows both");
	pidsel_release(&sel);
	sbuf_release(&err);
}

/* The entries of a batch, as the workers ship them. */
static void entry_send(ei_x_buff *x, unsigned from, unsigned to)
{
	erlang_pid p = { .num = from, .serial = 0, .creation = 7 };
	erlang_pid q = { .num = to, .serial = 0, .creation = 7 };
	strcpy(p.node, NODE);
	strcpy(q.node, NODE);
	ei_x_encode_tuple_header(x, 6);
	ei_x_encode_atom(x, "send");
	ei_x_encode_pid(x, &p);
	ei_x_encode_longlong(x, 1000 + from);
	ei_x_encode_pid(x, &q);
	/* %Shop.Order{id: 1, items: ["book"]} */
	ei_x_encode_map_header(x, 3);
	ei_x_encode_atom(x, "__struct__");
	ei_x_encode_atom(x, "Elixir.Shop.Order");
	ei_x_encode_atom(x, "id");
	ei_x_encode_long(x, 1);
	ei_x_encode_atom(x, "items");
	ei_x_encode_list_header(x, 1);
	ei_x_encode_binary(x, "book", 4);
	ei_x_encode_empty_list(x);
	ei_x_encode_atom(x, "false");
}

static void entry_spawn(ei_x_buff *x, unsigned from, unsigned child)
{
	erlang_pid p = { .num = from, .serial = 0, .creation = 7 };
	erlang_pid q = { .num = child, .serial = 0, .creation = 7 };
	strcpy(p.node, NODE);
	strcpy(q.node, NODE);
	ei_x_encode_tuple_header(x, 6);
	ei_x_encode_atom(x, "spawn");
	ei_x_encode_pid(x, &p);
	ei_x_encode_longlong(x, 2000);
	ei_x_encode_pid(x, &q);
	ei_x_encode_tuple_header(x, 4);
	ei_x_encode_atom(x, "Elixir.Shop.Worker");
	ei_x_encode_atom(x, "start_link");
	ei_x_encode_long(x, 1);
	ei_x_encode_list_header(x, 1);
	ei_x_encode_atom(x, "ok");
	ei_x_encode_empty_list(x);
	ei_x_encode_atom(x, "false");
}

static struct store *the_store;

static void to_store(void *arg, const struct event *ev)
{
	(void)arg;
	store_add_event(the_store, ev);
}

static void decode_into(struct store *st, enum term_syntax syn,
			const ei_x_buff *x, struct names *nt)
{
	struct decoder d;
	decoder_init(&d, NODE, 1000, nt);
	d.syn = syn;
	the_store = st;
	int idx = 0;
	decode_events(&d, x->buff, &idx, 0, to_store, NULL);
	decoder_release(&d);
}

static void test_store(void)
{
	ei_x_buff x;
	ei_x_new(&x);
	ei_x_encode_list_header(&x, 2);
	entry_send(&x, 85, 86);
	entry_spawn(&x, 85, 90);
	ei_x_encode_empty_list(&x);

	struct names nt;
	names_init(&nt);
	names_set(&nt, (struct bs_pid){ 85, 0, 0 }, "Elixir.Shop.Cache");

	/* what decoding in Elixir gives in the first place */
	struct store want;
	store_init(&want, 8);
	decode_into(&want, TERM_ELIXIR, &x, &nt);

	struct store st;
	store_init(&st, 8);
	decode_into(&st, TERM_ERLANG, &x, &nt);
	const struct sevent *e = store_event(&st, 1);
	is(e->payload, "#{'__struct__' => 'Elixir.Shop.Order',id => 1,"
	       "items => [<<\"book\">>]}", "erlang: the message");
	is(e->name, "Elixir.Shop.Cache", "erlang: the name");
	ok(e->raw && e->raw_len > 0, "the entry is kept with the event");

	struct rerender_node rn = { TERM_ERLANG, TERM_ELIXIR, NODE, 1000, { 0, NULL } };
	is_num((long)rerender_store(&st, &rn, 1), 2, "both events rendered again");
	for (uint64_t s = 1; s <= 2; s++) {
		const struct sevent *g = store_event(&st, s),
			*w = store_event(&want, s);
		is(g->payload, w->payload, "elixir: payload as if decoded so");
		is(g->name, w->name, "elixir: name as if decoded so");
		is(g->mfa, w->mfa, "elixir: function as if decoded so");
		is(g->peer, w->peer, "elixir: peer as it was");
	}
	e = store_event(&st, 1);
	is(e->payload, "%Shop.Order{id: 1, items: [\"book\"]}",
	       "elixir: the message");
	is(e->name, "Shop.Cache", "elixir: the name");
	const struct proc *p = store_proc(&st, (struct bs_pid){ 85, 0, 0 });
	is(p ? p->name : NULL, "Shop.Cache", "elixir: the process's name");
	p = store_proc(&st, (struct bs_pid){ 90, 0, 0 });
	is(p ? p->initial : NULL, "Shop.Worker.start_link/1",
	       "elixir: the child's initial call");

	rn = (struct rerender_node){ TERM_ELIXIR, TERM_ERLANG, NODE, 1000, { 0, NULL } };
	rerender_store(&st, &rn, 1);
	e = store_event(&st, 1);
	is(e->payload, "#{'__struct__' => 'Elixir.Shop.Order',id => 1,"
	       "items => [<<\"book\">>]}", "erlang again: the message");
	is(e->name, "Elixir.Shop.Cache", "erlang again: the name");
	is(store_event(&st, 2)->mfa, "'Elixir.Shop.Worker':start_link/1",
	       "erlang again: the function");

	/* one event alone, as one stored after a :syntax is */
	rn = (struct rerender_node){ TERM_ERLANG, TERM_ELIXIR, NODE, 1000, { 0, NULL } };
	rerender_one(&st, 1, &rn);
	is(store_event(&st, 1)->payload, "%Shop.Order{id: 1, items: [\"book\"]}",
	   "one event: the message in Elixir");
	is(store_event(&st, 2)->mfa, "'Elixir.Shop.Worker':start_link/1",
	   "one event: the others as they were");
	rn = (struct rerender_node){ TERM_ELIXIR, TERM_ERLANG, NODE, 1000, { 0, NULL } };
	rerender_store(&st, &rn, 1);

	/* an event without its entry (a recording's): its message stays */
	struct event bare = { .type = EV_SEND, .pid = { 85, 0, 0 },
			      .pid_text = "<0.85.0>", .name = "Elixir.Shop.Cache",
			      .payload = "{ok,x}", .elapsed_us = -1 };
	uint64_t seq = store_add_event(&st, &bare);
	rn = (struct rerender_node){ TERM_ERLANG, TERM_ELIXIR, NODE, 1000, { 0, NULL } };
	rerender_store(&st, &rn, 1);
	is(store_event(&st, seq)->payload, "{ok,x}",
	       "no entry: the message as it was");
	is(store_event(&st, seq)->name, "Shop.Cache",
	       "no entry: the name still in Elixir");
	/* a proc_lib spawn without its entry: the initial call it says
	 * too, and the child named by it */
	rn = (struct rerender_node){ TERM_ELIXIR, TERM_ERLANG, NODE, 1000, { 0, NULL } };
	rerender_store(&st, &rn, 1);
	struct event sp = { .type = EV_SPAWN, .pid = { 85, 0, 0 },
			    .pid_text = "<0.85.0>", .peer = "<0.91.0>",
			    .mfa = "proc_lib:init_p/5",
			    .extra = "'Elixir.Shop.Job':run/2", .elapsed_us = -1 };
	seq = store_add_event(&st, &sp);
	rn = (struct rerender_node){ TERM_ERLANG, TERM_ELIXIR, NODE, 1000, { 0, NULL } };
	rerender_store(&st, &rn, 1);
	is(store_event(&st, seq)->extra, "Shop.Job.run/2",
	   "no entry: a spawn's initial call in Elixir");
	is(store_event(&st, seq)->mfa, ":proc_lib.init_p/5",
	   "no entry: a spawn's function in Elixir");
	p = store_proc(&st, (struct bs_pid){ 91, 0, 0 });
	is(p ? p->initial : NULL, "Shop.Job.run/2",
	   "the child named by what it runs, in Elixir");

	store_release(&st);
	store_release(&want);
	names_release(&nt);
	ei_x_free(&x);
}

int main(void)
{
	plan(61);
	test_retext();
	test_store();
	return done_testing();
}
