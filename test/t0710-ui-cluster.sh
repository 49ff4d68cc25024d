#!/bin/bash
# The live view over several nodes, driven in tmux against three real nodes
# in one cluster: the node column, the per-node status line, :node, a
# receive paired with its send on another node, :detach and :attach, a
# node lost while the others go on, and every node left clean.
. "$(dirname "$0")/lib.sh"

command -v tmux >/dev/null || test_skip_all "tmux is not installed"

start_cluster uc 3 || exit 1
set -- $CNODES; A=$1 B=$2 C=$3
set -- $CNODES_FULL; AF=$1 BF=$2 CF=$3

all_clean() {
	for n in "$@"; do
		( NODE=$n; target_clean 3 ) || return 1
	done
}

# ping_1 on A plays pong_2 on B, ping_2 on B plays pong_3 on C, ping_3 on C
# plays pong_1 on A
on_node $B "bs_cluster:start_ponger(pong_2)." >/dev/null
on_node $C "bs_cluster:start_ponger(pong_3)." >/dev/null
on_node $A "bs_cluster:start_ponger(pong_1)." >/dev/null
on_node $A "bs_cluster:start_pinger(ping_1, '$BF', pong_2)." >/dev/null
on_node $B "bs_cluster:start_pinger(ping_2, '$CF', pong_3)." >/dev/null
on_node $C "bs_cluster:start_pinger(ping_3, '$AF', pong_1)." >/dev/null

# ui_start_nodes ARGS...: the real binary on several nodes in tmux
ui_start_nodes() {
	rm -f "$TRASH/ui.rc"
	ui_session 160 30 \
		"XDG_STATE_HOME='$TRASH/state' '$BEAMSCOPE' $* --cookie-file '$COOKIE_FILE'; echo \$? >'$TRASH/ui.rc'; sleep 600"
}

PIDS=ping_1,ping_2,ping_3,pong_1,pong_2,pong_3

test_expect_success 'three nodes in one view: a node column, every node in the status line' '
	ui_start_nodes $A $B $C --pids $PIDS &&
	ui_wait "tracing [0-9]+ processes on 3 nodes" 15 &&
	ui_screen | grep -E "^ *PID +NAME +NODE +CURRENT" &&
	ui_screen | tail -2 | head -1 | grep -F "$AF" &&
	ui_screen | tail -2 | head -1 | grep -F "$BF" &&
	ui_screen | tail -2 | head -1 | grep -F "$CF"
'

test_expect_success 'the ring plays: each process on its own node, with its counts' '
	for n in 1 2 3; do
		node=$(eval echo \$$(echo " A B C" | cut -d" " -f$((n + 1))))
		on_node $node "bs_cluster:go(ping_$n, 40)." >/dev/null || return 1
	done &&
	for n in 1 2 3; do
		node=$(eval echo \$$(echo " A B C" | cut -d" " -f$((n + 1))))
		expect "$(on_node $node "bs_cluster:wait_done(ping_$n, 20000).")" = done || return 1
	done &&
	ui_wait "pong_2 +${BF:0:14}.* 40 " 5 &&
	ui_wait "ping_1 +${AF:0:14}.* 40 " 5 &&
	ui_wait "ping_3 +${CF:0:14}" 5
'

test_expect_success 'the log of a ponger shows who sent each ping, from the other node' '
	ui_keys ":focus pong_2" Enter &&
	ui_wait "received <- <$AF[.][0-9]+[.][0-9]+> \([0-9-]+ us\) +[{]ping" 5 &&
	ui_keys q && ui_wait "PID +NAME +NODE" 5
'

test_expect_success ':nodes lists each node with its clock estimate' '
	ui_keys ":nodes" Enter &&
	ui_wait "$AF tracing, clock [+-][0-9]+ us [+]-[0-9]+, 0 dropped; $BF tracing" 5
'

test_expect_success ':node shows one node'"'"'s processes, :node alone all of them' '
	ui_keys ":node $B" Enter &&
	ui_wait "showing the processes of $BF" 5 &&
	sleep 0.3 && ui_screen | head -n -2 >scr &&
	grep -E "pong_2|ping_2" scr && ! grep -E "ping_1|pong_3" scr &&
	ui_keys ":node" Enter &&
	ui_wait "showing every node" 5 && ui_wait "ping_1" 5
'

test_expect_success ':detach leaves a node clean; :attach brings it back' '
	ui_keys ":detach $C" Enter &&
	ui_wait "detached from $CF" 10 &&
	all_clean $C &&
	expect "$( (NODE=$A; node_eval "is_pid(whereis(beamscope_agent)).") )" = true &&
	ui_keys ":attach $C" Enter &&
	ui_wait "attached to $CF" 15 &&
	expect "$( (NODE=$C; node_eval "is_pid(whereis(beamscope_agent)).") )" = true
'

test_expect_success 'a node lost: its status says so, the others go on' '
	set -- $CPIDS && kill -9 $2 && { wait $2 2>/dev/null; true; } &&
	ui_wait "$BF:LOST" 10 &&
	on_node $C "bs_cluster:go(ping_3, 10)." >/dev/null &&
	expect "$(on_node $C "bs_cluster:wait_done(ping_3, 20000).")" = done &&
	ui_wait "ping_3 +${CF:0:14}.* 50 " 5
'

test_expect_success 'q: the nodes left are clean' '
	ui_keys q && expect "$(ui_exit_status 10)" = 0 &&
	all_clean $A $C
'

BACK=uiback_$$_$RANDOM
start_back() {
	erl -sname "$BACK" -setcookie "$COOKIE" -noshell -noinput >/dev/null 2>&1 &
	NODE_PIDS="$NODE_PIDS $!"
	( NODE=$BACK
	  for _ in $(seq 1 100); do
		[ "$(node_eval ok.)" = ok ] && exit 0
		sleep 0.1
	  done
	  exit 1 )
}

test_expect_success '--reconnect: a node that comes back is traced again' '
	start_back &&
	ui_start_nodes $A $BACK --reconnect &&
	ui_wait "tracing [0-9]+ processes on 2 nodes" 15 &&
	ospid=$(NODE=$BACK node_eval "list_to_integer(os:getpid()).") &&
	kill -9 $ospid &&
	ui_wait "$BACK@[^ ]*:LOST" 10 &&
	start_back &&
	ui_wait "attached to \"?$BACK@[^ ]* again" 20 &&
	! ui_screen | tail -2 | head -1 | grep -q ":LOST" &&
	expect "$( (NODE=$BACK; node_eval "is_pid(whereis(beamscope_agent)).") )" = true &&
	ui_keys q && expect "$(ui_exit_status 10)" = 0 &&
	all_clean $A $BACK
'

# the node started inside the test: stop it by its pid
( NODE=$BACK; p=$(node_eval "list_to_integer(os:getpid()).") && kill "$p" ) 2>/dev/null

test_expect_success '--cluster: one node given, the view opens on all it sees' '
	ui_start_nodes --cluster $A &&
	ui_wait "tracing [0-9]+ processes on 2 nodes" 15 &&
	ui_screen | tail -2 | head -1 | grep -F "$CF" &&
	ui_keys q && expect "$(ui_exit_status 10)" = 0 &&
	all_clean $A $C
'

test_expect_success 'a recording of two nodes reopens with its node column and counts' '
	"$BEAMSCOPE" $A $C --batch --cookie-file "$COOKIE_FILE" \
		--pids ping_3,pong_1 -d 0 -n 0 -o "$TRASH/multi.ndjson" 2>multi.err &
	rec=$! &&
	for _ in $(seq 1 200); do
		[ "$(grep -c "attached to" multi.err)" -ge 2 ] && break; sleep 0.05
	done &&
	on_node $C "bs_cluster:go(ping_3, 25)." >/dev/null &&
	expect "$(on_node $C "bs_cluster:wait_done(ping_3, 20000).")" = done &&
	sleep 0.5 && kill -INT $rec && wait $rec &&
	sent=$(jq -s "[.[] | select(.type == \"send\" and .name == \"ping_3\")] | length" multi.ndjson) &&
	expect "$sent" -ge 25 &&
	ui_session 160 30 \
		"'$BEAMSCOPE' --open '$TRASH/multi.ndjson'; echo \$? >'$TRASH/ui.rc'; sleep 600" &&
	ui_wait "opened .*multi.ndjson: [0-9]+ events from 2 nodes" 10 &&
	ui_screen | grep -E "^ *PID +NAME +NODE +CURRENT" &&
	ui_wait "ping_3 +${CF:0:14}.* $sent " 5 &&
	ui_screen | grep -E "pong_1 +${AF:0:14}" &&
	ui_screen | tail -2 | head -1 | grep -F "$AF" | grep -F "$CF" &&
	ui_keys ":focus pong_1" Enter &&
	ui_wait "received <- <$CF[.][0-9]+[.][0-9]+> \([0-9-]+ us\) +[{]ping" 5 &&
	ui_keys Q && expect "$(ui_exit_status 10)" = 0 && all_clean $A $C
'

test_done
