#!/bin/sh
# The spawn tree: a cursor that the moving keys move, Enter opens the
# process's log, reopened it starts at its root; and on a node with tens of
# thousands of processes it answers keys at once (drawing costs the rows on
# screen, not every process against every other).
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || test_skip_all "tmux is not installed"

start_node bstree +P 200000 || exit 1

# key_ms KEY PATTERN: how long the screen takes to show PATTERN after KEY,
# in milliseconds
key_ms() {
	t0=$(date +%s%N)
	ui_keys "$1"
	for _ in $(seq 1 2000); do
		ui_screen | grep -qE -- "$2" && break
		sleep 0.005
	done
	t1=$(date +%s%N)
	echo $(( (t1 - t0) / 1000000 ))
}

# the selected row: the one drawn black on cyan
selected() {
	tm capture-pane -p -e -t ui | grep -F "$(printf '\033[46m')" |
		sed 's/\x1b\[[0-9;]*m//g'
}

test_expect_success 'following a tree of 10: the tree has a cursor on its root' '
	root=$(node_eval "bs_work:hold_tree()." | tr -d "\"") && echo "$root" >"$TRASH/root" &&
	ui_start --follow "\"$root\"" && ui_wait "tracing 1 process" 10 &&
	node_eval "list_to_pid(\"$root\") ! go, ok." >/dev/null &&
	ui_keys t && ui_wait "spawn tree" &&
	ui_wait " 1/10 " 5 && ui_screen | sed -n 2p | grep "^$root" &&
	selected | grep "^$root"
'

test_expect_success 'Down, End and Home move the cursor' '
	ui_keys j && ui_wait " 2/10 " && selected | grep "^  \`- <0[.]" &&
	ui_keys End && ui_wait " 10/10 " && selected | grep "\`- <0[.]" &&
	ui_keys k && ui_wait " 9/10 " &&
	root=$(cat "$TRASH/root") &&
	ui_keys Home && ui_wait " 1/10 " && selected | grep "^$root"
'

test_expect_success 'Enter opens the log of the process under the cursor' '
	ui_keys j && ui_wait " 2/10 " &&
	pid=$(selected | grep -oE "<0[.][0-9]+[.]0>" | head -1) && echo "$pid" &&
	ui_keys Enter && ui_wait "^ $pid " 5 && ui_wait "spawned +<0[.]" 5 &&
	ui_keys q && ui_wait "spawn tree" && ui_wait " 2/10 "
'

test_expect_success 'reopened after End, the tree starts at its root again' '
	root=$(cat "$TRASH/root") &&
	ui_keys End && ui_wait " 10/10 " &&
	ui_keys q && ui_wait "PID +NAME" && ui_keys t && ui_wait "spawn tree" &&
	ui_wait " 1/10 " && ui_screen | sed -n 2p | grep "^$root" &&
	selected | grep "^$root"
'

test_expect_success 'quit leaves the target clean' '
	ui_keys Q && expect "$(ui_exit_status)" = 0 && target_clean 5 &&
	node_eval "[P ! stop || P <- processes(), process_info(P, current_function) =:= {current_function, {bs_work, hold, 0}}], ok." >/dev/null
'

# 35000 processes, spawned under the view by one parent, that wait
test_expect_success 'a tree of 35000 processes answers keys within 500 ms' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "Me = self(), spawn(fun() -> register(bs_many, self()), [spawn(fun() -> receive stop -> ok end end) || _ <- lists:seq(1, 35000)], Me ! spawned, receive stop -> ok end end), receive spawned -> ok end." >/dev/null &&
	ui_wait " 3[5-9][0-9]{3} procs" 60 &&
	best=100000 &&
	for i in 1 2 3; do
		a=$(key_ms t "spawn tree") && b=$(key_ms End " ([0-9]+)/\\1 ") &&
		c=$(key_ms Home " 1/[0-9]+ ") && d=$(key_ms j " 2/[0-9]+ ") &&
		e=$(key_ms q "PID +NAME") &&
		echo "tree $a ms, End $b ms, Home $c ms, Down $d ms, back $e ms" &&
		worst=0 && for v in $a $b $c $d $e; do
			if [ "$v" -gt "$worst" ]; then worst=$v; fi
		done &&
		if [ "$worst" -lt "$best" ]; then best=$worst; fi
	done &&
	echo "best round: every key within $best ms" && expect "$best" -le 500 &&
	ui_keys t && ui_wait "spawn tree" &&
	ui_screen | grep -E "\`- <0[.][0-9]+[.]0> +bs_many"
'
grep -E " ms(,|$)" "$TRASH/out.$test_count" | sed "s/^/# /"

test_expect_success 'quit leaves the target clean' '
	ui_keys Q && expect "$(ui_exit_status 10)" = 0 && target_clean 10
'

test_done
