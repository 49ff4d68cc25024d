#!/bin/sh
# Top mode: the processes of the whole node that lead by memory, reductions
# a second or message queue length, found by the agent's look through
# every process a slice a second, although they never send or receive
# (so the count tier never meets them); by sends a second from the counts.
# A pass walks the node with erlang:processes_iterator/0 where the VM has
# it (OTP 28+), else with the list of erlang:processes(): the same leaders
# are found either way.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

start_node bstop || exit 1
erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_top.erl" "$TOP/test/erl/bs_work.erl" || exit 1

# a key of the agent's dictionary
agent_dict() {
	node_eval "{dictionary, D} = erlang:process_info(whereis(beamscope_agent), dictionary), proplists:get_value('$1', D)."
}

# the first row of the table (the line under the titles)
first_row() {
	ui_screen | awk "/^PID /{getline; print; exit}"
}

test_expect_success 'the quiet leaders are not in the table before top mode' '
	node_eval "bs_top:start(30000)." >known && cat known &&
	ui_session 160 50 \
		"XDG_STATE_HOME='"'$TRASH/state'"' '"'$BEAMSCOPE'"' '"'$NODE'"' --cookie-file '"'$COOKIE_FILE'"'; sleep 600" &&
	ui_wait "tracing [0-9]+ processes" 10 &&
	ui_wait " bs_top_chat " 10 && sleep 2 &&
	! ui_screen | grep -E " bs_top_(big|mq|busy) "
'

test_expect_success ":top mem: the big process leads, its size within 10%" '
	ui_keys ":top mem 5" Enter &&
	ui_wait "top 5 by MEM" 5 &&
	{ ui_wait "^<0[.][0-9]+[.]0> +bs_top_big " 20 >/dev/null ||
		{ ui_screen | sed -n 1,8p; false; }; } &&
	ui_screen | tee screen.mem | sed -n 1,8p &&
	rows=$(awk "/^PID /{f=1; next} f && /^<0[.]/{n++} END{print n+0}" screen.mem) &&
	echo "rows $rows" && expect "$rows" -le 5 && expect "$rows" -ge 2 &&
	m=$(bytes "$(ui_cell MEM bs_top_big)") &&
	node_eval "{memory, M} = erlang:process_info(whereis(bs_top_big), memory), M." >pim &&
	echo "table $m, process_info $(cat pim), known $(cat known)" &&
	within "$m" "$(cat pim)" && within "$m" "$(cat known)" &&
	grep -E "top 5 by MEM [(]node: [0-9]+% of 3[0-9]{4} looked at" screen.mem
'

if [ "$(node_eval "erlang:function_exported(erlang, processes_iterator, 0).")" = true ]; then
	WALK=iterator
	say "the node has erlang:processes_iterator/0 (OTP 28+): passes walk with it"
else
	WALK=list
	say "erlang:processes_iterator/0 came with OTP 28, this node has none: passes walk the list of erlang:processes()"
fi

test_expect_success "the agent looks at a slice a second (walking the $WALK), and samples a few" '
	t1=$(agent_dict "\$beamscope_top" | tr -d " ") && echo "top $t1" &&
	n=$(node_eval "erlang:system_info(process_count).") &&
	echo "$t1" | grep -E "^[{][0-9]+,[0-9]+,[0-9]+,$WALK[}]$" &&
	total=$(echo "$t1" | sed -E "s/[{][0-9]+,([0-9]+),.*/\1/") &&
	expect "$total" -gt 30000 && expect "$total" -le "$n" &&
	s=$(agent_dict "\$beamscope_sampled") && echo "sampled $s" &&
	expect "$s" -le 40 &&
	{ ui_wait "a pass [0-9]+ s[)]" 30 >/dev/null || { ui_screen | tail -3; false; }; } &&
	t2=$(agent_dict "\$beamscope_top" | tr -d " ") && echo "top $t2" &&
	expect "$(echo "$t2" | sed -E "s/^[{][0-9]+,[0-9]+,([0-9]+),.*/\1/")" -ge 1
'

test_expect_success ":top mq and :top redsps find the queued and the busy one" '
	ui_keys ":top mq" Enter && ui_wait "top 5 by MQ" 5 &&
	{ ui_wait "^<0[.][0-9]+[.]0> +bs_top_mq " 30 >/dev/null ||
		{ ui_screen | sed -n 1,8p; false; }; } &&
	expect "$(ui_cell MQ bs_top_mq)" = 5000 &&
	ui_keys ":top redsps" Enter && ui_wait "top 5 by REDS/s" 5 &&
	{ ui_wait "^<0[.][0-9]+[.]0> +bs_top_busy " 40 >/dev/null ||
		{ ui_screen | sed -n 1,8p; false; }; } &&
	r=$(bytes "$(ui_cell REDS/s bs_top_busy)") && echo "REDS/s $r" &&
	expect "$r" -gt 100000
'

test_expect_success "O on S/s ranks the counted processes; O again leaves" '
	ui_keys ":sort sps" Enter && ui_wait "top 5 by REDS/s, sort S/s" 5 &&
	ui_keys O && ui_wait "top mode off" 5 && ui_wait "sort S/s desc" 5 &&
	ui_keys O && ui_wait "top 5 by S/s [(]of the processes counted[)]" 5 &&
	{ ui_wait "^<0[.][0-9]+[.]0> +bs_top_chat " 10 >/dev/null ||
		{ ui_screen | sed -n 1,8p; false; }; } &&
	sleep 1.5 && t=$(agent_dict "\$beamscope_top") && echo "after sps: $t" &&
	expect "$t" = undefined &&
	ui_keys O && ui_wait "top mode off" 5 && ui_wait "sort S/s desc" 5
'

test_expect_success 'a column top cannot rank by is refused; N is checked' '
	ui_keys P && ui_wait "sort PID asc" 5 && ui_keys O &&
	ui_wait "top ranks by MEM, REDS/s, MQ, S/s or R/s, not PID" 5 &&
	ui_keys ":top mem 0" Enter && ui_wait "top: N is a number from 1 to 200" 5 &&
	ui_keys ":top nosuch" Enter && ui_wait "top: unknown column" 5
'

test_expect_success 'at 80x24 top mode reads back, and quitting leaves the node clean' '
	tm resize-window -t ui -x 80 -y 24 && ui_keys ":top mem 3" Enter &&
	ui_wait "^<0[.][0-9]+[.]0> +bs_top_big " 20 && ui_screen &&
	ui_wait "top 3 by MEM" 5 &&
	ui_keys Q && target_clean 3
'

test_expect_success 'with --pids naming processes, top by MEM is refused, by S/s kept' '
	ui_session 160 50 \
		"XDG_STATE_HOME='"'$TRASH/state'"' '"'$BEAMSCOPE'"' '"'$NODE'"' --cookie-file '"'$COOKIE_FILE'"' --pids bs_top_chat; sleep 600" &&
	ui_wait "tracing 1 process" 10 &&
	ui_keys ":top mem" Enter &&
	ui_wait "top by MEM looks through the node while processes are counted; this trace ships only the processes --pids names" 5 &&
	ui_wait "sort R/s desc" 5 &&
	ui_keys ":top sps 3" Enter && ui_wait "top 3 by S/s" 5 &&
	ui_wait "^<0[.][0-9]+[.]0> +bs_top_chat " 10 &&
	ui_keys Q && target_clean 3
'

test_done
