#!/bin/sh
# The view paused: the screen holds still while tracing goes on, and the
# log scrolled back stays where it was put.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

start_node bspause || exit 1

# a registered process that gets a message every 50 ms
node_eval "spawn(fun() -> register(ticker, self()), L = fun F(I) -> self() ! {tick, I}, receive _ -> ok end, timer:sleep(50), F(I + 1) end, L(0) end), ok." >/dev/null

# the view's rows: the screen without its status and message lines;
# FROM=2 leaves out the title as well (a live log's counts move on)
view() {
	ui_screen | head -n 28 | tail -n +"${FROM:-1}"
}

# still_for SECONDS: the view does not change for that long
still_for() {
	view >still.a
	sleep "$1"
	view >still.b
	cmp still.a still.b || { diff still.a still.b | head -n 20; false; }
}

# changes_within SECONDS: the view changes
changes_within() {
	view >moved.a
	for _ in $(seq 1 $(( $1 * 10 ))); do
		sleep 0.1
		view | cmp -s moved.a - || return 0
	done
	echo "the view did not change in $1s:"; ui_screen
	return 1
}

test_expect_success 'p freezes the process table; p again catches up' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys / ticker Enter && ui_wait "^<0[.][0-9]+[.]0> +ticker" &&
	changes_within 3 &&
	ui_keys p && ui_wait "display paused" && sleep 0.2 &&
	still_for 2.5 &&
	ui_keys j k && sleep 0.3 && view | cmp still.a - &&
	ui_keys p && ui_wait "display resumed" &&
	changes_within 3
'

test_expect_success ':pause freezes the log; :resume catches up' '
	ui_keys ":focus ticker" Enter && ui_wait "received <-  [{]tick," &&
	changes_within 3 &&
	ui_keys ":pause" Enter && ui_wait "display paused" && sleep 0.2 &&
	still_for 2.5 &&
	ui_keys ":resume" Enter && ui_wait "display resumed" &&
	changes_within 3
'

test_expect_success 'moving while paused keeps the log where it was paused' '
	ui_keys p && ui_wait "display paused" && sleep 0.2 &&
	view >paused.txt && last=$(grep "tick," paused.txt | tail -n 1) &&
	ui_keys PgUp && sleep 0.3 && ui_keys End && sleep 2 &&
	view | grep "tick," | tail -n 1 | tee now.txt &&
	expect "$(cat now.txt)" = "$last" &&
	ui_keys p && ui_wait "display resumed"
'

test_expect_success 'a log scrolled back stays where it was put' '
	sleep 1 && ui_keys PgUp && sleep 0.3 &&
	FROM=2 still_for 2.5 &&
	ui_keys Up Up && sleep 0.3 && FROM=2 still_for 1.5
'

test_expect_success 'Home stays at the oldest line; End follows again' '
	ui_keys Home && sleep 0.3 && view | sed -n 2p >first.txt &&
	FROM=2 still_for 2.5 && view | sed -n 2p | cmp first.txt - &&
	ui_keys End && changes_within 3 &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'
test_done
