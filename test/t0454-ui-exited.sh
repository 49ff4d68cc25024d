#!/bin/sh
# Exited processes in the process table: shown for a few seconds, then
# hidden and counted on the status line; x shows them again.  The spawn
# tree and the process logs keep them either way.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

start_node bsexit || exit 1
erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_churn.erl" || exit 1

# wide enough for the whole status line
ui_session 200 30 \
	"XDG_STATE_HOME='$TRASH/state' '$BEAMSCOPE' '$NODE' --cookie-file '$COOKIE_FILE'; sleep 600"

test_expect_success 'exited rows are shown at first' '
	ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys / bs_churn:bye Enter &&
	node_eval "bs_churn:burst(30)." >pids && grep -c "<0[.]" pids &&
	ui_wait " [0-9]+/30 " 4 && ui_wait "bs_churn:bye/1 +\(exited\)"
'

test_expect_success 'after a few seconds they leave the table, counted on the status line' '
	ui_wait " 0/0  30 exited hidden [(]x[)]  sort " 10 &&
	! ui_screen | grep -q "(exited)"
'

test_expect_success 'x shows them again, and hides them again' '
	ui_keys x && ui_wait " [0-9]+/30  sort " &&
	expect "$(ui_screen | grep -cE "bs_churn:bye/1 +[(]exited[)]")" -eq 27 &&
	! ui_screen | grep -q "exited hidden" &&
	ui_keys x && ui_wait " 0/0  30 exited hidden"
'

test_expect_success 'the spawn tree keeps them' '
	ui_keys t && ui_wait "spawn tree" &&
	ui_wait "bs_churn:bye/1 +exited: normal" &&
	expect "$(ui_screen | grep -cE "bs_churn:bye/1 +exited: normal")" -ge 20 &&
	ui_keys q
'

test_expect_success 'shown, an exited row opens its log, which says how it ended' '
	ui_keys x && ui_wait " 1/30 " && ui_keys Enter &&
	ui_wait "exited +normal" &&
	ui_keys q q && target_clean 3
'

test_expect_success 'short-lived proc_lib processes are named by the function they run' '
	ui_session 200 30 \
		"XDG_STATE_HOME='"'$TRASH/state'"' '"'$BEAMSCOPE'"' '"'$NODE'"' --cookie-file '"'$COOKIE_FILE'"'; sleep 600" &&
	ui_wait "tracing [0-9]+ processes" 10 && ui_keys x &&
	node_eval "bs_churn:plburst(10)." &&
	ui_keys / "bs_churn:" Enter && ui_wait " [0-9]+/20 " 5 &&
	ui_screen >screen.txt && cat screen.txt &&
	expect "$(grep -cE "bs_churn:bye/1 +[(]exited[)]" screen.txt)" -eq 10 &&
	expect "$(grep -cE "bs_churn:init/1 +[(]exited[)]" screen.txt)" -eq 10 &&
	ui_keys Escape / proc_lib Enter && ui_wait " 0/0 " &&
	ui_keys Q && target_clean 3
'
test_done
