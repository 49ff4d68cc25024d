/* Unit tests: call patterns in Elixir form, turned into Erlang form. */
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
	plan(20);
	is(conv("Shop.Cache.get/1", &rc), "'Elixir.Shop.Cache':'get'/1", "Mod.fun/arity");
	ok(rc == 1, "is Elixir form");
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
	ok(rc == 0, "and said so");
	is(conv("'Elixir.Shop':get(K) when K > 3", &rc),
	   "'Elixir.Shop':get(K) when K > 3", "quoted Erlang form left alone");
	is(conv("Shop.Cache.get(k) when k > 3", &rc),
	   "'Elixir.Shop.Cache':'get'(V_k) when V_k > 3", "a head with a guard");
	is(conv("Shop.Cache.handle_call({:get, id}, _from, state) when is_integer(id) and id != 0 -> return", &rc),
	   "'Elixir.Shop.Cache':'handle_call'({'get', V_id}, _from, V_state) when "
	   "is_integer(V_id) andalso V_id /= 0 -> return", "tuples, atoms, guard tests, and");
	conv("Shop.put(%{}, _)", &rc);
	ok(rc < 0, "a map pattern is outside the subset");
	is(conv("Shop.put([h | _], \"k\", Shop.Order, -1.5) when not (h === :x)", &rc),
	   "'Elixir.Shop':'put'([V_h|_], <<\"k\"/utf8>>, 'Elixir.Shop.Order',  - 1.5) "
	   "when not (V_h =:= 'x')", "lists, strings, aliases, numbers");
	conv("Shop.Cache.get(k) when k in [1, 2]", &rc);
	ok(rc < 0 && strstr(text, "outside what the Elixir form covers") &&
	   strstr(text, "'Elixir.Shop.Cache':get(K) when K > 3 -> return"),
	   "outside the subset: what is supported instead");
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
