#!/bin/sh
# Command line: help, version, and bad arguments that never reach a node.
. "$(dirname "$0")/lib.sh"

test_expect_success '--help lists every option and exits 0' '
	"$BEAMSCOPE" --help >help.txt &&
	for o in batch output events pids duration max-events payload-bytes \
		cookie-file cookie longnames list workers high-water \
		dependency-timeout quiet help version; do
		grep -q -- "--$o" help.txt || { echo "missing --$o"; exit 1; }
	done
'

test_expect_success '--version names the OTP releases' '
	"$BEAMSCOPE" --version >v && cat v &&
	grep -E "^beamscope [0-9]+[.][0-9]+[.][0-9]+ \(built against OTP [0-9]+; targets need OTP [0-9]+ or newer\)$" v &&
	version=$(sed -n "s/^VERSION := //p" "$TOP/Makefile") &&
	grep -q "^beamscope $version (built against OTP $OTP_RELEASE;" v &&
	min=$(sed -n "s/^#define AGENT_MIN_OTP \([0-9]*\).*/\1/p" "$TOP/src/wire/agent.h") &&
	grep -q "targets need OTP $min or newer" v
'


test_expect_success 'unknown option: exit 2, one line' '
	expect_usage --frobnicate demo && grep -q "unknown option \"--frobnicate\"" err
'
test_expect_success 'unknown event kind is named' '
	expect_usage demo --batch --events send,sned && grep -q "\"sned\"" err
'
test_expect_success 'bad --pids is explained' '
	expect_usage demo --batch --pids "<0.12>" && grep -q "<0.123.0>" err
'
test_expect_success 'bad --duration' '
	expect_usage demo --batch --duration soon && grep -q "seconds" err
'
test_expect_success 'bad node name' '
	expect_usage "bad name" --batch && grep -q "bad node name" err
'
test_expect_success 'missing cookie file is a clear error' '
	expect_usage demo --batch --cookie-file /nonexistent/cookie &&
	grep -q "cannot read cookie file \"/nonexistent/cookie\"" err
'
test_expect_success 'no cookie anywhere says what to do' '
	expect_usage demo --batch && grep -q -- "--cookie-file" err
'
test_expect_success 'no terminal and no such node: the node is said first' '
	echo c >c2 && chmod 400 c2 &&
	"$BEAMSCOPE" nosuch_$$ --cookie-file c2 </dev/null 2>err; rc=$?
	cat err; expect "$rc" -eq 3 && grep -qE "not found|cannot reach epmd" err && ! grep -q terminal err
'
test_expect_success 'dead epmd: exit 3 with advice' '
	echo c >c && chmod 400 c &&
	ERL_EPMD_PORT=1 "$BEAMSCOPE" demo --batch --cookie-file c 2>err; rc=$?
	cat err; expect "$rc" -eq 3 && grep -q "cannot reach epmd" err && expect "$(wc -l <err)" -eq 1
'
test_expect_success 'no node and no epmd: one line, exit 2' '
	ERL_EPMD_PORT=1 "$BEAMSCOPE" >out 2>err; rc=$?
	cat err; expect "$rc" -eq 2 && [ ! -s out ] && expect "$(wc -l <err)" -eq 1 &&
	grep -q "^beamscope: no node given, and cannot reach epmd" err &&
	grep -q "erl -sname NAME" err
'
test_expect_success 'unresolvable host: exit 3' '
	echo c >c && chmod 400 c &&
	"$BEAMSCOPE" demo@no-such-host.invalid --batch --cookie-file c 2>err; rc=$?
	cat err; expect "$rc" -eq 3 && grep -q "cannot resolve host" err
'
test_expect_success 'world-readable cookie file gets a warning, never the cookie' '
	echo sekritcookie >c && chmod 644 c &&
	ERL_EPMD_PORT=1 "$BEAMSCOPE" demo --batch --cookie-file c 2>err
	cat err; grep -q "readable by others" err && ! grep -q sekritcookie err
'
test_done
