#!/bin/sh
# The servers view: gen calls per server and request kind with exact
# counts, a stuck call marked and listed in flight, the slowest calls, and
# from a call to its caller's log.
. "$(dirname "$0")/lib.sh"

start_node bsuisrv || exit 1
erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_gen.erl" || exit 1
node_eval 'bs_gen:start().' >/dev/null

test_expect_success 'calls are paired from the moment the view is opened' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "bs_gen:run(30, 7)." >/dev/null &&
	ui_wait " bs_gen_srv " 5 &&
	! ui_screen | grep "gen calls paired" &&
	ui_keys v && ui_wait "SERVER" &&
	ui_wait "tracing [0-9]+ processes on .*, gen calls paired" 10 &&
	! ui_screen | grep -E " bs_gen_srv +(get|put) "
'

test_expect_success 'one row per server and kind, with exact counts' '
	node_eval "bs_gen:run(100, 20)." >/dev/null &&
	ui_wait " bs_gen_srv +get +100 " 5 &&
	ui_wait " bs_gen_srv +put +20 " 5 &&
	ui_screen | grep " bs_gen_srv  *get " | tee row &&
	awk "{ exit !(\$7 ~ /ms\$/ && \$8 ~ /ms\$/) }" row
'

test_expect_success 'a server with no name is named as the table names it' '
	pid=$(node_eval "bs_gen:unnamed(8)." | tr -d "\"") && echo "server $pid" &&
	tm resize-window -t ui -x 160 -y 30 &&
	ui_wait "^  $pid bs_gen:init/1 +get +8 " 5 &&
	tm resize-window -t ui -x 100 -y 30 &&
	ui_wait "^  $pid bs_g[^ ]*[.][.][.] +get +8 " 5
'

test_expect_success 'KIND as wide as its kinds at 160 columns; a cut one marked at 80' '
	node_eval "bs_gen:long_kind()." >/dev/null &&
	tm resize-window -t ui -x 160 -y 30 &&
	ui_wait " bs_gen_srv +new_client_state_machine_request +1 " 5 &&
	tm resize-window -t ui -x 80 -y 30 &&
	ui_wait " bs_gen_srv +new_cl[a-z_]*[.][.][.] +1 " 5 &&
	! ui_screen | grep new_client_state_machine_request &&
	tm resize-window -t ui -x 100 -y 30 && ui_wait "SERVER"
'

test_expect_success 'a call that never returns is stuck, and listed in flight' '
	ui_keys ":limit stuck 1" Enter &&
	caller=$(node_eval "pid_to_list(bs_gen:block()).") &&
	ui_wait "^! bs_gen_srv +block +0 " 5 &&
	ui_screen | grep "bs_gen_srv  *block" | tee row &&
	awk "{ exit !(\$(NF-1) == 1) }" row &&
	ui_keys Home i && ui_wait "calls in flight to bs_gen_srv \(block\)" &&
	ui_wait "$(echo "$caller" | tr -d "\"") .*block" &&
	node_eval "exit(list_to_pid($caller), kill)." >/dev/null &&
	ui_wait "none in flight" 5
'

test_expect_success 'Enter lists the slowest calls; Enter opens the caller'"'"'s log' '
	ui_keys Escape && ui_wait "SERVER" &&
	ui_keys ">" ">" ">" ">" ">" ">" ">" && ui_wait "p99v" &&
	ui_keys Home Enter && ui_wait "slowest calls to bs_gen_srv \(get\)" &&
	ui_screen | grep -E "^ +4[0-9]ms +<0\.[0-9]+\.0>.* get -> \{ok," &&
	ui_keys Enter && ui_wait "gen_call" 5
'

test_expect_success ':clear forgets the servers too' '
	ui_keys Escape Escape Escape Escape ":clear" Enter && ui_wait cleared && ui_keys v && ui_wait "SERVER" &&
	! ui_screen | grep -E " bs_gen_srv +(get|put) " &&
	node_eval "bs_gen:run(10, 3)." >/dev/null &&
	ui_wait " bs_gen_srv +get +10 " 5 && ui_wait " bs_gen_srv +put +3 " 5
'

test_expect_success ':servers off stops pairing' '
	ui_keys Escape Escape Escape ":servers off" Enter &&
	ui_wait "tracing [0-9]+ processes on [^,]*; \\? for help" 10 &&
	! ui_screen | grep SERVER
'

test_expect_success 'Q: the target is clean' '
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'
test_done
