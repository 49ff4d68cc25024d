#!/bin/sh
# --match: only the messages matching a pattern are shipped, filtered by
# the send and receive trace patterns on the target; counts stay exact for
# every message; the patterns are the target's again however beamscope
# ends, and another tool's are refused, never replaced.
. "$(dirname "$0")/lib.sh"

start_node bsmatch || exit 1

# the workload (test/erl/bs_match.erl): the source sends the sink N
# messages, one in K a {deliver, I, x}
N=2000
K=100
D=$((N / K))
Q="'"

# sends and receives of pid $1 of type $2 in the output
n_of() {
	jqs --arg p "$1" "[.[] | select(.pid == \$p and .type == \"$2\")] | length"
}

test_expect_success 'event tier: exactly the matching sends and receives are shipped' '
	sink=$(node_eval "bs_match:ready()." | tr -d "\"") &&
	src=$(node_eval "pid_to_list(whereis(bs_msrc))." | tr -d "\"") &&
	bs_start --pids bs_msrc,bs_msink --match "{deliver, _, _}" --duration 0 &&
	bs_wait_attached &&
	our_pattern send >ms &&
	node_eval "bs_match:run($N, $K)." &&
	sleep 0.5 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	grep -F "\$beamscope" ms &&
	grep -F -- "--match \"{deliver, _, _}\": only the messages it matches are shipped" "$TRASH/bs.err" &&
	expect "$(n_of "$src" send)" -eq $D && expect "$(n_of "$sink" receive)" -eq $D &&
	expect "$(n_of "$src" receive)" -eq 0 && expect "$(n_of "$sink" send)" -eq 0 &&
	jqs -e "[.[] | select(.type == \"send\" or .type == \"receive\") | .payload | startswith(\"{deliver,\")] | all" &&
	jqs -e "[.[] | select(.type == \"send\") | .payload] | sort == ([range(1; $D + 1) | \"{deliver,\(. * $K),x}\"] | sort)" &&
	target_clean 2
'

test_expect_success 'without --match the same run ships every message' '
	sink=$(node_eval "bs_match:ready()." | tr -d "\"") &&
	src=$(node_eval "pid_to_list(whereis(bs_msrc))." | tr -d "\"") &&
	bs_start --pids bs_msrc,bs_msink --duration 0 && bs_wait_attached &&
	node_eval "bs_match:run($N, $K)." &&
	sleep 0.5 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	expect "$(n_of "$src" send)" -eq $((N + 2)) &&
	expect "$(n_of "$sink" receive)" -eq $((N + 1)) &&
	target_clean 2
'

test_expect_success 'a guard, and a guard sequence' '
	sink=$(node_eval "bs_match:ready()." | tr -d "\"") &&
	src=$(node_eval "pid_to_list(whereis(bs_msrc))." | tr -d "\"") &&
	bs_start --pids bs_msrc,bs_msink --duration 0 \
		--match "{deliver, I, _} when I rem 200 =:= 0; I =:= 100" &&
	bs_wait_attached &&
	node_eval "bs_match:run($N, $K)." &&
	sleep 0.5 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	expect "$(n_of "$src" send)" -eq $((D / 2 + 1)) &&
	expect "$(n_of "$sink" receive)" -eq $((D / 2 + 1)) &&
	target_clean 2
'

test_expect_success 'count tier: the counts are of every message, whatever --match says' '
	sink=$(node_eval "bs_match:ready()." | tr -d "\"") &&
	src=$(node_eval "pid_to_list(whereis(bs_msrc))." | tr -d "\"") &&
	bs_start --counts --interval 0.2 --duration 0 --match "{deliver, _, _}" &&
	bs_wait_attached &&
	node_eval "bs_match:run($N, $K)." &&
	sleep 0.6 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e --arg p "$sink" "[.[] | select(.type == \"counts\" and .pid == \$p)] | last |
		.receives == $N + 1 and .sends == 1" &&
	jqs -e --arg p "$src" "[.[] | select(.type == \"counts\" and .pid == \$p)] | last |
		.sends == $N + 2 and .receives == 2" &&
	target_clean 2
'

test_expect_success 'a bad pattern: one line, status 2, nothing traced' '
	rc=0 && "$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" \
		--match "{deliver, _" -o out.json 2>err || rc=$? &&
	cat err && expect "$rc" -eq 2 && expect "$(wc -l <err)" -eq 1 &&
	grep -qF -- "--match \"{deliver, _\": line 1, column 12: the pattern ends too soon" err &&
	rc=0 && "$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" \
		--match "{a, X} -> return" -o out.json 2>err || rc=$? &&
	cat err && expect "$rc" -eq 2 && grep -q "has no actions" err &&
	rc=0 && "$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" \
		--match "X when set_tcw(1)" -o out.json 2>err || rc=$? &&
	cat err && expect "$rc" -eq 2 && grep -q "match" err &&
	target_clean 2
'

test_expect_success 'another tool'"'"'s send pattern: refused in one line (OTP 25-26), beside ours (27+); left as it was' '
	node_eval "bs_match:ready()." >/dev/null &&
	node_eval "erlang:trace_pattern(send, [{[${Q}_$Q, hello], [], []}], [])." &&
	SEND_PATTERN="[{[${Q}_$Q,hello],[],[]}]" &&
	rc=0 && "$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --duration 1 \
		--pids bs_msink --match "{deliver, _, _}" -o out.json 2>err || rc=$? &&
	cat err &&
	if sessions_here; then
		expect "$rc" -eq 0 && ! grep -q "another tool" err
	else
		expect "$rc" -eq 6 &&
		grep -qF "the send trace pattern on" err && grep -q "another tool" err &&
		grep -qF "erlang:trace_pattern(send, true, [])" err && grep -q -- "--take-over" err &&
		expect "$(grep -c . err)" -eq 1
	fi &&
	target_clean 2 &&
	node_eval "erlang:trace_pattern(send, true, [])." &&
	SEND_PATTERN=true target_clean 0
'

test_expect_success 'another tool'"'"'s receive pattern: refused (OTP 25-26), beside ours (27+); left as it was' '
	node_eval "erlang:trace_pattern(${Q}receive$Q, false, [])." &&
	RECEIVE_PATTERN=false &&
	rc=0 && "$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --duration 1 \
		--match "{deliver, _, _}" -o out.json 2>err || rc=$? &&
	cat err &&
	if sessions_here; then
		expect "$rc" -eq 0 && ! grep -q "another tool" err
	else
		expect "$rc" -eq 6 && grep -qF "the ${Q}receive$Q trace pattern on" err
	fi &&
	target_clean 2 &&
	node_eval "erlang:trace_pattern(${Q}receive$Q, true, [])." &&
	RECEIVE_PATTERN=true target_clean 0
'

test_expect_success 'kill -9 of beamscope: both patterns are put back' '
	node_eval "bs_match:ready()." >/dev/null &&
	bs_start --match "{deliver, _, _}" --duration 0 && bs_wait_attached &&
	{ our_pattern send; our_pattern receive; } >ms &&
	kill -KILL "$BS_PID" && bs_wait && cat ms &&
	expect "$(grep -o deliver ms | wc -l)" -eq 2 &&
	node_eval "bs_match:run($N, $K)." &&
	target_clean 5
'

test_expect_success 'the agent killed on the target: its workers put both patterns back' '
	node_eval "bs_match:ready()." >/dev/null &&
	bs_start --match "{deliver, _, _}" --duration 0 && bs_wait_attached &&
	our_pattern send >ms &&
	node_eval "exit(whereis(beamscope_agent), kill)." &&
	bs_wait && grep -F "deliver" ms &&
	target_clean 5
'

test_expect_success 'receive timeouts with --match: still shipped as timeouts' '
	pid=$(node_eval "bs_work:tmo_ready(bs_tmo)." | tr -d "\"") &&
	bs_start --pids bs_tmo --events send,receive,timeout --match "timeout" --duration 0 && bs_wait_attached &&
	node_eval "bs_work:tmo_run(bs_tmo, 300, 40)." &&
	sleep 0.5 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	expect "$(n_of "$pid" timeout)" -eq 300 &&
	expect "$(n_of "$pid" receive)" -eq 40 &&
	jqs -e --arg p "$pid" "[.[] | select(.pid == \$p and .type == \"receive\") | .payload == \"timeout\"] | all" &&
	target_clean 2
'
test_expect_success 'gen calls with --match: every call still paired, no message shipped' '
	erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_gen.erl" &&
	node_eval "bs_gen:start()." >/dev/null &&
	bs_start --gen-calls --interval 0.5 --duration 0 --match "{never, _}" &&
	bs_wait_attached &&
	node_eval "bs_gen:run(300, 60)." &&
	sleep 0.7 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e "[.[] | select(.type == \"gen_call_stats\" and .server_name == \"bs_gen_srv\"
		and .kind == \"get\")] | last | .calls == 300" &&
	jqs -e "[.[] | select(.type == \"gen_call_stats\" and .server_name == \"bs_gen_srv\"
		and .kind == \"put\")] | last | .calls == 60" &&
	jqs -e "all(.[]; .type != \"send\" and .type != \"receive\")" &&
	target_clean 2
'
test_done
