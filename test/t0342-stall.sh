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

# about ten thousand messages a second for a minute: beamscope asks for a
# 1 MiB pipe, which fills in well under a second
node_eval "P = spawn(fun Sink() -> receive _ -> Sink() end end), register(bs_sink, P), spawn(fun() -> [begin [P ! {tick, I} || _ <- lists:seq(1, 10)], timer:sleep(1) end || I <- lists:seq(1, 60000)] end), ok." >/dev/null

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
# A pipe is written through beamscope's own non-blocking opening of it,
# asked to grow to 1 MiB: the reader sees the size; the opening beamscope
# was given stays blocking (fdinfo flags without O_NONBLOCK, 04000); a
# reader that pauses loses no line: every event the summary counts as
# delivered is a line.
test_expect_success 'a pipe: grown to 1 MiB, written without blocking, every line read' '
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" \
		--pids bs_sink --duration 3 2>"$TRASH/bs.err" |
		python3 -c "import fcntl, sys, time
for _ in range(100):
    if fcntl.fcntl(0, 1032) == 1048576:
        break
    time.sleep(0.1)
time.sleep(0.5)
open(\"pipesz\", \"w\").write(str(fcntl.fcntl(0, 1032)))
sys.stdout.buffer.write(sys.stdin.buffer.read())" >pipe.json &
	sleep 0.5 && BS_PID=$(pgrep -f "beamscope.*$NODE.*duration 3" | head -1) &&
	flags=$(awk "/^flags:/ { print \$2 }" /proc/$BS_PID/fdinfo/1) &&
	wait && cat "$TRASH/bs.err" &&
	expect "$(cat pipesz)" = 1048576 &&
	expect "$(( 0$flags & 04000 ))" -eq 0 &&
	expect "$(jq -s "[.[] | select(.type == \"send\" or .type == \"receive\")] | length" pipe.json)" -eq \
		"$(jq -s ".[-1].delivered" pipe.json)" &&
	expect "$(jq -s ".[-1].delivered > 1000" pipe.json)" = true
'
# The polled way (a socket: MSG_DONTWAIT, no opening of its own): a reader
# that never reads costs a flush its wait only while writes go through,
# so SIGTERM still ends the run under the flood.  Before, each flush waited
# 100 ms for room that never came, the loop read a batch or two a second,
# and the agent's answers lay buried under the batches.
test_expect_success 'a socket whose reader stopped: SIGTERM ends the run' '
	python3 -c "import os, signal, socket, subprocess, sys, time
a, b = socket.socketpair()
p = subprocess.Popen(sys.argv[1:], stdout=a, stderr=open(\"sock.err\", \"w\"))
a.close()
time.sleep(4)
p.send_signal(signal.SIGTERM)
try:
    rc = p.wait(12)
except subprocess.TimeoutExpired:
    p.kill()
    rc = \"still running 12 s after SIGTERM\"
open(\"sock.rc\", \"w\").write(str(rc))" \
		"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" \
		--pids bs_sink --duration 0 &&
	cat sock.err && expect "$(cat sock.rc)" = 1 &&
	grep -q "gave up writing" sock.err && target_clean 3
'
test_done
