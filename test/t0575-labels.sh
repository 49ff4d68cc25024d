#!/bin/sh
# What a process is: gen_servers, a gen_statem and a supervisor started
# through proc_lib, none registered, are shown by their callback modules
# (the '$initial_call' proc_lib keeps), not as proc_lib:init_p/5, in the
# process table, the process log and the batch JSON; and the target is
# asked about each process once, however busy it is.
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
	[ "$(label_calls)" = 0 ] &&
	node_eval "bs_lbl_srv:start(3, 50)." | tee pids &&
	grep -q "<0[.]" pids
'

test_expect_success 'the table names them by their callback modules' '
	ui_keys / bs_lbl Enter && ui_wait "filter \"bs_lbl\"" &&
	ui_wait "bs_lbl_fsm:init" 5 && ui_wait "supervisor:bs_lb" 5 &&
	ui_screen | tee screen &&
	[ "$(grep -cE "^<0[.][0-9]+[.]0> +bs_lbl_srv:init" screen)" = 3 ] &&
	! grep -q "proc_lib:init_p" screen
'

test_expect_success 'the process log header says what it is' '
	ui_keys / bs_lbl_fsm Enter && ui_wait " 1/1 " &&
	ui_keys Enter && ui_wait "^ <0[.][0-9]+[.]0> bs_lbl_fsm:init/1 +sent" 5 &&
	ui_keys q && ui_wait "PID +NAME"
'

test_expect_success 'each process is asked about once, not per event' '
	sleep 1 && a=$(label_calls) && sleep 3 && b=$(label_calls) &&
	echo "looked up $a, then $b" &&
	# ours (3 servers, the statem, the supervisor, the pinger) and a few
	# processes of the rpc calls of this test, never one per call made
	[ "$a" -ge 6 ] && [ "$a" -le 40 ] && [ $((b - a)) -le 6 ]
'

test_expect_success 'quit leaves the target clean' '
	ui_keys Q && [ "$(ui_exit_status)" = 0 ] && target_clean 5
'

test_expect_success 'batch: events and counts lines carry the label' '
	node_eval "bs_lbl_srv:stop()." >/dev/null &&
	bs_start -d 3 && bs_wait_attached &&
	node_eval "bs_lbl_srv:start(3, 50)." >/dev/null &&
	bs_wait && [ "$BS_RC" = 0 ] &&
	jqs -r "[.[] | select(.label == \"bs_lbl_srv:init/1\") | .pid] | unique | length" >n &&
	[ "$(cat n)" = 3 ] &&
	jqs -e "any(.[]; .label == \"bs_lbl_fsm:init/1\" and .type == \"receive\")" &&
	jqs -e "any(.[]; .label == \"supervisor:bs_lbl_sup/1\")" &&
	jqs -e "all(.[]; .label == null or (.label | test(\"^proc_lib\") | not))" &&
	bs_start --counts --interval 1 -d 3 && bs_wait && [ "$BS_RC" = 0 ] &&
	jqs -e "any(.[]; .type == \"counts\" and .label == \"bs_lbl_fsm:init/1\")" &&
	target_clean 5
'

# proc_lib:set_label/1 came with OTP 27: where the target has it, a plain
# process that set one is shown by it; older targets have no such thing
if [ "$(node_eval "erlang:function_exported(proc_lib, set_label, 1).")" = true ]; then
	test_expect_success 'a process label (OTP 27) names a plain process' '
		bs_start -d 3 && bs_wait_attached &&
		node_eval "P = spawn(fun() -> proc_lib:set_label({bs_lbl, 7}), receive _ -> ok after 3000 -> ok end end), [P ! hi || _ <- lists:seq(1, 5)], ok." &&
		bs_wait && [ "$BS_RC" = 0 ] &&
		jqs -e "any(.[]; .label == \"{bs_lbl,7}\")"
	'
else
	test_count=$((test_count + 1))
	echo "ok $test_count # skip proc_lib:set_label/1 needs OTP 27 on the target"
fi

test_done
