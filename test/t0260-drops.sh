#!/bin/sh
# When beamscope cannot keep up, the target drops events and counts them:
# delivered + dropped equals exactly what the workload produced.
. "$(dirname "$0")/lib.sh"

start_node bsdrop || exit 1
node_eval "bs_work:spinner()." >/dev/null

test_expect_success 'a burst past the high-water mark: drops counted exactly' '
	bs_start --pids bs_spinner --events receive --workers 1 --high-water 5 \
		--max-events 0 --duration 0 --payload-bytes 16 && bs_wait_attached &&
	node_eval "[bs_spinner ! {n, I} || I <- lists:seq(1, 50000)], ok." &&
	sleep 1 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e ".[-1] | .dropped > 0 and .delivered + .dropped == 50000 and .events == .delivered" &&
	jqs -e ".[-1].workers[0] | .dropped > 0 and .complete and .lost_batches == 0" &&
	target_clean 2
'

test_expect_success 'with room to spare nothing is dropped' '
	bs_start --pids bs_spinner --events receive --max-events 0 --duration 0 &&
	bs_wait_attached &&
	node_eval "[bs_spinner ! {n, I} || I <- lists:seq(1, 5000)], ok." &&
	sleep 0.5 && kill -INT "$BS_PID" && bs_wait &&
	jqs -e ".[-1] | .dropped == 0 and .delivered == 5000 and .events == 5000" &&
	jqs -e "[.[:-1][].payload] == [range(1; 5001) | \"{n,\(.)}\"]"
'
test_done
