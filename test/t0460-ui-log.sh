#!/bin/sh
# The process log's cursor: Enter shows an event whole, J opens the log of
# the process a line names, / searches the log and n/N move between the
# lines that match.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

start_node bslog || exit 1

# a registered process that answers every message to its sender, and a
# registered peer that sends to it
node_eval "spawn(fun() -> register(bs_echo, self()), L = fun F() -> receive {From, M} -> From ! {echo, M}, F(); _ -> F() end end, L() end), ok." >/dev/null
node_eval "spawn(fun() -> register(bs_asker, self()), receive stop -> ok end end), ok." >/dev/null

# send MSG to bs_echo as if from bs_asker: bs_echo's log gets it, then its
# answer to bs_asker
ask() {
	node_eval "bs_echo ! {whereis(bs_asker), $1}, ok." >/dev/null
}

test_expect_success 'Enter on a received message longer than the screen shows all of it' '
	ui_start --payload-bytes 8000 && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys ":focus bs_echo" Enter && ui_wait "^ <0[.][0-9]+[.]0> bs_echo" &&
	ask "{big, [{item, I, lists:duplicate(20, \$x)} || I <- lists:seq(1, 60)], last_item_here}" &&
	ui_wait "received <-  [{]<0[.]" &&
	ui_wait "sent     -> <0[.][0-9]+[.]0> bs_asker" &&
	ui_keys k && ui_keys Enter && ui_wait "event: q closes" &&
	ui_screen >detail.txt && cat detail.txt &&
	grep -q "receive" detail.txt && grep -q "message ([0-9]* bytes):" detail.txt &&
	grep -q "{item,1," detail.txt &&
	! grep -q "last_item_here" detail.txt &&
	ui_keys End && ui_wait "last_item_here" &&
	ui_screen | grep "{item,60," &&
	ui_keys Home && ui_wait "{item,1," &&
	ui_keys PgDn && ui_wait "{item,2[0-9]," &&
	ui_keys q && ui_wait "^ <0[.][0-9]+[.]0> bs_echo" &&
	! ui_screen | grep -q "event: q closes"
'

test_expect_success '/ finds a text; n and N move between the matches' '
	ui_keys ":focus bs_echo" Enter && ui_wait "^ <0[.][0-9]+[.]0> bs_echo" &&
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		ask "{filler, $i}"
	done &&
	ask "{needle, 1}" &&
	for i in 21 22 23 24 25 26 27 28 29 30; do
		ask "{filler, $i}"
	done &&
	ask "{needle, 2}" &&
	ui_wait "[{]echo,[{]needle,2[}][}]" &&
	for i in 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50; do
		ask "{filler, $i}"
	done &&
	ui_wait "[{]echo,[{]filler,50[}][}]" &&
	ui_keys / "needle" Enter && sleep 0.5 &&
	ui_keys Enter && ui_wait "event: q closes" &&
	ui_screen | grep -E "^  [{]echo,[{]needle,2[}][}]" &&
	ui_keys q && ui_wait "^ <0[.][0-9]+[.]0> bs_echo" &&
	ui_keys n && sleep 0.3 && ui_keys Enter && ui_wait "event: q closes" &&
	ui_screen | grep -E "^  [{]<0[.][0-9]+[.]0>,[{]needle,2[}][}]" &&
	ui_keys q && ui_keys n && sleep 0.3 && ui_keys Enter &&
	ui_wait "event: q closes" &&
	ui_screen | grep -E "^  [{]echo,[{]needle,1[}][}]" &&
	ui_keys q && ui_keys N && sleep 0.3 && ui_keys Enter &&
	ui_wait "event: q closes" &&
	ui_screen | grep -E "^  [{]<0[.][0-9]+[.]0>,[{]needle,2[}][}]" &&
	ui_keys q && ui_keys g && ui_keys N N N N N && ui_wait "no newer line matches \"needle\"" &&
	ui_keys G && ui_keys / "NEEDLE" Enter && ui_wait "no older line matches \"NEEDLE\"" &&
	ui_keys / "nothing_like_this" Enter &&
	ui_wait "no older line matches \"nothing_like_this\"" && ui_keys G
'

test_expect_success 'the cursor moved back stays on its line while lines come' '
	ui_keys k && sleep 0.3 &&
	ui_screen | head -n 28 | tail -n +2 >before.txt &&
	ask one_more && ask and_another && sleep 1 &&
	ui_screen | head -n 28 | tail -n +2 | cmp before.txt - &&
	ui_keys End && ui_wait "[{]echo,and_another[}]"
'

test_expect_success 'J on a sent line opens the log of the process it names' '
	ui_keys G && sleep 0.3 && ui_keys J &&
	ui_wait "^ <0[.][0-9]+[.]0> bs_asker" &&
	ask after_the_jump && ui_wait "received <-  [{]echo,after_the_jump[}]"
'

test_expect_success 'J on a line that names no process says so' '
	ui_keys k && sleep 0.3 && ui_keys J && ui_wait "this line names no process"
'

test_expect_success 'the table filter stays on / in the table' '
	ui_keys q && ui_wait "PID +NAME" &&
	ui_keys / bs_asker && ui_wait "^/bs_asker" && ui_keys Enter &&
	ui_wait "^<0[.][0-9]+[.]0> +bs_asker" &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'
test_done
