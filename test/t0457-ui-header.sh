#!/bin/sh
# The header above the process table: what it says of the node is what
# the node says of itself, it reads back at 160x50 and at 80x24, m shows
# and hides it (the table gains and loses its rows), and what it turns on
# to measure (scheduler_wall_time) is as it was once beamscope is gone,
# whichever way it goes.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

start_node bshdr || exit 1

# hdr_start WIDTH HEIGHT [beamscope args...]: the view in a tmux session
# of that size
hdr_start() {
	_w=$1 _h=$2
	shift 2
	tm has-session -t ui 2>/dev/null && tm kill-session -t ui &&
		target_clean 3 >/dev/null
	rm -f "$TRASH/ui.rc"
	ui_session "$_w" "$_h" \
		"XDG_STATE_HOME='$TRASH/state' '$BEAMSCOPE' '$NODE' --cookie-file '$COOKIE_FILE' $*; echo \$? >'$TRASH/ui.rc'; sleep 600"
}

# the header's numbers, as the screen shows them
hdr_procs() {
	ui_screen | grep -oE "Procs [0-9]+/[0-9]+" | head -1 | sed "s/Procs //; s:/.*::"
}
hdr_limit() {
	ui_screen | grep -oE "Procs [0-9]+/[0-9]+" | head -1 | sed "s:.*/::"
}
# Mem total 14.3M -> bytes
hdr_mem_total() {
	ui_screen | grep -oE "Mem total [0-9.]+[BKMGTP]" | head -1 | awk '
		{ v = $3; u = substr(v, length(v)); n = substr(v, 1, length(v) - 1)
		  m = u == "K" ? 1024 : u == "M" ? 1048576 : u == "G" ? 1073741824 : 1
		  printf "%d\n", n * m }'
}
# the largest scheduler utilisation shown, in whole percent
hdr_sched_max() {
	ui_screen | grep -oE "[0-9]+[.][0-9]%( max [0-9]+[.][0-9]% of [0-9]+)?\]" |
		grep -oE "[0-9]+[.][0-9]%" | sed "s/[.].*//" | sort -n | tail -1
}
# the events sparkline: what is drawn of it (not blank)
hdr_spark() {
	ui_screen | grep -E "^Events [0-9]+/s " | head -1 |
		sed -E "s/^Events [0-9]+\/s (.*)  Drops .*/\1/" | tr -d " "
}
hdr_drop_spark() {
	ui_screen | grep -E "^Events [0-9]+/s " | head -1 |
		sed -E "s/.*  Drops [0-9]+\/s ?//" | tr -d " "
}
hdr_rate() {
	ui_screen | grep -oE "^Events [0-9]+/s" | head -1 | tr -dc 0-9
}
# the line the table's titles are on
table_line() {
	ui_screen | grep -nE "^PID +NAME" | head -1 | cut -d: -f1
}
swt_on() {
	node_eval "erlang:statistics(scheduler_wall_time) =/= undefined."
}

# processes the table shows, each with a message received
node_eval "Ps = [spawn(fun bs_work:idle/0) || _ <- lists:seq(1, 60)], [P ! hi || P <- Ps], ok." >/dev/null

test_expect_success 'off by default; m shows it above the table, with the node sampled' '
	expect "$(swt_on)" = false &&
	hdr_start 160 50 && ui_wait "tracing [0-9]+ processes" 10 &&
	expect "$(table_line)" = 1 && ! ui_screen | grep -q "^Mem total" &&
	ui_keys m && ui_wait "header on" &&
	ui_wait "^Mem total [0-9.]+[BKMG] +processes [0-9.]+[BKMG] +binary [0-9.]+[BKMG] +ets [0-9.]+[BKMG] +atom [0-9.]+[BKMG]" 5 &&
	ui_wait "^Procs [0-9]+/[0-9]+  Ports [0-9]+/[0-9]+  RunQ [0-9]+ \[" &&
	ui_wait "^Events [0-9]+/s .*Drops [0-9]+/s" &&
	expect "$(table_line)" -gt 3 &&
	expect "$(swt_on)" = true
'

test_expect_success '160x50: one bar per scheduler online, as the node has them' '
	online=$(node_eval "erlang:system_info(schedulers_online).") &&
	ui_wait "^ ?1\[[| ]*[0-9]+[.][0-9]%\]" 5 &&
	expect "$(ui_screen | grep -oE "[0-9]+\[[| ]*[0-9]+[.][0-9]%\]" | wc -l)" = "$online"
'

test_expect_success 'the process count is the node'"'"'s, and follows 500 more' '
	limit=$(node_eval "erlang:system_info(process_limit).") &&
	expect "$(hdr_limit)" = "$limit" &&
	count=$(node_eval "erlang:system_info(process_count).") &&
	shown=$(hdr_procs) && echo "node $count, header $shown" &&
	[ $((shown - count)) -le 5 ] && [ $((count - shown)) -le 5 ] &&
	node_eval "register(hdr_many, spawn(fun() -> Ps = [spawn(fun bs_work:idle/0) || _ <- lists:seq(1, 500)], receive stop -> [exit(P, kill) || P <- Ps] end end)), ok." >/dev/null &&
	sleep 2.5 &&
	count=$(node_eval "erlang:system_info(process_count).") &&
	shown=$(hdr_procs) && echo "node $count, header $shown" &&
	[ $((shown - count)) -le 5 ] && [ $((count - shown)) -le 5 ] &&
	node_eval "hdr_many ! stop, ok." >/dev/null
'

test_expect_success 'memory: the total within 10% of erlang:memory(total)' '
	total=$(node_eval "erlang:memory(total).") &&
	shown=$(hdr_mem_total) && echo "node $total, header $shown" &&
	[ $((shown * 10)) -ge $((total * 9)) ] && [ $((shown * 10)) -le $((total * 11)) ]
'

test_expect_success 'a busy loop on the target: a scheduler bar rises' '
	before=$(hdr_sched_max) && echo "busiest before: $before%" &&
	expect "$before" -lt 50 &&
	node_eval "spawn(fun() -> register(hdr_busy, self()), (fun F() -> F() end)() end), ok." >/dev/null &&
	for _ in $(seq 1 40); do
		[ "$(hdr_sched_max)" -ge 80 ] && break
		sleep 0.2
	done &&
	echo "busiest now: $(hdr_sched_max)%" && expect "$(hdr_sched_max)" -ge 80 &&
	node_eval "exit(whereis(hdr_busy), kill)." >/dev/null &&
	for _ in $(seq 1 40); do
		[ "$(hdr_sched_max)" -lt 50 ] && break
		sleep 0.2
	done && expect "$(hdr_sched_max)" -lt 50
'

test_expect_success 'messages sent on the target: events/s and its sparkline grow' '
	sleep 2 && quiet=$(hdr_spark) && echo "spark before: [$quiet] $(hdr_rate)/s" &&
	node_eval "spawn(bs_work, flood, [1, 4]), ok." >/dev/null &&
	for _ in $(seq 1 40); do
		[ "$(hdr_rate)" -ge 1000 ] && break
		sleep 0.1
	done &&
	sleep 2 && busy=$(hdr_spark) && echo "spark now: [$busy] $(hdr_rate)/s" &&
	expect "$(hdr_rate)" -ge 1000 &&
	expect "$(printf %s "$busy" | wc -m)" -gt "$(printf %s "$quiet" | wc -m)"
'

# more rows than a screen holds: the idle processes each receive again
idle_hi() {
	node_eval "[P ! hi || P <- processes(), {current_function, {bs_work, idle, 0}} <- [process_info(P, current_function)]], ok." >/dev/null
}

test_expect_success '80x24: the header shrinks, reads back whole, and the table keeps most rows' '
	idle_hi && tm resize-window -t ui -x 80 -y 24 && sleep 1.5 &&
	ui_screen >small.txt && cat small.txt && expect "$(wc -L <small.txt)" -le 80 &&
	grep -qE "^Mem total [0-9.]+[BKMG] " small.txt &&
	grep -qE "^Procs [0-9]+/[0-9]+  Ports [0-9]+/[0-9]+  RunQ [0-9]+" small.txt &&
	grep -qE "^Events [0-9]+/s .*Drops [0-9]+/s" small.txt &&
	grep -qE "^ ?1\[[| ]*[0-9]+[.][0-9]%\]" small.txt &&
	count=$(node_eval "erlang:system_info(process_count).") &&
	shown=$(hdr_procs) && echo "node $count, header $shown" &&
	[ $((shown - count)) -le 5 ] && [ $((count - shown)) -le 5 ] &&
	total=$(node_eval "erlang:memory(total).") && shown=$(hdr_mem_total) &&
	[ $((shown * 10)) -ge $((total * 9)) ] && [ $((shown * 10)) -le $((total * 11)) ] &&
	expect "$(table_line)" -le 5 &&
	expect "$(grep -c "^<0[.]" small.txt)" -ge 16
'

test_expect_success 'm hides it: the table gains its rows; m again shows it' '
	with=$(ui_screen | grep -c "^<0[.]") && at=$(table_line) &&
	ui_keys m && ui_wait "header off" && sleep 0.3 &&
	expect "$(table_line)" = 1 && ! ui_screen | grep -q "^Mem total" &&
	without=$(ui_screen | grep -c "^<0[.]") && echo "rows: $with with, $without without" &&
	expect "$without" -eq $((with + at - 1)) &&
	ui_keys m && ui_wait "^Procs [0-9]+/" 5 &&
	expect "$(table_line)" = "$at" &&
	expect "$(ui_screen | grep -c "^<0[.]")" -eq "$with"
'

test_expect_success ':header off and :header on say the same' '
	ui_keys ":header off" Enter && ui_wait "header off" &&
	expect "$(table_line)" = 1 &&
	ui_keys ":header on" Enter && ui_wait "^Procs [0-9]+/" 5 &&
	ui_keys ":header maybe" Enter && ui_wait "usage: header \[on\|off\]"
'

test_expect_success 'a very small screen: no header, the table first' '
	tm resize-window -t ui -x 80 -y 9 && sleep 0.5 &&
	expect "$(table_line)" = 1 &&
	tm resize-window -t ui -x 80 -y 24 && sleep 0.5 &&
	expect "$(table_line)" -gt 1
'

test_expect_success 'quit: scheduler_wall_time is off again, the target clean' '
	expect "$(swt_on)" = true &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 3
'

test_expect_success '--ascii: the header has no byte outside ASCII' '
	hdr_start 80 24 --ascii && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys m && ui_wait "^Procs [0-9]+/" 5 &&
	node_eval "spawn(bs_work, flood, [1, 3]), ok." >/dev/null &&
	sleep 3 && ui_screen | head -4 >hdr.txt && cat hdr.txt &&
	hdr_spark | grep -qE "[.,~=+*#-]" &&
	! LC_ALL=C grep -q "[^ -~]" hdr.txt &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 3
'

test_expect_success 'events dropped on the target: the drops sparkline shows them' '
	hdr_start 100 30 --workers 1 --high-water 5 && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys m && ui_wait "^Procs [0-9]+/" 5 && sleep 1.5 &&
	[ -z "$(hdr_drop_spark)" ] &&
	node_eval "[spawn(fun() -> ok end) || _ <- lists:seq(1, 20000)], ok." >/dev/null &&
	for _ in $(seq 1 40); do
		[ -n "$(hdr_drop_spark)" ] && break
		sleep 0.1
	done &&
	echo "drops: [$(hdr_drop_spark)]" && [ -n "$(hdr_drop_spark)" ] &&
	ui_wait " [1-9][0-9]* dropped" &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 3
'

test_expect_success 'another tool had scheduler_wall_time on: it stays on after quit' '
	node_eval "register(swt_holder, spawn(fun() -> erlang:system_flag(scheduler_wall_time, true), receive stop -> ok end end)), ok." >/dev/null &&
	sleep 0.2 && expect "$(swt_on)" = true &&
	SCHEDULER_WALL_TIME=true &&
	hdr_start 100 30 && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys m && ui_wait "^Procs [0-9]+/" 5 && ui_wait "^ ?1\[[| ]*[0-9]+[.][0-9]%\]" 5 &&
	ui_keys m && ui_wait "header off" && sleep 0.3 && expect "$(swt_on)" = true &&
	ui_keys m && ui_wait "^Procs [0-9]+/" 5 &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 3 &&
	node_eval "swt_holder ! stop, ok." >/dev/null && sleep 0.2 &&
	expect "$(swt_on)" = false
'
SCHEDULER_WALL_TIME=false

test_expect_success 'm off lowers scheduler_wall_time at once, the view still attached' '
	hdr_start 100 30 && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys m && ui_wait "^Procs [0-9]+/" 5 && expect "$(swt_on)" = true &&
	ui_keys m && ui_wait "header off" &&
	for _ in $(seq 1 20); do [ "$(swt_on)" = false ] && break; sleep 0.1; done &&
	expect "$(swt_on)" = false &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 3
'

test_expect_success ':off: the agent leaves, the flag with it; :on samples again' '
	hdr_start 100 30 && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys m && ui_wait "^Procs [0-9]+/" 5 && expect "$(swt_on)" = true &&
	ui_keys ":off" Enter && ui_wait "tracing stopped, the target is clean" 10 &&
	target_clean 3 &&
	ui_keys ":on" Enter && ui_wait "tracing [0-9]+ processes" 10 &&
	for _ in $(seq 1 30); do [ "$(swt_on)" = true ] && break; sleep 0.1; done &&
	expect "$(swt_on)" = true && ui_wait "^ ?1\[[| ]*[0-9]+[.][0-9]%\]" 5 &&
	! ui_screen | grep -q "no sample for" &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 3
'

test_expect_success 'kill -9 of beamscope: the agent leaves scheduler_wall_time as it was' '
	hdr_start 100 30 --dependency-timeout 5 && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys m && ui_wait "^Procs [0-9]+/" 5 && expect "$(swt_on)" = true &&
	shell=$(tm display-message -p -t ui "#{pane_pid}") &&
	bs=$(ps -o pid= --ppid "$shell" | tr -d " ") && [ -n "$bs" ] &&
	kill -KILL "$bs" && ui_exit_status 5 >/dev/null &&
	target_clean 10
'

test_expect_success 'the agent killed on the target: its workers clean up, the flag goes with it' '
	hdr_start 100 30 && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys m && ui_wait "^Procs [0-9]+/" 5 && expect "$(swt_on)" = true &&
	node_eval "exit(whereis(beamscope_agent), kill), ok." >/dev/null &&
	target_clean 10 &&
	ui_keys Q && ui_exit_status 5 >/dev/null
'

test_expect_success 'node-stats = true in the config file: the header from the start' '
	mkdir -p "$TRASH/conf/beamscope" &&
	printf "node-stats = true\n" >"$TRASH/conf/beamscope/config" &&
	tm has-session -t ui 2>/dev/null && tm kill-session -t ui; rm -f "$TRASH/ui.rc" &&
	ui_session 100 30 \
		"XDG_CONFIG_HOME='"'$TRASH/conf'"' XDG_STATE_HOME='"'$TRASH/state'"' '"'$BEAMSCOPE'"' '"'$NODE'"' --cookie-file '"'$COOKIE_FILE'"'; echo \$? >'"'$TRASH/ui.rc'"'; sleep 600" &&
	ui_wait "tracing [0-9]+ processes" 10 &&
	ui_wait "^Procs [0-9]+/[0-9]+" 5 && expect "$(table_line)" -gt 1 &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 3
'

test_expect_success 'another tool had it on, then kill -9: it stays on' '
	node_eval "register(swt_holder, spawn(fun() -> erlang:system_flag(scheduler_wall_time, true), receive stop -> ok end end)), ok." >/dev/null &&
	SCHEDULER_WALL_TIME=true &&
	hdr_start 100 30 --dependency-timeout 5 && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys m && ui_wait "^Procs [0-9]+/" 5 &&
	shell=$(tm display-message -p -t ui "#{pane_pid}") &&
	bs=$(ps -o pid= --ppid "$shell" | tr -d " ") && [ -n "$bs" ] &&
	kill -KILL "$bs" && ui_exit_status 5 >/dev/null &&
	target_clean 10 &&
	node_eval "swt_holder ! stop, ok." >/dev/null && sleep 0.2 &&
	expect "$(swt_on)" = false
'
SCHEDULER_WALL_TIME=false

test_expect_success '16 schedulers: two rows of bars at 160x50, one bar for all at 80x24' '
	start_node bshdr16 +S 16:16 &&
	hdr_start 160 50 && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys m && ui_wait "^ *1\[[| ]*[0-9]+[.][0-9]%\]" 5 &&
	ui_screen >wide.txt && cat wide.txt | head -5 &&
	expect "$(grep -oE "[0-9]+\[[| ]*[0-9]+[.][0-9]%\]" wide.txt | wc -l)" = 16 &&
	grep -qE "^ ?9\[" wide.txt && grep -qE " 16\[" wide.txt &&
	expect "$(table_line)" = 6 &&
	tm resize-window -t ui -x 80 -y 24 && sleep 1.5 &&
	ui_screen >small.txt && head -5 small.txt &&
	grep -qE "^Sched\[[| ]*[0-9]+[.][0-9]% max [0-9]+[.][0-9]% of 16\]" small.txt &&
	! grep -qE "^ ?1\[" small.txt && expect "$(table_line)" = 5 &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 3
'

test_done
