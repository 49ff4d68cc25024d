#!/bin/sh
# The gc and running kinds, through the --events vocabulary.
. "$(dirname "$0")/lib.sh"

start_node bsgc || exit 1
node_eval "bs_work:spinner(), bs_work:gc_proc()." >/dev/null

test_expect_success 'gc: each collection once, with heap sizes before and after' '
	bs_start --events gc --pids bs_gc --duration 0 && bs_wait_attached &&
	node_eval "bs_gc ! {gc, 5}, ok." >/dev/null && sleep 0.5 &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e "[.[:-1][] | select(.type == \"gc\" and .kind == \"major\")] | length == 5" &&
	jqs -e "all(.[:-1][]; .type == \"gc\" and .name == \"bs_gc\" and .heap_before >= 0 and
		.heap_after >= 0 and .old_heap_after >= 0 and .elapsed_us >= 0)" &&
	jqs -e ".[-1].counts.gc == 5" && target_clean 2
'

test_expect_success 'running: scheduled in and out once per message' '
	bs_start --events running --pids bs_spinner --duration 0 && bs_wait_attached &&
	node_eval "[begin bs_spinner ! {poke, I}, timer:sleep(20) end || I <- [1, 2, 3]], ok." >/dev/null &&
	sleep 0.3 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e "[.[:-1][] | select(.type == \"running\") | .state] == [\"in\", \"out\", \"in\", \"out\", \"in\", \"out\"]" &&
	jqs -e "[.[:-1][] | .mfa] | unique == [\"bs_work:idle/0\"]" && target_clean 2
'

test_expect_success 'the process log shows time on a scheduler and gcs' '
	ui_start --events gc,running,receive && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys ":focus bs_gc" Enter && ui_wait "^ <0[.][0-9]+[.]0> bs_gc" &&
	node_eval "bs_gc ! {gc, 3}, ok." >/dev/null &&
	ui_wait "gcs 3" && ui_wait "gc major heap [0-9]+ -> [0-9]+ words" &&
	ui_wait "scheduled out bs_work:gc_loop/0" &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'
test_done
