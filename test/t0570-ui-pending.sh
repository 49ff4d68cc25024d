#!/bin/sh
# Requests to the agent do not hold up the view: with the target frozen
# (SIGSTOP on its VM), a command's request is sent and shown as pending,
# and keys still answer at once; once the target runs again, the request
# completes and tracing goes on.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || test_skip_all "tmux is not installed"

start_node bspend || exit 1

# key_ms KEY PATTERN: how long the screen takes to show PATTERN after KEY,
# in milliseconds (a key already on screen counts from the next change)
key_ms() {
	t0=$(date +%s%N)
	ui_keys "$1"
	for _ in $(seq 1 400); do
		ui_screen | grep -qE -- "$2" && break
		sleep 0.005
	done
	t1=$(date +%s%N)
	echo $(( (t1 - t0) / 1000000 ))
}

test_expect_success 'the view traces the node' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10
'

test_expect_success 'frozen target: the request is pending, keys answer within 100 ms' '
	kill -STOP $NODE_PID &&
	ui_keys ":off" Enter && ui_wait "pending: .*stopping" 3 &&
	best=100000 &&
	for i in 1 2 3; do
		a=$(key_ms t "spawn tree") && b=$(key_ms q "PID +NAME") &&
		echo "tree $a ms, back $b ms" &&
		for v in $a $b; do if [ "$v" -lt "$best" ]; then best=$v; fi; done
	done &&
	echo "best $best ms" && expect "$best" -le 100 &&
	ui_screen | grep -E "pending: .*stopping"
'

test_expect_success 'the target runs again: the stop completes, :on traces again' '
	kill -CONT $NODE_PID &&
	ui_wait " stopped " 10 && target_clean 5 &&
	ui_keys ":on" Enter && ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "bs_work:sink(100, 2), ok." >/dev/null && sleep 1.5 &&
	ui_keys / bs_sink Enter && ui_wait "bs_sink" &&
	ui_screen | grep -E "^<0[.][0-9]+[.]0> +bs_sink" | tee row &&
	expect "$(ui_cell RECV "^<0[.][0-9]+[.]0> +bs_sink")" = 101
'

test_expect_success 'quit leaves the target clean' '
	ui_keys Q && expect "$(ui_exit_status)" = 0 && target_clean 5
'

test_expect_success 'a node that does not shake hands: :attach is pending, keys answer' '
	A=$NODE APID=$NODE_PID &&
	NODE_COOKIE=$COOKIE start_node bspend2 && B=$NODE BPID=$NODE_PID &&
	NODE=$A NODE_PID=$APID &&
	ui_session 160 30 \
		"'$BEAMSCOPE' $A $B --cookie-file '$COOKIE_FILE'; echo \$? >'$TRASH/ui.rc'; sleep 600" &&
	ui_wait "tracing [0-9]+ processes on 2 nodes" 15 &&
	ui_keys ":detach $B" Enter && ui_wait "detached from $B" 10 &&
	( NODE=$B; target_clean 5 ) && kill -STOP $BPID &&
	ui_keys ":attach $B" Enter && ui_wait "pending: $B[^ ]*: connecting" 3 &&
	ms=$(key_ms t "spawn tree") && echo "tree $ms ms" && expect "$ms" -le 300 &&
	ms=$(key_ms q "PID +NAME") && echo "back $ms ms" && expect "$ms" -le 300 &&
	kill -CONT $BPID &&
	ui_wait "attached to $B" 15 &&
	ui_keys Q && expect "$(ui_exit_status 10)" = 0 && target_clean 5 &&
	( NODE=$B; target_clean 5 )
'

test_done
