#!/bin/sh
# Receive timeouts are not messages: a receive that ends by its after
# clause is a kind of its own (timeout), shipped for the processes whose
# events are shipped when asked for (not by default in batch mode), never
# counted as a received message, and the receive trace pattern that tells
# them apart is put back as it was, however beamscope ends.
. "$(dirname "$0")/lib.sh"

start_node bstmo || exit 1

T=300
M=40
Q="'"
TMO=send,receive,spawn,exit,timeout

test_expect_success 'a listed pid: M + 2 receive lines, T timeout lines' '
	pid=$(node_eval "bs_work:tmo_ready(bs_tmo)." | tr -d "\"") &&
	bs_start --pids bs_tmo --events $TMO --duration 0 && bs_wait_attached &&
	node_eval "bs_work:tmo_run(bs_tmo, $T, $M)." &&
	sleep 0.5 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e --arg p "$pid" "[.[] | select(.pid == \$p and .type == \"receive\")] | length == $M + 2" &&
	jqs -e --arg p "$pid" "[.[] | select(.pid == \$p and .type == \"receive\" and .payload == \"timeout\")] | length == $M" &&
	jqs -e --arg p "$pid" "[.[] | select(.pid == \$p and .type == \"timeout\")] | length == $T" &&
	target_clean 2 &&
	cp "$TRASH/bs.json" tmo.ndjson
'

test_expect_success 'a recording reopens with its timeout lines; --events receive leaves them out' '
	"$BEAMSCOPE" --open tmo.ndjson --batch -o again.ndjson 2>err && cat err &&
	expect "$(jq -s "[.[] | select(.type == \"timeout\")] | length" again.ndjson)" -eq $T &&
	expect "$(jq -s "[.[] | select(.type == \"receive\")] | length" again.ndjson)" -eq $((M + 2)) &&
	"$BEAMSCOPE" --open tmo.ndjson --batch --events receive -o recv.ndjson 2>err &&
	expect "$(jq -s "[.[] | select(.type == \"timeout\")] | length" recv.ndjson)" -eq 0 &&
	expect "$(jq -s "[.[] | select(.type == \"receive\")] | length" recv.ndjson)" -eq $((M + 2)) &&
	"$BEAMSCOPE" --open tmo.ndjson --batch --events receive,timeout -o recv.ndjson 2>err &&
	expect "$(jq -s "[.[] | select(.type == \"timeout\")] | length" recv.ndjson)" -eq $T &&
	"$BEAMSCOPE" --open tmo.ndjson --batch --events send -o send.ndjson 2>err &&
	expect "$(jq -s "[.[] | select(.type == \"timeout\")] | length" send.ndjson)" -eq 0
'

test_expect_success '--max-events: a shipped timeout is an event' '
	pid=$(node_eval "bs_work:tmo_ready(bs_tmo)." | tr -d "\"") &&
	bs_start --pids bs_tmo --events $TMO --max-events 51 --duration 0 && bs_wait_attached &&
	node_eval "bs_work:tmo_run(bs_tmo, $T, $M)." &&
	bs_wait && echo "exit $BS_RC" &&
	jqs -e ".[-1] | .ended == \"max_events\" and .events == 51" &&
	# the timeout atoms arrive while it times out: which of the two the
	# 51 are varies, but there are only M + 2 messages in all
	jqs -e --arg p "$pid" "[.[] | select(.pid == \$p and (.type == \"timeout\" or .type == \"receive\"))] | length == 51" &&
	jqs -e --arg p "$pid" "[.[] | select(.pid == \$p and .type == \"receive\")] | length <= $M + 2" &&
	target_clean 2
'

test_expect_success '--follow: a follower'"'"'s timeouts are dropped, its messages kept' '
	node_eval "bs_work:tmo_parent(bs_tmop)." >/dev/null &&
	bs_start --follow bs_tmop --duration 0 && bs_wait_attached &&
	kid=$(node_eval "bs_work:tmo_follow(bs_tmop, $T, $M)." | tr -d "\"") &&
	sleep 0.5 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e --arg p "$kid" "[.[] | select(.pid == \$p and .type == \"receive\")] | length == $M + 1" &&
	jqs -e "all(.[]; .type != \"timeout\")" &&
	target_clean 2
'

test_expect_success 'the whole node shipped: every timeout is a timeout line' '
	pid=$(node_eval "bs_work:tmo_ready(bs_tmo)." | tr -d "\"") &&
	bs_start --events $TMO --duration 0 && bs_wait_attached &&
	node_eval "bs_work:tmo_run(bs_tmo, $T, $M)." &&
	sleep 0.5 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e --arg p "$pid" "[.[] | select(.pid == \$p and .type == \"receive\")] | length == $M + 2" &&
	jqs -e --arg p "$pid" "[.[] | select(.pid == \$p and .type == \"timeout\")] | length == $T" &&
	jqs -e ".[-1].counts.timeout >= $T" &&
	target_clean 2
'

test_expect_success 'the count tier: an unlisted process receives its real messages only' '
	pid=$(node_eval "bs_work:tmo_ready(bs_tmo)." | tr -d "\"") &&
	bs_start --counts --interval 0.2 --duration 0 && bs_wait_attached &&
	node_eval "bs_work:tmo_run(bs_tmo, $T, $M)." &&
	sleep 0.6 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e --arg p "$pid" "[.[] | select(.type == \"counts\" and .pid == \$p)] | last |
		.receives == $M + 2 and .sends == 1" &&
	jqs -e "all(.[]; .type != \"timeout\")" &&
	target_clean 2
'

test_expect_success 'more than 64 listed: 64 of them ship their timeouts, the rest drop theirs' '
	names=$(for i in $(seq 1 70); do echo "bs_cap$i"; done | paste -sd, -) &&
	node_eval "[bs_work:tmo_ready(list_to_atom(\"bs_cap\" ++ integer_to_list(I))) || I <- lists:seq(1, 70)], ok." >/dev/null &&
	bs_start --pids "$names" --events $TMO --duration 0 && bs_wait_attached &&
	node_eval "[bs_work:tmo_run(list_to_atom(\"bs_cap\" ++ integer_to_list(I)), 20, 2) || I <- lists:seq(1, 70)], ok." &&
	sleep 0.5 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e "[.[] | select(.type == \"timeout\")] | group_by(.pid) | map(length) | . == [range(64) | 20]" &&
	jqs -e "[.[] | select(.type == \"receive\")] | group_by(.pid) | map(length) | . == [range(70) | 4]" &&
	target_clean 2
'

test_expect_success 'kill -9 of beamscope: the receive pattern is put back' '
	node_eval "bs_work:tmo_ready(bs_tmo)." >/dev/null &&
	bs_start --pids bs_tmo --events $TMO --duration 0 && bs_wait_attached &&
	our_pattern receive | grep "beamscope_timeout" &&
	kill -KILL "$BS_PID" && bs_wait &&
	node_eval "bs_work:tmo_run(bs_tmo, 10, 2)." &&
	target_clean 5
'

test_expect_success 'another tool'"'"'s receive pattern is left alone, and said (OTP 25-26); ours is our own (27+)' '
	pid=$(node_eval "bs_work:tmo_ready(bs_tmo)." | tr -d "\"") &&
	node_eval "erlang:trace_pattern(${Q}receive$Q, [{[${Q}_$Q, ${Q}_$Q, ${Q}_$Q], [], []}], [])." &&
	RECEIVE_PATTERN="[{[${Q}_$Q,${Q}_$Q,${Q}_$Q],[],[]}]" &&
	bs_start --pids bs_tmo --events $TMO --duration 0 && bs_wait_attached &&
	node_eval "bs_work:tmo_run(bs_tmo, $T, $M)." &&
	sleep 0.5 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	if sessions_here; then
		! grep "receive trace pattern" "$TRASH/bs.err" &&
		jqs -e --arg p "$pid" "[.[] | select(.pid == \$p and .type == \"receive\")] | length == $M + 2" &&
		jqs -e --arg p "$pid" "[.[] | select(.pid == \$p and .type == \"timeout\")] | length == $T"
	else
		grep "receive trace pattern" "$TRASH/bs.err" &&
		expect "$(grep -c "receive trace pattern" "$TRASH/bs.err")" -eq 1 &&
		jqs -e --arg p "$pid" "[.[] | select(.pid == \$p and .type == \"receive\")] | length == $M + 2 + $T"
	fi &&
	target_clean 2 &&
	node_eval "erlang:trace_pattern(${Q}receive$Q, true, [])." &&
	RECEIVE_PATTERN=true target_clean 0
'
# A process timing out a hundred times a millisecond beside a pair
# exchanging real messages, the whole node traced.
spin_and_chat() {
	node_eval "bs_work:tmo_spin(bs_spin)." >/dev/null &&
	chat=$(node_eval "bs_work:tmo_chat(bs_chat)." | tr -d "\"") &&
	node_eval "timer:sleep(200)." >/dev/null
}
stop_spin_and_chat() {
	node_eval "bs_spin ! stop, bs_chat ! stop, ok." >/dev/null
}

test_expect_success 'batch by default: no timeout shipped; --max-events ends on real messages' '
	spin_and_chat &&
	bs_start --max-events 3000 --duration 10 && bs_wait_attached &&
	our_pattern receive >during.txt &&
	bs_wait && echo "exit $BS_RC" && stop_spin_and_chat &&
	cat during.txt && ! grep -q beamscope_timeout during.txt &&
	jqs -e ".[-1] | .ended == \"max_events\" and .events == 3000" &&
	jqs -e "all(.[]; .type != \"timeout\")" &&
	jqs -e --arg p "$chat" "[.[] | select(.pid == \$p and (.type == \"send\" or .type == \"receive\"))] | length > 1000" &&
	jqs -e "(.[-1].counts.timeout // 0) == 0" &&
	target_clean 2
'

test_expect_success '--events without timeout ships none, counts none; the receive pattern is put back' '
	spin_and_chat &&
	bs_start --events send,receive --duration 1 && bs_wait_attached &&
	bs_wait && expect "$BS_RC" -eq 0 && stop_spin_and_chat &&
	jqs -e "all(.[]; .type != \"timeout\")" &&
	jqs -e --arg p "$chat" "[.[] | select(.pid == \$p and .type == \"receive\")] | length > 100" &&
	jqs -e ".[-1].events == ([.[] | select(.type == \"send\" or .type == \"receive\")] | length)" &&
	target_clean 2
'

test_expect_success '--events with timeout: they are shipped and count toward --max-events' '
	spin_and_chat &&
	bs_start --events receive,timeout --max-events 3000 --duration 10 && bs_wait_attached &&
	bs_wait && echo "exit $BS_RC" && stop_spin_and_chat &&
	jqs -e ".[-1] | .ended == \"max_events\" and .events == 3000" &&
	jqs -e "[.[] | select(.type == \"timeout\")] | length > 1000" &&
	jqs -e "all(.[]; .type == \"timeout\" or .type == \"receive\" or .type == \"summary\")" &&
	target_clean 2
'

test_expect_success '--events timeout alone: timeouts and no message' '
	spin_and_chat &&
	bs_start --events timeout --duration 1 && bs_wait_attached &&
	bs_wait && expect "$BS_RC" -eq 0 && stop_spin_and_chat &&
	jqs -e "[.[] | select(.type == \"timeout\")] | length > 100" &&
	jqs -e "all(.[]; .type == \"timeout\" or .type == \"summary\")" &&
	target_clean 2
'
test_done
