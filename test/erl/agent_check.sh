#!/bin/bash
# agent_check.sh [BUILD_DIR]: the target side (beamscope_agent and the tracer
# NIF) against real Erlang nodes, no C node involved; prints TAP.
#
# BUILD_DIR holds beamscope_agent.beam, its helper modules' .beam files,
# beamscope_tracer.beam and beamscope_tracer.so (directly, or in ebin/ and nif/ as the Makefile puts
# them); without it, nif/ is compiled into a temporary directory.
#
# Three nodes on loopback, with a private epmd and a random cookie: the
# target, the driver (bs_agent_check, whose process is the Owner), and a
# second driver that is killed with SIGKILL mid-trace.  Every process started
# here is stopped by its PID when the script exits, whatever happened.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bs-agent-check.XXXXXX")
PIDS=""

cleanup() {
	for p in $PIDS; do
		kill -TERM "$p" 2>/dev/null
	done
	sleep 0.2
	for p in $PIDS; do
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

bail() {
	printf 'Bail out! %s\n' "$*"
	exit 1
}

# where a build file is: BUILD_DIR itself, or its ebin/ or nif/
find_built() {
	for d in "$1" "$1/ebin" "$1/nif"; do
		[ -f "$d/$2" ] && { printf '%s\n' "$d/$2"; return 0; }
	done
	return 1
}

BUILD=$WORK/build
mkdir -p "$BUILD" "$WORK/test" "$WORK/home"
if [ $# -ge 1 ] && [ -n "$1" ]; then
	for f in beamscope_agent.beam beamscope_printer.beam \
		beamscope_info.beam beamscope_pattern.beam beamscope_prof.beam beamscope_alarm.beam \
		beamscope_scan.beam beamscope_trace.beam beamscope_tracer.beam beamscope_tracer.so; do
		src=$(find_built "$1" "$f") || bail "no $f in \"$1\""
		cp "$src" "$BUILD/$f"
	done
else
	ERTS_INCLUDE=$(erl -noshell -eval \
		'io:format("~s", [filename:join(code:root_dir(), "usr/include")]), halt().')
	erlc +warnings_as_errors -o "$BUILD" "$TOP/nif/beamscope_agent.erl" \
		"$TOP/nif/beamscope_printer.erl" "$TOP/nif/beamscope_info.erl" \
		"$TOP/nif/beamscope_pattern.erl" "$TOP/nif/beamscope_scan.erl" \
		"$TOP/nif/beamscope_prof.erl" "$TOP/nif/beamscope_alarm.erl" \
		"$TOP/nif/beamscope_trace.erl" \
		"$TOP/nif/beamscope_tracer.erl" || bail "erlc failed"
	${CC:-gcc} -std=c11 -O2 -fPIC -shared -Wall -Wextra -Werror \
		-I"$ERTS_INCLUDE" -o "$BUILD/beamscope_tracer.so" \
		"$TOP"/nif/*.c || bail "the NIF did not compile"
fi
erlc -o "$WORK/test" "$HERE/bs_agent_check.erl" || bail "erlc bs_agent_check failed"

# no stray ~/.erlang.cookie, and nothing outside loopback
export HOME=$WORK/home
COOKIE=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
TAG="$$_$(od -An -N3 -tu4 /dev/urandom | tr -d ' ')"

# a private epmd: other nodes on this host are not disturbed
for _ in 1 2 3 4 5; do
	port=$((20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 20000))
	epmd -port "$port" -address 127.0.0.1 >"$WORK/epmd.log" 2>&1 &
	epmd_pid=$!
	sleep 0.3
	if kill -0 "$epmd_pid" 2>/dev/null; then
		PIDS="$PIDS $epmd_pid"
		export ERL_EPMD_PORT=$port
		break
	fi
	wait "$epmd_pid" 2>/dev/null
done
[ -n "${ERL_EPMD_PORT:-}" ] || bail "could not start epmd on loopback"

node() {
	name=$1
	shift
	erl -sname "$name@localhost" -setcookie "$COOKIE" -noshell -noinput -start_epmd false \
		-connect_all false -kernel inet_dist_use_interface '{127,0,0,1}' "$@" \
		>"$WORK/$name.log" 2>&1 &
	PIDS="$PIDS $!"
}

TARGET=bsck_target_$TAG
VICTIM=bsck_victim_$TAG
DRIVER=bsck_driver_$TAG
node "$TARGET"
node "$VICTIM" -pa "$WORK/test"

# the driver bounds every wait itself; timeout is for a hang nobody foresaw
timeout -s KILL 300 erl -sname "$DRIVER@localhost" -setcookie "$COOKIE" -start_epmd false \
	-noshell -noinput -connect_all false \
	-kernel inet_dist_use_interface '{127,0,0,1}' -pa "$WORK/test" \
	-eval "bs_agent_check:main([\"$TARGET@localhost\", \"$VICTIM@localhost\", \"$BUILD\"])" \
	>"$WORK/tap" 2>"$WORK/driver.err" &
driver=$!
PIDS="$PIDS $driver"
wait "$driver" 2>/dev/null
rc=$?

cat "$WORK/tap"
plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$WORK/tap" | head -n 1)
[ -n "$plan" ] || { cat "$WORK/driver.err"; bail "the driver printed no plan"; }
done_n=$(grep -Ec '^(not )?ok [0-9]+' "$WORK/tap")
n=$done_n
while [ "$n" -lt "$plan" ]; do
	n=$((n + 1))
	printf 'not ok %d - not run: the driver stopped (exit %d)\n' "$n" "$rc"
done
if [ "$done_n" -lt "$plan" ] || [ "$rc" -ne 0 ]; then
	sed 's/^/# driver: /' "$WORK/driver.err"
	for f in "$WORK"/bsck_*.log; do
		[ -s "$f" ] && sed "s|^|# $(basename "$f"): |" "$f"
	done
	exit 1
fi
exit 0
