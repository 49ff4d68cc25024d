#!/bin/sh
# A spawn storm whose exit events are dropped on the target: the view's
# process table and its memory stay bounded while the storm goes on, and
# the view still answers.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || test_skip_all "tmux is not installed"

# one scheduler: the storm takes one core, not the machine
start_node bsstorm +S 1 || exit 1

# bs_storm spawns children as fast as it can; each sends it one message
# (so the count tier reports it) and exits; {count, From} asks how many
# have reported so far.
STORM='register(bs_storm, spawn(fun() ->
	Me = self(),
	L = fun Loop(N) ->
		receive
			stop -> ok;
			{count, From} -> From ! {count, N}, Loop(N);
			hi -> Loop(N + 1)
		after 0 -> spawn(fun() -> Me ! hi end), Loop(N)
		end
	end,
	L(0) end)), ok.'
COUNT='bs_storm ! {count, self()}, receive {count, N} -> N after 2000 -> 0 end.'

# --ring 1000: at most 10000 processes (the floor), one more while a
# spawn event adds its child
BOUND=10001
# what the storm must have made the view see, for the bound to be tested
ENOUGH=100000

# freed memory goes back to the allocator, not to AddressSanitizer's
# quarantine, so a sanitized build's size means something too
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1"

test_expect_success 'a spawn storm: the table and the memory stay bounded' '
	ui_start --ring 1000 --workers 1 --high-water 64 --duration 0 &&
	ui_wait "tracing [0-9]+ processes" 10 &&
	bs=$(pgrep -x -P "$(tm list-panes -t ui -F "#{pane_pid}")" beamscope) &&
	echo "beamscope: $bs" &&
	idle=$(node_eval "pid_to_list(spawn(fun bs_work:idle/0))." | tr -d "\"") &&
	echo "$idle" >idle.pid &&
	ui_keys ":focus $idle" Enter && ui_wait "^ $idle" &&
	node_eval "$STORM" >/dev/null &&
	i=0 rss0=0 most=0 &&
	while :; do
		sleep 0.5
		i=$((i + 1))
		procs=$(ui_screen | grep -oE "[0-9]+ procs" | cut -d" " -f1)
		rss=$(awk "/^VmRSS/ { print \$2 }" "/proc/$bs/status")
		seen=$(node_eval "$COUNT")
		echo "$i: $procs procs, rss $rss kB, storm $seen"
		[ -n "$procs" ] && [ -n "$rss" ] || exit 1
		expect "$procs" -le "$BOUND" || { echo "over the bound"; exit 1; }
		expect "$procs" -gt "$most" && most=$procs
		expect "$i" -eq 10 && rss0=$rss
		[ "$i" -ge 30 ] && [ "$seen" -ge "$ENOUGH" ] && break
		expect "$i" -lt 240 || { echo "the storm was too slow"; exit 1; }
	done &&
	echo "rss after 5 s: $rss0 kB, at the end: $rss kB; most: $most" &&
	expect "$most" -ge $((BOUND * 3 / 4)) &&
	[ $((rss - rss0)) -lt 16384 ] &&
	ui_screen | grep -E "[1-9][0-9]* dropped" &&
	node_eval "bs_storm ! stop, ok." >/dev/null
'

# Leaving its log brings the table back with that process selected, and
# the selection is kept as the rows on screen are: a second storm, in which
# the quiet process is the first to be forgotten unless kept, leaves it.
test_expect_success 'the process in focus, quiet all along, is still there' '
	idle=$(cat idle.pid) &&
	ui_keys q && ui_wait "PID +NAME" &&
	i=0 && until node_eval "whereis(bs_storm)." | grep -q undefined; do
		sleep 0.2
		i=$((i + 1))
		expect "$i" -lt 100 || { echo "the first storm never stopped"; exit 1; }
	done &&
	node_eval "$STORM" >/dev/null &&
	i=0 && while :; do
		sleep 0.5
		i=$((i + 1))
		seen=$(node_eval "$COUNT")
		[ "$seen" -ge 30000 ] && break
		expect "$i" -lt 240 || { echo "the storm was too slow"; exit 1; }
	done &&
	echo "the second storm: $seen processes" &&
	node_eval "bs_storm ! stop, ok." >/dev/null &&
	ui_keys / "$idle" Enter && ui_wait "^$idle " 10
'

test_expect_success 'the view still answers, and leaves the target clean' '
	ui_keys / C-u bs_storm Enter && ui_wait "^<0[.][0-9]+[.]0> +bs_storm" &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 3
'

test_done
