#!/bin/sh
# The chart of processes tagged at different times, and of one process
# charted with nothing stored of it: a ping-pong whose texts never change
# (bs_rally), so that a receive paired with the wrong send shows as a
# message drawn twice or one "not received" for ever.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

mkdir -p "$TRASH/ebin" && erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_rally.erl" || exit 1
start_node bscharttag || exit 1

# the rows of the chart on screen, after the ping-pong stopped, but for
# bs_ping's receive timeouts (it waits with after): the last is the
# answer to the stop, between bs_ping and the shell, and the stop is just
# before it, or before the last pong when that pong was sent in the same
# microsecond (rows of one time are in no set order)
settled_rows() {
	ui_screen >screen.txt && cat screen.txt &&
	perl "$TOP/test/chart-read.pl" <screen.txt |
		grep -v -e ^COLUMNS -e "^T bs_ping$" >rows.txt &&
	expect "$(tail -n 1 rows.txt)" = "bs_ping -> others" &&
	expect "$(tail -n 3 rows.txt | grep -c -x "others -> bs_ping")" = 1 &&
	head -n -1 rows.txt | grep -v -x "others -> bs_ping" >pp.txt &&
	expect "$(grep -c -x "others -> bs_ping" rows.txt)" = 1 &&
	expect "$(wc -l <pp.txt)" -ge 12
}

# every row a ping or a pong between the two, in turn, none not received
ping_pong_only() {
	! grep -v -x -e "bs_ping -> bs_pong" -e "bs_pong -> bs_ping" pp.txt &&
	! uniq -d pp.txt | grep . &&
	! grep -q "not received" screen.txt
}

test_expect_success ':focus pong, q, s: every ping and pong drawn once, delivered' '
	node_eval "bs_rally:start(20)." >/dev/null &&
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys ":focus bs_pong" Enter && ui_wait "^ <0[.][0-9]+[.]0> bs_pong" &&
	ui_wait "received <-  ping" && sleep 3 &&
	ui_keys q && ui_wait "PID +NAME" &&
	ui_keys / bs_pong Enter && ui_wait "^<0[.][0-9]+[.]0> +bs_pong" &&
	ui_keys s && ui_wait "charting <0[.][0-9]+[.]0> and 1 of its peers" &&
	ui_wait "bs_ping" && sleep 2 &&
	expect "$(node_eval "bs_rally:stop().")" -gt 50 &&
	ui_wait "stopped" 5 && sleep 0.5 &&
	settled_rows && ping_pong_only
'

test_expect_success 'nothing stored: s charts the selected process and the peer it sends to' '
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 3 &&
	node_eval "exit(whereis(bs_ping), kill), exit(whereis(bs_pong), kill), ok." &&
	node_eval "bs_rally:start(20)." >/dev/null &&
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys / bs_ping Enter && ui_wait "^<0[.][0-9]+[.]0> +bs_ping " &&
	ui_keys s && ui_wait "charting <0[.][0-9]+[.]0> and 1 of its peers" 5 &&
	ui_wait "^ time +bs_ping +bs_pong +others" && sleep 2 &&
	expect "$(node_eval "bs_rally:stop().")" -gt 50 &&
	ui_wait "stopped" 5 && sleep 0.5 &&
	settled_rows && ping_pong_only &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 3
'
test_done
