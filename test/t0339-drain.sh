#!/bin/sh
# At the end of a run every event the tracer produced is either delivered
# or counted as dropped, even when beamscope cannot keep up (slow output,
# or not reading at all for a while) and the rings are full at the stop; a
# drain that cannot finish is said on stderr and in the summary, and fails
# the run with --exact (exit 7).
. "$(dirname "$0")/lib.sh"

start_node bsdrain || exit 1
node_eval "bs_work:spinner()." >/dev/null
node_eval "bs_work:victim()." >/dev/null

# bs_stopped_for SECONDS: beamscope reads nothing for that long
bs_stopped_for() {
	kill -STOP "$BS_PID" && sleep "$1" && kill -CONT "$BS_PID"
}

test_expect_success '1000001 receives, rings full at the stop, beamscope not reading: delivered + dropped is all' '
	bs_start --pids bs_spinner --events receive --high-water 1000000 \
		--max-events 0 --duration 0 --payload-bytes 16 && bs_wait_attached &&
	kill -STOP "$BS_PID" &&
	node_eval "[bs_spinner ! {n, I} || I <- lists:seq(1, 1000001)], ok." >/dev/null &&
	kill -INT "$BS_PID" && kill -CONT "$BS_PID" && sleep 0.05 && bs_stopped_for 5 &&
	bs_wait && cat "$TRASH/bs.err" && tail -n 1 "$TRASH/bs.json" >summary &&
	jq -c "{ended, delivered, dropped, complete, workers}" summary &&
	expect "$BS_RC" -eq 0 &&
	jq -e ".type == \"summary\" and .delivered + .dropped == 1000001 and .dropped > 0 and .complete" summary &&
	jq -e "all(.workers[]; .complete)" summary &&
	expect "$(grep -c "\"type\":\"receive\"" "$TRASH/bs.json")" -eq "$(jq .delivered summary)" &&
	target_clean 3
'

# stop_paused ARGS...: the target is paused when beamscope is told to stop
stop_paused() {
	bs_start --events receive --pids bs_victim --duration 0 "$@" && bs_wait_attached &&
	node_eval "bs_victim ! hello, ok." >/dev/null && sleep 0.5 &&
	kill -STOP "$NODE_PID" && kill -INT "$BS_PID" && bs_wait
	kill -CONT "$NODE_PID"
	cat "$TRASH/bs.err"
}

test_expect_success 'a drain that cannot finish is said, on stderr and in the summary' '
	stop_paused && expect "$BS_RC" -eq 0 &&
	grep -q "^beamscope: [0-9]* of the [0-9]* workers on \"$NODE_FULL\" did not send their final counts before the stop timed out; delivered + dropped may fall short of what was traced\$" "$TRASH/bs.err" &&
	jqs -e ".[-1].complete == false and any(.[-1].workers[]; .complete == false)" &&
	target_clean 5
'

test_expect_success '... and with --exact it fails the run, exit 7' '
	stop_paused --exact && expect "$BS_RC" -eq 7 &&
	grep -q "did not send their final counts.*(--exact: exit 7)\$" "$TRASH/bs.err" &&
	jqs -e ".[-1].complete == false" && target_clean 5
'

test_expect_success 'a drain that finishes: complete, exit 0 with --exact' '
	bs_start --events receive --pids bs_victim --duration 1 --exact && bs_wait &&
	expect "$BS_RC" -eq 0 && jqs -e ".[-1].complete" && ! grep -q "final counts" "$TRASH/bs.err"
'
test_done
