#!/bin/sh
# Pids typed at the prompt: a well-formed pid the target cannot have is
# refused with a reason before it goes on the wire (a node drops the
# connection that sends it one), and one it can have is traced.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

start_node bspids || exit 1
OTP=$(node_eval 'erlang:system_info(otp_release).' | tr -d '"')
[ "$OTP" -ge 26 ] && test_skip_all "the limits tested are those of OTP 25 and before"

still_attached() {
	sleep 0.5 &&
	ui_screen | grep -E "@[^ ]+  tracing [0-9:]+ " &&
	! ui_screen | grep -q LOST &&
	! grep -i corrupt "$TRASH/node.$NODE.log"
}

test_expect_success ':focus <0.99999.0> says why not and keeps the node' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys ":focus <0.99999.0>" Enter &&
	ui_wait ":focus: <0.99999.0> cannot be a pid on OTP $OTP: the number of a process is at most 32767" &&
	still_attached
'

test_expect_success ':pids <0.40000.0> and :follow <0.1.9000> say why not' '
	ui_keys ":pids <0.40000.0>" Enter &&
	ui_wait ":pids: <0.40000.0> cannot be a pid on OTP $OTP" &&
	still_attached &&
	ui_keys ":follow <0.1.9000>" Enter &&
	ui_wait ":follow: <0.1.9000> cannot be a pid on OTP $OTP" &&
	still_attached
'

test_expect_success ':reconnect after them sends nothing the target refuses' '
	ui_keys ":reconnect" Enter && sleep 1 &&
	ui_wait "tracing [0-9]+ processes" 10 && still_attached
'

test_expect_success 'the largest pid the target can have is traced' '
	ui_keys ":focus <0.32767.8191>" Enter && ui_wait "<0.32767.8191>" &&
	still_attached && ui_keys Escape && sleep 0.3 &&
	pid=$(node_eval "P = spawn(fun() -> receive go -> receive after 100 -> ok end end end), register(bs_typed, P), pid_to_list(P)." | tr -d "\"") &&
	ui_keys ":focus $pid" Enter && ui_wait "^ *$pid|$pid" &&
	node_eval "bs_typed ! go, ok." >/dev/null &&
	ui_wait "received <- +go" 5 && still_attached
'

test_expect_success 'detaching leaves the target clean' '
	ui_keys Q && [ "$(ui_exit_status 5)" = 0 ] && target_clean 2
'
test_done
