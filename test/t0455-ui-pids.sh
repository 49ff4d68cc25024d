#!/bin/sh
# Pids typed at the prompt: a well-formed pid the target cannot have is
# refused with a reason before it goes on the wire (a node drops the
# connection that sends it one), and one it can have is traced.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

start_node bspids || exit 1
REL=$(otp_release)
# the limits of a local pid: before OTP 26 a 15-bit number and a 13-bit
# serial, which the target checks; from OTP 26 on, 28 and 32 bits, all
# that the text of a pid can say here
if [ "$REL" -ge 26 ]; then
	BIG_NUM="<0.268435456.0>" BIG_SERIAL="<0.1.4294967296>"
	WHY_NUM="cannot be a pid"
	FOLLOW_WHY="follow takes one process: a pid"
	LARGEST="<0.268435455.4294967295>"
else
	BIG_NUM="<0.99999.0>" BIG_SERIAL="<0.1.9000>"
	WHY_NUM="cannot be a pid on OTP $REL: the number of a process is at most 32767"
	FOLLOW_WHY=":follow: <0[.]1[.]9000> cannot be a pid on OTP $REL"
	LARGEST="<0.32767.8191>"
fi
say "OTP $REL: $BIG_NUM and $BIG_SERIAL refused, $LARGEST the largest"

still_attached() {
	sleep 0.5 &&
	ui_screen | grep -E "@[^ ]+  tracing [0-9:]+ " &&
	! ui_screen | grep -q LOST &&
	! grep -i corrupt "$TRASH/node.$NODE.log"
}

test_expect_success ':focus of a pid too large for the release says why not and keeps the node' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys ":focus $BIG_NUM" Enter &&
	ui_wait ":focus: .*$BIG_NUM.* $WHY_NUM" &&
	still_attached
'

test_expect_success ':pids and :follow of pids too large say why not' '
	ui_keys ":pids $BIG_NUM" Enter &&
	ui_wait "(:|--)pids: .*$BIG_NUM.* $WHY_NUM" &&
	still_attached &&
	ui_keys ":follow $BIG_SERIAL" Enter &&
	ui_wait "$FOLLOW_WHY" &&
	still_attached
'

test_expect_success ':reconnect after them sends nothing the target refuses' '
	ui_keys ":reconnect" Enter && sleep 1 &&
	ui_wait "tracing [0-9]+ processes" 10 && still_attached
'

test_expect_success 'the largest pid the target can have is traced' '
	ui_keys ":focus $LARGEST" Enter && ui_wait "$LARGEST" &&
	still_attached && ui_keys Escape && sleep 0.3 &&
	pid=$(node_eval "P = spawn(fun() -> receive go -> receive after 100 -> ok end end end), register(bs_typed, P), pid_to_list(P)." | tr -d "\"") &&
	ui_keys ":focus $pid" Enter && ui_wait "^ *$pid|$pid" &&
	node_eval "bs_typed ! go, ok." >/dev/null &&
	ui_wait "received <- +go" 5 && still_attached
'

test_expect_success 'detaching leaves the target clean' '
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'
test_done
