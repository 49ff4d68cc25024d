#!/bin/sh
# A call reads as the code does: bs_calls:add(9,10), each argument on its
# own, never the argument list printed as one term ("\t\n" for [9,10]).
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

start_node bscalltext -eval "code:ensure_loaded(bs_calls)" || exit 1

test_expect_success 'the log shows bs_calls:add(9,10)' '
	ui_start --call bs_calls:add/2 && ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "spawn(fun() -> bs_calls:add(9, 10) end), ok." >/dev/null &&
	ui_keys c && ui_wait "^bs_calls:add/2 +1 " 5 &&
	ui_keys Enter && ui_wait "call     bs_calls:add\\(9,10\\)" 5 &&
	! ui_screen | grep -F "\\t"
'

test_expect_success 'Q: the target is clean' '
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'

test_expect_success 'JSON: args is the list [9,10], not a string' '
	bs_start --call bs_calls:add/2 --duration 0 --max-events 0 &&
	bs_wait_attached &&
	node_eval "spawn(fun() -> bs_calls:add(9, 10) end), ok." >/dev/null &&
	for _ in $(seq 1 50); do grep -q "\"call\"" "$TRASH/bs.json" && break; sleep 0.1; done &&
	kill -INT "$BS_PID" && bs_wait &&
	jqs -e "[.[] | select(.type == \"call\")] | length == 1 and .[0].args == \"[9,10]\" and .[0].mfa == \"bs_calls:add/2\""
'
test_done
