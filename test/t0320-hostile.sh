#!/bin/sh
# Odd and hostile messages: control characters, invalid UTF-8, huge and
# deeply nested terms.  The JSON stays valid and free of control bytes,
# the view shows them escaped and the terminal is left alone, big terms are
# cut on the target, and the target is untouched afterwards.
. "$(dirname "$0")/lib.sh"

start_node bshost || exit 1
node_eval "bs_work:victim()." >/dev/null

test_expect_success 'batch: one valid, escaped, bounded line per message' '
	bs_start --events receive --pids bs_victim --duration 0 && bs_wait_attached &&
	n=$(node_eval "bs_work:hostile().") && echo "$n messages" && sleep 1 &&
	kill -INT "$BS_PID" && bs_wait && [ "$BS_RC" -eq 0 ] &&
	jq -c . "$TRASH/bs.json" >/dev/null &&
	iconv -f UTF-8 -t UTF-8 "$TRASH/bs.json" >/dev/null &&
	[ "$(tr -d "\n" <"$TRASH/bs.json" | LC_ALL=C tr -d "\040-\176\200-\377" | wc -c)" -eq 0 ] &&
	jqs -e --argjson n "$n" "[.[:-1][] | select(.type == \"receive\")] | length == \$n" &&
	jqs -e "all(.[:-1][]; (.payload | length) <= 260)" &&
	jqs -e "[.[:-1][] | select(.truncated)] | length >= 5" &&
	jqs -e "any(.[:-1][]; .payload == \"\\\"\\\\e]2;PWNEDa\\\"\")" &&
	jqs -e "any(.[:-1][]; .payload == \"'"'"'a\\\\e[31mb'"'"'\")" &&
	jqs -e "any(.[:-1][]; .payload == \"<<255,254,0,1,27,91,50,74>>\")" &&
	jqs -e "any(.[:-1][]; .payload == \"ünïcødé\")" &&
	[ "$(node_eval "is_process_alive(whereis(bs_victim)).")" = true ] &&
	target_clean 2
'

test_expect_success 'the view: the same messages, escaped; the terminal keeps its title and screen' '
	tm kill-session -t ui 2>/dev/null
	ui_start --events receive --pids bs_victim && ui_wait "tracing [0-9]+ process" 10 &&
	title=$(tm display-message -p -t ui "#{pane_title}") &&
	ui_keys ":focus bs_victim" Enter && ui_wait "^ <0[.][0-9]+[.]0> bs_victim" &&
	node_eval "bs_work:hostile()." >/dev/null &&
	ui_wait "received <-  <<255,254,0,1,27,91,50,74>>" &&
	ui_wait "received <-  \"\\\\e]2;PWNEDa\"" &&
	ui_keys End && ui_wait "received <-  3[.]14" &&
	ui_screen >screen && cat screen &&
	grep -q "tracing" screen &&
	[ "$(tm display-message -p -t ui "#{pane_title}")" = "$title" ] &&
	grep -qF "\"\\e]2;PWNEDa\"" screen &&
	ui_keys Q && [ "$(ui_exit_status 5)" = 0 ] && target_clean 2
'

test_expect_success 'the agent obeys only its beamscope; stray messages to beamscope are counted and ignored' '
	bs_start --events receive --pids bs_victim --duration 0 && bs_wait_attached &&
	[ "$(node_eval "R = make_ref(), beamscope_agent ! {beamscope, self(), R, stop}, receive {beamscope_reply, R, Re} -> Re after 3000 -> timeout end." | tr -d " ")" = "{error,not_owner}" ] &&
	node_eval "[{bs_any, N} ! M || N <- nodes(hidden), lists:prefix(\"beamscope\", atom_to_list(N)), M <- [junk, {beamscope_eos, x, y, z}, {beamscope_batch, 0, 0, 0, not_a_binary}, {rex, 1, 2}, lists:seq(1, 1000)]], ok." >/dev/null &&
	node_eval "bs_victim ! still_traced, ok." >/dev/null && sleep 1 &&
	kill -0 "$BS_PID" && kill -INT "$BS_PID" && bs_wait && [ "$BS_RC" -eq 0 ] &&
	jqs -e "any(.[:-1][]; .payload == \"still_traced\")" &&
	jqs -c ".[-1] | {unknown_messages, malformed}" &&
	jqs -e ".[-1].type == \"summary\" and .[-1].unknown_messages + .[-1].malformed >= 4" &&
	target_clean 2
'
test_done
