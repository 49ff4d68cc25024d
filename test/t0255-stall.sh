#!/bin/sh
# A beamscope that stops reading (SIGSTOP) costs the target bounded memory;
# what could not be shipped is dropped and counted, and tracing goes on.
# Stopped for longer than --dependency-timeout, it finds the target cleaned
# up by its agent and says so.
. "$(dirname "$0")/lib.sh"

start_node bsstall || exit 1

flood() {
	node_eval "spawn(fun() -> bs_work:flood(4, $1) end), ok." >/dev/null
}

test_expect_success 'stopped for 10 s during a flood: bounded memory, drops counted, tracing goes on' '
	bs_start --duration 0 --max-events 0 && bs_wait_attached &&
	node_eval "bs_work:mem_watch()." >/dev/null && flood 16 && sleep 1 &&
	kill -STOP "$BS_PID" && sleep 10 && kill -CONT "$BS_PID" &&
	resumed=$(date +%s%6N) && sleep 2 &&
	peak=$(node_eval "bs_work:mem_peak().") && echo "target grew by at most $peak MB" &&
	expect "$peak" -lt 64 &&
	kill -INT "$BS_PID" && bs_wait && echo "exit $BS_RC" && expect "$BS_RC" -eq 0 &&
	jqs -e ".[-1].type == \"summary\" and .[-1].ended == \"interrupted\" and .[-1].dropped > 0" &&
	jqs -e --argjson t "$resumed" "[.[:-1][] | select(.ts > \$t)] | length > 1000" &&
	grep -q "dropped on the target" "$TRASH/bs.err" &&
	target_clean 2
'

test_expect_success 'stopped for longer than --dependency-timeout: the agent cleans up, beamscope says so' '
	bs_start --dependency-timeout 2 --duration 0 --max-events 0 && bs_wait_attached &&
	flood 10 && sleep 0.5 &&
	kill -STOP "$BS_PID" && target_clean 7 &&
	kill -CONT "$BS_PID" && bs_wait && echo "exit $BS_RC" && cat "$TRASH/bs.err" &&
	expect "$BS_RC" -eq 5 &&
	grep -q "the agent on \".*\" heard nothing from beamscope for 2 s (--dependency-timeout) and cleaned up" "$TRASH/bs.err" &&
	jq -c . "$TRASH/bs.json" >/dev/null &&
	jqs -e ".[-1].type == \"summary\" and .[-1].ended == \"agent_timeout\" and .[-1].events > 0" &&
	target_clean 0
'

test_expect_success 'after that, the next beamscope attaches as usual' '
	bs_start --duration 1 && bs_wait && expect "$BS_RC" -eq 0 && target_clean 2
'

test_expect_success 'the view, stopped for longer than --dependency-timeout: says so, keeps the table, :on traces again' '
	ui_start --dependency-timeout 2 && ui_wait "tracing [0-9]+ processes" 10 &&
	shell=$(tm display-message -p -t ui "#{pane_pid}") &&
	bs=$(ps -o pid= --ppid "$shell" | tr -d " ") && [ -n "$bs" ] &&
	flood 8 && sleep 0.5 &&
	kill -STOP "$bs" && target_clean 7 && kill -CONT "$bs" &&
	ui_wait "heard nothing from beamscope for 2 s" 10 &&
	ui_wait "PID +NAME" && ui_screen | grep -E "^<0[.]" &&
	ui_keys ":on" Enter && ui_wait "tracing [0-9]+ processes" 10 &&
	! target_clean 0 >/dev/null &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'
test_done
