#!/bin/sh
# Bad input against real nodes: each gets one clear line and its exit code,
# and the target is left untouched.
. "$(dirname "$0")/lib.sh"

start_node bserr || exit 1

test_expect_success 'unknown node: exit 3, names what epmd knows' '
	"$BEAMSCOPE" nosuchnode_$$ --batch --cookie-file "$COOKIE_FILE" 2>err; rc=$?
	cat err; expect "$rc" -eq 3 && expect "$(wc -l <err)" -eq 1 &&
	grep -q "node \"nosuchnode_$$@.*\" not found; epmd on .* knows: .*$NODE" err
'

test_expect_success 'wrong cookie: exit 4, says whose cookie, suggests --cookie-file' '
	echo wrongcookie >bad && chmod 400 bad &&
	"$BEAMSCOPE" "$NODE" --batch --cookie-file bad 2>err; rc=$?
	cat err; expect "$rc" -eq 4 && expect "$(wc -l <err)" -eq 1 &&
	grep -q "refused the cookie from \"bad\"; pass the target.s with --cookie-file FILE" err &&
	grep -q "erl keeps it in ~/.erlang.cookie" err &&
	! grep -q wrongcookie err && target_clean 0
'

test_expect_success 'wrong cookie in ~/.erlang.cookie: the message names that file' '
	echo wrongcookie >"$HOME/.erlang.cookie" && chmod 400 "$HOME/.erlang.cookie" &&
	"$BEAMSCOPE" "$NODE" --batch 2>err; rc=$?
	rm -f "$HOME/.erlang.cookie"
	cat err; expect "$rc" -eq 4 && grep -q "refused the cookie from \"$HOME/.erlang.cookie\"" err
'

test_expect_success 'no node: lists the nodes epmd knows, this one too, and how to attach' '
	"$BEAMSCOPE" >out 2>err; rc=$?
	cat err; expect "$rc" -eq 2 && [ ! -s out ] &&
	head -n 1 err | grep -q "^beamscope: no node given; epmd on \".*\" knows:\$" &&
	grep -qx "  $NODE" err &&
	tail -n 1 err | grep -q "^attach with: beamscope [^ ]"
'

test_expect_success 'no node, and epmd knows none: says how to start one' '
	port=$(( 20000 + $(od -An -N2 -tu2 /dev/urandom) % 20000 ))
	epmd -port "$port" & epmd_pid=$!
	for _ in $(seq 1 50); do ERL_EPMD_PORT=$port "$BEAMSCOPE" --list >/dev/null 2>&1 && break; sleep 0.1; done
	ERL_EPMD_PORT=$port "$BEAMSCOPE" 2>err; rc=$?
	kill "$epmd_pid"; wait "$epmd_pid"
	cat err; expect "$rc" -eq 2 && expect "$(wc -l <err)" -eq 1 &&
	grep -q "knows no nodes; start one (erl -sname NAME), then run beamscope NAME" err
'

test_expect_success '--list prints each name alone on a line' '
	"$BEAMSCOPE" --list >names && cat names &&
	grep -qx "$NODE" names && ! grep -qv "^[A-Za-z0-9_-]*\$" names
'

test_expect_success 'unknown registered name: exit 6, target untouched' '
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --pids no_such_name 2>err; rc=$?
	cat err; expect "$rc" -eq 6 && grep -q "no process is registered as no_such_name" err &&
	target_clean 2
'

test_expect_success 'dead pid: exit 6' '
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --pids "<0.32767.0>" 2>err; rc=$?
	cat err; expect "$rc" -eq 6 && grep -q "no process <0.32767.0>" err && target_clean 2
'

test_expect_success 'a process traced by another tracer: exit 6, left alone (OTP 25-26); traced beside it (27+)' '
	node_eval "bs_work:spinner(), T = spawn(fun bs_work:idle/0), register(bs_tr, T), erlang:trace(whereis(bs_spinner), true, [send, {tracer, T}])." &&
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --pids bs_spinner --duration 1 2>err; rc=$?
	cat err
	if sessions_here; then
		expect "$rc" -eq 0 && grep -q "tracing .* of the chosen processes (1)" err
	else
		expect "$rc" -eq 6 && grep -q "already traced by another tracer .*--take-over" err
	fi &&
	expect "$(node_eval "erlang:trace_info(whereis(bs_spinner), tracer) == {tracer, whereis(bs_tr)}.")" = true &&
	node_eval "erlang:trace(whereis(bs_spinner), false, [all])." && target_clean 2
'

test_expect_success 'a second beamscope on the same node is refused' '
	bs_start --duration 0 && bs_wait_attached &&
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" 2>err2; rc=$?
	cat err2; expect "$rc" -eq 6 && grep -q "already being traced by another beamscope" err2 &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e ".[-1].type == \"summary\"" && target_clean 2
'

test_expect_success 'target killed mid-trace: exit 5, events kept, summary says target_lost' '
	bs_start --duration 0 --max-events 0 && bs_wait_attached &&
	node_eval "bs_work:sink(200, 0), ok." && sleep 0.5 &&
	kill -KILL "$NODE_PID" && bs_wait &&
	echo "exit $BS_RC" && expect "$BS_RC" -eq 5 &&
	jqs -e ".[-1].ended == \"target_lost\" and .[-1].events >= 400" &&
	jq -c . "$TRASH/bs.json" >/dev/null &&
	grep -q "lost the connection" "$TRASH/bs.err"
'
test_done
