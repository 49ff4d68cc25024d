#!/bin/sh
# Calls in the interactive view: the calls view with exact counts and
# latencies, the jump to the caller, :call and :uncall.
. "$(dirname "$0")/lib.sh"

start_node bsuicall -eval "code:ensure_loaded(bs_calls)" || exit 1

test_expect_success 'the calls view counts calls and returns exactly' '
	ui_start --call "'"'"'bs_calls:add(_, _) -> return'"'"'" && ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "bs_calls:run(100)." >/dev/null && sleep 1.2 &&
	ui_keys c && ui_wait "^FUNCTION" && ui_wait "^bs_calls:add/2" &&
	ui_screen | grep "^bs_calls:add/2" | tee row &&
	awk "{ exit !(\$2 == 100 && \$4 == 100 && \$5 == 0 && \$6 ~ /us\$/) }" row
'

test_expect_success 'Enter jumps from the call to its process' '
	ui_keys Enter && ui_wait "returned bs_calls:add/2 -> 101" &&
	ui_screen | grep -q "call     bs_calls:add(100,1)"
'

test_expect_success ':call adds a pattern, :uncall removes it' '
	ui_keys q Escape ":call bs_calls:double/1" Enter && ui_wait "tracing [0-9]+ processes" &&
	node_eval "bs_calls:run(10)." >/dev/null && sleep 0.8 &&
	ui_keys c && ui_wait "^bs_calls:double/1 +10 " &&
	ui_keys q ":uncall bs_calls:double/1" Enter && ui_wait "tracing [0-9]+ processes" &&
	node_eval "bs_calls:run(10)." >/dev/null && sleep 0.8 &&
	ui_keys c && ui_wait "^bs_calls:add/2 +120 " && { ui_screen | grep -qE "^bs_calls:double/1 +10 " || { ui_screen; false; }; }
'

test_expect_success 'a refused pattern is reported; tracing goes on' '
	ui_keys q ":call no_such_mod:f/1" Enter && ui_wait "module no_such_mod is not loaded" &&
	ui_wait "tracing [0-9]{2}:" 10 &&
	expect "$(our_info "{bs_calls, add, 2}" match_spec | tr -d " ")" != "{match_spec,false}"
'

test_expect_success 'Q: the target is clean, patterns included' '
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'
test_expect_success 'a recording with calls: the calls view has the same counts and latencies' '
	bs_start --call "bs_calls:add(_, _) -> return" --duration 0 --max-events 0 &&
	bs_wait_attached && node_eval "bs_calls:run(100)." >/dev/null && sleep 0.5 &&
	kill -INT $BS_PID && bs_wait && expect "$BS_RC" -eq 0 &&
	expect "$(jqs "[.[] | select(.type == \"return\")] | length")" -eq 100 &&
	ui_open "$TRASH/bs.json" && ui_wait "opened .*bs.json" &&
	ui_keys c && ui_wait "^bs_calls:add/2" &&
	ui_screen | grep "^bs_calls:add/2" | tee row &&
	awk "{ exit !(\$2 == 100 && \$4 == 100 && \$5 == 0 && \$6 ~ /us\$/) }" row &&
	ui_keys Enter && ui_wait "returned bs_calls:add/2 -> 101" &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0
'

test_done
