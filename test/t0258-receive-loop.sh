#!/bin/sh
# Every receive, run after run: a batch trace of all processes ships every
# receive of a workload exactly, every time, with the workload's processes
# made after the attach and before it, and between runs whose receive
# pattern rejects every message (timeouts only).  On OTP 29 a run once
# shipped no receive at all (0 of 777 at the sink, while its sends and
# spawns were exact); a run that did so here fails, whichever run it is.
# The receive pattern beamscope sets is read back, and watched: one that
# someone else replaces mid-run (legacy session) is noticed and said.
. "$(dirname "$0")/lib.sh"

start_node bsloop || exit 1

RUNS=${RECEIVE_RUNS:-10}
N=777
K=13
REL=$(otp_release)
Q="'"
say "OTP $REL, $RUNS runs a test"

# count FILTER: events of the last run the jq FILTER selects
count() {
	jqs "[.[] | select($1)] | length"
}

# one_run before|after: a run around bs_work's sink, made before the
# attach (it then receives {go, ...}, N messages and stop) or after it (N
# messages and stop); every receive, send and spawn of it must be there
one_run() {
	if [ "$1" = before ]; then
		sink=$(node_eval "bs_work:sink_ready()." | tr -d '"') &&
		bs_start --duration 0 ${LEGACY:-} && bs_wait_attached &&
		node_eval "bs_work:sink_run($N, $K)." >/dev/null && want=$((N + 2))
	else
		bs_start --duration 0 ${LEGACY:-} && bs_wait_attached &&
		sink=$(node_eval "{S, _} = bs_work:sink($N, $K), pid_to_list(S)." | tr -d '"') &&
		want=$((N + 1))
	fi || return 1
	sleep 0.3 && kill -INT "$BS_PID" && bs_wait || return 1
	r=$(count ".pid == \"$sink\" and .type == \"receive\"")
	m=$(count ".type == \"send\" and (.to == \"$sink\" or .to == \"bs_sink\") and (.payload | startswith(\"{msg,\"))")
	sp=$(count ".pid == \"$sink\" and .type == \"spawn\"")
	d=$(jqs ".[-1].dropped")
	echo "run $i ($1): sink receives $r of $want, sends to it $m of $N, spawns $sp of $K, dropped $d"
	expect "$BS_RC" -eq 0 && expect "$r" -eq "$want" && expect "$m" -eq $N &&
		expect "$sp" -eq $K && expect "$d" -eq 0 && target_clean 2
}

runs() {
	i=0
	while [ $i -lt "$RUNS" ]; do
		i=$((i + 1))
		one_run "$1" || return 1
	done
}

test_expect_success "$RUNS runs, the sink made after the attach: every receive every time" '
	runs after
'

test_expect_success "$RUNS runs, the sink made before the attach: every receive every time" '
	runs before
'

test_expect_success "$RUNS runs, each after a run that traced timeouts only" '
	i=0
	while [ $i -lt "$RUNS" ]; do
		i=$((i + 1))
		bs_start --events timeout,spawn --duration 0.5 && bs_wait && expect "$BS_RC" -eq 0 &&
		target_clean 2 && one_run after || exit 1
	done
'

# the legacy session, where the report came from, on the releases that
# have sessions too (there --legacy asks for it)
if [ "$REL" -ge 27 ]; then
	test_expect_success "$RUNS runs in the legacy session (--legacy): every receive every time" '
		LEGACY=--legacy && runs after
	'
fi

test_expect_success 'the receive pattern replaced by someone else mid-run (legacy session): said' '
	if [ "$REL" -ge 27 ]; then legacy=--legacy; else legacy=; fi
	bs_start --duration 0 $legacy && bs_wait_attached &&
	node_eval "erlang:trace_pattern(${Q}receive$Q, true, [])." >/dev/null &&
	sleep 2.5 && kill -INT "$BS_PID" && bs_wait && cat "$TRASH/bs.err" &&
	grep -q "the receive trace pattern beamscope set on .* was cleared by someone else" "$TRASH/bs.err" &&
	jqs -e "(.[-1].complete | not) and (.[-1].cleared | index(\"receive\"))" &&
	target_clean 2
'
test_done
