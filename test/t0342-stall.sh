#!/bin/sh
# A reader that stops reading (a FIFO whose reader is stuck) never makes
# beamscope deaf: SIGTERM, SIGINT and --duration still end the run, the
# output is given up with one line, and the target is left clean.
. "$(dirname "$0")/lib.sh"

start_node bsstall || exit 1

# processes a test starts in its subshell: stopped when the test file exits
extra_pid() {
	echo "$1" >>"$TRASH/extra.pids"
}
trap 'for p in $(cat "$TRASH/extra.pids" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done; cleanup' EXIT

# about a thousand messages a second for a minute: the pipe fills in a moment
node_eval "P = spawn(fun Sink() -> receive _ -> Sink() end end), register(bs_sink, P), spawn(fun() -> [begin P ! {tick, I}, timer:sleep(1) end || I <- lists:seq(1, 60000)] end), ok." >/dev/null

# stalled: a FIFO opened by a reader that never reads
stalled_fifo() {
	rm -f fifo && mkfifo fifo &&
	{ sleep 600 <fifo & } && READER=$! && extra_pid $READER
}

# run_stalled ARGS...: beamscope writing to the stalled FIFO
run_stalled() {
	stalled_fifo
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" -o fifo \
		--pids bs_sink "$@" 2>"$TRASH/bs.err" &
	BS_PID=$!
}

# ended_within SECONDS: beamscope exits by then (else it is killed); BS_RC
ended_within() {
	for _ in $(seq 1 $(( $1 * 10 ))); do
		kill -0 "$BS_PID" 2>/dev/null || { wait "$BS_PID"; BS_RC=$?; return 0; }
		sleep 0.1
	done
	echo "still running after $1 s:"; cat "$TRASH/bs.err"
	kill -9 "$BS_PID"; wait "$BS_PID"
	return 1
}

test_expect_success 'SIGTERM ends the run while the reader sleeps' '
	run_stalled --duration 0 && bs_wait_attached && sleep 2 &&
	kill -TERM "$BS_PID" && ended_within 12 && cat "$TRASH/bs.err" &&
	expect "$BS_RC" -eq 1 &&
	grep -q "gave up writing to \"fifo\": its reader stopped reading, and [0-9]* bytes were left unwritten" "$TRASH/bs.err" &&
	target_clean 3
'

test_expect_success '--duration is kept while the reader sleeps' '
	run_stalled --duration 2 && bs_wait_attached &&
	ended_within 15 && cat "$TRASH/bs.err" && expect "$BS_RC" -eq 1 &&
	grep -q "gave up writing" "$TRASH/bs.err" && target_clean 3
'

test_expect_success 'SIGINT twice: the second one gives the output up at once' '
	run_stalled --duration 0 && bs_wait_attached && sleep 2 &&
	kill -INT "$BS_PID" && sleep 0.5 && kill -INT "$BS_PID" &&
	ended_within 8 && cat "$TRASH/bs.err" && expect "$BS_RC" -eq 1 &&
	grep -q "gave up writing" "$TRASH/bs.err" && target_clean 3
'

test_expect_success 'a reader that wakes up gets whole lines, and the summary' '
	stalled_fifo && kill "$READER" && rm -f fifo && mkfifo fifo &&
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" -o fifo \
		--pids bs_sink --duration 2 2>"$TRASH/bs.err" & BS_PID=$!
	{ sleep 3; cat fifo >slow.json; } &
	ended_within 15 && wait && cat "$TRASH/bs.err" && expect "$BS_RC" -eq 0 &&
	jq -s -e ".[-1].type == \"summary\" and (.[:-1] | length > 100)" slow.json
'
test_done
