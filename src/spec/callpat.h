/*
 * callpat: call patterns written the Elixir way.  A function named alone
 * is turned into the Erlang form the agent compiles on any node:
 *
 *   Shop.Cache.get            'Elixir.Shop.Cache':get
 *   Shop.Cache.get/1          'Elixir.Shop.Cache':get/1
 *   Shop.Cache.get/_ -> return   ...:get/_ [{'_',[],[{exception_trace}]}]
 *   :ets.lookup/2 -> stack    ets:lookup/2 [{'_',[],[{message,{caller}}]}]
 *
 * A head with arguments and guards goes to the agent as it was written,
 * and the target's own Elixir reads it there (nif/PROTOCOL.md, calls):
 *
 *   Shop.get(%{id: id}, _) when id in 1..9 -> return
 *
 * A pattern that starts with a lower-case letter or a quote is Erlang and
 * is left as it is.
 */
#ifndef BS_CALLPAT_H
#define BS_CALLPAT_H

#include "sbuf.h"

enum callpat_form {
	CALLPAT_BAD = -1,        /* err has a one-line message */
	CALLPAT_ERLANG = 0,      /* Erlang form: out has it unchanged */
	CALLPAT_REWRITTEN = 1,   /* Elixir form, out has the Erlang form */
	CALLPAT_ELIXIR_HEAD = 2, /* a head in Elixir form, out has it
				  * unchanged: for the target's Elixir */
};

/* What pattern is, and the text the agent gets for it in out. */
int callpat_erlang(const char *pattern, struct sbuf *out, struct sbuf *err);

#endif
