#!/bin/sh
# The interactive view: the real binary in tmux against a real node running
# a workload of known shape; what the screen shows is read back.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

start_node bsui || exit 1

test_expect_success 'the process table shows the sink with its exact counts' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "bs_work:sink(1000, 10), ok." >/dev/null &&
	sleep 1.5 &&
	ui_keys / bs_sink Enter && ui_wait "^<0[.][0-9]+[.]0> +bs_sink" &&
	ui_screen | grep -E "^<0[.][0-9]+[.]0> +bs_sink" | tee row &&
	expect "$(wc -l <row)" -eq 1 &&
	expect "$(ui_cell SENT "^<0[.][0-9]+[.]0> +bs_sink")" = 2 &&
	expect "$(ui_cell RECV "^<0[.][0-9]+[.]0> +bs_sink")" = 1001 &&
	expect "$(ui_cell SPAWN "^<0[.][0-9]+[.]0> +bs_sink")" = 10
'

test_expect_success 'the spawn tree shows the ten children, exited normally' '
	ui_keys t && ui_wait "spawn tree" &&
	ui_screen >tree.txt && cat tree.txt &&
	grep -A10 "bs_sink" tree.txt | tail -n 10 | grep -c "\`- <0[.][0-9]*[.]0> .*exited: normal" >n &&
	expect "$(cat n)" -eq 10
'

test_expect_success 'a process in focus: its log shows the known messages, in order' '
	ui_keys q && ui_wait "PID +NAME" &&
	sink=$(node_eval "bs_work:sink_ready()." | tr -d "\"") && echo "$sink" >sink.pid &&
	ui_keys ":focus $sink" Enter && ui_wait "^ $sink bs_sink" &&
	node_eval "bs_work:sink_run(1000, 10)." >/dev/null &&
	ui_wait "received <-  stop" &&
	ui_screen >tail.txt &&
	grep -n "received <-  {msg,1000}" tail.txt && grep -n "exited   normal" tail.txt &&
	expect "$(grep -c "spawned  <0" tail.txt)" -eq 10 &&
	a=$(grep -n "{msg,1000}" tail.txt | cut -d: -f1) &&
	b=$(grep -n "sent     -> .*{done," tail.txt | cut -d: -f1) &&
	c=$(grep -n "received <-  stop" tail.txt | cut -d: -f1) &&
	expect "$a" -lt "$b" && expect "$b" -lt "$c" &&
	ui_keys Home && ui_wait "received <-  {go," &&
	ui_screen >head.txt &&
	g=$(grep -n "received <-  {go," head.txt | cut -d: -f1) &&
	m1=$(grep -n "received <-  {msg,1}\$" head.txt | cut -d: -f1) &&
	m2=$(grep -n "received <-  {msg,2}\$" head.txt | cut -d: -f1) &&
	expect "$g" -lt "$m1" && expect "$m1" -lt "$m2"
'

test_expect_success ':focus takes a pid typed in full that has done nothing yet' '
	ui_keys q && ui_wait "PID +NAME" &&
	idle=$(node_eval "pid_to_list(spawn(fun bs_work:idle/0))." | tr -d "\"") &&
	ui_keys ":focus $idle" Enter && ui_wait "^ $idle" &&
	node_eval "list_to_pid(\"$idle\") ! hello_idle, ok." >/dev/null &&
	ui_wait "received <-  hello_idle"
'

test_expect_success 'after the focus, the table still has the exact counts' '
	sink=$(cat sink.pid) &&
	ui_keys q && ui_wait "PID +NAME" && sleep 0.6 &&
	ui_keys / "$sink" Enter && ui_wait "^$sink " &&
	ui_screen | grep -E "^$sink " | tee row &&
	expect "$(ui_cell SENT "^$sink ")" = 1 && expect "$(ui_cell RECV "^$sink ")" = 1002 &&
	expect "$(ui_cell SPAWN "^$sink ")" = 10
'

test_expect_success 'export writes JSON with the process table and the events' '
	sink=$(cat sink.pid) &&
	ui_keys ":export $TRASH/export.json" Enter && ui_wait "exported [0-9]+ processes" &&
	jq -e ".type == \"export\" and (.processes | length) > 0" export.json &&
	jq -e --arg s "$sink" "[.processes[] | select(.pid == \$s)][0] |
		.name == \"bs_sink\" and .receives == 1002 and .sends == 1 and .spawns == 10" export.json &&
	jq -c --arg s "$sink" "[.events[] | select(.pid == \$s)] | (map(.type == \"receive\" and (.payload | startswith(\"{go,\"))) | index(true)) as \$go | .[\$go:] |
		map([.type, (.payload // .mfa // .reason // \"\")] | map(gsub(\"<0[.][0-9]+[.][0-9]+>\"; \"<pid>\")))" export.json >ui.sig &&
	expect "$(jq length ui.sig)" -gt 1000
'

test_expect_success 'q from the table quits: exit 0, target clean' '
	ui_keys q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'

test_expect_success 'the export agrees with what batch mode records for the same workload' '
	bs_start --max-events 0 --duration 0 && bs_wait_attached &&
	sink=$(node_eval "bs_work:sink_ready()." | tr -d "\"") &&
	node_eval "bs_work:sink_run(1000, 10)." >/dev/null && sleep 0.5 &&
	kill -INT "$BS_PID" && bs_wait &&
	jq -s -c --arg s "$sink" "[.[] | select(.pid == \$s)] | (map(.type == \"receive\" and (.payload | startswith(\"{go,\"))) | index(true)) as \$go | .[\$go:] |
		map([.type, (.payload // .mfa // .reason // \"\")] | map(gsub(\"<0[.][0-9]+[.][0-9]+>\"; \"<pid>\")))" "$TRASH/bs.json" >batch.sig &&
	cmp ui.sig batch.sig || { head -c 300 ui.sig; echo; head -c 300 batch.sig; false; }
'

test_expect_success 'Q quits at once from the process log; target clean' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys Enter && sleep 0.3 && ui_keys Q &&
	expect "$(ui_exit_status 5)" = 0 && target_clean 2
'

test_expect_success 'the command line: completion, errors, history across sessions' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys ":expo" Tab && ui_wait "^:export" &&
	ui_keys C-u "frobnicate" Enter && ui_wait "unknown command \"frobnicate\"" &&
	ui_keys ":quit" Enter && expect "$(ui_exit_status 5)" = 0 &&
	grep -qx "quit" "$TRASH/state/beamscope/history" && target_clean 2
'

test_expect_success ':off cleans the target and keeps the table; :on traces again' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "bs_work:sink(10, 1), ok." >/dev/null && sleep 0.5 &&
	ui_keys ":off" Enter && ui_wait "tracing stopped" && target_clean 2 &&
	ui_keys / bs_sink Enter && ui_wait "bs_sink" &&
	ui_keys ":on" Enter && ui_wait "tracing [0-9]+ processes" &&
	expect "$(node_eval "whereis(beamscope_agent) =/= undefined.")" = true &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'

test_expect_success 'Tab completes registered names; Up recalls this and the last session' '
	node_eval "bs_work:spinner()." >/dev/null &&
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	sleep 1.2 && ui_keys ":focus bs_spi" Tab && ui_wait "^:focus bs_spinner" &&
	ui_keys Enter && ui_wait "bs_spinner  sent" &&
	ui_keys q ":" Up && ui_wait "^:focus bs_spinner" && ui_keys Up && ui_wait "^:on" &&
	ui_keys C-u Escape Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'

test_expect_success 'keys stay live during a flood in focus' '
	node_eval "spawn(fun() -> bs_work:flood(4, 6) end), ok." >/dev/null &&
	ui_start && ui_wait "tracing [0-9]+ processes" 10 && sleep 1.5 &&
	ui_keys S && ui_wait "^<0[.][0-9]+[.]0> " && ui_keys Enter && ui_wait "received <-  " &&
	for i in 1 2 3; do
		ui_keys "?" && ui_wait "help: q closes" 2 && ui_keys q && ui_wait "received <-  " 2 || exit 1
	done &&
	ui_screen | grep -E "^ [a-zA-Z0-9_]+@[a-z0-9-]+ +tracing" | tee status &&
	grep -qE "[0-9]{3,} ev/s" status &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'

test_expect_success 'closing the terminal (SIGHUP) detaches cleanly' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	tm kill-session -t ui && sleep 0.5 && target_clean 2
'

test_expect_success ':reconnect after the connection dropped' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "[erlang:disconnect_node(N) || N <- nodes(hidden), lists:prefix(\"beamscope_\", atom_to_list(N))], ok." >/dev/null &&
	ui_wait "LOST" 5 && target_clean 2 &&
	ui_keys ":reconnect" Enter && ui_wait "tracing [0-9]+ processes" 10 &&
	expect "$(node_eval "whereis(beamscope_agent) =/= undefined.")" = true &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'

test_expect_success 'a fatal signal still restores the terminal; the target cleans up' '
	rm -f "$TRASH/ui.stty" &&
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	shell=$(tm display-message -p -t ui "#{pane_pid}") &&
	bs=$(ps -o pid= --ppid "$shell" | tr -d " ") && [ -n "$bs" ] &&
	kill -SEGV "$bs" && st=$(ui_exit_status 5) &&
	echo "exit status $st" && expect "$st" -eq 139 &&
	for _ in $(seq 1 40); do [ -s "$TRASH/ui.stty" ] && break; sleep 0.05; done &&
	grep -E "(^| )icanon( |$)" "$TRASH/ui.stty" && grep -E "(^| )echo( |$)" "$TRASH/ui.stty" &&
	target_clean 2
'

test_expect_success 'resizes down to 80x24 and redraws' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	tm resize-window -t ui -x 80 -y 24 && sleep 0.4 &&
	ui_screen >small.txt && expect "$(wc -L <small.txt)" -le 80 &&
	grep -q "PID *NAME" small.txt && grep -q "tracing" small.txt &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'

test_expect_success 'a lost target: the view says so and keeps what it had' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	sink=$(node_eval "bs_work:sink_ready()." | tr -d "\"") &&
	ui_keys / bs_sink Enter && ui_wait "^$sink +bs_sink" &&
	ui_keys ":focus bs_sink" Enter && ui_wait "^ $sink bs_sink" &&
	node_eval "bs_work:sink_run(20, 2)." >/dev/null && ui_wait "received <-  stop" &&
	kill -KILL "$NODE_PID" && ui_wait "LOST" 5 && ui_wait "lost the connection" &&
	ui_keys q / bs_sink Enter && ui_wait "bs_sink" &&
	ui_keys ":export $TRASH/lost.json" Enter && ui_wait "exported" &&
	jq -e --arg s "$sink" "[.events[] | select(.pid == \$s and .type == \"receive\")] | length == 22" lost.json &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0
'
test_done
