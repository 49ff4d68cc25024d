#!/bin/sh
# The process log's header says the process's links, monitors, monitors
# of it and '$ancestors', live: a supervised worker with known ones, the
# count following a new link, names in the syntax in force, a narrow
# terminal, a process of 10 000 links shown in part, the ancestors of a
# process too big to copy the dictionary of (read with one key on OTP 26+,
# unknown before); and the agent looks at relations only while a log is
# open.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

start_node bsrel || exit 1
erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_rel.erl" || exit 1

# how many times the agent looked at the relations of its processes in focus
looked() {
	node_eval "{dictionary, D} = erlang:process_info(whereis(beamscope_agent), dictionary), proplists:get_value('\$beamscope_relations_sampled', D, 0)."
}

# pid NAME: the pid of a registered process, as the node writes it
pid() {
	node_eval "pid_to_list(whereis($1))." | tr -d '"'
}

# the header of the log: the first two lines of the screen
header() {
	ui_screen | sed -n 1,2p
}

test_expect_success 'a supervised worker: 3 links, 2 monitors, monitored by 1, its supervisor' '
	node_eval "bs_rel:start()." | grep -x ok &&
	ui_session 160 50 \
		"XDG_STATE_HOME='"'$TRASH/state'"' '"'$BEAMSCOPE'"' '"'$NODE'"' --cookie-file '"'$COOKIE_FILE'"'; sleep 600" &&
	ui_wait "tracing [0-9]+ processes" 10 &&
	sleep 2.5 && n=$(looked) && echo "looked $n times before any log" &&
	expect "$n" = 0 &&
	ui_keys ":focus bs_rel_worker" Enter &&
	ui_wait "^ <0[.][0-9]+[.]0> bs_rel_worker" 5 &&
	ui_wait "links 3 .*monitors 2 .*monitored by 1 .*ancestors bs_rel_sup bs_rel_holder$" 5 &&
	header | tee head &&
	sup=$(pid bs_rel_sup) && a=$(pid bs_rel_a) && b=$(pid bs_rel_b) &&
	c=$(pid bs_rel_c) && echo "sup $sup a $a b $b c $c" &&
	links=$(sed -n "s/.*links 3 \(.*\)  monitors 2 .*/\1/p" head) &&
	echo "links: $links" &&
	for p in "$sup" "$a" "$b"; do
		echo " $links " | grep -qF " $p " || { echo "no $p"; exit 1; }
	done &&
	mons=$(sed -n "s/.*monitors 2 \(.*\)  monitored by .*/\1/p" head) &&
	echo "monitors: $mons" &&
	echo " $mons " | grep -qF " $c " && echo " $mons " | grep -qF " bs_rel_d "
'

test_expect_success 'a new link shows within a few seconds' '
	node_eval "bs_rel:link_more()." | grep -x ok &&
	ui_wait "links 4 .*monitors 2 .*monitored by 1 " 4 &&
	header
'

# at most once a second: no more turns than whole seconds between the two
# reads, and one more for a turn on either edge
test_expect_success 'the agent looks about once a second while the log is open' '
	t1=$(date +%s%N) && n1=$(looked) && sleep 3 && n2=$(looked) &&
	t2=$(date +%s%N) && s=$(( (t2 - t1) / 1000000000 )) &&
	echo "looked $n1, then $n2, in $s s and a part" &&
	expect "$n2" -ge $((n1 + 2)) && expect "$n2" -le $((n1 + s + 1))
'

test_expect_success 'names in Elixir syntax' '
	ui_keys ":syntax elixir" Enter &&
	ui_wait "ancestors :bs_rel_sup :bs_rel_holder" 5 &&
	ui_wait "monitors 2 .*:bs_rel_d" 5 &&
	ui_keys ":syntax erlang" Enter && ui_wait "ancestors bs_rel_sup bs_rel_holder" 5
'

test_expect_success 'at 80x24 the counts still read' '
	tm resize-window -t ui -x 80 -y 24 && sleep 0.5 &&
	ui_screen | tee screen80 &&
	sed -n 1p screen80 | grep -E "^ <0[.][0-9]+[.]0> bs_rel_worker" &&
	sed -n 2p screen80 | grep -E "^ links 4 .*monitors 2 .*monitored by 1( |$)" &&
	expect "$(wc -l <screen80)" -le 24 &&
	! sed -n 3p screen80 | grep -q "links" &&
	tm resize-window -t ui -x 160 -y 50 &&
	ui_wait "^ links 4 <0[.].*  monitors 2 <0[.].*ancestors bs_rel_sup bs_rel_holder$" 5
'

test_expect_success 'the log closed, the agent looks no more' '
	ui_keys q && ui_wait "^PID +NAME" 5 && sleep 1.5 &&
	n1=$(looked) && sleep 3 && n2=$(looked) && echo "looked $n1, then $n2" &&
	expect "$n1" -gt 0 && expect "$n1" = "$n2" &&
	! ui_screen | grep -q "monitored by"
'

test_expect_success '10000 links: the count, and the first few' '
	node_eval "bs_rel:big(10000)." | grep -x ok &&
	ui_keys ":focus bs_rel_big" Enter &&
	ui_wait "^ <0[.][0-9]+[.]0> bs_rel_big" 10 &&
	ui_wait "links 10000 .*monitors 0  monitored by 0" 5 &&
	header | tee head &&
	links=$(sed -n "s/.*links 10000 \(.*\)  monitors 0 .*/\1/p" head) &&
	echo "links: $links" &&
	expect "$(echo "$links" | grep -oE "<0[.][0-9]+[.]0>" | wc -l)" -eq 5 &&
	echo "$links" | grep -qE "[.]0> [.][.][.]$" &&
	{ ! header | grep -q "ancestors" ||
		header | grep -qE "monitored by 0  ancestors unknown *$"; }
'

# what the agent remembers of the last look at the relations of NAME:
# "CostUs AtMs", or nothing
last_look() {
	node_eval "P = whereis($1), {dictionary, D} = erlang:process_info(whereis(beamscope_agent), dictionary), case maps:get({rel, P}, proplists:get_value('\$beamscope_dear', D, #{}), none) of {C, _, At} -> io_lib:format(\"~b ~b\", [C, At]); none -> \"\" end." |
		tr -d '"'
}

# a look at 200 000 links takes some 30 ms of the target's scheduler (a
# copy of the list, in one go): at most one in 100 times that, and the
# header says how old what it shows is
test_expect_success '200000 links: looked at rarely, and the header says when' '
	node_eval "bs_rel:big(bs_rel_huge, 200000)." | grep -x ok &&
	ui_keys ":focus bs_rel_huge" Enter &&
	ui_wait "^ <0[.][0-9]+[.]0> bs_rel_huge" 10 &&
	ui_wait "links 200000 " 10 &&
	: >looks && t0=$(date +%s%N) &&
	for _ in $(seq 1 40); do
		last_look bs_rel_huge >>looks
		header | grep -qE "[(][0-9]+ s ago[)] links 200000" && echo old >>seen
		sleep 0.25
	done &&
	t1=$(date +%s%N) && ms=$(( (t1 - t0) / 1000000 )) &&
	n=$(sort -u looks | grep -c .) && c=$(tail -1 looks | cut -d" " -f1) &&
	echo "$n looks in $ms ms, the last took $c us" &&
	expect "$c" -gt 0 && [ $((n * c)) -le $((ms * 10 + 2 * c)) ] &&
	header && { [ -s seen ] || { echo "never said how old"; false; }; }
'

# '$ancestors' is read with one key where the VM can (OTP 26+); before,
# the whole dictionary is copied, and only for a heap of at most 32768
# words: a process holding more shows its ancestors as unknown there
if [ "$(node_eval "try erlang:process_info(self(), {dictionary, x}) of _ -> true catch _:_ -> false end.")" = true ]; then
	FAT_WANT="bs_rel_holder"
	say "the node reads one key of a dictionary (OTP 26+): a big process's ancestors are tested"
else
	FAT_WANT="unknown"
	say "one key of a dictionary is read from OTP 26 on, this node copies it whole: a big process's ancestors are unknown"
fi

test_expect_success "a process of 200 000 words of heap: ancestors $FAT_WANT" '
	node_eval "bs_rel:fat(100000)." | grep -x ok &&
	expect "$(node_eval "element(2, process_info(whereis(bs_rel_fat), total_heap_size)) > 32768.")" = true &&
	for _ in $(seq 1 50); do
		# its registration is an event, shipped within a moment
		ui_keys ":focus bs_rel_fat" Enter && sleep 0.2
		ui_screen | grep -qE "^ <0[.][0-9]+[.][0-9]+> bs_rel_fat" && break
	done &&
	ui_wait "^ <0[.][0-9]+[.][0-9]+> bs_rel_fat" 10 &&
	ui_wait "monitored by 0  ancestors $FAT_WANT *$" 5
'

test_expect_success 'switching logs: the relations are the new process'"'"'s' '
	ui_keys ":focus bs_rel_a" Enter &&
	ui_wait "^ <0[.][0-9]+[.]0> bs_rel_a " 5 &&
	ui_wait "links 1 <0[.][0-9]+[.]0>  monitors 0  monitored by 0" 5 &&
	! header | grep -q "links 10000" &&
	ui_keys q && ui_wait "^PID +NAME" 5 &&
	ui_keys Q && target_clean 3
'

test_done
