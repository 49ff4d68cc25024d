#!/bin/sh
# scripts/soak, briefly: a steady 100 000 events/s, memory sampled over
# time, a verdict per series, everything delivered.
. "$(dirname "$0")/lib.sh"

test_expect_success 'a short soak: samples, verdicts, all events delivered' '
	BEAMSCOPE="$BEAMSCOPE" SOAK_SECS=10 SOAK_EVERY=2 "$TOP/scripts/soak" >soak.out 2>soak.err; rc=$?
	cat soak.err soak.out; expect "$rc" -eq 0 &&
	expect "$(grep -cE "^ +[0-9]+ +[0-9.]+ +[0-9.]+\$" soak.out)" -eq 5 &&
	grep -q "^PASS   beamscope RSS: " soak.out && grep -q "^PASS   target memory: " soak.out &&
	grep "^{" soak.out | jq -e ".ended == \"interrupted\" and .events > 500000 and .delivered == .events + 0 and .dropped == 0"
'
test_done
