#!/bin/sh
# Whichever way beamscope ends, the target is left as it was within 2 s:
# no trace flags, no beamscope processes, no beamscope modules.
. "$(dirname "$0")/lib.sh"

start_node bsclean || exit 1

# flood_start: keep the target busy for the duration of a test
flood_start() {
	node_eval "spawn(fun() -> bs_work:flood(4, 8) end), ok." >/dev/null
}

test_expect_success 'clean before anything happened' 'target_clean 0'

test_expect_success 'normal end (duration)' '
	bs_start --duration 1 && bs_wait && expect "$BS_RC" -eq 0 && target_clean 2
'

for sig in INT TERM HUP; do
	test_expect_success "SIG$sig during a flood: exit 0, summary, clean" '
		flood_start && bs_start --duration 0 --max-events 0 && bs_wait_attached &&
		sleep 0.5 && kill -'$sig' "$BS_PID" && bs_wait &&
		echo "exit $BS_RC" && expect "$BS_RC" -eq 0 &&
		jqs -e ".[-1].type == \"summary\" and (.[-1].ended == \"interrupted\" or .[-1].ended == \"terminated\") and .[-1].events > 0" &&
		target_clean 2
	'
done

test_expect_success 'SIGKILL during a flood: the agent cleans up by itself, memory back to where it was' '
	base=$(node_eval "erlang:memory(total).") &&
	flood_start && bs_start --duration 0 --max-events 0 && bs_wait_attached &&
	sleep 0.5 && kill -KILL "$BS_PID" && bs_wait &&
	target_clean 2 &&
	after=$(node_eval "[erlang:garbage_collect(P) || P <- processes()], erlang:memory(total).") &&
	echo "memory before $base, after $after" &&
	[ $(( (after - base) / 1048576 )) -lt 10 ]
'

test_expect_success 'network gone (the target drops the connection)' '
	bs_start --duration 0 && bs_wait_attached &&
	node_eval "[erlang:disconnect_node(N) || N <- nodes(hidden), lists:prefix(\"beamscope_\", atom_to_list(N))], ok." &&
	bs_wait && echo "exit $BS_RC" && expect "$BS_RC" -eq 5 &&
	jqs -e ".[-1].ended == \"target_lost\"" &&
	target_clean 2
'

test_expect_success 'a target that was traced before is left exactly as it was' '
	node_eval "bs_work:spinner(), T = spawn(fun bs_work:idle/0), register(bs_other_tracer, T), erlang:trace(whereis(bs_spinner), true, [send, {tracer, T}])." &&
	bs_start --duration 1 && bs_wait && expect "$BS_RC" -eq 0 &&
	if sessions_here; then
		# a session of its own: the process is traced beside the other
		! grep -q "another tracer" "$TRASH/bs.err" &&
		jqs -e ".[-1].skipped == []"
	else
		grep -q "already traced by another tracer; skipped" "$TRASH/bs.err" &&
		jqs -e ".[-1].skipped | length == 1"
	fi &&
	expect "$(node_eval "{erlang:trace_info(whereis(bs_spinner), flags), erlang:trace_info(whereis(bs_spinner), tracer) == {tracer, whereis(bs_other_tracer)}}." | tr -d " ")" = "{{flags,[send]},true}" &&
	node_eval "erlang:trace(whereis(bs_spinner), false, [all])." &&
	target_clean 2
'
test_done
