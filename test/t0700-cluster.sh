#!/bin/bash
# Several nodes at once: three real nodes in one cluster, cross-node
# ping-pong with exactly known counts, sends paired with their receives,
# one merged timeline, a node lost mid-trace, and every node left clean.
. "$(dirname "$0")/lib.sh"

command -v jq >/dev/null || test_skip_all "jq is not installed"

start_cluster cl 3 || exit 1
set -- $CNODES; A=$1 B=$2 C=$3
set -- $CNODES_FULL; AF=$1 BF=$2 CF=$3
N=300

all_clean() {
	for n in $A $B $C; do
		( NODE=$n; target_clean "${1:-2}" ) || return 1
	done
}

# a ring: ping_a on A plays pong_b on B, ping_b plays pong_c, ping_c pong_a
setup_ring() {
	for pair in "$A $B" "$B $C" "$C $A"; do
		set -- $pair
		from=$1 to=$2
		tof=$(on_node "$to" "node().")
		sfx=$(echo "$from" | sed 's/^cl\([0-9]\).*/\1/')
		tsfx=$(echo "$to" | sed 's/^cl\([0-9]\).*/\1/')
		on_node "$to" "bs_cluster:start_ponger(pong_$tsfx)." >/dev/null
		on_node "$from" "bs_cluster:start_pinger(ping_$sfx, $tof, pong_$tsfx)." >/dev/null
	done
}

stop_ring() {
	for n in 1 2 3; do
		for name in ping_$n pong_$n; do
			for node in $A $B $C; do
				on_node "$node" "case whereis($name) of undefined -> ok; P -> exit(P, kill) end." >/dev/null
			done
		done
	done
}

cluster_start() {
	"$BEAMSCOPE" "$@" --batch --cookie-file "$COOKIE_FILE" \
		-o "$TRASH/bs.json" 2>"$TRASH/bs.err" &
	BS_PID=$!
}

# wait until every node given has said "attached to"
wait_attached() {
	for _ in $(seq 1 200); do
		[ "$(grep -c 'attached to' "$TRASH/bs.err" 2>/dev/null)" -ge "$1" ] && return 0
		kill -0 "$BS_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "beamscope did not attach to $1 nodes:"; cat "$TRASH/bs.err"
	return 1
}

play_ring() {
	for n in $A $B $C; do
		sfx=$(echo "$n" | sed 's/^cl\([0-9]\).*/\1/')
		on_node "$n" "bs_cluster:go(ping_$sfx, $N)." >/dev/null
	done
	for n in $A $B $C; do
		sfx=$(echo "$n" | sed 's/^cl\([0-9]\).*/\1/')
		expect "$(on_node "$n" "bs_cluster:wait_done(ping_$sfx, 20000).")" = done || return 1
	done
}

test_expect_success 'three nodes: one run, each attached with a clock estimate' '
	setup_ring &&
	cluster_start $A $B $C -d 30 &&
	wait_attached 3 &&
	play_ring &&
	kill -INT $BS_PID && bs_wait && test $BS_RC = 0 &&
	cat "$TRASH/bs.err" &&
	expect "$(jqs "[.[] | select(.type == \"node_summary\")] | length")" = 3 &&
	expect "$(jqs -r "[.[] | select(.type == \"summary\") | .nodes[]] | sort | join(\" \")")" = \
	     "$(printf "%s\n" $AF $BF $CF | sort | tr "\n" " " | sed "s/ $//")" &&
	jqs -e "[.[] | select(.type == \"node_summary\") |
		.clock_error_us > 0 and .clock_error_us < 100000 and
		(.clock_offset_us | fabs) <= 5000 + .clock_error_us] | all" &&
	cp "$TRASH/bs.json" "$TRASH/ring.json"
'

# counts of one type by a registered name, on one node
count() {
	jq -s "[.[] | select(.type == \"$1\" and .name == \"$2\" and .node == \"$3\")] | length" "$TRASH/ring.json"
}

test_expect_success 'cross-node ping-pong: exact counts on each node' '
	for i in 1 2 3; do
		set -- $CNODES_FULL
		eval "me=\${$i}"
		j=$(( i % 3 + 1 )); eval "peer=\${$j}"
		echo "ping_$i on $me, pong_$j on $peer" &&
		expect "$(count send ping_$i $me)" = $N &&
		test "$(count receive ping_$i $me)" = $((N + 1)) &&
		expect "$(count receive pong_$j $peer)" = $N &&
		expect "$(count send pong_$j $peer)" = $N || return 1
	done
'

test_expect_success 'each receive of another node'"'"'s message names its send' '
	for i in 1 2 3; do
		set -- $CNODES_FULL
		eval "me=\${$i}"
		j=$(( i % 3 + 1 )); eval "peer=\${$j}"
		ping=$(jq -rs "[.[] | select(.type == \"send\" and .name == \"ping_$i\")][0].pid" "$TRASH/ring.json")
		pong=$(jq -rs "[.[] | select(.type == \"send\" and .name == \"pong_$j\")][0].pid" "$TRASH/ring.json")
		# the ponger got N pings, each paired with ping_i on its node
		test "$(jq -s "[.[] | select(.type == \"receive\" and .name == \"pong_$j\" and .from == \"$ping\" and .from_node == \"$me\" and (.latency_us | type) == \"number\")] | length" "$TRASH/ring.json")" = $N &&
		# and the pinger got N pongs, paired back
		expect "$(jq -s "[.[] | select(.type == \"receive\" and .name == \"ping_$i\" and .from == \"$pong\" and .from_node == \"$peer\")] | length" "$TRASH/ring.json")" = $N || return 1
	done &&
	jq -se "[.[] | select(.type == \"summary\")][0].pairs.paired >= $((6 * N))" "$TRASH/ring.json" &&
	jq -se "[.[] | select(.type == \"summary\")][0].pairs.ambiguous == 0" "$TRASH/ring.json"
'

test_expect_success 'one timeline: events in time order, every pid written with its node' '
	jq -se "[.[] | select(.pid and .type != \"counts\") | .ts] | . == sort" "$TRASH/ring.json" &&
	jq -se "[.[] | select(.pid) | .pid | test(\"^<[^.<>]+@[^<>]+[.][0-9]+[.][0-9]+>$\")] | all" "$TRASH/ring.json" &&
	jq -se "[.[] | select(.pid) | (.pid | ltrimstr(\"<\") | split(\".\")[0:-2] | join(\".\")) == .node] | all" "$TRASH/ring.json"
'

test_expect_success 'all three nodes are clean after the run' '
	all_clean 3
'

test_expect_success 'a node killed mid-trace: the other two go on, the summary names it' '
	stop_ring && setup_ring &&
	cluster_start $A $B $C -d 30 &&
	wait_attached 3 &&
	set -- $CPIDS && kill -9 $3 && { wait $3 2>/dev/null; true; } &&
	sleep 1 &&
	grep "lost node \"$CF\"" "$TRASH/bs.err" &&
	# the ring through A and B still plays; pong_1 on A answers ping_3 no more
	on_node $A "bs_cluster:go(ping_1, $N)." &&
	expect "$(on_node $A "bs_cluster:wait_done(ping_1, 20000).")" = done &&
	sleep 0.5 &&
	kill -INT $BS_PID && bs_wait && test $BS_RC = 5 &&
	cat "$TRASH/bs.err" &&
	grep "lost the connection to \"$CF\"" "$TRASH/bs.err" &&
	expect "$(jqs -r "[.[] | select(.type == \"summary\")][0].lost | join(\" \")")" = "$CF" &&
	expect "$(jqs -r "[.[] | select(.type == \"node_summary\" and .node == \"$CF\")][0].ended")" = target_lost &&
	expect "$(jqs -r "[.[] | select(.type == \"node_summary\" and .node == \"$AF\")][0].ended")" = interrupted &&
	expect "$(jqs "[.[] | select(.type == \"send\" and .name == \"ping_1\")] | length")" = $N &&
	expect "$(jqs "[.[] | select(.type == \"receive\" and .name == \"pong_2\" and .from_node == \"$AF\")] | length")" = $N &&
	( NODE=$A; target_clean 3 ) && ( NODE=$B; target_clean 3 )
'

# a fresh cluster for the exit paths: C is gone
start_cluster cx 3 || exit 1
set -- $CNODES; A=$1 B=$2 C=$3
set -- $CNODES_FULL; AF=$1 BF=$2 CF=$3

test_expect_success '--cluster: one node given, its visible peers found' '
	cluster_start --cluster $A -d 1 &&
	bs_wait && test $BS_RC = 0 &&
	expect "$(jqs "[.[] | select(.type == \"summary\")][0].nodes | length")" = 3 &&
	expect "$(grep -c "attached to" "$TRASH/bs.err")" = 3 &&
	all_clean 3
'

for how in INT TERM KILL; do
	test_expect_success "SIG$how: all three nodes clean" '
		cluster_start $A $B $C -d 30 &&
		wait_attached 3 &&
		kill -$how $BS_PID && bs_wait &&
		all_clean 3
	'
done

test_expect_success 'a name registered on no node is refused, naming it' '
	cluster_start $A $B --pids no_such_name_anywhere -d 1;
	bs_wait && test $BS_RC = 6 &&
	grep "no_such_name_anywhere on any of the nodes" "$TRASH/bs.err" &&
	all_clean 1
'

test_expect_success 'a name registered on one node only: that node traces it' '
	on_node $B "register(only_on_b, spawn(fun() -> receive stop -> ok end end))." &&
	cluster_start $A $B --pids only_on_b -d 3 &&
	wait_attached 2 &&
	on_node $B "only_on_b ! hello, ok." &&
	bs_wait && test $BS_RC = 0 &&
	expect "$(jqs -r "[.[] | select(.type == \"receive\" and .name == \"only_on_b\")][0].payload")" = hello &&
	expect "$(jqs -r "[.[] | select(.type == \"receive\")][0].node")" = "$BF" &&
	all_clean 1
'

test_expect_success 'a pid <0.N.S> with several nodes is refused before attaching' '
	cluster_start $A $B --pids "<0.80.0>" -d 1;
	bs_wait && test $BS_RC = 2 &&
	grep "registered name" "$TRASH/bs.err" &&
	all_clean 1
'

start_back() {
	erl -sname "$BACK" -setcookie "$COOKIE" -noshell -noinput >/dev/null 2>&1 &
	BACK_PID=$!
	NODE_PIDS="$NODE_PIDS $BACK_PID"
	( NODE=$BACK
	  for _ in $(seq 1 100); do
		[ "$(node_eval ok.)" = ok ] && exit 0
		sleep 0.1
	  done
	  exit 1 )
}
BACK=back_$$_$RANDOM

test_expect_success '--reconnect: a node that comes back is attached again' '
	start_back &&
	cluster_start $A $BACK --reconnect -d 30 &&
	wait_attached 2 &&
	ospid=$(NODE=$BACK node_eval "list_to_integer(os:getpid()).") &&
	echo "back node: shell pid $BACK_PID, VM pid $ospid" &&
	kill -9 $ospid && { wait $BACK_PID 2>/dev/null; true; } &&
	for _ in $(seq 1 100); do grep -q "lost node" "$TRASH/bs.err" && break; sleep 0.05; done &&
	grep "lost node \"$BACK@" "$TRASH/bs.err" &&
	start_back &&
	for _ in $(seq 1 400); do grep -q "attached to .* again" "$TRASH/bs.err" && break; sleep 0.05; done &&
	grep "attached to \"$BACK@.*\" again" "$TRASH/bs.err" &&
	( NODE=$BACK; node_eval "spawn(fun() -> ok end), ok." ) &&
	sleep 0.5 &&
	kill -INT $BS_PID && bs_wait && test $BS_RC = 5 &&
	test "$(jqs -r "[.[] | select(.type == \"node_summary\" and (.node | startswith(\"$BACK@\")))][0].sessions")" = 2 &&
	jqs -e "[.[] | select(.type == \"spawn\" and (.node | startswith(\"$BACK@\")))] | length >= 1" &&
	( NODE=$BACK; target_clean 3 ) && ( NODE=$A; target_clean 3 )
'

# the node started inside the test: stop it by its pid
( NODE=$BACK; p=$(node_eval "list_to_integer(os:getpid()).") && kill "$p" ) 2>/dev/null

test_done
