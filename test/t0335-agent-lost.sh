#!/bin/sh
# The agent killed mid-run: its workers ship what they hold, remove the
# tracer, unload both modules and say why; beamscope ends at once with
# agent_lost and exit 5.  With the agent and every worker killed, beamscope
# still notices (no answer, and the target says the agent is gone), and the
# next session cleans up what was left.
. "$(dirname "$0")/lib.sh"

start_node bslost || exit 1
node_eval "bs_work:victim()." >/dev/null

# the agent's workers, as the agent monitors them
WORKERS='{monitors, Ms} = process_info(whereis(beamscope_agent), monitors), Ws = [P || {process, P} <- Ms],'

test_expect_success 'agent killed: agent_lost at once, exit 5, events kept, target clean' '
	bs_start --events receive --pids all --duration 20 && bs_wait_attached &&
	node_eval "bs_victim ! before_kill, ok." >/dev/null && sleep 0.3 &&
	t0=$(date +%s) &&
	node_eval "exit(whereis(beamscope_agent), kill)." >/dev/null &&
	bs_wait && t1=$(date +%s) && cat "$TRASH/bs.err" && echo "ended after $((t1 - t0)) s" &&
	expect "$BS_RC" -eq 5 && [ $((t1 - t0)) -le 6 ] &&
	grep -q "^beamscope: the agent on \"$NODE_FULL\" was lost (killed); its workers removed the tracer and cleaned up" "$TRASH/bs.err" &&
	jqs -e ".[-1] | .ended == \"agent_lost\" and .complete" &&
	jqs -e "any(.[:-1][]; .payload == \"before_kill\")" &&
	target_clean 3
'

test_expect_success 'agent and workers killed: noticed, exit 5; the next session cleans up' '
	bs_start --events receive --pids bs_victim --duration 30 && bs_wait_attached &&
	node_eval "$WORKERS [exit(P, kill) || P <- Ws], exit(whereis(beamscope_agent), kill), ok." >/dev/null &&
	t0=$(date +%s) && bs_wait && t1=$(date +%s) && cat "$TRASH/bs.err" &&
	echo "ended after $((t1 - t0)) s" &&
	expect "$BS_RC" -eq 5 && [ $((t1 - t0)) -le 12 ] &&
	grep -q "the agent on \"$NODE_FULL\" is gone without a word" "$TRASH/bs.err" &&
	jqs -e ".[-1].ended == \"agent_lost\"" &&
	bs_start --events receive --pids bs_victim --duration 1 && bs_wait &&
	cat "$TRASH/bs.err" && expect "$BS_RC" -eq 0 && target_clean 3
'
test_done
