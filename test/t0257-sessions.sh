#!/bin/sh
# Beside other tracers, on every release.  On OTP 27+ beamscope traces in
# a trace session of its own: another tool's legacy or session tracing
# keeps its flags, patterns and events while beamscope attaches, traces
# and detaches, beamscope sees every message, and a clear of every legacy
# flag leaves its counts exact.  On OTP 25-26 (one shared legacy session)
# what another tool holds is left to it and said, --take-over takes it
# and gives it back, and flags cleared mid-run are noticed and said.
# Whichever way beamscope goes, no session of its own is left.
. "$(dirname "$0")/lib.sh"

mkdir -p "$TRASH/ebin" && erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_tool.erl" || exit 1
start_node bssess || exit 1

REL=$(otp_release)
say "OTP $REL"
sessions() { [ "$REL" -ge 27 ]; }
Q="'"
N=500
# the other tool's send pattern: every tuple (what the workload sends),
# but not the default
TOOL_MS="[{[${Q}_$Q, ${Q}\$1$Q], [{is_tuple, ${Q}\$1$Q}], []}]"
TOOL_MS_SHOWN="[{[${Q}_$Q,${Q}\$1$Q],[{is_tuple,${Q}\$1$Q}],[]}]"

ECHO=$(node_eval "bs_tool:echo(bs_echo)." | tr -d '"')

# n_of PID TYPE: events of that type of that process in the output
n_of() {
	jqs --arg p "$1" "[.[] | select(.pid == \$p and .type == \"$2\")] | length"
}

# the tool's state on bs_echo, as the node prints it
tool_state() {
	node_eval "bs_tool:state(bs_echo)." | tr -d " \n"
}

# tool_gone: the other tool leaves the legacy session
tool_gone() {
	node_eval "bs_tool:clear(bs_echo)." >/dev/null
}

# both N: beamscope's run saw bs_echo's N receives and N sends
both() {
	r=$(n_of "$ECHO" receive) s=$(n_of "$ECHO" send)
	expect "$r $s" = "$1 $1" || { echo "beamscope saw bs_echo: $r receives, $s sends; want $1 each"; false; }
}

# tool_counts S R: what the tool got since it was last asked
tool_counts() {
	got=$(node_eval "bs_tool:counts()." | tr -d " ")
	expect "$got" = "{$1,$2}" || { echo "the tool got $got, want {$1,$2}"; false; }
}

test_expect_success 'the attached line says how the node is traced; the session is listed while it traces' '
	bs_start --duration 0 && bs_wait_attached &&
	sessions_now=$(node_eval "case list_to_integer(erlang:system_info(otp_release)) >= 27 of true -> [N || {N, _} <- trace:session_info(all)]; false -> none end." | tr -d " ") &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 && cat "$TRASH/bs.err" &&
	if sessions; then
		grep -q "attached to .*(OTP $REL, [0-9]* workers, session)" "$TRASH/bs.err" &&
		expect "$sessions_now" = "[beamscope,legacy]" &&
		jqs -e ".[-1].tracing == \"session\""
	else
		grep -q "attached to .*(OTP $REL, [0-9]* workers, legacy)" "$TRASH/bs.err" &&
		expect "$sessions_now" = none && jqs -e ".[-1].tracing == \"legacy\""
	fi &&
	target_clean 2
'

test_expect_success 'beside a legacy tracer with its send pattern: both see their events, its flags, tracer and pattern unchanged' '
	node_eval "bs_tool:legacy(bs_echo, $TOOL_MS)." >/dev/null && before=$(tool_state) &&
	echo "tool: $before" && node_eval "bs_tool:counts()." >/dev/null &&
	bs_start --duration 0 && bs_wait_attached &&
	node_eval "bs_tool:run(bs_echo, $N)." && sleep 0.3 &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 && cat "$TRASH/bs.err" &&
	tool_counts $N $N && expect "$(tool_state)" = "$before" &&
	if sessions; then
		both $N && jqs -e ".[-1].skipped == [] and .[-1].complete" &&
		! grep -q "another tracer\|another tool" "$TRASH/bs.err"
	else
		both 0 && jqs -e --arg p "$ECHO" ".[-1].skipped == [\$p]" &&
		grep -q "^beamscope: $ECHO is already traced by another tracer; skipped (--take-over takes it)\$" "$TRASH/bs.err" &&
		grep -q "the send trace pattern on .* is set by another tool; left alone" "$TRASH/bs.err"
	fi &&
	node_eval "bs_tool:run(bs_echo, 10)." && tool_counts 10 10 &&
	tool_gone && target_clean 2
'

test_expect_success '--match beside the other tool'"'"'s send pattern: works where sessions are, refused where not; the pattern left' '
	node_eval "bs_tool:legacy(bs_echo, $TOOL_MS)." >/dev/null && before=$(tool_state) &&
	{ "$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --duration 2 \
		--match "{pong, I} when I > $((N - 10))" -o "$TRASH/bs.json" 2>err & } &&
	bs=$! && sleep 1 && node_eval "bs_tool:run(bs_echo, $N)." && rc=0 &&
	{ wait $bs || rc=$?; } && cat err && expect "$(tool_state)" = "$before" &&
	if sessions; then
		expect "$rc" -eq 0 && r=$(n_of "$ECHO" send) &&
		expect "$r" = 10 || { echo "bs_echo sends shipped: $r, want 10"; false; }
	else
		expect "$rc" -eq 6 && grep -q "the send trace pattern on .* is set by another tool .*--take-over" err
	fi &&
	tool_gone && target_clean 2
'

test_expect_success 'someone clears every legacy flag mid-run: counts exact with a session; noticed and said without' '
	bs_start --duration 0 --exact && bs_wait_attached &&
	node_eval "bs_tool:run(bs_echo, $N)." &&
	node_eval "erlang:trace(all, false, [all])." >/dev/null &&
	sleep 2.5 && node_eval "bs_tool:run(bs_echo, $N)." && sleep 0.3 &&
	kill -INT "$BS_PID" && bs_wait && cat "$TRASH/bs.err" &&
	if sessions; then
		expect "$BS_RC" -eq 0 && both $((2 * N)) && ! grep -q cleared "$TRASH/bs.err" &&
		jqs -e ".[-1].complete and .[-1].cleared == null"
	else
		expect "$BS_RC" -eq 7 && both $N &&
		grep -q "trace flags of processes beamscope set on .* were cleared by someone else" "$TRASH/bs.err" &&
		jqs -e "(.[-1].complete | not) and (.[-1].cleared | index(\"flags\"))"
	fi &&
	target_clean 2
'

test_expect_success 'the view says how it traces; a legacy clear is said there within a couple of seconds' '
	if sessions; then mode=session; else mode=legacy; fi
	node_eval "bs_tool:legacy(bs_echo, true)." >/dev/null &&
	ui_start --duration 0 && ui_wait "tracing [0-9]+ processes on .*\($mode\)" 10 &&
	if sessions; then
		! ui_screen | grep -q skipped
	else
		ui_screen | grep -q "(1 skipped: traced by another tracer)" &&
		ui_wait " 1 skipped( |\$)" 4 &&
		node_eval "erlang:trace(all, false, [all])." >/dev/null &&
		ui_wait "CLEARED by another tool: .*flags" 4
	fi
	seen=$?
	ui_keys q && expect "$(ui_exit_status 10)" = 0 && tool_gone && target_clean 3 &&
	expect "$seen" -eq 0
'

test_expect_success 'beside dbg: both see their events; dbg still traces afterwards' '
	node_eval "bs_tool:dbg(bs_echo)." >/dev/null && node_eval "bs_tool:counts()." >/dev/null &&
	bs_start --duration 0 && bs_wait_attached &&
	node_eval "bs_tool:run(bs_echo, $N)." && sleep 0.3 &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 && cat "$TRASH/bs.err" &&
	tool_counts $N $N &&
	if sessions; then both $N; else both 0 && grep -q "$ECHO is already traced by another tracer" "$TRASH/bs.err"; fi &&
	node_eval "bs_tool:run(bs_echo, 10)." && tool_counts 10 10 &&
	node_eval "bs_tool:dbg_stop()." && target_clean 2
'

test_expect_success 'beside tprof (OTP 27+): its call counts and beamscope'"'"'s messages both exact' '
	if ! sessions; then say "OTP $REL has no tprof"; exit 0; fi
	node_eval "{ok, _} = tprof:start(#{type => call_count}), tprof:set_pattern(bs_tool, echo_loop, 0)." &&
	bs_start --duration 0 && bs_wait_attached &&
	node_eval "bs_tool:run(bs_echo, $N)." && sleep 0.3 &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 && both $N &&
	calls=$(node_eval "#{all := {call_count, _, L}} = tprof:inspect(tprof:collect()), hd([C || {bs_tool, {echo_loop, 0}, C, _, _, _} <- L] ++ [none])." | tr -d " ") &&
	node_eval "tprof:stop()." && expect "$calls" = $N || { echo "tprof counted $calls calls, want $N"; false; }
	target_clean 2
'

test_expect_success 'kill -9 of beamscope: no session of beamscope left, the target clean' '
	node_eval "bs_tool:legacy(bs_echo, $TOOL_MS)." >/dev/null && before=$(tool_state) &&
	bs_start --duration 0 && bs_wait_attached &&
	kill -KILL "$BS_PID" && bs_wait &&
	SEND_PATTERN=$TOOL_MS_SHOWN FLAGGED=1 target_clean 3 &&
	expect "$(tool_state)" = "$before" && tool_gone && target_clean 2
'

test_expect_success 'the agent killed: no session of beamscope left, the target clean' '
	bs_start --duration 0 && bs_wait_attached &&
	node_eval "exit(whereis(beamscope_agent), kill)." &&
	bs_wait && echo "exit $BS_RC" && expect "$BS_RC" -eq 5 && cat "$TRASH/bs.err" &&
	target_clean 5
'

test_expect_success 'garbage collections another session traces are not traced (OTP 27+)' '
	if ! sessions; then say "OTP $REL has no sessions: nothing can collide"; exit 0; fi
	node_eval "bs_tool:session(bs_echo, [garbage_collection])." &&
	bs_start --duration 0 --events gc,send,receive && bs_wait_attached &&
	ours=$(node_eval "bs_tool:our_flags(bs_echo)." | tr -d " ") &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 && cat "$TRASH/bs.err" &&
	echo "our flags on bs_echo: $ours" &&
	expect "$ours" = "[procs,receive,send]" &&
	grep -q "garbage collections not traced on 1 process of .*OTP issue 11624" "$TRASH/bs.err" &&
	expect "$(grep -c "garbage collections not traced" "$TRASH/bs.err")" -eq 1 &&
	node_eval "bs_tool:session_stop()." && target_clean 2
'

test_expect_success '--take-over (legacy): the process is traced, and given back as it was' '
	if sessions; then legacy=--legacy; else legacy=; fi
	node_eval "bs_tool:legacy(bs_echo, $TOOL_MS)." >/dev/null && before=$(tool_state) &&
	node_eval "bs_tool:counts()." >/dev/null &&
	bs_start --duration 0 --take-over $legacy && bs_wait_attached &&
	node_eval "bs_tool:run(bs_echo, $N)." && sleep 0.3 &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 && cat "$TRASH/bs.err" &&
	grep -q "attached to .*legacy)" "$TRASH/bs.err" &&
	grep -q "took 1 process from another tracer (--take-over); given back at the end" "$TRASH/bs.err" &&
	both $N && jqs -e ".[-1].skipped == []" &&
	expect "$(tool_state)" = "$before" &&
	node_eval "bs_tool:run(bs_echo, 10)." && tool_counts 10 10 &&
	tool_gone && target_clean 2
'

test_expect_success 'new processes another tracer traces (legacy): left to it and said; only them refused' '
	if sessions; then legacy=--legacy; else legacy=; fi
	node_eval "bs_tool:start(), erlang:trace(new_processes, true, [procs, {tracer, whereis(bs_tool)}])." &&
	bs_start --duration 1 $legacy && bs_wait && expect "$BS_RC" -eq 0 && cat "$TRASH/bs.err" &&
	grep -q "new processes on .* are traced by another tracer (.*); left to it" "$TRASH/bs.err" &&
	rc=0 && "$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --pids new $legacy 2>err || rc=$?
	cat err && expect "$rc" -eq 6 && grep -q "new processes on .* are already traced by another tracer .*--take-over" err &&
	expect "$(node_eval "erlang:trace_info(new_processes, tracer) == {tracer, whereis(bs_tool)}.")" = true &&
	node_eval "erlang:trace(new_processes, false, [all])." && target_clean 2
'
test_done
