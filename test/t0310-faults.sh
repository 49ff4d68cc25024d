#!/bin/sh
# Faults around the run: epmd gone, cookie files that cannot be used, the
# cookie kept out of sight, and a disk that fills up under -o FILE.
. "$(dirname "$0")/lib.sh"

start_node bsfault || exit 1

free_port() {
	echo $(( 20000 + $(od -An -N2 -tu2 /dev/urandom) % 20000 ))
}

test_expect_success 'no epmd: exit 3, one line that says what to start' '
	port=$(free_port)
	ERL_EPMD_PORT=$port "$BEAMSCOPE" somenode --batch --cookie-file "$COOKIE_FILE" 2>err; rc=$?
	cat err; expect "$rc" -eq 3 && expect "$(wc -l <err)" -eq 1 &&
	grep -q "cannot reach epmd on \".*\" (port $port): .*; is an Erlang node running there? start one with .erl -sname NAME." err
'

test_expect_success 'no epmd: --list and no node say the same, exit 3 and 2' '
	port=$(free_port)
	ERL_EPMD_PORT=$port "$BEAMSCOPE" --list >out 2>err; rc=$?
	cat err; expect "$rc" -eq 3 && [ ! -s out ] && grep -q "cannot reach epmd" err &&
	ERL_EPMD_PORT=$port "$BEAMSCOPE" 2>err; rc=$?
	cat err; expect "$rc" -eq 2 && grep -q "^beamscope: no node given, and cannot reach epmd" err
'

test_expect_success 'cookie file missing: exit 2, says where erl keeps it' '
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$TRASH/none" 2>err; rc=$?
	cat err; expect "$rc" -eq 2 && expect "$(wc -l <err)" -eq 1 &&
	grep -q "cannot read cookie file \".*/none\": No such file or directory; pass the target.s with --cookie-file FILE (erl keeps it in ~/.erlang.cookie" err
'

test_expect_success 'cookie file that is a directory, or empty: exit 2, says so' '
	mkdir -p cdir && "$BEAMSCOPE" "$NODE" --batch --cookie-file cdir 2>err; rc=$?
	cat err; expect "$rc" -eq 2 && grep -q "cookie file \"cdir\" is not a file" err &&
	: >empty && chmod 400 empty &&
	"$BEAMSCOPE" "$NODE" --batch --cookie-file empty 2>err; rc=$?
	cat err; expect "$rc" -eq 2 && grep -q "cookie file \"empty\" is empty" err
'

test_expect_success 'a cookie file others can read: the warning erl gives, and the run goes on' '
	cp "$COOKIE_FILE" open && chmod 644 open &&
	"$BEAMSCOPE" "$NODE" --batch --cookie-file open --duration 1 -o open.json 2>err; rc=$?
	cat err; expect "$rc" -eq 0 &&
	grep -q "cookie file \"open\" is readable by others; erl insists on .chmod 400 open." err &&
	jq -s -e ".[-1].type == \"summary\"" open.json && target_clean 2
'

test_expect_success '--cookie: blanked in /proc/PID/cmdline once read, never in the output' '
	cookie=$(cat "$COOKIE_FILE")
	"$BEAMSCOPE" "$NODE" --batch --cookie "$cookie" --duration 3 -o c.json 2>err & pid=$!
	for _ in $(seq 1 50); do grep -q "attached to" err 2>/dev/null && break; sleep 0.1; done
	tr "\0" " " </proc/$pid/cmdline >cmdline; wait $pid; rc=$?
	cat cmdline; echo; expect "$rc" -eq 0 && grep -q "attached to" err &&
	! grep -q "$cookie" cmdline && grep -q -- "--cookie xxxxxxxx" cmdline &&
	! grep -q "$cookie" err && ! grep -q "$cookie" c.json &&
	jq -s -e ".[-1].type == \"summary\"" c.json && target_clean 2
'

test_expect_success 'disk full under -o FILE: one clear line, whole lines kept, target clean' '
	mkdir -p small && mount -t tmpfs -o size=256k tmpfs small &&
	{
		node_eval "spawn(fun() -> bs_work:flood(4, 8) end), ok." >/dev/null &&
		"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --duration 0 --max-events 0 \
			-o small/out.json 2>err; rc=$?
		cat err; ls -l small
		ok=true
		expect "$rc" -eq 1 || ok=false
		expect "$(grep -c "" err)" -eq 2 || ok=false
		grep -q "^beamscope: cannot write to \"small/out.json\": No space left on device; the [0-9]* bytes written so far are whole lines; make room or choose another -o FILE\$" err || ok=false
		[ -s small/out.json ] && expect "$(tail -c 1 small/out.json | od -An -c | tr -d " ")" = "\\n" || ok=false
		jq -c . small/out.json >/dev/null || ok=false
		expect "$(wc -c <small/out.json)" -eq "$(sed -n "s/.*the \([0-9]*\) bytes.*/\1/p" err)" || ok=false
		umount small
		$ok
	} && target_clean 2
'

test_expect_success 'disk full on :export: one clear line, no half file left' '
	mkdir -p tiny && mount -t tmpfs -o size=64k tmpfs tiny &&
	{
		dd if=/dev/zero of=tiny/filler bs=1k 2>/dev/null
		ok=true
		ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
		ui_keys ":export $TRASH/tiny/view.json" Enter &&
		ui_wait "cannot write \".*tiny/view.json\": No space left on device; nothing was wri" || ok=false
		ls -a tiny; expect "$(ls tiny)" = filler || ok=false
		ui_keys Q && expect "$(ui_exit_status 5)" = 0 || ok=false
		umount tiny
		$ok
	} && target_clean 2
'
test_done
