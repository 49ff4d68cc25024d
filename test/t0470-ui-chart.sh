#!/bin/sh
# The sequence chart: Space tags processes in the table, s charts them.
# A known exchange between three processes (bs_chat: a ping-pong, a relay
# through a third, an exit with a reason) read back from the screen: the
# arrows in the right columns and order, the exit on its lifeline, the
# exact message count; then the exports of the same chart.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

mkdir -p "$TRASH/ebin" && erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_chat.erl" || exit 1
start_node bschart || exit 1
node_eval "bs_chat:start()." >/dev/null

chart() {
	ui_screen >screen.txt && perl "$TOP/test/chart-read.pl" <screen.txt
}

test_expect_success 'Space tags three processes; s charts them' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "bs_chat:wake()." >/dev/null &&
	ui_keys / bs_chat_ Enter && ui_wait "bs_chat_c" 5 &&
	ui_wait "bs_chat_a" && ui_wait "bs_chat_b" &&
	ui_keys Space Space Space && sleep 0.3 &&
	ui_keys s && ui_wait "0 messages  3 lifelines" &&
	ui_screen | grep -E "others" &&
	ui_screen | grep -E "bs_chat_a" && ui_screen | grep -E "bs_chat_c"
'

test_expect_success 'the exchange: arrows in order, in their columns, the exit on its lifeline' '
	node_eval "bs_chat:go()." >/dev/null &&
	ui_wait "7 messages  3 lifelines" 10 && ui_wait "exit [{]shutdown,bye[}]" &&
	chart >rows.txt && cat rows.txt &&
	grep -v ^COLUMNS rows.txt >got.txt &&
	cat >want.txt <<-\EOT &&
	others -> bs_chat_a
	bs_chat_a -> bs_chat_b
	bs_chat_b -> bs_chat_a
	bs_chat_a -> bs_chat_b
	bs_chat_b -> bs_chat_a
	bs_chat_a -> bs_chat_c
	bs_chat_c -> bs_chat_b
	X bs_chat_b
	EOT
	diff -u want.txt got.txt &&
	grep -c "[{]p[io]ng,[12][}]" screen.txt | grep -qx 4 &&
	grep -q "[{]relayed,hello[}]" screen.txt &&
	! grep -q "not received" screen.txt
'
test_done
