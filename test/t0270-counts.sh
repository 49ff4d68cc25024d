#!/bin/sh
# The count tier: every process counted on the target, exact totals,
# written as "counts" lines every --interval seconds and at the end.
. "$(dirname "$0")/lib.sh"

start_node bscount || exit 1

test_expect_success '--counts: exact totals per process, no event lines' '
	bs_start --counts --interval 0.3 --duration 0 && bs_wait_attached &&
	res=$(node_eval "{S, T} = bs_work:sink(1000, 10), pid_to_list(S) ++ \" \" ++ pid_to_list(T).") &&
	sink=$(echo "$res" | tr -d "\"" | cut -d" " -f1) &&
	sender=$(echo "$res" | tr -d "\"" | cut -d" " -f2) &&
	sleep 1 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e "all(.[:-1][]; .type == \"counts\")" &&
	jqs -e --arg s "$sink" "[.[] | select(.pid == \$s)] | last |
		.name == \"bs_sink\" and .sends == 2 and .receives == 1001 and .spawns == 10" &&
	jqs -e --arg t "$sender" "[.[] | select(.pid == \$t)] | last |
		.sends == 1000 and .receives == 0" &&
	jqs -e ".[-1] | .type == \"summary\" and .events == 0 and .count_overflow == 0 and .count_lines > 0" &&
	target_clean 2
'

test_expect_success '--counts: a line per active process every interval' '
	node_eval "bs_work:spinner()." >/dev/null &&
	bs_start --counts --interval 0.2 --duration 0 --pids bs_spinner && bs_wait_attached &&
	node_eval "[begin bs_spinner ! {n, I}, timer:sleep(100) end || I <- lists:seq(1, 10)], ok." >/dev/null &&
	sleep 0.5 && kill -INT "$BS_PID" && bs_wait &&
	jqs -e "[.[] | select(.type == \"counts\" and .name == \"bs_spinner\")] |
		length >= 4 and (map(.receives) | . == sort) and last.receives == 10" &&
	target_clean 2
'
test_done
