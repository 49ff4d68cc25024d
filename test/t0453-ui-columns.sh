#!/bin/sh
# The process table's columns: sized from what they hold and the terminal.
# Pids with large numbers and long registered names never run into each
# other; at 80 columns the pid, the name, the counts, MEM, REDS/s and the
# sort column stay, and the current function gives way first, then HEAP
# and REDS.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

start_node bscols || exit 1
erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_churn.erl" || exit 1

# 45 000 processes come and go first, so that the next pids have five-digit
# numbers (and a serial); then 20 idle ones registered with long names
NAME=a_registered_name_long_enough_to_fill_the_table
node_eval "bs_churn:wrap(45000)." >/dev/null
node_eval "bs_churn:named(\"$NAME\", 20)." >/dev/null

# ui_cols COLS: the view in a terminal COLS wide, filtered to the 20
ui_cols() {
	tm kill-session -t ui 2>/dev/null && target_clean 3 >/dev/null
	ui_session "$1" 30 \
		"XDG_STATE_HOME='$TRASH/state' '$BEAMSCOPE' '$NODE' --cookie-file '$COOKIE_FILE'; sleep 600" &&
	ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "[P ! hi || N <- registered(), lists:prefix(\"$NAME\", atom_to_list(N)), P <- [whereis(N)]], ok." >/dev/null &&
	ui_keys / "$NAME" Enter && ui_wait " [0-9]+/20 "
}

# the rows: a pid, whole, then a space
rows() {
	ui_screen | grep -E "^<0[.]"
}

test_expect_success 'the workload: pids with five-digit numbers' '
	node_eval "pid_to_list(whereis(${NAME}_1))." | tee pid &&
	grep -E "^\"<0[.][0-9]{5}[.][0-9]+>\"$" pid
'

test_expect_success '80 columns: pids whole, then the name; the counts, MEM and REDS/s stay; CURRENT, HEAP and REDS go' '
	ui_cols 80 && rows >rows80 &&
	[ "$(wc -l <rows80)" -eq 20 ] &&
	! grep -vE "^<0[.][0-9]{5}[.][0-9]+> +a_registered_name" rows80 &&
	[ "$(cut -d" " -f1 rows80 | sort -u | wc -l)" -eq 20 ] &&
	ui_screen | sed -n 1p >hdr80 && cat hdr80 &&
	grep -E "^PID +NAME +SENT +S/s +RECV +R/s +SPAWN +MQ +MEM +REDS/s *$" hdr80 &&
	awk "{ exit !(NF == 10 && \$5 == 1 && \$8 ~ /^([0-9]+|-)\$/ && \$NF ~ /^([0-9]+k?|-)\$/) }" rows80
'

test_expect_success '80 columns, sorted by CURRENT: it stays, the name gives way' '
	ui_keys ":sort current" Enter && ui_wait "sort CURRENT asc" &&
	ui_screen | sed -n 1p | grep -E "^PID +NAME +CURRENT +SENT +S/s +RECV +R/s +SPAWN +MQ( +MEM)?( +REDS/s)? *$" &&
	rows >rows80c && cat rows80c &&
	! grep -vE "^<0[.][0-9]{5}[.][0-9]+> +a_registered.* bs_churn:old/0 +[0-9]" rows80c
'

test_expect_success '160 columns: every column, the names whole' '
	ui_cols 160 && rows >rows160 && cat rows160 &&
	ui_screen | sed -n 1p | grep -E "^PID +NAME +CURRENT +SENT +S/s +RECV +R/s +SPAWN +MQ +MEM +REDS +REDS/s +HEAP( +SENT 30s( +RECV 30s)?)? *$" &&
	! grep -vE "^<0[.][0-9]{5}[.][0-9]+> +${NAME}_[0-9]+ +bs_churn:old/0 +[0-9]" rows160 &&
	ui_keys Q && target_clean 3
'

test_done
