#!/bin/sh
# Any process on the target can send to beamscope's hidden node and to the
# agent.  Protocol messages count only from the session's own agent and
# workers, and the agent obeys only requests that carry the session's
# secret: forged batches, ends, limits and sequence numbers are counted as
# unknown and change nothing, and a request made with the Owner's pid (read
# from the agent's dictionary) is refused.
. "$(dirname "$0")/lib.sh"

start_node bsforge || exit 1
node_eval "bs_work:victim()." >/dev/null

# Owner: beamscope's pid, as anyone on the target can find it
OWNER='Owner = element(2, proplists:get_value('"'"'$beamscope_state'"'"', element(2, process_info(whereis(beamscope_agent), dictionary)))),'
# Each forged message sent both ways: to the pid (no sender on the wire)
# and to a name on beamscope's node (the sender is the forger).
FORGE="$OWNER"'
Ev = term_to_binary({'"'"'receive'"'"', whereis(bs_victim), os:system_time(microsecond), [], forged_event, false}),
Ms = [{beamscope_batch, W, 0, 0, Ev} || W <- [0, 1]] ++
     [{beamscope_batch, W, 1000, 5000, <<>>} || W <- [0, 1]] ++
     [{beamscope_eos, 0, 2000, 7, 9}, {beamscope_limit, max_events, 3},
      {beamscope_counts, 0, 0, [{whereis(bs_victim), 5, 5}]},
      {beamscope_reply, make_ref(), pong}, {beamscope_exit, crash, 0},
      {beamscope_exit, agent_lost, 0, <<"forged">>}],
[begin Owner ! M, {bs_any, node(Owner)} ! M end || M <- Ms],
length(Ms) * 2.'

test_expect_success 'forged stream messages are not believed' '
	bs_start --events receive --pids bs_victim --duration 0 && bs_wait_attached &&
	node_eval "bs_victim ! before, ok." >/dev/null &&
	n=$(node_eval "$FORGE") && echo "$n forged" &&
	sleep 0.5 && node_eval "bs_victim ! later, ok." >/dev/null && sleep 0.5 &&
	kill -0 "$BS_PID" && kill -INT "$BS_PID" && bs_wait && cat "$TRASH/bs.err" &&
	expect "$BS_RC" -eq 0 && ! grep -q "agent" "$TRASH/bs.err" &&
	jqs -c ".[-1] | {ended, delivered, dropped, unknown_messages, workers}" && jqs -c "[.[:-1][] | .payload]" &&
	jqs -e "[.[:-1][] | .payload] == [\"before\", \"later\"]" &&
	jqs -e ".[-1] | .ended == \"interrupted\" and .delivered == 2 and .dropped == 0 and .unknown_messages >= $n" &&
	jqs -e "all(.[-1].workers[]; .lost_batches == 0 and .complete)" &&
	target_clean 2
'

test_expect_success 'a request in the Owner'"'"'s name, without its secret, is refused' '
	bs_start --events receive --pids bs_victim --duration 0 && bs_wait_attached &&
	r=$(node_eval "$OWNER A = whereis(beamscope_agent), [A ! {beamscope, Owner, make_ref(), Q} || Q <- [stop, {trace, #{}}, unfollow]], A ! {beamscope, <<\"0123456789abcdef\">>, make_ref(), stop}, timer:sleep(300), {is_process_alive(A), whereis(beamscope_agent) =:= A}.") &&
	echo "$r" && expect "$(echo "$r" | tr -d " ")" = "{true,true}" &&
	node_eval "bs_victim ! still_traced, ok." >/dev/null && sleep 0.5 &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e "[.[:-1][] | .payload] == [\"still_traced\"]" && target_clean 2
'

test_done
