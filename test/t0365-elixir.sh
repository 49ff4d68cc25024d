#!/bin/sh
# An Elixir node: found Elixir at attach, its processes and terms shown as
# Elixir prints them, in batch and in the view; --syntax overrides.
. "$(dirname "$0")/lib.sh"
have_elixir || test_skip_all "no elixirc (apt-get install elixir)"

start_elixir_node bsshop "$TOP/test/erl/bs_shop.ex" || exit 1
node_eval "'Elixir.Shop':start()." | grep -q ok || exit 1

ORDER='%Shop.Order{id: 3, items: ["book", "pen"], status: :new, total: 300.0}'
# the order of a map's keys in Erlang is the release's: as the node prints it
ORDER_ERL=$(erl_text "#{'__struct__' => 'Elixir.Shop.Order', id => 1, items => [<<\"book\">>, <<\"pen\">>], status => new, total => 300.0}")
say "Shop.Order in Erlang: $ORDER_ERL"

# Elixir prints a struct's fields in the order its module defines them;
# a node in interactive mode loads Shop.Order only when something calls
# it, which Shop never does: beamscope asks about it the first time it
# meets one and shows the next ones in that order, read from the module's
# object file, loading nothing and making no atom there
test_expect_success 'a struct whose module is not loaded: asked once, then its fields in order' '
	expect "$(node_eval "erlang:module_loaded('"'"'Elixir.Shop.Order'"'"')." )" = false &&
	node_eval "'"'"'Elixir.Shop'"'"':run(1)." >/dev/null &&
	bs_start --events spawn --duration 0.3 && bs_wait && expect "$BS_RC" -eq 0 &&
	a0=$(node_eval "erlang:system_info(atom_count).") &&
	bs_start --events send --payload-bytes 1000 --duration 0 && bs_wait_attached &&
	node_eval "'"'"'Elixir.Shop'"'"':run(1)." >/dev/null && sleep 0.5 &&
	node_eval "'"'"'Elixir.Shop'"'"':run(1)." >/dev/null && sleep 0.5 &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	grep -o "Shop[.]Order{[^}]*}" "$TRASH/bs.json" | uniq -c &&
	last=$(grep -o "Shop[.]Order{[^}]*}" "$TRASH/bs.json" | tail -n 1) &&
	expect "$last" = "Shop.Order{id: 1, items: [\\\"book\\\", \\\"pen\\\"], status: :new, total: 300.0}" &&
	expect "$(node_eval "erlang:module_loaded('"'"'Elixir.Shop.Order'"'"')." )" = false &&
	a1=$(node_eval "erlang:system_info(atom_count).") &&
	echo "atoms before $a0, after $a1" &&
	# one of the eight names of the C node may be new (t0368)
	expect "$a1" -le $((a0 + 1)) &&
	target_clean 2
'

# a release loads every module at boot: so here from now on
node_eval "code:ensure_loaded('Elixir.Shop.Order')." | grep -q module || exit 1

test_expect_success 'batch: Elixir found at attach, names and terms in Elixir' '
	bs_start --events send,receive --payload-bytes 1000 --duration 0 &&
	bs_wait_attached &&
	grep -q "Elixir 1\.[0-9]*.*elixir syntax" "$TRASH/bs.err" &&
	node_eval "'"'"'Elixir.Shop'"'"':run(3)." &&
	for _ in $(seq 1 60); do
		grep -qF "{:reply, :ok" "$TRASH/bs.json" && break
		sleep 0.1
	done &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e --arg o "$ORDER" "[.[] | select(.type == \"receive\" and .name == \"Shop.Cache\" and
		(.payload | startswith(\"{:\\\"\$gen_call\\\", {#PID<0.\") and
		endswith(\", {:put, \" + \$o + \"}}\")))] | length == 1" &&
	jqs -e "[.[] | select(.name == \"Shop.Tasks\")] | length > 0" &&
	jqs -e "[.[] | select(.type == \"send\" and .name == \"Shop.Cache\" and
		(.payload | test(\"^\\\\{\\\\[:alias \\\\| #Reference<0[.0-9]+>\\\\], :ok\\\\}$\")))] | length == 3"
'

test_expect_success '--summary and gen_call_stats name servers as Elixir writes them' '
	bs_start --gen-calls --summary --events send --duration 0 &&
	bs_wait_attached &&
	node_eval "'"'"'Elixir.Shop'"'"':run(2)." >/dev/null &&
	sleep 0.5 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	cat "$TRASH/bs.err" &&
	grep -E "^ +[0-9]+ +[0-9]+ +[0-9]+  <0[.][0-9]+[.]0> Shop[.]Cache$" "$TRASH/bs.err" &&
	grep -E "<0[.][0-9]+[.]0> Shop[.]Cache [(]put[)]$" "$TRASH/bs.err" &&
	! grep -q "Elixir[.]Shop" "$TRASH/bs.err" &&
	jqs -e "[.[] | select(.type == \"gen_call_stats\" and .kind == \"put\") | .server_name] == [\"Shop.Cache\"]"
'

test_expect_success '--pids takes a name as Elixir writes it' '
	bs_start --events receive --pids Shop.Cache --duration 0 &&
	bs_wait_attached &&
	node_eval "'"'"'Elixir.Shop'"'"':run(1)." >/dev/null &&
	for _ in $(seq 1 60); do
		grep -qF "gen_call" "$TRASH/bs.json" && break
		sleep 0.1
	done &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e "[.[:-1][] | .name] | unique == [\"Shop.Cache\"]"
'

test_expect_success '--syntax erlang on the same node: Erlang text' '
	bs_start --events receive --payload-bytes 1000 --duration 0 --syntax erlang &&
	bs_wait_attached && grep -q "erlang syntax" "$TRASH/bs.err" &&
	node_eval "'"'"'Elixir.Shop'"'"':run(1)." &&
	for _ in $(seq 1 60); do
		grep -qF "Elixir.Shop.Cache" "$TRASH/bs.json" && break
		sleep 0.1
	done &&
	kill -INT "$BS_PID" && bs_wait &&
	jqs -e --arg o "$ORDER_ERL" "[.[] | select(.name == \"Elixir.Shop.Cache\" and (.payload |
		contains(\$o)))] | length == 1"
'

test_expect_success '--call in Elixir form: calls, returns and exceptions in Elixir' '
	bs_start --events spawn --duration 0 --payload-bytes 1000 \
		--call "Shop.Cache.lookup/1 -> return" --call ":erlang.phash2/1" &&
	bs_wait_attached &&
	node_eval "'"'"'Elixir.Shop'"'"':run(2)." >/dev/null &&
	node_eval "catch '"'"'Elixir.Shop'"'"':bad()." >/dev/null &&
	for _ in $(seq 1 40); do
		grep -q "\"exception\"" "$TRASH/bs.json" && break
		sleep 0.1
	done &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -c ".[] | select(.type == \"call\" or .type == \"return\" or .type == \"exception\")" &&
	jqs -e "[.[] | select(.type == \"call\" and .mfa == \"Shop.Cache.lookup/1\") | .args] | sort ==
		[\"[1]\", \"[2]\", \"[:not_an_id]\"]" &&
	jqs -e --arg o "%Shop.Order{id: 2, items: [\"book\", \"pen\"], status: :new, total: 300.0}" \
		"[.[] | select(.type == \"return\" and .mfa == \"Shop.Cache.lookup/1\") | .value] | any(. == \$o)" &&
	jqs -e "[.[] | select(.type == \"exception\" and .mfa == \"Shop.Cache.lookup/1\")] |
		length == 1 and .[0].class == \"error\" and .[0].reason == \":function_clause\"" &&
	target_clean 3
'

test_expect_success '--call with an Elixir head and guard: only the calls it matches' '
	bs_start --events spawn --duration 0 --payload-bytes 1000 \
		--call "Shop.Cache.lookup(id) when is_integer(id) and id > 1 -> return" &&
	bs_wait_attached &&
	node_eval "'"'"'Elixir.Shop'"'"':run(3)." >/dev/null &&
	for _ in $(seq 1 40); do
		[ "$(grep -c "\"return\"" "$TRASH/bs.json")" -ge 2 ] && break
		sleep 0.1
	done &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e "[.[] | select(.type == \"call\") | .args] | sort == [\"[2]\", \"[3]\"]" &&
	jqs -e "[.[] | select(.type == \"return\") | .value | startswith(\"%Shop.Order{id: \")] == [true, true]" &&
	target_clean 3
'

test_expect_success 'the config file key: syntax = erlang; --syntax auto overrides it' '
	mkdir -p xdg/beamscope && echo "syntax = erlang" >xdg/beamscope/config &&
	XDG_CONFIG_HOME=$PWD/xdg bs_start --events receive --duration 1 &&
	bs_wait_attached && grep -q "erlang syntax" "$TRASH/bs.err" && bs_wait &&
	XDG_CONFIG_HOME=$PWD/xdg bs_start --events receive --duration 1 --syntax auto &&
	bs_wait_attached && grep -q "elixir syntax" "$TRASH/bs.err" && bs_wait &&
	"$BEAMSCOPE" "$NODE" --batch --no-config --syntax lisp 2>err; rc=$?
	cat err; expect "$rc" -eq 2 && grep -qx "beamscope: --syntax \"lisp\": auto, erlang or elixir" err
'

if command -v tmux >/dev/null; then
test_expect_success 'the view: Elixir names in the table, Elixir terms in the log' '
	ui_start --events send,receive --payload-bytes 1000 &&
	ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "'"'"'Elixir.Shop'"'"':run(3)." >/dev/null &&
	ui_keys / Shop.Cache Enter && ui_wait "^<0[.][0-9]+[.]0> +Shop[.]Cache " 5 &&
	ui_wait "^<0[.][0-9]+[.]0> +Shop[.]Cache +:gen_server[.]loop/[0-9] " 5 &&
	ui_keys ":focus Elixir.Shop.Cache" Enter && ui_wait "nothing captured|Shop.Cache" 5 &&
	node_eval "'"'"'Elixir.Shop'"'"':run(3)." >/dev/null &&
	ui_wait "received <-  [{]:\"[$]gen_call\", [{]#PID<0[.]" 5 &&
	ui_keys Enter &&
	ui_wait "%Shop[.]Order[{]id: 3, items: [[]\"book\", \"pen\"[]], status: :new," 5 &&
	ui_keys q &&
	ui_keys ":syntax erlang" Enter && ui_wait "erlang syntax" 5 &&
	ui_keys ":syntax" Enter && ui_wait "erlang syntax" 5 &&
	node_eval "'"'"'Elixir.Shop'"'"':run(1)." >/dev/null &&
	ui_wait "received <-  [{].[$]gen_call.,[{]<0[.]" 5 &&
	ui_keys ":quit" Enter && expect "$(ui_exit_status 10)" = 0
'
fi
test_done
