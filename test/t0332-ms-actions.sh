#!/bin/sh
# Raw match specs of --call may only use actions that end with the session:
# set_tcw, set_seq_token, trace, enable_trace, disable_trace, silent,
# display and process_dump are refused, naming the action, before anything
# is traced; the allowed ones work.
. "$(dirname "$0")/lib.sh"

start_node bsact -eval "code:ensure_loaded(bs_calls)" || exit 1

# the target's global trace state, which no session may leave changed
TRACE_STATE='{erlang:system_info(trace_control_word), seq_trace:get_system_tracer(), [P || P <- processes(), {tracer, T} <- [erlang:trace_info(P, tracer)], T =/= []]}.'
CLEAN_TRACE='{0,false,[]}'

# ms ACTION: a --call pattern on bs_calls:add/2 whose body is ACTION
ms() {
	printf "bs_calls:add/2 [{'_', [], [%s]}]" "$1"
}

# refused ACTION NAME: exit 2, one line that names the action, nothing left
refused() {
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" -d 0.5 \
		--call "$(ms "$1")" 2>err >/dev/null &
	pid=$!
	node_eval "bs_calls:run(5)." >/dev/null
	wait $pid
	rc=$?
	cat err
	expect "$rc" -eq 2 && expect "$(wc -l <err)" -eq 1 &&
	grep -q "the action $2 is refused" err && target_clean 2 &&
	expect "$(node_eval "$TRACE_STATE" | tr -d " ")" = "$CLEAN_TRACE"
}

test_expect_success 'the target starts with a clean trace state' '
	expect "$(node_eval "$TRACE_STATE" | tr -d " ")" = "$CLEAN_TRACE"
'
test_expect_success 'set_tcw refused' '
	refused "{set_tcw, 7}" set_tcw
'
test_expect_success 'set_seq_token refused' '
	refused "{set_seq_token, label, 5}" set_seq_token
'
test_expect_success 'trace (another tracer) refused' '
	refused "{trace, [], [send]}" trace
'
test_expect_success 'enable_trace and disable_trace refused' '
	refused "{enable_trace, send}" enable_trace &&
	refused "{disable_trace, call}" disable_trace
'
test_expect_success 'display refused' '
	refused "{display, hello}" display
'
test_expect_success 'silent and process_dump refused' '
	refused "{silent, true}" silent &&
	refused "{message, {process_dump}}" process_dump
'
test_expect_success 'an action hidden inside another is found' '
	refused "{message, {{x, {set_tcw, 1}}}}" set_tcw &&
	refused "{message, [a | {set_seq_token, label, 1}]}" set_seq_token
'

DOUBLE_MS="bs_calls:double/1 [{['\$1'], [{is_integer, '\$1'}], [{exception_trace}, {message, {{arg, '\$1', {self}}}}]}]"
test_expect_success 'the allowed actions trace, and leave nothing behind' '
	bs_start --duration 0 --events spawn \
		--call "$(ms "{message, {caller}}, {return_trace}")" \
		--call "$DOUBLE_MS" &&
	bs_wait_attached && node_eval "bs_calls:run(10)." >/dev/null && sleep 0.5 &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e "[.[] | select(.type == \"call\" and .mfa == \"bs_calls:add/2\")] | length == 10" &&
	jqs -e "[.[] | select(.type == \"return\" and .mfa == \"bs_calls:add/2\")] | length == 10" &&
	jqs -e "[.[] | select(.type == \"call\" and .mfa == \"bs_calls:double/1\")] | length == 10" &&
	target_clean 2 && expect "$(node_eval "$TRACE_STATE" | tr -d " ")" = "$CLEAN_TRACE"
'

test_expect_success 'the man page lists what is allowed and what is refused' '
	for a in return_trace exception_trace message caller set_tcw set_seq_token \
		enable_trace disable_trace display silent process_dump; do
		sed -n "/^\.Sh SAFETY/,/^\.Sh /p" "$TOP/man/beamscope.1" | grep -q "$a" ||
		{ echo "no $a"; return 1; }
	done
'
test_done
