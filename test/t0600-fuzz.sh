#!/bin/sh
# The decoder of everything that arrives from a target, and the reader of
# recordings, under libFuzzer with ASan and UBSan, for a bounded number of
# runs from real seeds.
. "$(dirname "$0")/lib.sh"

test_expect_success 'the fuzz target builds (clang, libFuzzer)' '
	make -s -C "$TOP" BUILD="$BUILD" "$BUILD/fuzz-decode"
'

test_expect_success '200000 runs from real messages: no crash, no sanitizer report' '
	"$TOP/scripts/fuzz-seeds" corpus &&
	expect "$(ls corpus | wc -l)" -ge 7 &&
	"$BUILD/fuzz-decode" -runs=200000 -max_len=4096 -seed=1 corpus >fuzz.log 2>&1;
	rc=$?; tail -n 3 fuzz.log; expect "$rc" -eq 0 && grep -q "Done 200000 runs" fuzz.log
'

test_expect_success 'the reader of recordings builds as a fuzz target too' '
	make -s -C "$TOP" BUILD="$BUILD" "$BUILD/fuzz-recording"
'

test_expect_success '50000 runs from every kind of recording: no crash, no sanitizer report' '
	"$TOP/scripts/fuzz-seeds" corpus reccorpus &&
	expect "$(ls reccorpus | wc -l)" -ge 5 &&
	"$BUILD/fuzz-recording" -runs=50000 -max_len=4096 -seed=1 reccorpus >recfuzz.log 2>&1;
	rc=$?; tail -n 3 recfuzz.log; expect "$rc" -eq 0 && grep -q "Done 50000 runs" recfuzz.log
'
test_done
