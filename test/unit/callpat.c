/* Unit tests: call patterns in Elixir form, turned into Erlang form or
 * left whole for the target's Elixir. */
#include "callpat.h"
#include "tap.h"

static char text[2048];

static const char *conv(const char *in, int *rc)
{
	struct sbuf out = SBUF_INIT, err = SBUF_INIT;
	*rc = callpat_erlang(in, &out, &err);
	snprintf(text, sizeof(text), "%s", *rc < 0 ? sbuf_str(&err) : sbuf_str(&out));
	sbuf_release(&out);
	sbuf_release(&err);
	return text;
}

int main(void)
{
	int rc;
	plan(22);
	is(conv("Shop.Cache.get/1", &rc), "'Elixir.Shop.Cache':'get'/1", "Mod.fun/arity");
	ok(rc == CALLPAT_REWRITTEN, "is Elixir form");
	is(conv("Shop.Cache.handle_call/3 -> return", &rc),
	   "'Elixir.Shop.Cache':'handle_call'/3 [{'_',[],[{exception_trace}]}]",
	   "-> return: exceptions and return values");
	is(conv("Shop.get/_ -> return, stack", &rc),
	   "'Elixir.Shop':'get'/_ [{'_',[],[{exception_trace},{message,{caller}}]}]",
	   "any arity, two actions");
	is(conv("Shop.Cache.get", &rc), "'Elixir.Shop.Cache':'get'", "every arity");
	is(conv("Shop.Cache._", &rc), "'Elixir.Shop.Cache':_", "every function");
	is(conv(":ets.lookup/2", &rc), "'ets':'lookup'/2", "an Erlang module");
	is(conv("Shop.valid?/1", &rc), "'Elixir.Shop':'valid?'/1", "a name ending in ?");
	is(conv("cache:get/1", &rc), "cache:get/1", "Erlang form left alone");
	ok(rc == CALLPAT_ERLANG, "and said so");
	is(conv("'Elixir.Shop':get(K) when K > 3", &rc),
	   "'Elixir.Shop':get(K) when K > 3", "quoted Erlang form left alone");
	/* heads: the target's Elixir reads them, here they pass whole */
	is(conv("Shop.Cache.get(k) when k > 3", &rc),
	   "Shop.Cache.get(k) when k > 3", "a head with a guard passes whole");
	ok(rc == CALLPAT_ELIXIR_HEAD, "for the target's Elixir");
	is(conv("Shop.put(%{id: id}, _) when id in ~w(a b)a -> return, stack", &rc),
	   "Shop.put(%{id: id}, _) when id in ~w(a b)a -> return, stack",
	   "maps, in, sigils and actions are not looked at here");
	ok(rc == CALLPAT_ELIXIR_HEAD, "and it says so");
	is(conv(":ets.lookup(t, k) when k > 0", &rc), ":ets.lookup(t, k) when k > 0",
	   "an Erlang module's head in Elixir form too");
	ok(rc == CALLPAT_ELIXIR_HEAD, "also for the target");
	conv("Shop.Cache(k)", &rc);
	ok(rc < 0 && strstr(text, "neither Erlang nor Elixir form") &&
	   strstr(text, "a head Mod.fun(args) when guard -> return, which the "
		  "node's own Elixir reads"), "a head needs a function; what is supported");
	conv("Shop.Cache.get/1 -> trace", &rc);
	ok(rc < 0 && strstr(text, "an action is return or stack"), "unknown action");
	conv("Shop.Cache", &rc);
	ok(rc < 0 && strstr(text, "neither Erlang nor Elixir form"), "no function");
	conv("Shop.Cache.get/x", &rc);
	ok(rc < 0, "bad arity");
	conv(":ets", &rc);
	ok(rc < 0, "a module alone");
	return done_testing();
}
