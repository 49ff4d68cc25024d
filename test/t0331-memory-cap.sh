#!/bin/sh
# A session's memory on the target is capped (an eighth of the target's
# memory, at most 1 GiB): options that would take more are refused before
# anything is allocated, saying what and why; the target VM neither aborts
# nor grows.
. "$(dirname "$0")/lib.sh"

start_node bsmem || exit 1

rss_kb() {
	awk '/^VmRSS/ { print $2 }' "/proc/$NODE_PID/status"
}

# refused ARGS...: the run ends with exit 6 and one line naming the sizes
refused() {
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --duration 1 \
		-o out.json "$@" 2>err
	rc=$?
	cat err
	expect "$rc" -eq 6 && expect "$(wc -l <err)" -eq 1 &&
	grep -qE "^beamscope: the session would take [0-9.]+ GiB on \"$NODE_FULL\", more than beamscope takes there \(1[.]0 GiB: an eighth of its [0-9.]+ GiB, at most 1 GiB\); nothing was traced; lower --workers or --high-water\$" err
}

test_expect_success 'the beam process is the node' '
	grep -q beam "/proc/$NODE_PID/comm" && [ -n "$(rss_kb)" ]
'

test_expect_success '--workers 1024 --high-water 10000000: refused, the target lives on' '
	refused --workers 1024 --high-water 10000000 &&
	grep -q "would take 64[.][0-9] GiB" err &&
	expect "$(node_eval "ok.")" = ok && kill -0 "$NODE_PID" &&
	[ ! -e "$TRASH/erl_crash.dump" ] && target_clean 2
'

test_expect_success '--workers 32 --high-water 10000000: refused, the target does not grow' '
	before=$(rss_kb) && refused --workers 32 --high-water 10000000 &&
	after=$(rss_kb) && echo "VmRSS $before -> $after kB" &&
	grep -q "would take 2[.]0 GiB" err &&
	[ $((after - before)) -lt 51200 ] && target_clean 2
'

test_expect_success 'under the cap: a large ring works, and costs only what it holds' '
	before=$(rss_kb) &&
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --duration 1 \
		--workers 8 --high-water 1000000 -o big.json 2>err; rc=$?
	cat err; after=$(rss_kb); echo "VmRSS $before -> $after kB"
	expect "$rc" -eq 0 && jq -s -e ".[-1].type == \"summary\" and (.[-1].workers | length) == 8" big.json &&
	[ $((after - before)) -lt 102400 ] && target_clean 2
'

test_expect_success 'the cap is in the man page' '
	grep -q "an eighth of the target" "$TOP/man/beamscope.1"
'
test_done
