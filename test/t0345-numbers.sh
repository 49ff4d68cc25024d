#!/bin/sh
# Numbers and pids are checked against what the target accepts: a clear
# line and exit 2, never a wrapped value or a lost connection.  And the
# parsers of the command line under the fuzzer.
. "$(dirname "$0")/lib.sh"

start_node bsnum || exit 1

# usage ARGS...: exit 2 and one line on standard error
usage() {
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --no-config \
		-o out.json "$@" 2>err; rc=$?
	cat err; expect "$rc" -eq 2 && expect "$(wc -l <err)" -eq 1
}

test_expect_success 'seconds: no wrap, no hexadecimal, no exponent, no blanks' '
	usage --dependency-timeout 4294967.5 &&
	grep -q "dependency-timeout \"4294967.5\": expected seconds from 1 to 4294967" err &&
	usage --duration 0x10 && grep -q "expected seconds, e.g. 10 or 0.5" err &&
	usage --duration 1e3 && usage --duration inf && usage --duration nan &&
	usage --duration " 5" && usage --duration -1 && usage --interval 0.01 &&
	usage --duration 10000001
'

test_expect_success 'whole numbers: digits only' '
	usage --max-events +5 && usage --max-events " 5" && usage --rate 0x10 &&
	usage --payload-bytes 65537 && usage --workers 1025 &&
	grep -q "expected a whole number from 0 to 1024" err
'

test_expect_success 'an option that takes no value, given one' '
	usage --batch=1 && grep -q "option \"--batch\" takes no value" err &&
	! LC_ALL=C grep -q "[^ -~]" err
'

test_expect_success 'pids: the largest any target has, checked before connecting' '
	usage --pids "<0.268435456.0>" && grep -q "cannot be a pid" err &&
	usage --pids "<0.-1.0>" && usage --pids "<0.1.4294967296>" &&
	usage --follow "<0.268435456.0>"
'

REL=$(otp_release)
if [ "$REL" -ge 26 ]; then
	LARGEST="<0.268435455.4294967295>"
else
	LARGEST="<0.32767.8191>"
fi

# the largest the release can have is asked for, and the node keeps the
# connection; one past it is refused before anything is sent (the agent,
# up to learn the release, is gone before the next run: else that run
# says it waited for it, a second line)
test_expect_success "pids on an OTP $REL node: $LARGEST the largest, exit 2 past it" '
	if [ "$REL" -ge 26 ]; then
		usage --pids "<0.268435456.0>" && grep -q "cannot be a pid" err &&
		target_clean 5 && usage --pids "<0.0.4294967296>"
	else
		usage --pids "<0.32768.0>" &&
		grep -q "<0.32768.0> cannot be a pid on OTP 25: the number of a process is at most 32767, the serial at most 8191" err &&
		target_clean 5 && usage --pids "<0.0.8192>"
	fi && target_clean 3 &&
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --no-config \
		-o out.json --pids "$LARGEST" 2>err; rc=$?
	cat err; expect "$rc" -eq 6 && grep -q "no process $LARGEST" err &&
	pid=$(node_eval "pid_to_list(whereis(init)).") &&
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --no-config \
		-o out.json --pids "$(echo $pid | tr -d \")" --duration 1 2>err; rc=$?
	cat err; expect "$rc" -eq 0 && target_clean 3
'

test_expect_success 'the fuzz target for the command line builds (clang, libFuzzer)' '
	make -s -C "$TOP" BUILD="$BUILD" "$BUILD/fuzz-args"
'

test_expect_success '100000 runs over options, numbers and pids: no crash, no sanitizer report' '
	mkdir -p seeds &&
	printf "%s\0%s" --pids "<0.32767.8191>" >seeds/1 &&
	printf "%s\0%s\0%s" --duration .5 -qqq >seeds/2 &&
	printf "%s\0%s\0%s" "--batch=1" --dependency-timeout 4294967 >seeds/3 &&
	printf "%s" "<a@b.1.2>" >seeds/4 &&
	printf "%s\0%s" --pids "'"'"'it\\'"'"'s'"'"',<0.1.2>" >seeds/5 &&
	"$BUILD/fuzz-args" -runs=100000 -max_len=256 -seed=1 seeds >fuzz.log 2>&1;
	rc=$?; tail -n 3 fuzz.log; expect "$rc" -eq 0 && grep -q "Done 100000 runs" fuzz.log
'
test_done
