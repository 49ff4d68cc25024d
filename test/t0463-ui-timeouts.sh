#!/bin/sh
# Receive timeouts in the view: the process whose log is open has its
# timeouts shipped as dimmed timeout lines, counted in its header apart
# from what it received, and T hides and shows them; the table's RECV
# counts messages only.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

start_node bsuitmo || exit 1
Q="'"
timeout_marked() { our_pattern receive | grep -q beamscope_timeout; }

test_expect_success 'an open log: dimmed timeout lines, T hides them; RECV counts messages only' '
	node_eval "bs_work:tmo_ready(bs_tmo)." >/dev/null &&
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys ":focus bs_tmo" Enter && ui_wait "^ <0[.][0-9]+[.]0> bs_tmo" &&
	eventually 5 timeout_marked &&
	node_eval "bs_work:tmo_run(bs_tmo, 5, 3)." >/dev/null &&
	ui_wait "received 5  spawned 0  timeouts 5" &&
	ui_screen >log.txt && cat log.txt &&
	expect "$(grep -c "timeout  [(]receive [.][.][.] after expired[)]" log.txt)" -eq 5 &&
	expect "$(grep -c "received <-  timeout" log.txt)" -eq 3 &&
	tm capture-pane -p -e -t ui >log.esc &&
	E=$(printf "\033") &&
	# tmux says a colour once, where it changes: the timeout lines are
	# in the log time'"'"'s dim colour from their first one on, and only the
	# receives change it
	grep "after expired" log.esc | head -n 1 | grep -q "^$E\[34m[0-9:.]* timeout" &&
	expect "$(grep "after expired" log.esc | grep -c "$E")" -eq 1 &&
	expect "$(grep "received <-  timeout" log.esc | grep -c "$E\[32mreceived")" -eq 3 &&
	ui_keys T && ui_wait "timeouts 5 [(]hidden[)]" &&
	! ui_screen | grep -q "after expired" &&
	expect "$(ui_screen | grep -c "received <-  timeout")" -eq 3 &&
	ui_keys T && ui_wait "after expired" &&
	ui_keys Escape && ui_wait "RECV" &&
	ui_keys / bs_tmo Enter &&
	ui_wait "bs_tmo +[(]exited[)] +1 +[0-9]+ +5 +[0-9]+ +0 " &&
	ui_keys Escape && ui_wait "RECV" &&
	node_eval "bs_work:tmo_ready(bs_tmo2)." >/dev/null &&
	node_eval "bs_work:tmo_run(bs_tmo2, 200, 3)." >/dev/null &&
	ui_keys / bs_tmo2 Enter &&
	ui_wait "bs_tmo2 +[(]exited[)] +1 +[0-9]+ +5 +[0-9]+ +0 " &&
	ui_keys Q && expect "$(ui_exit_status 10)" = 0 &&
	target_clean 3
'
test_done
