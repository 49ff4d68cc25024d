#!/bin/sh
# The VM's alarms as events (--alarm, :alarms, a) against processes that set
# them off (test/erl/bs_alarm.erl): a large heap collected (long_gc,
# large_heap), one long BIF call (long_schedule), a mailbox that grows
# (long_message_queue, OTP 27+), a sender to a node that does not read
# (busy_dist_port); each with the right pid.  The node's system monitor:
# left to another owner (before OTP 28, one line says who), given back
# at the end, after kill -9 too; OTP 28+ leaves it alone.
. "$(dirname "$0")/lib.sh"

mkdir -p "$TRASH/ebin" && erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_alarm.erl" || exit 1
start_cluster bsalarm 2 || exit 1
set -- $CNODES_FULL
OTHER=$2
REL=$(otp_release)
node_eval "bs_alarm:gc(), bs_alarm:sched(), bs_alarm:queue(20000), bs_alarm:flood('$OTHER'), ok." >/dev/null
pid_of() { node_eval "pid_to_list(whereis($1))." | tr -d ' \n"'; }
GC=$(pid_of bs_gc) SCHED=$(pid_of bs_sched) QUEUE=$(pid_of bs_queue) FLOOD=$(pid_of bs_flood)
say "OTP $REL: gc $GC, sched $SCHED, queue $QUEUE, flood $FLOOD"
set -- $CPIDS
OTHER_PID=$2

test_expect_success '--alarm: a bad name or value is one line' '
	expect_usage "$NODE" --batch --alarm long_gcc=1ms &&
	grep -q "unknown alarm \"long_gcc\"" err &&
	expect_usage "$NODE" --batch --alarm long_gc=fast &&
	grep -q "long_gc=fast: give a time" err
'

test_expect_success 'batch --alarm: each alarm an event of its process' '
	bs_start --counts --interval 60 -d 12 \
		--alarm long_gc=1ms,long_schedule=20ms,large_heap=8MB,long_message_queue=5000 &&
	bs_wait_attached &&
	for _ in $(seq 1 50); do grep -q "alarms on" "$TRASH/bs.err" && break; sleep 0.1; done &&
	cat "$TRASH/bs.err" && grep -q "alarms on" "$TRASH/bs.err" &&
	expect "$(node_eval "case erlang:system_monitor() of {P, _} -> P =:= whereis(beamscope_agent); _ -> false end.")" = \
		"$([ "$REL" -ge 28 ] && echo false || echo true)" &&
	node_eval "bs_gc ! go, bs_sched ! go, bs_queue ! go, ok." >/dev/null &&
	kill -STOP "$OTHER_PID" && node_eval "bs_flood ! go, ok." >/dev/null &&
	sleep 3 && kill -CONT "$OTHER_PID" && bs_wait &&
	expect "$BS_RC" -eq 0 &&
	jqs -c ".[] | select(.type == \"alarm\")" | head -20 &&
	jqs -e "any(.[]; .type == \"alarm\" and .alarm == \"long_gc\" and .pid == \"$GC\" and .elapsed_us >= 1000 and .heap_bytes > 8000000)" &&
	jqs -e "any(.[]; .type == \"alarm\" and .alarm == \"large_heap\" and .pid == \"$GC\" and .heap_bytes > 8000000)" &&
	jqs -e "any(.[]; .type == \"alarm\" and .alarm == \"long_schedule\" and .pid == \"$SCHED\" and .elapsed_us >= 20000)" &&
	jqs -e "any(.[]; .type == \"alarm\" and .alarm == \"busy_dist_port\" and .pid == \"$FLOOD\" and .to_node == \"$OTHER\" and (.port | startswith(\"#Port<\")))" &&
	if [ "$REL" -ge 27 ]; then
		jqs -e "any(.[]; .type == \"alarm\" and .alarm == \"long_message_queue\" and .pid == \"$QUEUE\" and .info == \"long\" and .message_queue_len >= 5000)"
	else
		grep -q "not on this release: long_message_queue" "$TRASH/bs.err"
	fi &&
	cp "$TRASH/bs.json" "$TRASH/rec.json" &&
	target_clean
'

test_expect_success 'busy_port: its process and port; a cookie in the name of its port never shown' '
	node_eval "bs_alarm:busy(\"$COOKIE\"), ok." >/dev/null &&
	BUSY=$(pid_of bs_busy_port) &&
	bs_start --counts --interval 60 -d 4 --alarm on && bs_wait_attached &&
	for _ in $(seq 1 50); do grep -q "alarms on" "$TRASH/bs.err" && break; sleep 0.1; done &&
	node_eval "bs_busy_port ! go, ok." >/dev/null && bs_wait &&
	expect "$BS_RC" -eq 0 &&
	jqs -c ".[] | select(.type == \"alarm\" and .alarm == \"busy_port\")" | head -3 &&
	jqs -e "any(.[]; .type == \"alarm\" and .alarm == \"busy_port\" and .pid == \"$BUSY\" and (.port | startswith(\"#Port<\")) and .info == \"<redacted: it holds a cookie>\")" &&
	! grep -q "$COOKIE" "$TRASH/bs.json" "$TRASH/bs.err" &&
	target_clean
'

test_expect_success 'a recording keeps the alarms: --open writes them again' '
	"$BEAMSCOPE" --open "$TRASH/rec.json" --batch -o "$TRASH/again.json" 2>err &&
	jq -c "select(.type == \"alarm\")" "$TRASH/rec.json" >a.txt &&
	jq -c "select(.type == \"alarm\")" "$TRASH/again.json" >b.txt &&
	expect "$(wc -l <b.txt)" -ge 4 && diff a.txt b.txt &&
	printf "%s\n" "{\"type\":\"alarm\",\"ts\":1,\"node\":\"x@y\",\"pid\":\"<0.1.0>\",\"alarm\":\"forged\"}" \
		"{\"type\":\"alarm\",\"ts\":1,\"node\":\"x@y\",\"pid\":\"<0.1.0>\",\"alarm\":\"long_gc\",\"heap_bytes\":\"x\"}" \
		>>"$TRASH/rec.json" &&
	"$BEAMSCOPE" --open "$TRASH/rec.json" --batch -o "$TRASH/again2.json" 2>err;
	cat err && grep -q "2 malformed" err &&
	expect "$(jq -c "select(.type == \"alarm\")" "$TRASH/again2.json" | wc -l)" -eq "$(wc -l <a.txt)"
'

test_expect_success 'the view: the ALARM column, the list of alarms, the log, :alarms off' '
	ui_start --alarm long_gc=1ms,large_heap=8MB && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_wait " 0 alarms( |$)" 5 &&
	node_eval "bs_gc ! go, ok." >/dev/null &&
	ui_wait " [1-9][0-9]* alarms?( |$)" 10 &&
	ui_keys ":filter bs_gc" Enter && ui_wait "^ *PID .* ALARM " &&
	ui_wait "^$GC .*bs_gc .* ![1-9][0-9]* " &&
	ui_keys a && ui_wait "^TIME +PID +NAME +ALARM" &&
	ui_wait "$GC +bs_gc +(large_heap: its heap is|long_gc: a garbage collection took [0-9]+ ms \\(heap)" &&
	ui_keys G Enter && ui_wait "ALARM +(long_gc|large_heap): " &&
	ui_keys Escape Escape && ui_wait "^ *PID .* ALARM " &&
	ui_keys Space s && ui_wait "ALARM (long_gc \\([0-9]+ ms\\)|large_heap)" &&
	ui_screen | grep -q "!" && ui_keys s && ui_wait "^ *PID .* ALARM " &&
	ui_keys ":alarms off" Enter && ui_wait "alarms off" &&
	for _ in $(seq 1 30); do
		[ "$(node_eval "erlang:system_monitor()." | tr -d " \n")" = undefined ] && break; sleep 0.1
	done &&
	expect "$(node_eval "erlang:system_monitor()." | tr -d " \n")" = undefined &&
	ui_keys ":alarms long_schedule=10ms" Enter && ui_wait "alarms: long_gc=100ms,long_schedule=10ms" &&
	ui_wait "^TIME +PID" && ui_keys Q && expect "$(ui_exit_status 10)" = 0 &&
	target_clean
'

test_expect_success 'someone else holds the system monitor: left to them (before OTP 28), untouched (28+)' '
	node_eval "bs_alarm:hold(), ok." >/dev/null &&
	HOLDER=$(pid_of bs_holder) &&
	SYSTEM_MONITOR=$(node_eval "erlang:system_monitor()." | tr -d " \n") &&
	say "held: $SYSTEM_MONITOR" &&
	bs_start --counts --interval 60 -d 3 --alarm on && bs_wait_attached && bs_wait &&
	cat "$TRASH/bs.err" && expect "$BS_RC" -eq 0 &&
	if [ "$REL" -ge 28 ]; then
		grep -q "alarms on .* (in a trace session of beamscope" "$TRASH/bs.err"
	else
		grep -q "alarms are off on \"$NODE@[^\"]*\": its system monitor is held by $HOLDER (bs_holder)" "$TRASH/bs.err"
	fi &&
	target_clean
'

test_expect_success 'kill -9 of beamscope: the system monitor as it was' '
	node_eval "erlang:system_monitor(undefined), ok." >/dev/null &&
	SYSTEM_MONITOR=undefined &&
	bs_start --counts --interval 60 -d 60 --alarm on && bs_wait_attached &&
	for _ in $(seq 1 50); do grep -q "alarms on" "$TRASH/bs.err" && break; sleep 0.1; done &&
	grep -q "alarms on" "$TRASH/bs.err" &&
	kill -9 "$BS_PID" && bs_wait;
	target_clean 10
'

test_done
