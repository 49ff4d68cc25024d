#!/bin/sh
# What a process is: gen_servers, a gen_statem and a supervisor started
# through proc_lib, none registered, are shown by their callback modules
# (the '$initial_call' proc_lib keeps), not as proc_lib:init_p/5, in the
# process table, the process log and the batch JSON; and the target is
# asked about each process once (twice where it has labels), however busy
# it is.  On OTP 27+, the label a process gave itself with
# proc_lib:set_label/1 names it, before its initial call, after its
# registered name: a plain spawn, a proc_lib spawn, a gen_server labelled
# in init/1, one labelled a second after its start; on older nodes the
# same processes are named by their initial calls.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || test_skip_all "tmux is not installed"

mkdir -p "$TRASH/ebin" &&
	erlc -o "$TRASH/ebin" "$TOP"/test/erl/bs_lbl_*.erl || exit 1
start_node bslabel || exit 1

# how often the agent looked a process up since counting began
label_calls() {
	node_eval "bs_lbl_srv:label_calls()."
}

test_expect_success 'the view traces the node; the workload starts under it' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	expect "$(label_calls)" = 0 &&
	node_eval "bs_lbl_srv:start(3, 50)." | tee pids &&
	grep -q "<0[.]" pids
'

test_expect_success 'the table names them by their callback modules' '
	ui_keys / bs_lbl Enter && ui_wait "filter \"bs_lbl\"" &&
	ui_wait "bs_lbl_fsm:init" 5 && ui_wait "supervisor:bs_lb" 5 &&
	ui_screen | tee screen &&
	expect "$(grep -cE "^<0[.][0-9]+[.]0> +bs_lbl_srv:init" screen)" = 3 &&
	! grep -q "proc_lib:init_p" screen
'

test_expect_success 'the process log header says what it is' '
	ui_keys / bs_lbl_fsm Enter && ui_wait " 1/1 " &&
	ui_keys Enter && ui_wait "^ <0[.][0-9]+[.]0> bs_lbl_fsm:init/1 +sent" 5 &&
	ui_keys q && ui_wait "PID +NAME"
'

# proc_lib:set_label/1 came with OTP 27: where the node has it, a process
# with no label at its first look is looked at once more, 2 s later
if [ "$(node_eval "erlang:function_exported(proc_lib, set_label, 1).")" = true ]; then
	LABELS=1 LOOKS=2 BY="a label" SAYS="the label"
	say "the node has labels (OTP 27+, proc_lib:set_label/1): they are tested"
else
	LABELS="" LOOKS=1 BY="with no labels, the initial call" SAYS="the initial call"
	say "labels need OTP 27 (proc_lib:set_label/1), this node has none: the initial calls shown without them are tested"
fi

test_expect_success "each process is asked about $LOOKS time(s), not per event" '
	sleep 3 && a=$(label_calls) && sleep 3 && b=$(label_calls) &&
	echo "looked up $a, then $b" &&
	# ours (3 servers, the statem, the supervisor, the pinger) and a few
	# processes of the rpc calls of this test, never one per call made
	expect "$a" -ge $((6 * LOOKS)) && expect "$a" -le $((40 * LOOKS)) &&
	[ $((b - a)) -le $((6 * LOOKS)) ]
'

test_expect_success 'quit leaves the target clean' '
	ui_keys Q && expect "$(ui_exit_status)" = 0 && target_clean 5
'

test_expect_success 'batch: events and counts lines carry the label' '
	node_eval "bs_lbl_srv:stop()." >/dev/null &&
	bs_start -d 3 && bs_wait_attached &&
	node_eval "bs_lbl_srv:start(3, 50)." >/dev/null &&
	bs_wait && expect "$BS_RC" = 0 &&
	jqs -r "[.[] | select(.label == \"bs_lbl_srv:init/1\") | .pid] | unique | length" >n &&
	expect "$(cat n)" = 3 &&
	jqs -e "any(.[]; .label == \"bs_lbl_fsm:init/1\" and .type == \"receive\")" &&
	jqs -e "any(.[]; .label == \"supervisor:bs_lbl_sup/1\")" &&
	jqs -e "all(.[]; .label == null or (.label | test(\"^proc_lib\") | not))" &&
	bs_start --counts --interval 1 -d 3 && bs_wait && expect "$BS_RC" = 0 &&
	jqs -e "any(.[]; .type == \"counts\" and .label == \"bs_lbl_fsm:init/1\")" &&
	target_clean 5
'

# the row of a pid in the table
row() {
	ui_screen | grep -E "^$1 "
}

# the pids of bs_lbl_tag:start/1, in its order
tag_pids() {
	tr -d '[]" ' <tags | tr , " "
}

test_expect_success "$BY names a plain spawn, a proc_lib spawn, a gen_server; a name wins" '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "bs_lbl_tag:start(100)." | tee tags &&
	set -- $(tag_pids) && [ $# = 5 ] &&
	ui_keys / bs_lbl Enter && ui_wait "filter \"bs_lbl\"" &&
	if [ "$LABELS" ]; then
		ui_wait "^$1 +[{]bs_lbl,plain[}] " 5 &&
		ui_wait "^$2 +[{]bs_lbl,7[}] " 5 &&
		ui_wait "^$3 +bs_lbl shop " 5
	else
		ui_wait "^$1 +erlang:apply/2 " 5 &&
		ui_wait "^$2 +bs_lbl_tag:.-start/1-fun-1-./0 " 5 &&
		ui_wait "^$3 +bs_lbl_tag:init/1 " 5
	fi &&
	ui_wait "^$5 +bs_lbl_reg " 5 && ui_screen >screen &&
	! grep -E "^($2|$3) .*proc_lib" screen
'

test_expect_success "a process labelled a second after its start: $SAYS, within seconds" '
	set -- $(tag_pids) &&
	if [ "$LABELS" ]; then
		ui_wait "^$4 +[{]bs_lbl,late[}] " 6
	else
		sleep 3 && ui_wait "^$4 +bs_lbl_tag:.-start/1-fun-2-./0 " 1
	fi
'

test_expect_success "the process log header says $SAYS" '
	set -- $(tag_pids) &&
	if [ "$LABELS" ]; then want="bs_lbl shop"; else want="bs_lbl_tag:init/1"; fi &&
	ui_keys ":focus $3" Enter && ui_wait "^ $3 $want +sent" 5 &&
	ui_keys q && ui_wait "PID +NAME" 5 &&
	ui_keys Q && expect "$(ui_exit_status)" = 0 && target_clean 5
'

# what the last line of TYPE of pid P says of its label
last_label() {
	jqs -r "[.[] | select(.pid == \"$1\" and .type == \"$2\")] | last | .label"
}

# labels_are TYPE: the last line of TYPE of each of the first four
# processes of bs_lbl_tag carries the label it should ($l1 to $l4)
labels_are() {
	set -- "$1" $(tag_pids)
	for i in 1 2 3 4; do
		eval "p=\${$((i + 1))} want=\$l$i" && got=$(last_label "$p" "$1") &&
		{ [ "$got" = "$want" ] ||
			{ echo "$p: want $want, got $got"; return 1; }; }
	done
}

# the label each of the processes should carry in batch lines
if [ "$LABELS" ]; then
	l1="{bs_lbl,plain}" l2="{bs_lbl,7}" l3="bs_lbl shop" l4="{bs_lbl,late}"
else
	l1=null l2="bs_lbl_tag:'-start/1-fun-1-'/0"
	l3="bs_lbl_tag:init/1" l4="bs_lbl_tag:'-start/1-fun-2-'/0"
fi

test_expect_success "batch: events carry $SAYS" '
	bs_start -d 3 && bs_wait && expect "$BS_RC" = 0 &&
	labels_are receive && set -- $(tag_pids) &&
	expect "$(last_label "$5" receive)" = null &&
	jqs -e "any(.[]; .pid == \"$5\" and .name == \"bs_lbl_reg\")"
'

test_expect_success "batch: counts lines and the servers of the gen call summary too" '
	bs_start -d 3 --gen-calls --summary && bs_wait && expect "$BS_RC" = 0 &&
	labels_are counts && set -- $(tag_pids) &&
	jqs -c "[.[] | select(.type == \"gen_call_stats\" and .server == \"$3\")] | last" | tee gen &&
	jq -e ".server_label == \"$l3\"" gen &&
	grep -F " $3 $l3 (ping)" "$TRASH/bs.err" &&
	node_eval "bs_lbl_tag:stop()." && target_clean 5
'

test_done
