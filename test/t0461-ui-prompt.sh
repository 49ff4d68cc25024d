#!/bin/sh
# The command line: Tab's candidates where the eye is, completion after a
# comma, of processes for :follow, of the call patterns for :uncall and
# of the target's modules for :call; the status line shows the patterns.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

start_node bsprompt || exit 1
node_eval "spawn(fun() -> register(bs_follow_me, self()), receive stop -> ok end end), code:ensure_loaded(bs_calls), ok." >/dev/null

# the row above the status line (the screen is 30 rows)
above_status() {
	ui_screen | sed -n 28p
}

# tab_until PATTERN: Tab until the prompt shows PATTERN (the target may
# not have answered yet)
tab_until() {
	for _ in $(seq 1 50); do
		ui_keys Tab
		ui_screen | tail -n 1 | grep -qE -- "$1" && return 0
		sleep 0.1
	done
	echo "the prompt never showed: $1"; ui_screen
	return 1
}

test_expect_success 'Tab shows its candidates above the status line, until the next key' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys ":events s" Tab && ui_wait "^:events s" &&
	for _ in $(seq 1 40); do above_status | grep -q "spawn" && break; sleep 0.05; done &&
	above_status | tee row && grep -q "send" row && grep -q "spawn" row &&
	ui_keys e && sleep 0.3 && ! above_status | grep -q "spawn" &&
	ui_keys Escape
'

test_expect_success 'Tab completes the word after a comma' '
	ui_keys ":events send,rec" Tab && ui_wait "^:events send,receive" &&
	ui_keys Escape
'

test_expect_success ':follow completes the names of processes' '
	ui_keys ":follow bs_follow_" Tab && ui_wait "^:follow bs_follow_me" &&
	ui_keys Escape
'

test_expect_success ':call completes the modules loaded on the target' '
	ui_keys ":call bs_cal" && tab_until "^:call bs_calls:" &&
	ui_keys "add/2" Enter && ui_wait "tracing [0-9]+ processes" 10
'

test_expect_success 'the status line shows the call patterns' '
	ui_wait "calls: bs_calls:add/2" &&
	ui_keys ":call lists:seq/2" Enter && ui_wait "calls: bs_calls:add/2 [+]1" 10
'

test_expect_success ':uncall completes the call patterns in force' '
	ui_keys ":uncall bs_" Tab && ui_wait "^:uncall bs_calls:add/2" &&
	ui_keys Enter && ui_wait "calls: lists:seq/2" 10 &&
	! ui_screen | grep -q "bs_calls:add/2"
'

test_expect_success 'at 80 columns the status line still shows the patterns' '
	tm resize-window -t ui -x 80 -y 30 && sleep 0.5 &&
	ui_wait "calls: lists:seq/2" &&
	ui_screen | sed -n 29p | tee status && expect "$(wc -L <status)" -le 80 &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'
test_done
