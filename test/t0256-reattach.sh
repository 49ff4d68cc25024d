#!/bin/sh
# Attaching again: after a beamscope was killed, the next one waits for the
# old session to finish cleaning up and attaches; while another beamscope
# is still there (even stopped), the next one is refused and neither
# disturbs the other.
. "$(dirname "$0")/lib.sh"

start_node bsreat || exit 1

flood() {
	node_eval "spawn(fun() -> bs_work:flood(4, $1) end), ok." >/dev/null
}

test_expect_success 'killed during a flood, then attached again at once: the new one traces' '
	flood 3 && bs_start --duration 0 --max-events 0 && bs_wait_attached && sleep 0.5 &&
	kill -KILL "$BS_PID" && bs_wait &&
	bs_start --duration 1 && bs_wait && echo "exit $BS_RC" && cat "$TRASH/bs.err" &&
	expect "$BS_RC" -eq 0 && grep -q "attached to" "$TRASH/bs.err" &&
	jqs -e ".[-1].type == \"summary\" and .[-1].events > 0" && target_clean 2
'

test_expect_success 'a second beamscope while the first is stopped: refused; the first goes on' '
	sleep 3 && bs_start --duration 0 --max-events 0 && bs_wait_attached &&
	kill -STOP "$BS_PID" &&
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" -o second.json 2>err2; rc=$?
	kill -CONT "$BS_PID"
	cat err2; expect "$rc" -eq 6 && expect "$(wc -l <err2)" -eq 1 &&
	grep -q "already being traced by another beamscope (agent <0[.][0-9]*[.][0-9]*>), which is still there" err2 &&
	[ ! -s second.json ] &&
	node_eval "bs_work:sink(100, 0), ok." >/dev/null && sleep 0.5 &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e ".[-1].type == \"summary\" and .[-1].ended == \"interrupted\" and .[-1].dropped == 0" &&
	jqs -e "[.[:-1][] | select(.type == \"receive\" and (.payload // \"\" | startswith(\"{msg,\")))] | length == 100" &&
	target_clean 2
'

test_expect_success 'one stopped past its --dependency-timeout: the next one waits for its session to clear' '
	bs_start --dependency-timeout 3 --duration 0 --max-events 0 && bs_wait_attached &&
	kill -STOP "$BS_PID" && sleep 1 &&
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --duration 1 -o third.json 2>err3; rc=$?
	kill -CONT "$BS_PID"
	cat err3; expect "$rc" -eq 0 &&
	grep -q "waited for the session of a beamscope that is gone (agent <0[.][0-9]*[.][0-9]*>) to finish cleaning up" err3 &&
	jq -s -e ".[-1].type == \"summary\" and .[-1].ended == \"duration\"" third.json &&
	bs_wait && echo "first: exit $BS_RC" && cat "$TRASH/bs.err" && expect "$BS_RC" -eq 5 &&
	jqs -e ".[-1].ended == \"agent_timeout\"" && target_clean 2
'
test_done
