#!/bin/sh
# Forged gen calls: any process of the target can send messages shaped as
# gen_server calls, with any kinds, to any process, and never answer them.
# Batch --gen-calls keeps its memory bounded (kinds past a limit per server
# folded into an "(other)" row, calls in flight past a limit given up and
# counted), writes its lines, and stops at -d or at a signal however many
# calls are in flight.  A reply stamped before its call is counted out of
# order, not timed.
. "$(dirname "$0")/lib.sh"

start_node bsforged || exit 1
erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_forge.erl" || exit 1
node_eval 'bs_forge:start(100).' >/dev/null

# the issue's load: 1000 processes, 300 calls each, every kind distinct
FORGE='bs_forge:forge(1000, 300, 300000).'
RSS_MAX_KB=300000    # a few times what it takes; it grew past 850 MB
# room on the target for every record, so that more calls come in than
# beamscope keeps in flight
ROOM="--high-water 1048576"

# wait_gone PID SECONDS: until PID exits; false (and it is killed) if it
# has not by then
wait_gone() {
	tries=$(( $2 * 10 ))
	for _ in $(seq 1 "$tries"); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	echo "still running after $2 s"
	kill -9 "$1"
	return 1
}

test_expect_success 'under forged calls, -d ends the run, memory bounded' '
	: >"$TRASH/bs.err" &&
	/usr/bin/time -v -o "$TRASH/time.txt" "$BEAMSCOPE" "$NODE" --batch \
		--cookie-file "$COOKIE_FILE" -o "$TRASH/bs.json" --gen-calls $ROOM \
		--interval 1 -d 10 --summary 2>"$TRASH/bs.err" &
	BS_PID=$! && bs_wait_attached && start=$(date +%s) &&
	node_eval "$FORGE" >/dev/null &&
	wait_gone "$BS_PID" 40 && took=$(( $(date +%s) - start )) &&
	echo "ended after $took s" && tail -3 "$TRASH/bs.err" &&
	grep -q "Exit status: 0" "$TRASH/time.txt" &&
	jqs -e "[.[] | select(.type == \"summary\")] | length == 1 and
		.[0].ended == \"duration\"" &&
	rss=$(awk "/Maximum resident set size/ { print \$NF }" "$TRASH/time.txt") &&
	echo "peak RSS $rss kB" &&
	expect "$rss" -lt "$RSS_MAX_KB" &&
	cp "$TRASH/bs.json" "$TRASH/d.json" && cp "$TRASH/bs.err" "$TRASH/d.err"
'

test_expect_success 'kinds past the limit are one "(other)" row per server, said so' '
	jq -s -e "[.[] | select(.type == \"gen_call_stats\" and .other == \"kinds\")] |
		length > 0 and all(.kind == \"(other)\" and .in_flight >= 0)" \
		"$TRASH/d.json" &&
	n=$(jq -s "[.[] | select(.type == \"gen_call_stats\") | [.server, .kind]] |
		unique | length" "$TRASH/d.json") &&
	echo "$n rows" && test "$n" -le $(( 100 * 65 + 10 )) &&
	jq -s -e "[.[] | select(.type == \"gen_call_totals\")] | last |
		.servers_other_kinds == 100" "$TRASH/d.json" &&
	grep -E "^gen calls: 100 servers had more than 64 request kinds" "$TRASH/d.err"
'

test_expect_success 'calls in flight past the limit are given up, counted' '
	jq -s -c "[.[] | select(.type == \"gen_call_totals\")] | last" "$TRASH/d.json" | tee totals &&
	jq -e ".given_up > 0 and .in_flight <= 100000" totals &&
	given=$(jq .given_up totals) &&
	rows=$(jq -s "[.[] | select(.type == \"gen_call_stats\")] | group_by([.server, .kind]) |
		map(last.given_up) | add" "$TRASH/d.json") &&
	expect "$rows" -eq "$given" || { echo "want $given given up in the rows, got $rows"; false; }
'

test_expect_success 'under forged calls, SIGINT ends the run at once, summary written' '
	node_eval "bs_forge:stop(), bs_forge:start(100)." >/dev/null &&
	bs_start --gen-calls $ROOM --interval 1 -d 0 --summary && bs_wait_attached &&
	node_eval "$FORGE" >/dev/null &&
	hwm=0 && for _ in $(seq 1 30); do
		h=$(awk "/VmHWM/ { print \$2 }" /proc/$BS_PID/status 2>/dev/null) &&
		hwm=${h:-$hwm}; sleep 0.1; done &&
	echo "peak RSS so far $hwm kB" && expect "$hwm" -lt "$RSS_MAX_KB" &&
	t0=$(date +%s%N) && kill -INT "$BS_PID" && wait_gone "$BS_PID" 30 &&
	ms=$(( ($(date +%s%N) - t0) / 1000000 )) && echo "ended $ms ms after SIGINT" &&
	bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e "[.[] | select(.type == \"summary\")] | length == 1 and
		.[0].ended == \"interrupted\"" &&
	jqs -e "[.[] | select(.type == \"gen_call_totals\")] | length > 0" &&
	grep -q "slowest servers" "$TRASH/bs.err" &&
	expect "$ms" -lt 10000
'

test_expect_success 'a reply stamped before its call is out of order, not a 0 us call' '
	node_eval "bs_forge:stop()." >/dev/null &&
	bs_start --gen-calls --interval 0.5 -d 0 && bs_wait_attached &&
	node_eval "S = spawn(fun() -> receive stop -> ok end end),
		[begin R = make_ref(), S ! {R, early}, S ! {'"'"'\$gen_call'"'"', {self(), R}, ooo} end
		 || _ <- lists:seq(1, 5)], S ! stop, ok." >/dev/null &&
	sleep 1 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -c "[.[] | select(.type == \"gen_call_stats\" and .kind == \"ooo\")] | last" | tee row &&
	jq -e ".calls == 0 and .out_of_order == 5 and .in_flight == 0 and .max_us == 0" row &&
	jqs -e "[.[] | select(.type == \"gen_call_totals\")] | last.out_of_order == 5" &&
	target_clean 3
'

test_done
