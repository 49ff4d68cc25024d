#!/bin/sh
# The renderers against the target's own printer: random terms of every
# type, sent to a traced process, must print byte for byte as the target
# prints them, io_lib:format("~0tp", [T]) in Erlang syntax and
# inspect(T, limit: :infinity, printable_limit: :infinity) in Elixir syntax.
# No term here comes near the 65536 bytes of payload: one marked cut is a
# difference too (a bitstring that is not whole bytes once came out as
# "..." whatever its size).
. "$(dirname "$0")/lib.sh"

N=${RENDER_TERMS:-10000}
compile_workload && erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_terms.erl" || exit 1

Q="'"
# wait_receives N: the sink's first N receives are in the output
wait_receives() {
	for _ in $(seq 1 300); do
		[ "$(grep -c '"type":"receive"' "$TRASH/bs.json")" -ge "$1" ] && return 0
		kill -0 "$BS_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "fewer than $1 receives came"
	return 1
}

# differ SYNTAX SEED [beamscope args]: N terms through beamscope, compared
differ() {
	syn=$1 seed=$2
	shift 2
	node_eval "bs_terms:start()." >/dev/null &&
	bs_start --pids bs_terms_sink --events receive --payload-bytes 65536 \
		--duration 0 --max-events 0 "$@" && bs_wait_attached &&
	cat "$TRASH/bs.err" &&
	warm=0 &&
	if [ "$syn" = elixir ]; then
		# a struct module the target could not name when beamscope
		# attached (there is none such): the first of it is asked
		# about, then known; the terms compared come after
		node_eval "bs_terms_sink ! #{${Q}__struct__$Q => ${Q}Elixir.BsTerms.Nope$Q, id => 0}, ok." >/dev/null &&
		wait_receives 1 && sleep 0.5 && warm=1
	fi &&
	node_eval "bs_terms:run($N, $seed, $syn, \"$TRASH/own.$syn\")." >/dev/null &&
	wait_receives $((N + warm)) &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jq -r 'select(.type == "receive") | "\(if .truncated then "T" else "F" end) \(.payload | @base64)"' \
		"$TRASH/bs.json" | tail -n "+$((warm + 1))" >"$TRASH/ours.$syn" &&
	expect "$(wc -l <"$TRASH/ours.$syn")" -eq "$N" || {
		echo "$(wc -l <"$TRASH/ours.$syn") receive events, want $N"; return 1; }
	paste -d " " "$TRASH/own.$syn" "$TRASH/ours.$syn" |
		awk '$1 != $4 || $3 != "F" { print NR, $0 }' >"$TRASH/diff.$syn"
	bad=0
	while read -r nr own erl flag ours; do
		bad=$((bad + 1))
		[ "$bad" -le 20 ] || continue
		echo "term $nr: $(printf %s "$erl" | base64 -d)"
		echo "  target:    $(printf %s "$own" | base64 -d)"
		echo "  beamscope: $(printf %s "$ours" | base64 -d)$( [ "$flag" = T ] && echo " (cut)")"
	done <"$TRASH/diff.$syn"
	echo "$syn: $N terms, $bad differ"
	expect "$bad" -eq 0
}

start_node bsrender || exit 1

test_expect_success "Erlang syntax: $N random terms print as ~0tp prints them" '
	differ erlang 11 --syntax erlang
'
test_expect_success 'the target is not Elixir: Erlang syntax by itself' '
	grep -q "erlang syntax" "$TRASH/bs.err" && ! grep -q Elixir "$TRASH/bs.err"
'

# bitstrings that are not whole bytes, as they are when they fit, else
# their first whole bytes, cut: never "..."
test_expect_success 'a bitstring that is not whole bytes is cut to its first bytes, not to ...' '
	bs_start --pids bs_terms_sink --events receive --payload-bytes 64 -d 0 &&
	bs_wait_attached &&
	node_eval "[bs_terms_sink ! T || T <- [<<1:3>>, {<<1,2,3:4>>}, <<7:100001>>, [a, <<1:1>>]]], ok." &&
	for _ in $(seq 1 100); do
		[ "$(grep -c "\"type\":\"receive\"" "$TRASH/bs.json")" -ge 4 ] && break
		sleep 0.1
	done &&
	kill -INT "$BS_PID" && bs_wait &&
	jq -r "select(.type == \"receive\") | \"\(.truncated) \(.payload)\"" "$TRASH/bs.json" >got &&
	# the long one: as many bytes as the text has room for
	sed "3s/^true <<\(0,\)\{20,\}.*/true <<0,0,.../" got >got3 &&
	printf "%s\n" "false <<1:3>>" "false {<<1,2,3:4>>}" "true <<0,0,..." \
		"false [a,<<1:1>>]" >want &&
	diff -u want got3
'
stop_node

if have_elixir; then
	exdir=$(elixir_lib)
	elixirc -o "$TRASH/ebin" "$TOP/test/erl/bs_terms_ex.ex" >/dev/null || exit 1
	start_node bsrenderex -pa "$exdir/ebin" || exit 1
	node_eval "application:ensure_all_started(elixir)." >/dev/null
	test_expect_success "Elixir syntax: $N random terms print as inspect/2 prints them" '
		differ elixir 12 &&
		grep -q "OTP [0-9]*, Elixir 1\.[0-9.]*, .*elixir syntax" "$TRASH/bs.err"
	'
else
	say "no elixirc (apt-get install elixir): the Elixir case is not run"
fi
test_done
