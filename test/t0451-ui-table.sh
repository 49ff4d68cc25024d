#!/bin/sh
# The process table: where the selection is, what filters it and how it
# is sorted are on the screen, and filtering, sorting and resizing never
# leave the rows hidden above blank ones.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

start_node bstable || exit 1

# 200 processes that each received a message; the first one is "demo"
node_eval "Ps = [spawn(fun bs_work:idle/0) || _ <- lists:seq(1, 200)], register(demo, hd(Ps)), ok." >/dev/null

# the first row under the header
first_row() {
	ui_screen | sed -n 2p | cut -c1-30
}

test_expect_success 'the status line shows the position, the sort and its direction' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "[P ! hi || P <- processes(), {current_function, {bs_work, idle, 0}} <- [process_info(P, current_function)]], ok." >/dev/null &&
	ui_wait " [0-9]+/2[0-9][0-9] " 5 && ui_wait "sort R/s desc" &&
	# the selection keeps to its process, which the counts arriving a
	# quarter of a second apart may move down: Home, then the position
	ui_keys Home && ui_wait " 1/2[0-9][0-9] " &&
	ui_keys j j && ui_wait " 3/2[0-9][0-9] " &&
	ui_keys I && ui_wait "sort R/s asc"
'

test_expect_success '> and < step through every column, both ways' '
	ui_keys ":sort name" Enter && ui_wait "sort NAME asc" &&
	ui_keys ">" && ui_wait "sort CURRENT asc" &&
	ui_keys ">" && ui_wait "sort SENT asc" &&
	ui_keys "<" && ui_wait "sort CURRENT asc" &&
	ui_keys "<" && ui_wait "sort NAME asc" &&
	ui_keys "<" && ui_wait "sort PID asc" &&
	ui_keys "<" && ui_wait "sort RECV 30s asc" &&
	ui_keys ">" && ui_wait "sort PID asc"
'

test_expect_success 'the node column cannot be sorted on with one node' '
	ui_keys ":sort node" Enter && ui_wait "one node" &&
	ui_wait "sort PID asc"
'

test_expect_success 'End, then a filter: its one match is the first row' '
	ui_keys End && ui_wait " 2[0-9][0-9]/2[0-9][0-9] " &&
	ui_keys ":filter demo" Enter && ui_wait "filter \"demo\"" &&
	ui_wait " 1/1 " && first_row | grep -E "^<0[.][0-9]+[.]0> +demo "
'

test_expect_success 'a / filter: the same' '
	ui_keys ":filter" Enter && ui_wait " [0-9]+/2[0-9][0-9] " &&
	ui_keys End && ui_wait " 2[0-9][0-9]/2[0-9][0-9] " &&
	ui_keys / demo Enter && ui_wait " 1/1 " &&
	first_row | grep -E "^<0[.][0-9]+[.]0> +demo "
'

test_expect_success 'resizing small and back shows the first rows again' '
	# only the 200 idle processes: others of the node may appear meanwhile
	# (OTP 29 wakes its supervisors now and then) and lead the table
	ui_keys / C-u idle Enter && ui_wait " [0-9]+/200 " &&
	ui_keys Home && ui_wait " 1/200 " &&
	first_row >before.txt &&
	ui_keys End && tm resize-window -t ui -x 100 -y 8 && sleep 0.4 &&
	ui_keys Home && sleep 0.3 &&
	tm resize-window -t ui -x 100 -y 30 && sleep 0.4 &&
	ui_wait " 1/2[0-9][0-9] " && first_row >after.txt &&
	{ cmp before.txt after.txt || { echo "first row before, after:"; cat before.txt after.txt; ui_screen; false; }; } &&
	ui_keys End && tm resize-window -t ui -x 100 -y 8 && sleep 0.4 &&
	tm resize-window -t ui -x 100 -y 30 && sleep 0.4 &&
	expect "$(ui_screen | sed -n 28p | grep -c "<0[.]")" = 1 &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'
test_done
