#!/bin/sh
# Batch mode against a real node running a workload of known shape.
. "$(dirname "$0")/lib.sh"

start_node bsbatch || exit 1

# run_sink ARGS...: trace with ARGS while bs_work:sink(1000, 10) runs, then
# stop with Ctrl-C.  Sets SINK and SENDER.
run_sink() {
	bs_start "$@" && bs_wait_attached &&
	res=$(node_eval "{S, T} = bs_work:sink(1000, 10), pid_to_list(S) ++ \" \" ++ pid_to_list(T).") &&
	SINK=$(echo "$res" | tr -d "\"" | cut -d" " -f1) &&
	SENDER=$(echo "$res" | tr -d "\"" | cut -d" " -f2) &&
	echo "sink $SINK sender $SENDER" &&
	sleep 0.3 && kill -INT "$BS_PID" && bs_wait &&
	echo "exit $BS_RC" && expect "$BS_RC" -eq 0
}

test_expect_success 'the registered sink receives exactly 1000 messages, in order' '
	run_sink &&
	jqs -e --arg s "$SINK" "[.[] | select(.type == \"receive\" and .pid == \$s and .payload != \"stop\")] as \$r |
		(\$r | length) == 1000 and
		([\$r[].name] | unique) == [\"bs_sink\"] and
		[\$r[].payload] == [range(1; 1001) | \"{msg,\(.)}\"]" &&
	jqs -e --arg t "$SENDER" --arg s "$SINK" "[.[] | select(.type == \"send\" and .pid == \$t)] as \$x |
		(\$x | length) == 1000 and
		([\$x[] | select(.to == \"bs_sink\" or .to == \$s)] | length) == 1000" &&
	jqs -e --arg s "$SINK" "[.[] | select(.type == \"spawn\" and .pid == \$s)] as \$sp |
		(\$sp | length) == 10 and ([\$sp[].child] | unique | length) == 10 and
		([\$sp[].name] | unique) == [\"bs_sink\"]" &&
	jqs -e --arg s "$SINK" "[.[] | select(.type == \"receive\" and .pid == \$s)] | length == 1001 and .[-1].payload == \"stop\"" &&
	jqs -e --arg s "$SINK" "[.[] | select(.type == \"spawn\" and .pid == \$s) | .child] as \$kids |
		[.[] | select(.type == \"exit\" and (.pid as \$p | \$kids | index(\$p)))] |
		length == 10 and all(.reason == \"normal\")"
'

test_expect_success 'every line is JSON with type, ts, node and pid; summary last' '
	jqs -e --arg n "$NODE_FULL" "all(.[:-1][]; (.type | type) == \"string\" and
		(.ts | type) == \"number\" and .ts > 1600000000000000 and
		.node == \$n and (.pid | test(\"^<0[.][0-9]+[.][0-9]+>$\")))" &&
	jqs -e ".[-1].type == \"summary\" and .[-1].ended == \"interrupted\"" &&
	expect "$(jq -c . "$TRASH/bs.json" | grep -c "\"type\":\"summary\"")" = 1
'

test_expect_success 'summary counts agree with the lines, nothing dropped' '
	jqs -e ".[-1] as \$s | (.[:-1] | length) == \$s.events and
		(\$s.counts | add) == \$s.events and
		\$s.counts.receive == ([.[:-1][] | select(.type == \"receive\")] | length) and
		\$s.dropped == 0 and
		\$s.delivered == \$s.events + \$s.filtered + \$s.over_limit and
		(\$s.workers | length) > 0 and all(\$s.workers[]; .complete and .lost_batches == 0) and
		(\$s.workers | map(.delivered) | add) == \$s.delivered"
'

test_expect_success 'the agent and its workers are not traced' '
	jqs -e "[.[] | select(.mfa != null and (.mfa | startswith(\"beamscope\")))] | length == 0"
'

test_expect_success 'target is clean after the run' 'target_clean 2'

test_expect_success '--pids NAME traces only that process' '
	node_eval "bs_work:spinner()." &&
	bs_start --pids bs_spinner && bs_wait_attached &&
	node_eval "[bs_spinner ! {poke, I} || I <- lists:seq(1, 5)], ok." &&
	node_eval "bs_work:sink(10, 1), ok." &&
	sleep 0.3 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e "(.[:-1] | length) == 5 and all(.[:-1][]; .name == \"bs_spinner\" and .type == \"receive\")" &&
	jqs -e ".[-1].traced_processes == 1" &&
	target_clean 2
'

test_expect_success '--events spawn,exit writes only those kinds' '
	bs_start --events spawn,exit && bs_wait_attached &&
	res=$(node_eval "{S, _} = bs_work:sink(10, 3), pid_to_list(S).") &&
	sink=$(echo "$res" | tr -d "\"") &&
	sleep 0.3 && kill -INT "$BS_PID" && bs_wait &&
	jqs -e "all(.[:-1][]; .type == \"spawn\" or .type == \"spawned\" or .type == \"exit\")" &&
	jqs -e --arg s "$sink" "[.[] | select(.type == \"spawn\" and .pid == \$s)] | length == 3" &&
	jqs -e ".[-1].filtered > 0"
'

test_expect_success '--events receive --payload-bytes 0 sends no contents' '
	bs_start --events receive --payload-bytes 0 --pids bs_spinner && bs_wait_attached &&
	node_eval "bs_spinner ! {secret, <<\"hunter2\">>}, ok." &&
	sleep 0.3 && kill -INT "$BS_PID" && bs_wait &&
	jqs -e "(.[:-1] | length) == 1 and .[0].payload == null" &&
	! grep -q hunter2 "$TRASH/bs.json"
'

test_expect_success 'payloads are cut to --payload-bytes on the target' '
	bs_start --events receive --payload-bytes 40 --pids bs_spinner && bs_wait_attached &&
	node_eval "bs_spinner ! {big, lists:seq(1, 100000), binary:copy(<<\"x\">>, 1000000)}, ok." &&
	sleep 0.3 && kill -INT "$BS_PID" && bs_wait &&
	jqs -e ".[0].truncated == true and (.[0].payload | length) <= 40 and
		(.[0].payload | startswith(\"{big,[1,2,3\"))" &&
	test $(stat -c %s "$TRASH/bs.json") -lt 2000
'

test_expect_success '--max-events N writes exactly N events and stops by itself' '
	bs_start --max-events 25 --duration 0 && bs_wait_attached &&
	node_eval "bs_work:sink(1000, 0), ok." &&
	bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e "(.[:-1] | length) == 25 and .[-1].ended == \"max_events\" and .[-1].events == 25" &&
	target_clean 2
'

test_expect_success '--duration ends the run by itself' '
	start=$(date +%s%N) &&
	bs_start --duration 1 && bs_wait && expect "$BS_RC" -eq 0 &&
	end=$(date +%s%N) &&
	jqs -e ".[-1].ended == \"duration\" and .[-1].duration_ms >= 1000 and .[-1].duration_ms < 3000" &&
	[ $(( (end - start) / 1000000 )) -lt 6000 ] &&
	target_clean 2
'

test_expect_success 'stdout output and -q' '
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" -d 0.5 -q >out.json 2>err &&
	[ ! -s err ] && tail -n 1 out.json | jq -e ".type == \"summary\""
'

test_expect_success '--list shows the node' '
	"$BEAMSCOPE" --list | grep -qx "$NODE"
'
test_done
