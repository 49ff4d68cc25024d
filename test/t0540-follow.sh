#!/bin/sh
# Following a tree of known shape in the interactive view, and unfollowing:
# the session is deactivated and each follower drops its own flags at its
# next event (the tracer answers remove), while the agent is still there.
. "$(dirname "$0")/lib.sh"

start_node bsfollow || exit 1

# ours_is N: within 5 s, exactly N processes are traced by beamscope
ours_is() {
	for _ in $(seq 1 50); do
		n=$(node_eval "$OURS") && [ "$n" = "$1" ] && return 0
		sleep 0.1
	done
	echo "traced by beamscope: $n, want $1"
	return 1
}

# processes beamscope traces: in its session (OTP 27+), or the legacy one
OURS='case list_to_integer(erlang:system_info(otp_release)) >= 27 andalso [W || {beamscope, _} = W <- trace:session_info(all)] of [W | _] -> length([P || P <- processes(), {flags, [_ | _]} <- [trace:info(W, P, flags)]]); _ -> length([P || P <- processes(), element(2, erlang:trace_info(P, tracer)) =/= [], element(1, element(2, erlang:trace_info(P, tracer))) =:= beamscope_tracer]) end.'

test_expect_success ':follow traces the root and every process it spawns' '
	root=$(node_eval "bs_work:hold_tree()." | tr -d "\"") && echo "$root" >root &&
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys ":follow $root" Enter && ui_wait "tracing 1 process on" &&
	node_eval "list_to_pid(\"$root\") ! go, ok." >/dev/null &&
	ours_is 10 &&
	ui_keys t && ui_wait "^$root" &&
	for _ in $(seq 1 50); do
		[ "$(ui_screen | grep -c "\`- <0")" -eq 9 ] && break; sleep 0.1
	done &&
	expect "$(ui_screen | grep -c "\`- <0")" -eq 9
'

# ERTS asks the tracer for trace_status when a process is traced again or
# looked at, and on its events: with the session deactivated the answer is
# remove, so the followers leave by themselves, with no help from the agent.
test_expect_success ':unfollow: the followers drop their flags by themselves' '
	ui_keys q ":unfollow" Enter && ui_wait "unfollowed" &&
	expect "$(node_eval "length([P ! ping || P <- processes(), process_info(P, current_function) =:= {current_function, {bs_work, hold, 0}}]).")" = 10 &&
	ours_is 0 &&
	expect "$(node_eval "{whereis(beamscope_agent) =/= undefined, code:is_loaded(beamscope_tracer) =/= false}." | tr -d " ")" = "{true,true}"
'

test_expect_success 'detaching after unfollow leaves the target clean' '
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'
test_done
