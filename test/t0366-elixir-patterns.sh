#!/bin/sh
# Call heads in Elixir form, read on the target by the node's own Elixir
# parser and turned into match specs there: maps, structs, strings, in,
# elem, several when; exactly the calls they match are traced.  What match
# specs cannot say is refused in one line that says what can be said, and
# leaves the node as it was; no atom is made from the text; Erlang-form
# patterns still work; a node without Elixir says to write Erlang form.
. "$(dirname "$0")/lib.sh"
have_elixir || test_skip_all "no elixirc (apt-get install elixir)"

# a plain Erlang node first: start_elixir_node sets NODE for the rest
start_node bsplain -eval "code:ensure_loaded(bs_calls)" || exit 1
PLAIN_NODE=$NODE PLAIN_COOKIE=$COOKIE PLAIN_COOKIE_FILE=$COOKIE_FILE
start_elixir_node bsprobe "$TOP/test/erl/bs_shop.ex" "$TOP/test/erl/bs_probe.ex" || exit 1
# a release loads every module at boot, struct modules too (t0365 tests a
# node that has not loaded one)
node_eval "code:ensure_loaded('Elixir.Shop.Order')." | grep -q module || exit 1
node_eval "code:ensure_loaded('Elixir.Shop.Probe')." | grep -q module || exit 1

# probe PATTERN...: trace the patterns while Shop.Probe.run() makes its
# known calls; bs.json has what was traced
probe() {
	n=$#
	for p in "$@"; do
		set -- "$@" --call "$p"
	done
	shift "$n"
	bs_start --events spawn --duration 0 --payload-bytes 1000 "$@" &&
	bs_wait_attached &&
	{ node_eval "'Elixir.Shop.Probe':run()." | grep -qx ok ||
		{ echo "Shop.Probe.run() failed"; false; }; } && sleep 0.4 &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0
}

# a charlist as this node's Elixir writes it: ~c"gift" from 1.15 on
EXV=$(node_eval "{ok, V} = application:get_key(elixir, vsn), V." | tr -d '"')
case $EXV in
1.1[0-4].* | 1.[0-9].*) GIFT="'gift'" ;;
*) GIFT='~c\"gift\"' ;;
esac
say "Elixir $EXV: 'gift' reads $GIFT"

# args MFA: the arguments of its traced calls, in the order of the calls,
# as one JSON array
args() {
	jqs -c "[.[] | select(.type == \"call\" and .mfa == \"$1\") | .args]"
}

# want MFA JSON: its traced calls had exactly these arguments, in order
want() {
	got=$(args "$1")
	[ "$got" = "$2" ] && return 0
	echo "$1: traced $got, want $2"
	cat "$TRASH/bs.err"
	jqs -c ".[] | select(.type != \"spawn\")" | head -20
	false
}

# bad PATTERN: beamscope refuses it before anything is traced
bad() {
	target_clean 5 >/dev/null  # the run before has left the node
	"$BEAMSCOPE" "$NODE" --batch --no-config --cookie-file "$COOKIE_FILE" \
		--call "$1" >out 2>err; rc=$?
	cat err; expect "$rc" -eq 2 && expect "$(wc -l <err)" -eq 1 && [ ! -s out ]
}

test_expect_success 'a map, in, elem, a struct and a string in heads: exactly their calls' '
	probe "Shop.Probe.price(%{id: id}, _) when id > 3" \
		"Shop.Probe.tag(kind) when kind in [:new, :paid]" \
		"Shop.Probe.settle(r) when elem(r, 0) == :ok" \
		"Shop.Probe.total(%Shop.Order{status: :paid})" \
		"Shop.Probe.label(\"gift\")" &&
	want Shop.Probe.price/2 "[\"[%{id: 4, qty: 1}, \\\"EUR\\\"]\",\"[%{id: 7}, \\\"EUR\\\"]\"]" &&
	want Shop.Probe.tag/1 "[\"[:new]\",\"[:paid]\"]" &&
	want Shop.Probe.settle/1 "[\"[ok: 1]\",\"[{:ok}]\"]" &&
	want Shop.Probe.total/1 "[\"[%Shop.Order{id: 1, items: nil, status: :paid, total: 5.0}]\"]" &&
	want Shop.Probe.label/1 "[\"[\\\"gift\\\"]\"]" &&
	jqs -e "[.[] | select(.type == \"call\")] | length == 8" &&
	jqs -c ".[-1].patterns" &&
	jqs -e ".[-1].patterns | map(.functions) == [1, 1, 1, 1, 1]" &&
	target_clean 3
'

# ELIXIR_LOADED: whether the node has beamscope_elixir loaded now
elixir_loaded() {
	node_eval "code:is_loaded(beamscope_elixir) =/= false."
}

test_expect_success 'the reader of Elixir heads is loaded for them only, and leaves with the trace' '
	bs_start --events spawn --duration 0 --call "'"'"'Elixir.Shop.Probe'"'"':tag(K) when K =:= new" &&
	bs_wait_attached && erlang_form=$(elixir_loaded) &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	expect "$erlang_form" = false && target_clean 3 &&
	bs_start --events spawn --duration 0 --call "Shop.Probe.tag(kind) when kind == :new" &&
	bs_wait_attached && elixir_form=$(elixir_loaded) &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	expect "$elixir_form" = true && target_clean 3 &&
	expect "$(elixir_loaded)" = false &&
	bad "Shop.Probe.tag(kind) when kind == :bs_fresh_reader_q0" &&
	target_clean 3
'

test_expect_success 'what only Elixir reads: ~w(...)a, ranges with steps, string keys, several when, -> return' '
	probe "Shop.Probe.tag(kind) when kind in ~w(new shipped)a -> return" \
		"Shop.Probe.price(%{\"id\" => id} = item, cur) when id in 2..6//3 and map_size(item) == 1 and cur === \"EUR\"" \
		"Shop.Probe.settle(r) when r == :ok when tuple_size(r) == 0" \
		"Shop.Probe.total(%Shop.Order{total: t} = o) when t > 100 and o.id == 2 -> return, stack" \
		"Shop.Probe.label(n) when is_list(n) or n == :gift" &&
	want Shop.Probe.tag/1 "[\"[:new]\",\"[:shipped]\"]" &&
	jqs -e "[.[] | select(.type == \"return\" and .mfa == \"Shop.Probe.tag/1\") | .value] == [\":ok\", \":ok\"]" &&
	want Shop.Probe.price/2 "[\"[%{\\\"id\\\" => 5}, \\\"EUR\\\"]\"]" &&
	want Shop.Probe.settle/1 "[\"[:ok]\",\"[{}]\"]" &&
	want Shop.Probe.total/1 "[\"[%Shop.Order{id: 2, items: nil, status: :new, total: 150.0}]\"]" &&
	jqs -e "[.[] | select(.type == \"call\" and .mfa == \"Shop.Probe.total/1\")][0].caller |
		startswith(\"{Shop.Probe, :\\\"-run/0-fun-\")" &&
	want Shop.Probe.label/1 "[\"[$GIFT]\",\"[:gift]\"]" &&
	target_clean 3
'

test_expect_success 'outside what match specs say: one line naming it and what is supported; the node untouched' '
	bad "Shop.Probe.label(n) when String.starts_with?(n, \"g\")" &&
	grep -q "line 1, column 26: the call String.starts_with?/2 is not supported in an Elixir pattern; an Elixir head takes variables, _, numbers, atoms" err &&
	grep -q "a guard takes == != === !== < > <= >= and or not" err &&
	grep -q "anything else takes the Erlang form" err &&
	bad "Shop.Probe.label(\"g\" <> rest)" &&
	grep -q "column 22: <> (binary matching) is not supported in an Elixir pattern" err &&
	bad "Shop.Probe.label(n) when n in ~r/g/" &&
	grep -q "column 31: the sigil ~r is not read here" err &&
	bad "Shop.Probe.label(n) when m > 1" &&
	grep -q "the variable m is not in the head" err &&
	bad "Shop.Probe.label(n) -> trace" &&
	grep -q "column 24: an action is return or stack" err &&
	bad "Shop.Probe.label(n" &&
	grep -q "missing terminator" err &&
	long=$(printf "A%.0s" $(seq 1 250)) && long=$long.B$long.C$long &&
	bad "Shop.Probe.label(n) when $long.f(n)" &&
	grep -q "^beamscope: --call \"Shop.Probe.label(n) when $long.f(n)\": line 1, column 26: the call AAAA" err &&
	bad "Shop.Probe.lable(n)" &&
	grep -q "Shop.Probe has no such function" err &&
	target_clean 3
'

test_expect_success 'no atom is made from the text: unknown names are named, not created' '
	bad "Shop.Probe.label(bs_fresh_var_q7) when bs_fresh_var_q7 == :bs_fresh_atom_q7" &&
	grep -q "column 59: the atom :bs_fresh_atom_q7 does not exist on the node, so no call can carry it" err &&
	cafe=$(printf "caf\303\251_q7") &&
	bad "Shop.Probe.label(n) when n in [:\"$cafe\"]" &&
	grep -q "column 32: the atom :$cafe does not exist on the node" err &&
	bad "Shop.Probe.total(%Shop.Ordr{})" &&
	grep -q "no struct Shop.Ordr on the node" err &&
	expect "$(node_eval "[catch list_to_existing_atom(A) || A <- [\"bs_fresh_var_q7\", \"bs_fresh_atom_q7\", \"Elixir.Shop.Ordr\", \"Ordr\"]]." |
		grep -o badarg | wc -l)" -eq 4 &&
	target_clean 3
'

test_expect_success 'Erlang-form patterns still work on the Elixir node' '
	probe "'"'"'Elixir.Shop.Probe'"'"':tag(K) when K =:= paid; K =:= nil -> return" \
		"Shop.Probe.settle/1" &&
	want Shop.Probe.tag/1 "[\"[:paid]\",\"[nil]\"]" &&
	jqs -e "[.[] | select(.type == \"call\" and .mfa == \"Shop.Probe.settle/1\")] | length == 6" &&
	target_clean 3
'

test_expect_success 'reading a head writes nothing on the node: no parser warnings' '
	: >"$TRASH/node.$NODE.log" &&
	probe "Shop.Probe.tag(k) when k == :\"new\" or k == :\"paid\"" &&
	want Shop.Probe.tag/1 "[\"[:new]\",\"[:paid]\"]" &&
	bad "Shop.Probe.label(n) when n == \"\"\"
  a
 b
  \"\"\" and m" &&
	grep -q "line 4, column 11: the variable m is not in the head" err &&
	! grep . "$TRASH/node.$NODE.log" && target_clean 3
'

test_expect_success 'the match spec set is the one the head says; gone when beamscope is killed' '
	bs_start --duration 0 --call "Shop.Probe.tag(kind) when kind in [:new, :paid] -> return" &&
	bs_wait_attached &&
	our_info "{'"'"'Elixir.Shop.Probe'"'"', tag, 1}" match_spec | tr -d " \n" >ms &&
	cat ms && expect "$(cat ms)" = "{match_spec,[{['"'"'\$1'"'"'],[{orelse,{'"'"'=:='"'"','"'"'\$1'"'"',{const,new}},{'"'"'=:='"'"','"'"'\$1'"'"',{const,paid}}}],[{exception_trace}]}]}" &&
	kill -KILL "$BS_PID" && bs_wait && target_clean 3
'

if command -v tmux >/dev/null; then
test_expect_success 'the view: :call with an Elixir head counts exactly its calls; a refusal is said' '
	ui_start --events spawn && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys ":call Shop.Probe.tag(kind) when kind in [:new, :paid]" Enter &&
	ui_wait "calls: Shop.Probe.tag" 10 &&
	# the status line says tracing, not pending, once the pattern is set
	ui_wait "tracing [0-9]{2}:" 10 &&
	node_eval "'"'"'Elixir.Shop.Probe'"'"':run()." >/dev/null && sleep 0.8 &&
	ui_keys c && ui_wait "^Shop[.]Probe[.]tag/1 +2 " 5 &&
	ui_keys q ":call Shop.Probe.label(n) when String.length(n) > 1" Enter &&
	ui_wait "Shop.Probe.label.n. when String.length.n. > 1.: line 1, column 26: the call String[.]" 10 &&
	# taken back, and tracing again without it
	ui_wait "tracing [0-9]{2}:" 10 &&
	node_eval "'"'"'Elixir.Shop.Probe'"'"':run()." >/dev/null && sleep 0.8 &&
	ui_keys c && ui_wait "^Shop[.]Probe[.]tag/1 +4 " 5 &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 3
'
fi

test_expect_success 'a node without Elixir: a head in Elixir form says to write Erlang form' '
	"$BEAMSCOPE" "$PLAIN_NODE" --batch --no-config --cookie-file "$PLAIN_COOKIE_FILE" \
		--call "Shop.Cache.get(k) when k > 3" >out 2>err; rc=$?
	cat err; expect "$rc" -eq 2 && expect "$(wc -l <err)" -eq 1 &&
	grep -q "a head in Elixir form is read by the node.s own Elixir, and this node runs none; write it in Erlang form, e.g. .Elixir.Shop.Cache.:get(K) when K > 3 -> return" err &&
	NODE=$PLAIN_NODE COOKIE=$PLAIN_COOKIE target_clean 3
'

test_expect_success 'a node without Elixir: a function named alone in Elixir form still works' '
	NODE=$PLAIN_NODE COOKIE=$PLAIN_COOKIE COOKIE_FILE=$PLAIN_COOKIE_FILE &&
	bs_start --events spawn --duration 0 --call ":bs_calls.add/2 -> return" &&
	bs_wait_attached && node_eval "bs_calls:run(3)." | grep -qx 18 && sleep 0.4 &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e "[.[] | select(.type == \"call\" and .mfa == \"bs_calls:add/2\") | .args] == [\"[1,1]\", \"[2,1]\", \"[3,1]\"]" &&
	jqs -e "[.[] | select(.type == \"return\") | .value] == [\"2\", \"3\", \"4\"]" &&
	target_clean 3
'

test_done
