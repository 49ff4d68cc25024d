#!/bin/sh
# :match in the view: a new pattern restarts the trace with it, so that
# the process in focus ships only the matching messages, while its totals
# (and the table's) still count every message; no argument says which
# pattern is in force, off ships every message again.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

start_node bsuimatch || exit 1
Q="'"
N=500
K=50
D=$((N / K))

# wait until the target's send pattern shows $1
send_pattern() {
	for _ in $(seq 1 100); do
		our_pattern send | grep -q "$1" && return 0
		sleep 0.1
	done
	echo "the send pattern never showed $1"
	return 1
}

# receive events of the sink in the recording
recv() {
	jq -s --arg p "$sink" "[.[] | select(.pid == \$p and .type == \"receive\")] | length" rec.ndjson
}

test_expect_success ':match: the log ships the matching messages, the totals count all' '
	sink=$(node_eval "bs_match:ready()." | tr -d "\"") &&
	ui_start --record rec.ndjson && ui_wait "recording to rec.ndjson" 10 &&
	ui_wait "@[^ ]+  tracing " 10 &&
	ui_keys ":focus bs_msink" Enter && ui_wait "^ <0[.][0-9]+[.]0> bs_msink" &&
	ui_keys ":match" Enter && ui_wait "every message is shipped" &&
	ui_keys ":match {deliver, _, _}" Enter && ui_wait "tracing [0-9]+ processes" 10 &&
	send_pattern deliver &&
	node_eval "bs_match:run($N, $K)." >/dev/null &&
	ui_wait "received $((N + 1)) " 10 &&
	ui_screen >log.txt && cat log.txt &&
	expect "$(grep -c "received <-  {deliver," log.txt)" -eq $D &&
	! grep -q "received <-  {noise," log.txt &&
	grep -q "match: {deliver, _, _}" log.txt &&
	ui_keys ":match" Enter && ui_wait "shipping only messages matching [{]deliver, _, _[}]" &&
	ui_keys ":match off" Enter && ui_wait "tracing [0-9]+ processes" 10 &&
	send_pattern true &&
	ui_keys ":match" Enter && ui_wait "every message is shipped" &&
	node_eval "bs_match:run($N, $K)." >/dev/null &&
	ui_wait "received $((2 * N + 2)) " 10 &&
	ui_keys Q && expect "$(ui_exit_status 10)" = 0 &&
	expect "$(recv)" -eq $((D + N + 1)) &&
	target_clean 3
'

test_expect_success ':match with a bad pattern: said, tracing goes on without it' '
	node_eval "bs_match:ready()." >/dev/null &&
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys ":match {deliver, " Enter &&
	ui_wait "match .[{]deliver,.: line 1, column [0-9]+: the pattern ends too soon" 10 &&
	ui_keys ":match" Enter && ui_wait "every message is shipped" &&
	our_pattern send | grep -q true &&
	ui_keys Q && expect "$(ui_exit_status 10)" = 0 &&
	target_clean 3
'
test_done
