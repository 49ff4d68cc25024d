#!/bin/sh
# A target paused (SIGSTOP) for longer than --dependency-timeout is not
# taken for beamscope gone: on resume the agent reads the pings that waited
# before judging, and the run goes on to its end.
. "$(dirname "$0")/lib.sh"

start_node bspause || exit 1
node_eval "bs_work:victim()." >/dev/null

test_expect_success 'paused 5 s with --dependency-timeout 2: the run goes on' '
	bs_start --events receive --pids bs_victim --duration 11 --dependency-timeout 2 &&
	bs_wait_attached && node_eval "bs_victim ! before_pause, ok." >/dev/null &&
	sleep 0.3 && kill -STOP "$NODE_PID" && sleep 5 && kill -CONT "$NODE_PID" &&
	sleep 1 && node_eval "bs_victim ! after_pause, ok." >/dev/null &&
	bs_wait && cat "$TRASH/bs.err" && expect "$BS_RC" -eq 0 &&
	! grep -q "heard nothing" "$TRASH/bs.err" &&
	jqs -e "[.[:-1][] | .payload] == [\"before_pause\", \"after_pause\"]" &&
	jqs -e ".[-1] | .ended == \"duration\" and .complete" &&
	target_clean 2
'

test_expect_success 'beamscope itself silent for longer: the agent still cleans up' '
	bs_start --events receive --pids bs_victim --duration 0 --dependency-timeout 1 &&
	bs_wait_attached && kill -STOP "$BS_PID" && target_clean 6; ok=$?
	kill -CONT "$BS_PID"; bs_wait; cat "$TRASH/bs.err"; expect "$ok" -eq 0 && expect "$BS_RC" -eq 5
'
test_done
