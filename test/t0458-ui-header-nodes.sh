#!/bin/bash
# The header with several nodes: it shows the node the table shows (:node),
# else the first; every node's agent samples while it is on, and a node
# taken out with :detach has scheduler_wall_time as it was, while the
# others go on.
. "$(dirname "$0")/lib.sh"

command -v tmux >/dev/null || test_skip_all "tmux is not installed"

start_cluster uh 2 || exit 1
set -- $CNODES; A=$1 B=$2
set -- $CNODES_FULL; AF=$1 BF=$2

swt_on() {
	on_node "$1" "erlang:statistics(scheduler_wall_time) =/= undefined."
}

test_expect_success 'two nodes: the header names the first, and both sample' '
	rm -f "$TRASH/ui.rc" &&
	ui_session 160 40 \
		"XDG_STATE_HOME='"'$TRASH/state'"' '"'$BEAMSCOPE'"' $A $B --cookie-file '"'$COOKIE_FILE'"'; echo \$? >'"'$TRASH/ui.rc'"'; sleep 600" &&
	ui_wait "tracing [0-9]+ processes on 2 nodes" 15 &&
	ui_keys m && ui_wait "^$AF: Procs [0-9]+/" 5 &&
	for _ in $(seq 1 20); do [ "$(swt_on $B)" = true ] && break; sleep 0.1; done &&
	expect "$(swt_on $A)" = true && expect "$(swt_on $B)" = true
'

test_expect_success ':node B: the header shows B, and its count is B'"'"'s' '
	on_node $B "register(many, spawn(fun() -> [spawn(fun bs_work:idle/0) || _ <- lists:seq(1, 300)], receive stop -> ok end end)), ok." >/dev/null &&
	ui_keys ":node $B" Enter && ui_wait "^$BF: Procs [0-9]+/" 5 && sleep 1.5 &&
	count=$(on_node $B "erlang:system_info(process_count).") &&
	shown=$(ui_screen | grep -oE "^$BF: Procs [0-9]+" | grep -oE "[0-9]+$") &&
	echo "B has $count, header $shown" &&
	[ $((shown - count)) -le 5 ] && [ $((count - shown)) -le 5 ] &&
	ui_keys ":node" Enter && ui_wait "^$AF: Procs [0-9]+/" 5
'

test_expect_success ':detach B: B has scheduler_wall_time off again and is clean, A samples on' '
	ui_keys ":detach $B" Enter && ui_wait "detached from $BF" 10 &&
	( NODE=$B; target_clean 3 ) &&
	expect "$(swt_on $A)" = true && ui_wait "^$AF: Procs [0-9]+/" &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 &&
	( NODE=$A; target_clean 3 )
'

test_done
