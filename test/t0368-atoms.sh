#!/bin/sh
# beamscope makes no atoms on the target, which never frees one: attaching
# again and again brings no new node name (one of eight per user and
# host, held by a lock while a beamscope runs, so that two at once differ),
# and Erlang-form --call and --match patterns naming atoms or variables
# the node does not have make none: unknown atoms are refused, named,
# and variables of any name still work; the agent reads patterns as
# erl_scan does.
. "$(dirname "$0")/lib.sh"

start_node bsatoms -eval "code:ensure_loaded(bs_calls)" || exit 1

atoms() {
	node_eval "erlang:system_info(atom_count)."
}

# attach N: N short batch runs, one after the other
attach() {
	for _ in $(seq 1 "$1"); do
		"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" -d 0.1 \
			-o /dev/null 2>err || { cat err; return 1; }
	done
}

# bad RC PATTERN-OPTION TEXT: refused in one line with status RC (once the
# run before has left the node: while its session is still being cleaned
# up, beamscope says in a line of its own that it waited for it)
bad() {
	target_clean 5 >/dev/null
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" -d 0.5 \
		"$2" "$3" >out 2>err
	rc=$?
	cat err
	expect "$rc" -eq "$1" && expect "$(wc -l <err)" -eq 1 && [ ! -s out ]
}

# none of the names exist as atoms on the node
no_atoms() {
	l=""
	for a in "$@"; do
		l="$l${l:+, }\"$a\""
	done
	n=$(node_eval "length([A || A <- [$l], is_atom(catch list_to_existing_atom(A))]).") &&
	{ [ "$n" = 0 ] || { echo "$n of $* exist on the node"; false; }; }
}

test_expect_success 'attaching 20 times more brings no new atom' '
	attach 1 && a0=$(atoms) &&
	attach 10 && a1=$(atoms) && attach 10 && a2=$(atoms) &&
	echo "atoms after one attach $a0, after ten more $a1, after ten more $a2" &&
	[ $((a1 - a0)) -le 7 ] &&
	{ [ "$a2" -eq "$a1" ] || { echo "want $a1 atoms, got $a2"; false; }; } &&
	ls "$HOME/.local/state/beamscope" | tee locks &&
	expect "$(grep -c "^name-[1-8][.]lock$" locks)" -eq 8 &&
	target_clean 2
'

# the names of the hidden nodes that connect to the target from now on
watch_names() {
	node_eval "spawn(fun() -> register(bs_seen, self()), ok = net_kernel:monitor_nodes(true, [{node_type, hidden}]), L = fun L(Acc) -> receive {nodeup, N, _} -> L([N | Acc]); {get, P} -> P ! {seen, Acc}, L(Acc); stop -> ok; _ -> L(Acc) end end, L([]) end), ok."
}
seen_names() {
	node_eval "bs_seen ! {get, self()}, receive {seen, L} -> bs_seen ! stop, lists:usort([atom_to_list(N) || N <- L]) after 2000 -> timeout end."
}

# the second is refused (one session per node), after it connected
test_expect_success 'two beamscopes at once connect by two of the eight names' '
	watch_names | grep -x ok &&
	bs_start --duration 0 && bs_wait_attached &&
	{ "$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" -d 1 \
		-o second.json 2>err2; echo $? >rc2; } &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	cat err2 && expect "$(cat rc2)" -eq 6 && grep -q "already being traced" err2 &&
	seen_names >seen && cat seen && echo && u=$(id -u) &&
	expect "$(grep -oE "beamscope_${u}_[1-8]@" seen | sort -u | wc -l)" -eq 2 &&
	target_clean 2
'

# the first patterns that compile load the compiler's modules (ms_transform
# and others), whose atoms come with them: those first, then the count
test_expect_success '--call with four atoms the node does not have: refused, named, none made' '
	bs_start --duration 0.5 --events spawn --call "bs_calls:add(A, B) when A > B -> return" \
		--match "{ok, A} when A > 1" && bs_wait && expect "$BS_RC" -eq 0 &&
	a0=$(atoms) &&
	bad 2 --call "bs_calls:add(A, B) when A =:= bs_fresh_q1; A =:= bs_fresh_q2; B =:= bs_fresh_q3; B =:= bs_fresh_q4" &&
	grep -q "line 1, column 31: the atom bs_fresh_q1 does not exist on the node, so no call can carry it; check its spelling" err &&
	bad 2 --call "bs_calls:add('"'"'bs fresh q5'"'"', _)" &&
	grep -q "column 14: the atom '"'"'bs fresh q5'"'"' does not exist on the node" err &&
	bad 6 --call "bs_fresh_mod_q6:f/1" &&
	grep -q "module bs_fresh_mod_q6 is not loaded" err &&
	bad 6 --call "bs_calls:bs_fresh_fun_q7/2" &&
	grep -q "no function of the module matches" err &&
	a1=$(atoms) && echo "atoms before $a0, after $a1" &&
	{ [ "$a1" -eq "$a0" ] || { echo "want $a0 atoms, got $a1"; false; }; } &&
	no_atoms bs_fresh_q1 bs_fresh_q2 bs_fresh_q3 bs_fresh_q4 "bs fresh q5" \
		bs_fresh_mod_q6 bs_fresh_fun_q7 &&
	target_clean 2
'

test_expect_success '--match with atoms the node does not have: refused, none made' '
	a0=$(atoms) &&
	bad 2 --match "{bs_fresh_q8, X} when X =:= bs_fresh_q9" &&
	grep -q -- "--match \"{bs_fresh_q8, X} when X =:= bs_fresh_q9\": line 1, column 2: the atom bs_fresh_q8 does not exist on the node, so no message can carry it" err &&
	a1=$(atoms) && echo "atoms before $a0, after $a1" &&
	{ [ "$a1" -eq "$a0" ] || { echo "want $a0 atoms, got $a1"; false; }; } &&
	no_atoms bs_fresh_q8 bs_fresh_q9 && target_clean 2
'

test_expect_success 'variables of names the node does not have: traced as written, none made' '
	a0=$(atoms) &&
	bs_start --duration 0 --events spawn \
		--call "bs_calls:add(BsFreshVarQ10, BsFreshVarQ11) when BsFreshVarQ10 > 90, BsFreshVarQ11 =:= 1 -> return" &&
	bs_wait_attached && node_eval "bs_calls:run(100)." >/dev/null && sleep 0.4 &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e "[.[] | select(.type == \"call\") | .args] == [range(91; 101) | \"[\(.),1]\"]" &&
	jqs -e "[.[] | select(.type == \"return\")] | length == 10" &&
	bs_start --duration 0.5 --match "{ok, BsFreshVarQ12} when BsFreshVarQ12 > 1" &&
	bs_wait && cat "$TRASH/bs.err" && expect "$BS_RC" -eq 0 &&
	bad 2 --call "bs_calls:add(A, _) when BsFreshVarQ13 > 1" &&
	grep -q "BsFreshVarQ13" err && ! grep -q BsVar err &&
	bad 2 --call "bs_calls:add(BsFreshVarQ14, ) -> return" &&
	grep -q "column 29: syntax error before: " err &&
	a1=$(atoms) && echo "atoms before $a0, after $a1" &&
	{ [ "$a1" -eq "$a0" ] || { echo "want $a0 atoms, got $a1"; false; }; } &&
	no_atoms BsFreshVarQ10 BsFreshVarQ11 BsFreshVarQ12 BsFreshVarQ13 BsFreshVarQ14 &&
	target_clean 2
'

test_expect_success 'sigils and triple-quoted strings: refused where they start' '
	bad 2 --match "{~s\"x\", _}" &&
	grep -q "column 2: a sigil is not read in a pattern" err &&
	bad 2 --call "bs_calls:add(\"\"\"
x
\"\"\", _)" &&
	grep -q "line 1, column 14: a triple-quoted string is not read in a pattern" err &&
	target_clean 2
'

# the agent's own reading of patterns against erl_scan, off any node
test_expect_success 'patterns are read as erl_scan reads them, and names that exist nowhere make no atom' '
	mkdir -p oracle &&
	erlc +export_all -o oracle "$TOP/nif/beamscope_pattern.erl" \
		"$TOP/nif/beamscope_scan.erl" \
		"$TOP/test/erl/bs_scan_oracle.erl" 2>/dev/null &&
	erl -noshell -pa oracle -eval "bs_scan_oracle:run(50000, 1), halt()." | tee res &&
	expect "$(tail -1 res)" = "50000 0 0"
'

test_done
