#!/bin/sh
# Limits enforced in the tracer itself, before anything is copied: events,
# rate (stop or shed), with exact counts; the target ends clean.
. "$(dirname "$0")/lib.sh"

start_node bslimit || exit 1
node_eval "bs_work:spinner()." >/dev/null

test_expect_success '--max-events: the target stops at exactly N' '
	bs_start --max-events 25 --duration 0 && bs_wait_attached &&
	node_eval "bs_work:sink(1000, 0), ok." >/dev/null &&
	bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e ".[-1] | .ended == \"max_events\" and .events == 25 and .over_limit == 0 and
		.delivered - .filtered == 25 and .dropped == 0" &&
	target_clean 2
'

test_expect_success '--rate with --on-limit shed: delivered + shed = produced' '
	bs_start --pids bs_spinner --events receive --rate 100 --on-limit shed \
		--duration 0 --max-events 0 && bs_wait_attached &&
	node_eval "[bs_spinner ! {n, I} || I <- lists:seq(1, 1000)], ok." >/dev/null &&
	sleep 0.5 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e ".[-1] | .ended == \"interrupted\" and .shed > 0 and
		.delivered + .shed + .dropped == 1000 and .delivered >= 100 and .delivered <= 110" &&
	target_clean 2
'

test_expect_success '--rate stops tracing by itself when exceeded (default)' '
	bs_start --pids bs_spinner --events receive --rate 100 --duration 0 --max-events 0 &&
	bs_wait_attached &&
	node_eval "[bs_spinner ! {n, I} || I <- lists:seq(1, 1000)], ok." >/dev/null &&
	bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -c ".[-1] | {ended, events, delivered, shed, dropped, filtered}" &&
	jqs -e ".[-1] | .ended == \"rate\" and .events >= 100 and .events <= 110 and .shed == 0" &&
	target_clean 2
'

test_expect_success 'bad --on-limit is refused' '
	"$BEAMSCOPE" x --batch --on-limit later 2>err; [ $? -eq 2 ] && grep -q "stop or shed" err
'
test_done
