#!/bin/sh
# The process table's samples: memory, reductions (in all and a second)
# and heap, for the rows on screen.  A process holding a known amount
# shows it within 10%, a busy loop leads by reductions a second, the new
# columns sort, and the agent samples the rows shown, not every process.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

start_node bsprocinfo || exit 1
erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_sizes.erl" || exit 1

# col NAME TITLE: the cell under TITLE in the row of registered NAME
# (every cell of these rows has text, so fields line up with titles)
col() {
	ui_screen >screen.cur &&
	awk -v n="$1" -v t="$2" '
		NR == 1 { for (i = 1; i <= NF; i++) if ($i == t) c = i; next }
		$2 == n && c { print $c; exit }' screen.cur
}

# how many processes the agent's last sample asked
sampled() {
	node_eval "{dictionary, D} = erlang:process_info(whereis(beamscope_agent), dictionary), proplists:get_value('\$beamscope_sampled', D)."
}

test_expect_success 'the view shows the new columns at 160 columns' '
	ui_session 160 50 \
		"XDG_STATE_HOME='"'$TRASH/state'"' '"'$BEAMSCOPE'"' '"'$NODE'"' --cookie-file '"'$COOKIE_FILE'"'; sleep 600" &&
	ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "bs_sizes:start(3000)." >known && cat known &&
	ui_wait "bs_sz_big" 10 &&
	ui_screen | sed -n 1p | tee hdr &&
	grep -E "^PID +NAME +CURRENT +SENT +S/s +RECV +R/s +SPAWN +MQ +MEM +REDS +REDS/s +HEAP( +SENT 30s( +RECV 30s)?)? *$" hdr
'

test_expect_success 'a process holding a known amount shows it within 10%' '
	ui_keys / bs_sz_ Enter && ui_wait " [0-9]+/2 " 5 &&
	for _ in $(seq 1 50); do
		m=$(col bs_sz_big MEM); [ -n "$m" ] && [ "$m" != - ] && break
		sleep 0.1
	done &&
	echo "MEM $m" && b=$(bytes "$m") &&
	node_eval "{memory, M} = erlang:process_info(whereis(bs_sz_big), memory), M." >pim &&
	echo "table $b, process_info $(cat pim), known $(cat known)" &&
	within "$b" "$(cat pim)" && within "$b" "$(cat known)" &&
	h=$(bytes "$(col bs_sz_big HEAP)") && within "$h" "$(cat known)"
'

# a row stays sampled while it is on screen: sorted while the two are
# shown, the busy loop keeps the first row among all processes
test_expect_success 'the busy loop leads by reductions a second' '
	ui_keys ":sort redsps" Enter && ui_wait "sort REDS/s desc" &&
	for _ in $(seq 1 50); do
		ui_screen | sed -n 2p | grep -q " bs_sz_busy " && break
		sleep 0.1
	done &&
	ui_keys / Enter && ui_wait " [0-9]+/3[0-9]{3} " 5 && ui_keys g && sleep 1.5 &&
	ui_screen | sed -n 1,4p &&
	ui_screen | sed -n 2p | grep -E "^<0[.][0-9]+[.]0> +bs_sz_busy " &&
	r=$(col bs_sz_busy REDS/s) && echo "REDS/s $r" &&
	expect "$(bytes "$r")" -gt 100000
'

test_expect_success 'sorting by memory puts the big process first; by heap too' '
	ui_keys ":sort mem" Enter && ui_wait "sort MEM desc" &&
	ui_wait "^<0[.][0-9]+[.]0> +bs_sz_big " 5 &&
	ui_screen | sed -n 2p | grep -E " bs_sz_big " &&
	ui_keys ":sort heap" Enter && ui_wait "sort HEAP desc" &&
	ui_screen | sed -n 2p | grep -E " bs_sz_big " &&
	ui_keys ":sort reds" Enter && ui_wait "sort REDS desc" &&
	ui_screen | sed -n 2p | grep -E " bs_sz_busy "
'

test_expect_success 'a log header says the same numbers, live' '
	ui_keys / bs_sz_busy Enter && ui_wait " 1/1 " 5 && ui_keys Enter &&
	{ ui_wait "^ <0[.][0-9]+[.]0> bs_sz_busy .* mem [0-9]+  heap [0-9]+  reds [0-9]+ [(][0-9]+/s[)]  mq [0-9]+" 10 >/dev/null ||
		{ ui_screen | sed -n 1p; false; }; } &&
	ui_screen | sed -n 1p | tee head1 &&
	sed -E "s/.* reds ([0-9]+) .*/\1/" head1 >reds1 && sleep 2.2 &&
	ui_screen | sed -n 1p | tee head2 &&
	sed -E "s/.* reds ([0-9]+) .*/\1/" head2 >reds2 &&
	expect "$(cat reds2)" -gt "$(cat reds1)" &&
	expect "$(sed -E "s/.*[(]([0-9]+)[/]s[)].*/\1/" head2)" -gt 100000 &&
	ui_keys q && ui_wait "sort MEM|sort HEAP|sort REDS" 5 &&
	ui_keys / bs_sz_big Enter && ui_wait " 1/1 " 5 && ui_keys Enter &&
	ui_wait "^ <0[.][0-9]+[.]0> bs_sz_big .* mem [0-9]+ " 10 &&
	m=$(ui_screen | sed -n 1p | sed -E "s/.* mem ([0-9]+) .*/\1/") &&
	echo "log header mem $m" && within "$m" "$(cat known)" &&
	ui_keys q && ui_wait "sort MEM|sort HEAP|sort REDS" 5 &&
	ui_keys / Enter && ui_wait " [0-9]+/3[0-9]{3} " 5
'

test_expect_success 'the agent samples the rows shown, not every process' '
	n=$(node_eval "erlang:system_info(process_count).") && echo "processes $n" &&
	expect "$n" -gt 3000 && sleep 2.5 && s=$(sampled) && echo "sampled $s" &&
	expect "$s" -ge 2 && expect "$s" -le 100 &&
	ui_keys / bs_sz_ Enter && ui_wait " [0-9]+/2 " 5 && sleep 2.5 &&
	s=$(sampled) && echo "sampled, filtered: $s" && expect "$s" -le 10 &&
	ui_keys Q && target_clean 3
'

test_done
