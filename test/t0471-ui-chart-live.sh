#!/bin/sh
# The chart live, at 80 columns: with nothing tagged it charts the
# selected process and its busiest peers; a message not received yet is
# drawn as such until its receive comes, one to a dead process ends in x;
# times as deltas; scrolled back or paused it holds still; plain ASCII on
# a terminal without line-drawing characters, and text on a line of its
# own when narrow; the chart of a recording.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

mkdir -p "$TRASH/ebin" && erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_chat.erl" || exit 1
start_node bschartl || exit 1
node_eval "bs_chat:start()." >/dev/null

# ui_start_size WIDTH HEIGHT [beamscope args...]
ui_start_size() {
	_w=$1 _h=$2
	shift 2
	rm -f "$TRASH/ui.rc"
	ui_session "$_w" "$_h" \
		"XDG_STATE_HOME='$TRASH/state' '$BEAMSCOPE' '$NODE' --cookie-file '$COOKIE_FILE' $*; echo \$? >'$TRASH/ui.rc'; sleep 600"
}

chart() {
	ui_screen >screen.txt && perl "$TOP/test/chart-read.pl" <screen.txt |
		grep -v ^COLUMNS
}

test_expect_success 'nothing tagged: s charts the selected process and its busiest peers, at 80 columns' '
	ui_start_size 80 30 && ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "bs_chat:wake()." >/dev/null &&
	ui_keys / bs_chat_a Enter && ui_wait "^<0[.][0-9]+[.]0> +bs_chat_a" &&
	ui_keys Enter && ui_wait "^ <0[.][0-9]+[.]0> bs_chat_a" &&
	node_eval "bs_chat:go()." >/dev/null && ui_wait "sent .*relay,hello" &&
	ui_keys q && ui_wait "PID +NAME" && ui_keys s &&
	ui_wait "charting <0[.][0-9]+[.]0> and 2 of its peers" &&
	ui_wait "6 messages" && chart >got.txt && cat screen.txt &&
	cat >want.txt <<-\EOT &&
	others -> bs_chat_a
	bs_chat_a -> bs_chat_b
	others -> bs_chat_a
	bs_chat_a -> bs_chat_b
	others -> bs_chat_a
	bs_chat_a -> bs_chat_c
	X bs_chat_b
	EOT
	diff -u want.txt got.txt && ! grep -q "not received" screen.txt &&
	perl -CSD -ne "chomp; exit 1 if length > 80" screen.txt
'

test_expect_success 'a message not received yet says so until its receive comes' '
	node_eval "register(bs_holder, spawn(fun() -> erlang:suspend_process(whereis(bs_chat_c)), receive go -> ok end end)), ok." &&
	node_eval "bs_chat:say(held)." &&
	ui_wait "held  [(]not received[)]" &&
	chart | tail -n 1 | grep -qx "bs_chat_a -> bs_chat_c" &&
	node_eval "bs_holder ! go, ok." &&
	ui_wait "[0-9:.]+ .* held *$" 5 && ! ui_screen | grep -q "not received"
'

test_expect_success 'a message to a dead process ends in x' '
	node_eval "P = spawn(fun() -> ok end), timer:sleep(20), bs_chat:say_to(P, boom)." &&
	ui_wait "boom  [(]no such process[)]" &&
	chart | tail -n 1 | grep -qx "DEAD bs_chat_a -> others"
'

test_expect_success 'd shows deltas between rows, and again the wall clock' '
	ui_keys d && ui_wait "^ delta " && ui_wait "^[+]0[.][0-9]{6} " &&
	ui_keys d && ui_wait "^ time " && ui_wait "^[0-9]{2}:[0-9]{2}:[0-9]{2}[.][0-9]{3} "
'

# messages: the count the chart's status line gives
messages() {
	ui_screen | grep -o "[0-9]* messages" | head -n 1 | cut -d" " -f1
}

# The chart first fills more than the screen: one that fits shows what
# comes below its last row even when held (nothing moves), and a wait on
# the count the screen already showed made this pass or fail by a race.
test_expect_success 'moved back, the chart holds still while messages come; End follows again' '
	node_eval "[bs_chat:say(list_to_atom(\"fill\" ++ integer_to_list(I))) || I <- lists:seq(1, 20)], ok." &&
	ui_wait "fill20 *$" &&
	ui_keys k k && ui_wait "held [(]End follows[)]" &&
	n=$(messages) && ui_screen | head -n 28 >before.txt &&
	node_eval "bs_chat:say(later_one), bs_chat:say(later_two)." &&
	ui_wait "$((n + 4)) messages" &&
	ui_screen | head -n 28 | diff -u before.txt - &&
	! grep -q later_ before.txt &&
	ui_keys End && ui_wait "later_two *$"
'

test_expect_success 'paused, the chart holds still' '
	ui_keys p && ui_wait "paused" && ui_screen | head -n 28 >before.txt &&
	node_eval "bs_chat:say(while_paused)." && sleep 1 &&
	ui_screen | head -n 28 | diff -u before.txt - &&
	ui_keys p && ui_wait "while_paused *$" &&
	ui_keys q q && ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'

test_expect_success 'untagging takes a process out of focus: its receives are no longer shipped' '
	ui_start_size 100 30 --record "$TRASH/tags.ndjson" && ui_wait " tracing [0-9:]+ " 10 &&
	node_eval "bs_chat_a ! wake, bs_chat_c ! wake, ok." >/dev/null &&
	ui_keys / bs_chat_ Enter && ui_wait "bs_chat_c" && ui_wait "bs_chat_a" &&
	ui_keys g Space Space s && ui_wait "0 messages" &&
	node_eval "bs_chat:say(x_one)." && ui_wait "x_one *$" &&
	! ui_screen | grep -q "not received" &&
	ui_keys q && ui_wait "PID +NAME" && ui_keys g Space && ui_wait "1 tagged" &&
	node_eval "bs_chat:say(x_two)." &&
	ui_keys s && ui_wait "x_two *$" && ui_keys q && ui_wait "PID +NAME" &&
	ui_keys g Space && ui_wait "2 tagged" && ui_keys s &&
	node_eval "bs_chat:say(x_three)." && ui_wait "x_three *$" &&
	! ui_screen | grep -q "not received" &&
	ui_keys q && ui_keys Q && expect "$(ui_exit_status 5)" = 0 &&
	jq -r "select(.type == \"receive\" and .name == \"bs_chat_c\") | .payload" \
		"$TRASH/tags.ndjson" >got.txt && cat got.txt &&
	printf "x_one\nx_three\n" >want.txt && diff -u want.txt got.txt
'

test_expect_success 'a recording: the chart as live, plain ASCII without line drawing, text on its own line when narrow' '
	bs_start --pids bs_chat_a,bs_chat_c -d 3 && bs_wait_attached &&
	node_eval "bs_chat:say(one), bs_chat:say(two)." >/dev/null &&
	bs_wait && expect "$BS_RC" = 0 && cp "$TRASH/bs.json" rec.ndjson &&
	rm -f "$TRASH/ui.rc" &&
	ui_session 40 30 "TERM=sun LANG=C LC_ALL=C XDG_STATE_HOME='"'$TRASH/state'"' '"'$BEAMSCOPE'"' --open rec.ndjson; echo \$? >'"'$TRASH/ui.rc'"'; sleep 600" &&
	ui_wait "NAME" 10 && ui_wait "bs_chat_c" &&
	ui_keys / bs_chat_ Enter && ui_wait "bs_chat_a" &&
	ui_keys Space Space && ui_keys s && ui_wait "^ +two *$" &&
	ui_screen | tee screen.txt &&
	! grep -q "$(printf "\342\224")" screen.txt &&
	grep -q "|" screen.txt &&
	expect "$(grep -c "^ *one *$" screen.txt)" = 1 && expect "$(grep -c "^ *two *$" screen.txt)" = 1 &&
	perl "$TOP/test/chart-read.pl" <screen.txt | grep -c -- "->" | grep -qx 4 &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0
'
test_done
