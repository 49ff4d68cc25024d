#!/bin/sh
# Batch --node-stats: a node_stats line a second with what the node says
# of itself; without it nothing is asked of the node (scheduler_wall_time
# stays off); with it, the flag is off again at the end; --open reads
# over the lines.
. "$(dirname "$0")/lib.sh"

start_node bsnstat || exit 1

swt_on() {
	node_eval "erlang:statistics(scheduler_wall_time) =/= undefined."
}

test_expect_success 'without --node-stats: no node_stats line, scheduler_wall_time never on' '
	bs_start --counts --duration 3 && bs_wait_attached && sleep 1.5 &&
	expect "$(swt_on)" = false &&
	bs_wait && expect "$BS_RC" = 0 &&
	expect "$(jqs "[.[] | select(.type == \"node_stats\")] | length")" = 0 &&
	target_clean 3
'

test_expect_success '--node-stats: a line a second, the node'"'"'s own numbers' '
	node_eval "register(ns_many, spawn(fun() -> [spawn(fun bs_work:idle/0) || _ <- lists:seq(1, 300)], receive stop -> ok end end)), ok." >/dev/null &&
	bs_start --counts --node-stats --duration 4 && bs_wait_attached && sleep 1.5 &&
	expect "$(swt_on)" = true &&
	count=$(node_eval "erlang:system_info(process_count).") &&
	total=$(node_eval "erlang:memory(total).") &&
	online=$(node_eval "erlang:system_info(schedulers_online).") &&
	limit=$(node_eval "erlang:system_info(process_limit).") &&
	bs_wait && expect "$BS_RC" = 0 &&
	n=$(jqs "[.[] | select(.type == \"node_stats\")] | length") && echo "$n lines" &&
	expect "$n" -ge 3 && expect "$n" -le 6 &&
	shown=$(jqs "[.[] | select(.type == \"node_stats\")][-1].processes") &&
	echo "node $count, line $shown" &&
	[ $((shown - count)) -le 5 ] && [ $((count - shown)) -le 5 ] &&
	jqs -e "[.[] | select(.type == \"node_stats\")][-1] | .process_limit == $limit and .node == \"$NODE_FULL\"" &&
	mem=$(jqs "[.[] | select(.type == \"node_stats\")][-1].memory.total") &&
	echo "memory: node $total, line $mem" &&
	[ $((mem * 10)) -ge $((total * 9)) ] && [ $((mem * 10)) -le $((total * 11)) ] &&
	jqs -e "[.[] | select(.type == \"node_stats\")] | (.[0].schedulers == []) and (.[-1].schedulers | length) == $online" &&
	jqs -e "[.[] | select(.type == \"node_stats\")][-1] | (.run_queues | length) >= 1 and .dirty_run_queue >= 0 and .memory.processes <= .memory.total" &&
	node_eval "ns_many ! stop, ok." >/dev/null &&
	target_clean 3
'

test_expect_success '--open reads over node_stats lines' '
	cp "$TRASH/bs.json" "$TRASH/ns.json" &&
	"$BEAMSCOPE" --open "$TRASH/ns.json" --batch -o "$TRASH/again.json" 2>err &&
	cat err && ! grep -i malformed err
'

test_done
