/*
 * callpat: call patterns written the Elixir way, turned into the Erlang
 * form the agent compiles on the target.
 *
 *   Shop.Cache.get            'Elixir.Shop.Cache':get
 *   Shop.Cache.get/1          'Elixir.Shop.Cache':get/1
 *   Shop.Cache.get/_ -> return   ...:get/_ [{'_',[],[{exception_trace}]}]
 *   :ets.lookup/2 -> stack    ets:lookup/2 [{'_',[],[{message,{caller}}]}]
 *
 *   Shop.get(k) when k > 3    'Elixir.Shop':'get'(V_k) when V_k > 3
 *
 * A pattern that starts with a lower-case letter or a quote is Erlang and
 * is left as it is.  Heads and guards are turned over token by token, for
 * the subset whose meaning is the same in both languages; the target's
 * compiler then checks the result as it checks any Erlang pattern.
 */
#ifndef BS_CALLPAT_H
#define BS_CALLPAT_H

#include "sbuf.h"

/*
 * The Erlang form of pattern into out: 1 if it was in Elixir form, 0 if it
 * is Erlang already (out gets it unchanged), -1 with a one-line message in
 * err.
 */
int callpat_erlang(const char *pattern, struct sbuf *out, struct sbuf *err);

#endif
