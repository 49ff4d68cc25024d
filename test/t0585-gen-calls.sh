#!/bin/sh
# Gen calls: gen_server and gen_statem calls paired with their replies from
# the tracer's records, in the count tier; the workload measures every call
# itself, and beamscope's numbers must agree with it.
. "$(dirname "$0")/lib.sh"

start_node bsgen || exit 1
erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_gen.erl" || exit 1
node_eval 'bs_gen:start().' >/dev/null

# close A B: A within 20% of B
close() {
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d;
		if (d <= 0.2 * b) exit 0; print a " is not within 20% of " b; exit 1 }'
}

# stat SERVER KIND FIELD: the last gen_call_stats line's FIELD
stat() {
	jqs -r --arg s "$1" --arg k "$2" "[.[] | select(.type == \"gen_call_stats\"
		and .server_name == \$s and .kind == \$k)] | last | .$3"
}

# wait_line JQ [SECONDS]: until a line of bs.json matches
wait_line() {
	tries=$(awk "BEGIN { print int(${2:-10} * 10) }")
	for _ in $(seq 1 "$tries"); do
		jq -e -s "$1" "$TRASH/bs.json" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "no line matched: $1"; tail -5 "$TRASH/bs.json"
	return 1
}

test_expect_success 'counts and latencies per server and request kind' '
	bs_start --gen-calls --slower-than 30 --interval 0.5 --duration 0 --summary &&
	bs_wait_attached &&
	truth=$(node_eval "bs_gen:run(300, 60).") &&
	fsm=$(node_eval "bs_gen:statem(50).") &&
	sr=$(node_eval "bs_gen:run_send_request(20).") &&
	sleep 0.7 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	echo "truth $truth fsm $fsm" &&
	jqs -c ".[] | select(.type == \"gen_call_stats\")" | tail -8 &&
	set -- $(echo "$truth" | tr -c "0-9\n" " ") &&
	expect "$(stat bs_gen_srv get calls)" -eq 300 &&
	close "$(stat bs_gen_srv get p50_us)" "$2" &&
	close "$(stat bs_gen_srv get p99_us)" "$3" &&
	expect "$(stat bs_gen_srv put calls)" -eq 60 &&
	expect "$(stat bs_gen_srv sr calls)" -eq 20 &&
	close "$(stat bs_gen_srv put p50_us)" "$5" &&
	close "$(stat bs_gen_srv put p99_us)" "$6" &&
	set -- $(echo "$fsm" | tr -c "0-9\n" " ") &&
	expect "$(stat bs_gen_fsm ping calls)" -eq 50 &&
	close "$(stat bs_gen_fsm ping p50_us)" "$2" &&
	expect "$(stat bs_gen_srv get in_flight)" -eq 0 &&
	cp "$TRASH/bs.json" "$TRASH/gen.json" && cp "$TRASH/bs.json" /tmp/gcall-gen.json && cp "$TRASH/bs.err" "$TRASH/gen.err" &&
	target_clean 2
'

test_expect_success '--slower-than 30 writes exactly the slow calls' '
	jq -e -s "[.[] | select(.type == \"slow_call\")] |
		length == 30 and all(.kind == \"get\" and .latency_us > 30000 and
		.server_name == \"bs_gen_srv\" and .request == \"get\" and
		(.reply | startswith(\"{ok,\")) and .replied_ts - .sent_ts == .latency_us)" \
		"$TRASH/gen.json"
'

test_expect_success '--summary: the busiest processes and the slowest servers' '
	grep -q "busiest processes" "$TRASH/gen.err" &&
	grep -q "slowest servers" "$TRASH/gen.err" &&
	grep -E "^ +300 .*bs_gen_srv \(get\)" "$TRASH/gen.err"
'

test_expect_success 'a server with no name is named as the table names it: bs_gen:init/1' '
	bs_start --gen-calls --interval 0.5 --duration 0 --summary &&
	bs_wait_attached &&
	pid=$(node_eval "bs_gen:unnamed(20)." | tr -d "\"") && echo "server $pid" &&
	sleep 1 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -c "[.[] | select(.type == \"gen_call_stats\" and .server == \"$pid\")] | last" | tee row &&
	jq -e ".server_label == \"bs_gen:init/1\" and .calls == 20 and
		(has(\"server_name\") | not)" row &&
	grep -E "^ +20 .* $pid bs_gen:init/1 \(get\)$" "$TRASH/bs.err"
'

test_expect_success 'a recording opened again gives the same numbers' '
	"$BEAMSCOPE" --open "$TRASH/gen.json" --batch --gen-calls -o "$TRASH/re.json" 2>"$TRASH/re.err" &&
	jq -e -s "[.[] | select(.type == \"gen_call_stats\" and .server_name == \"bs_gen_srv\" and .kind == \"get\")] |
		last.calls == 300" "$TRASH/re.json" &&
	a=$(jq -s -r "[.[] | select(.type == \"gen_call_stats\" and .kind == \"get\" and .server_name == \"bs_gen_srv\")] | last.p99_us" "$TRASH/gen.json") &&
	b=$(jq -s -r "[.[] | select(.type == \"gen_call_stats\" and .kind == \"get\" and .server_name == \"bs_gen_srv\")] | last.p99_us" "$TRASH/re.json") &&
	expect "$a" = "$b"
'

test_expect_success 'a call that never returns: in flight, stuck, then abandoned' '
	bs_start --gen-calls --stuck 1 --interval 0.3 --duration 0 && bs_wait_attached &&
	caller=$(node_eval "pid_to_list(bs_gen:block()).") &&
	wait_line "[.[] | select(.type == \"gen_call_stats\" and .kind == \"block\")] |
		length > 0 and last.in_flight == 1 and last.stuck == 0" 5 &&
	wait_line "[.[] | select(.type == \"gen_call_stats\" and .kind == \"block\")] |
		last.stuck == 1 and last.oldest_in_flight_us > 1000000" 5 &&
	node_eval "exit(list_to_pid($caller), kill)." &&
	wait_line "[.[] | select(.type == \"gen_call_stats\" and .kind == \"block\")] |
		last.in_flight == 0 and last.stuck == 0 and last.abandoned == 1" 5 &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e "[.[] | select(.type == \"gen_call_stats\" and .kind == \"block\") |
		.oldest_in_flight_us // empty] | length >= 2 and . == sort" &&
	target_clean 2
'
if have_elixir; then
test_expect_success 'an Elixir GenServer.call is paired too' '
	exdir=$(elixir_lib) &&
	elixirc -o "$TRASH/ebin" "$TOP/test/erl/bs_gen_ex.ex" >/dev/null &&
	start_node bsgenex -pa "$exdir/ebin" &&
	node_eval "'"'"'Elixir.BsGenEx'"'"':start()." >/dev/null &&
	bs_start --gen-calls --duration 0 && bs_wait_attached &&
	truth=$(node_eval "'"'"'Elixir.BsGenEx'"'"':run(40).") &&
	sleep 0.7 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	echo "truth $truth" && set -- $(echo "$truth" | tr -c "0-9\n" " ") &&
	expect "$(stat Elixir.BsGenEx ping calls)" -eq 40 &&
	close "$(stat Elixir.BsGenEx ping p50_us)" "$2"
'
else
	say "no elixirc (apt-get install elixir): the Elixir case is not run"
fi

# two_start NODE NODE: batch --gen-calls on both, in the background
two_start() {
	: >"$TRASH/two.err"
	"$BEAMSCOPE" "$1" "$2" --batch --cookie-file "$COOKIE_FILE" --gen-calls \
		--duration 0 -o "$TRASH/two.json" 2>"$TRASH/two.err" &
	TWO_PID=$!
}

test_expect_success 'a call from one node to a server on another is paired' '
	start_cluster bsgenc 2 && set -- $CNODES && n1=$1 && n2=$2 &&
	set -- $CNODES_FULL && full2=$2 &&
	on_node "$n2" "bs_gen:start()." >/dev/null &&
	two_start "$n1" "$n2" && pid=$TWO_PID &&
	for _ in $(seq 1 100); do [ "$(grep -c "attached to" "$TRASH/two.err")" -ge 2 ] && break; sleep 0.1; done &&
	truth=$(on_node "$n1" "bs_gen:remote('"'"'$full2'"'"', 50).") &&
	sleep 0.7 && kill -INT $pid && wait $pid &&
	echo "truth $truth" && set -- $(echo "$truth" | tr -c "0-9\n" " ") &&
	jq -s -c "[.[] | select(.type == \"gen_call_stats\" and .kind == \"put\")] | last" "$TRASH/two.json" | tee row &&
	jq -e ".calls == 50 and .in_flight == 0 and (.server | contains(\"bs_gen_srv\"))" row &&
	close "$(jq .p50_us row)" "$2"
'

test_done
