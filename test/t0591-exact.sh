#!/bin/sh
# Exact mode (--profile-calls, :profile calls): every call of the functions
# named is counted and timed, and its allocation summed, by the VM in a
# trace session of beamscope's (OTP 27+), read once a second; the counts
# are those a workload of known calls makes (test/erl/bs_exact.erl).  The
# session is gone after every way out, and what another tool set on the
# same functions is left as it was.  Before OTP 27, one line refuses it.
. "$(dirname "$0")/lib.sh"

mkdir -p "$TRASH/ebin" && erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_exact.erl" || exit 1
start_node bsexact || exit 1
node_eval "code:ensure_loaded(bs_exact)." >/dev/null
REL=$(otp_release)
say "OTP $REL"
# the session's count, as the node says it ("0" before OTP 27)
our_sessions() {
	node_eval "case list_to_integer(erlang:system_info(otp_release)) >= 27 of true -> length([S || {beamscope, _} = S <- trace:session_info(all)]); false -> 0 end." | tr -d " \n"
}
exact_on() { [ "$(our_sessions)" -ge 2 ]; }
exact_off() { [ "$(our_sessions)" -le 1 ]; }
exact_gone() { [ "$(our_sessions)" = 0 ]; }
# the last profile_calls line's FIELD of function FN
last_calls() {
	jqs -r --arg f "$1" "[.[] | select(.type == \"profile_calls\")] | last | .calls[] | select(.function == \$f) | .$2"
}

test_expect_success '--profile-calls: a bad list is one line' '
	expect_usage "$NODE" --batch --profile-calls "bs_exact,,x" &&
	grep -q "name functions: mod, mod:fun or mod:fun/N" err &&
	expect_usage "$NODE" --profile-calls bs_exact &&
	grep -q "is for batch mode" err
'

if ! sessions_here; then
	test_expect_success 'before OTP 27 exact mode is refused in one line; the run goes on, the node clean' '
		bs_start --pids init --profile-calls bs_exact -d 2 && bs_wait &&
		cat "$TRASH/bs.err" &&
		expect "$BS_RC" = 0 &&
		grep -q "exact mode needs OTP 27 or later .* this node runs OTP $REL" "$TRASH/bs.err" &&
		expect "$(grep -c profile_calls "$TRASH/bs.json")" = 0 &&
		target_clean 3
	'
	test_done
fi

test_expect_success 'batch: the calls of a module counted exactly, their words, the session gone at the end' '
	bs_start --pids init --profile-calls bs_exact -d 4 && bs_wait_attached &&
	for _ in $(seq 1 50); do grep -q "exact mode on" "$TRASH/bs.err" && break; sleep 0.1; done &&
	grep -qE "exact mode on .*: [0-9]+ functions timed" "$TRASH/bs.err" &&
	expect "$(our_sessions)" -ge 2 &&
	node_eval "bs_exact:run(1000, 300)." >/dev/null &&
	bs_wait && cat "$TRASH/bs.err" && expect "$BS_RC" = 0 &&
	expect "$(last_calls bs_exact:f/1 calls)" = 1000 &&
	expect "$(last_calls bs_exact:g/2 calls)" = 300 &&
	expect "$(last_calls bs_exact:f/1 words)" = 20000 &&
	expect "$(last_calls bs_exact:g/2 words)" = 0 &&
	expect "$(last_calls bs_exact:idle/0 calls)" = "" &&
	expect "$(jqs "[.[] | select(.type == \"profile_calls\")] | last | .functions")" -ge 4 &&
	expect "$(jqs "[.[] | select(.type == \"profile_calls\")] | last | .read_us")" -ge 0 &&
	# an idle node: every function read in a second, within the budget
	expect "$(jqs "[.[] | select(.type == \"profile_calls\")] | any(.read == .functions)")" = true &&
	expect "$(our_sessions)" = 0 &&
	target_clean 3 &&
	"$BEAMSCOPE" --open "$TRASH/bs.json" --batch -o again.json 2>again.err;
	expect "$?" = 0 && cat again.err && ! grep -qi "skipped\|unknown" again.err
'

test_expect_success 'batch: one function named (in Elixir form) is the only one timed; a module not loaded is one line' '
	bs_start --pids init --profile-calls :bs_exact.g/2 -d 3 && bs_wait_attached &&
	for _ in $(seq 1 50); do grep -q "exact mode on" "$TRASH/bs.err" && break; sleep 0.1; done &&
	node_eval "bs_exact:run(200, 70)." >/dev/null &&
	bs_wait && expect "$BS_RC" = 0 &&
	grep -q "exact mode on .*: 1 functions timed" "$TRASH/bs.err" &&
	expect "$(last_calls bs_exact:g/2 calls)" = 70 &&
	expect "$(last_calls bs_exact:f/1 calls)" = "" &&
	bs_start --pids init --profile-calls bs_nope -d 2 && bs_wait &&
	cat "$TRASH/bs.err" &&
	grep -q "exact mode on .*: bs_nope:_: module bs_nope is not loaded on the node" "$TRASH/bs.err" &&
	expect "$(grep -c profile_calls "$TRASH/bs.json")" = 0 &&
	target_clean 3
'

test_expect_success 'another tool'"'"'s call_time on the same function is left as it was' '
	node_eval "erlang:trace_pattern({bs_exact, f, 1}, true, [call_time]), ok." >/dev/null &&
	bs_start --pids init --profile-calls bs_exact -d 2 && bs_wait &&
	expect "$(last_calls bs_exact:f/1 calls)" = "" &&
	node_eval "erlang:trace_info({bs_exact, f, 1}, call_time)." | tr -d " \n" >theirs &&
	cat theirs && grep -q "^{call_time,\[" theirs &&
	node_eval "erlang:trace_pattern({bs_exact, f, 1}, false, [call_time]), ok." >/dev/null &&
	target_clean 3
'

test_expect_success 'the view: :profile calls adds CALLS, US/CALL and W/CALL to the table; off ends the session' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys ":profile calls bs_exact" Enter &&
	ui_wait "timing every call of bs_exact" &&
	eventually 5 exact_on &&
	node_eval "bs_exact:run(1000, 300)." >/dev/null &&
	ui_wait "bs_exact:f/1 .* 1000 " 5 &&
	ui_screen >screen.txt && cat screen.txt &&
	grep -q "CALLS   US/CALL   W/CALL" screen.txt &&
	grep -qE "bs_exact:f/1 .* 1000 +[0-9.]+ +20[.]0" screen.txt &&
	grep -qE "bs_exact:g/2 .* 300 +[0-9.]+ +0[.]0" screen.txt &&
	ui_keys ":profile calls off" Enter && ui_wait "exact mode is off" &&
	eventually 5 exact_off &&
	ui_keys ":profile calls bs_exact:g" Enter && ui_wait "timing every call" &&
	eventually 5 exact_on &&
	ui_keys Escape && eventually 5 exact_off &&
	ui_keys Q && expect "$(ui_exit_status 10)" = 0 &&
	target_clean 3
'

test_expect_success 'the agent killed with exact mode on: its session goes with it' '
	bs_start --pids init --profile-calls bs_exact -d 60 && bs_wait_attached &&
	for _ in $(seq 1 50); do grep -q "exact mode on" "$TRASH/bs.err" && break; sleep 0.1; done &&
	expect "$(our_sessions)" -ge 2 &&
	node_eval "exit(whereis(beamscope_agent), kill)." >/dev/null &&
	bs_wait; eventually 10 exact_gone &&
	target_clean 10
'

test_expect_success 'kill -9 of beamscope with exact mode on: the node clean' '
	bs_start --pids init --profile-calls bs_exact -d 60 && bs_wait_attached &&
	for _ in $(seq 1 50); do grep -q "exact mode on" "$TRASH/bs.err" && break; sleep 0.1; done &&
	grep -q "exact mode on" "$TRASH/bs.err" &&
	kill -9 "$BS_PID" && bs_wait;
	target_clean 10 && expect "$(our_sessions)" = 0
'

test_done
