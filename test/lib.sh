# test/lib.sh: TAP for shell tests, and real Erlang nodes to test against.
#
#   . "$(dirname "$0")/lib.sh"
#   start_node work                      # unique -sname, random cookie
#   test_expect_success 'desc' 'commands'
#   test_done
#
# Nodes are started in the background and stopped by their PID; every node a
# test starts is stopped when the test exits, whatever happened.

set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
BEAMSCOPE=$BUILD/beamscope
TRASH=$(mktemp -d "${TMPDIR:-/tmp}/beamscope-test.XXXXXX")
eval "$("$TOP/scripts/erl-config" | sed 's/ = /=/; s/^\([A-Z_]*\)=\(.*\)$/\1="\2"/')"
export ERL_CALL   # the host's: it reaches a node of any release
# OTP=27 or 29: target nodes, erlc and Elixir of that runtime
# (scripts/otp-targets), beamscope as built on the host
if [ -n "${OTP:-}" ] && [ "$OTP" != "$OTP_RELEASE" ]; then
	_otp_bin=$("$TOP/scripts/otp-targets" --bin "$OTP") || exit 1
	PATH=$_otp_bin:$PATH
	BS_OTP_BIND=$TOP
	export PATH BS_OTP_BIND
fi
export HOME=$TRASH             # no stray ~/.erlang.cookie is ever used
unset XDG_CONFIG_HOME          # nor a config file of the one running the tests
cd "$TRASH" || exit 1         # tests write their scratch files here
test_count=0
test_failed=0
NODE_PIDS=""

TMUX_SOCK="bs$$"
cleanup() {
	tmux -L "$TMUX_SOCK" kill-server 2>/dev/null
	# nodes started inside a test (a subshell) are known by the file only
	[ -f "$TRASH/node.pids" ] && NODE_PIDS="$NODE_PIDS $(cat "$TRASH/node.pids")"
	for p in $NODE_PIDS; do
		kill -9 "$p" 2>/dev/null
	done
	for p in $NODE_PIDS; do
		wait "$p" 2>/dev/null
	done
	rm -rf "$TRASH"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { printf '# %s\n' "$*"; }

test_expect_success() {
	[ -n "${TEST_TRACE:-}" ] && set -x
	test_count=$((test_count + 1))
	if ( eval "$2" ) >"$TRASH/out.$test_count" 2>&1; then
		printf 'ok %d - %s\n' "$test_count" "$1"
	else
		test_failed=$((test_failed + 1))
		printf 'not ok %d - %s\n' "$test_count" "$1"
		sed 's/^/#   /' "$TRASH/out.$test_count" | tail -n 40 >&2
	fi
}

# expect ACTUAL OP WANTED: test(1)'s comparison (=, !=, -eq, -ge, ...),
# which says both sides when it does not hold
expect() {
	[ "$1" "$2" "$3" ] 2>/dev/null && return 0
	printf 'expect: want %s %s\nexpect: got  %s\n' "$2" "'$3'" "'$1'" >&2
	return 1
}

# expect_usage ARGS...: beamscope refuses ARGS with exit status 2 and one
# line on stderr (in ./err), nothing on stdout
expect_usage() {
	"$BEAMSCOPE" "$@" >out 2>err
	rc=$?
	cat err
	expect "$rc" -eq 2 && expect "$(wc -l <err)" -eq 1 && [ ! -s out ]
}

test_skip_all() {
	printf '1..0 # SKIP %s\n' "$1"
	exit 0
}

test_done() {
	printf '1..%d\n' "$test_count"
	[ "$test_failed" -eq 0 ]
	exit $?
}

random_cookie() {
	od -An -N12 -tx1 /dev/urandom | tr -d ' \n'
}

# erlc and elixirc, compiled once: what a test compiles is kept under
# $BUILD/test-beams/RELEASE/KEY (KEY: the tool, its options and its
# sources' contents) and copied to where the test wants it, so that each
# module is compiled once a release rather than once a test (an erlc or
# elixirc that starts in a runtime's chroot takes a second or more).
_beams=$BUILD/test-beams/${OTP:-$OTP_RELEASE}
_cached() {
	_tool=$1
	shift
	_out=. _key=$_tool _n=$# _i=0
	while [ "$_i" -lt "$_n" ]; do
		_a=$1
		shift
		_i=$((_i + 1))
		if [ "$_a" = -o ]; then
			_out=$1
			shift
			_i=$((_i + 1))
			continue
		fi
		if [ -f "$_a" ]; then
			_key="$_key $(md5sum <"$_a" | cut -c1-32)"
		else
			_key="$_key $_a"
		fi
		set -- "$@" "$_a"
	done
	_dir=$_beams/$(printf '%s' "$_key" | md5sum | cut -c1-32)
	if [ ! -d "$_dir" ]; then
		mkdir -p "$_beams" && _tmp=$(mktemp -d "$_beams/.new.XXXXXX") || return 1
		if ! command "$_tool" -o "$_tmp" "$@"; then
			rm -rf "$_tmp"
			return 1
		fi
		mv "$_tmp" "$_dir" 2>/dev/null || rm -rf "$_tmp"
	fi
	mkdir -p "$_out" && cp "$_dir"/. "$_out"/ -R
}
erlc() { _cached erlc "$@"; }
elixirc() { _cached elixirc "$@"; }
# is there an elixirc to run (not only the function above)?
have_elixir() { (unset -f elixirc; command -v elixirc >/dev/null 2>&1); }

# the lib folder of the node's Elixir, asked once a release
elixir_lib() {
	[ -s "$_beams/elixir_lib" ] ||
		{ mkdir -p "$_beams" && elixir -e "IO.puts :code.lib_dir(:elixir)" >"$_beams/elixir_lib"; } ||
		return 1
	cat "$_beams/elixir_lib"
}

# Compile the test workload once per test file.
compile_workload() {
	[ -f "$TRASH/ebin/bs_work.beam" ] && return 0
	mkdir -p "$TRASH/ebin"
	erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_work.erl" "$TOP/test/erl/bs_calls.erl" \
		"$TOP/test/erl/bs_cluster.erl" "$TOP/test/erl/bs_match.erl" \
		"$TOP/test/erl/bs_fileeval.erl"
}

# start_node PREFIX [erl args...]: sets NODE (short name), NODE_FULL,
# COOKIE (NODE_COOKIE if set, else random), COOKIE_FILE, NODE_PID.
start_node() {
	prefix=$1
	shift
	compile_workload || return 1
	NODE="${prefix}_$$_$(od -An -N3 -tu4 /dev/urandom | tr -d ' ')"
	COOKIE=${NODE_COOKIE:-$(random_cookie)}
	COOKIE_FILE=$TRASH/cookie.$NODE
	printf '%s\n' "$COOKIE" > "$COOKIE_FILE"
	chmod 400 "$COOKIE_FILE"
	if [ "${LONGNAMES:-}" ]; then
		NODE_FULL="$NODE@${NODE_HOST:-127.0.0.1}"
		name_opt="-name $NODE_FULL"
	else
		NODE_FULL="$NODE@$(hostname -s)"
		name_opt="-sname $NODE"
	fi
	# shellcheck disable=SC2086
	erl $name_opt -setcookie "$COOKIE" -noshell -noinput \
		-pa "$TRASH/ebin" "$@" >"$TRASH/node.$NODE.log" 2>&1 &
	NODE_PID=$!
	NODE_PIDS="$NODE_PIDS $NODE_PID"
	echo "$NODE_PID" >>"$TRASH/node.pids"
	# up when it answers
	for _ in $(seq 1 100); do
		if [ "$(node_eval 'ok.' 2>/dev/null)" = ok ]; then
			return 0
		fi
		sleep 0.1
	done
	say "node $NODE did not come up"
	cat "$TRASH/node.$NODE.log" >&2
	return 1
}

# start_elixir_node PREFIX [FILE.ex...]: start_node with Elixir on the
# code path and started, and each FILE.ex compiled into the workload's
# ebin.  Fails when Elixir is not installed (elixirc, elixir).
start_elixir_node() {
	have_elixir || return 1
	_ep=$1
	shift
	compile_workload || return 1
	if [ $# -gt 0 ]; then
		elixirc -o "$TRASH/ebin" "$@" >/dev/null || return 1
	fi
	_exdir=$(elixir_lib) || return 1
	start_node "$_ep" -pa "$_exdir/ebin" \
		-eval "{ok, _} = application:ensure_all_started(elixir)" || return 1
	# the node answers before -eval has run: wait for Elixir to be up
	for _ in $(seq 1 100); do
		[ "$(node_eval "lists:keymember(elixir, 1, application:which_applications())." 2>/dev/null)" = true ] &&
			return 0
		sleep 0.1
	done
	say "Elixir did not start on $NODE"
	return 1
}

stop_node() {
	pid=${1:-$NODE_PID}
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

# node_eval EXPR: evaluate EXPR on the current node, print the result.
# NODE_EVAL_DIR: the node reads expressions there (test/erl/bs_fileeval.erl)
node_eval() {
	if [ -n "${NODE_EVAL_DIR:-}" ]; then
		rm -f "$NODE_EVAL_DIR/a"
		printf '%s\n' "$1" >"$NODE_EVAL_DIR/q.tmp" &&
			mv "$NODE_EVAL_DIR/q.tmp" "$NODE_EVAL_DIR/q" || return 1
		for _ in $(seq 1 200); do
			[ -f "$NODE_EVAL_DIR/a" ] && { cat "$NODE_EVAL_DIR/a"; return 0; }
			sleep 0.05
		done
		return 1
	fi
	if [ "${LONGNAMES:-}" ]; then
		set -- "$1" -name "$NODE_FULL"
	else
		set -- "$1" -sname "$NODE"
	fi
	printf '%s\n' "$1" | "$ERL_CALL" "$2" "$3" -c "$COOKIE" -e |
		sed 's/^{ok, *\(.*\)}$/\1/'
}

# The target's state as far as beamscope is concerned: traced processes,
# new-process flags, agent, modules (the agent, its helpers, the tracer,
# the Elixir reader), beamscope processes, functions with a
# trace pattern, the receive and the send patterns (true unless a test set
# one: RECEIVE_PATTERN, SEND_PATTERN, as the node prints it), whether
# scheduler_wall_time is on (false unless a test turned it on:
# SCHEDULER_WALL_TIME), and the trace sessions named beamscope (OTP 27+;
# 0 where the node has none).  FLAGGED: processes another tool traces in
# the legacy session (default 0).
TARGET_STATE='
Flagged = [P || P <- processes(), {flags, F} <- [erlang:trace_info(P, flags)], F =/= []],
Ours = [P || P <- processes(), {current_function, {M, _, _}} <- [process_info(P, current_function)], lists:member(M, [beamscope_agent, beamscope_printer, beamscope_info, beamscope_pattern, beamscope_prof, beamscope_alarm, beamscope_scan, beamscope_trace, beamscope_tracer, beamscope_elixir])],
Patterned = [1 || {M, _} <- code:all_loaded(), {F, A} <- M:module_info(functions), element(2, erlang:trace_info({M, F, A}, match_spec)) =/= false],
{length(Flagged), element(2, erlang:trace_info(new_processes, flags)), whereis(beamscope_agent), code:is_loaded(beamscope_agent), code:is_loaded(beamscope_printer), code:is_loaded(beamscope_info), code:is_loaded(beamscope_pattern), code:is_loaded(beamscope_scan), code:is_loaded(beamscope_prof), code:is_loaded(beamscope_alarm), code:is_loaded(beamscope_trace), code:is_loaded(beamscope_tracer), code:is_loaded(beamscope_elixir), length(Ours), length(Patterned), element(2, erlang:trace_info('\''receive'\'', match_spec)), erlang:statistics(scheduler_wall_time) =/= undefined, element(2, erlang:trace_info(send, match_spec)), case list_to_integer(erlang:system_info(otp_release)) >= 27 of true -> length([S || {beamscope, _} = S <- trace:session_info(all)]); false -> 0 end, erlang:system_monitor()}.'
RECEIVE_PATTERN=true
SCHEDULER_WALL_TIME=false
SEND_PATTERN=true
# erlang:system_monitor() as the target had it before beamscope
SYSTEM_MONITOR=undefined

# otp_release: the current node's OTP release ("25", "27", "29")
otp_release() {
	node_eval "erlang:system_info(otp_release)." | tr -d '"'
}

# erl_text TERM: the current node's own text of TERM, as
# io_lib:format("~0tp", [TERM]) prints it there (the order of a map's
# keys, for one, is the release's)
erl_text() {
	node_eval "file:write_file(\"$TRASH/erl_text\", io_lib:format(\"~0tp\", [$1]))." \
		>/dev/null && cat "$TRASH/erl_text"
}

# ere TEXT: TEXT as an extended regular expression that matches it alone
ere() {
	printf '%s' "$1" | sed 's/[][\\.*^$(){}+?|]/\\&/g'
}

# sessions_here: the current node has trace sessions (OTP 27+), so
# beamscope traces in one of its own
sessions_here() {
	[ "$(otp_release)" -ge 27 ]
}

# our_info WHAT ITEM: what beamscope set, as the node prints it:
# trace:info/3 of beamscope's trace session while there is one (OTP 27+),
# else erlang:trace_info/2 of the legacy one (WHAT and ITEM in Erlang)
our_info() {
	node_eval "case list_to_integer(erlang:system_info(otp_release)) >= 27 andalso [W || {beamscope, _} = W <- trace:session_info(all)] of [W | _] -> trace:info(W, $1, $2); _ -> erlang:trace_info($1, $2) end."
}

# our_pattern send|receive: beamscope's send or receive trace pattern
our_pattern() {
	our_info "'$1'" match_spec
}

# target_clean [SECONDS]: wait until the target looks as if beamscope had
# never been there.
target_clean() {
	limit=${1:-2}
	tries=$(awk "BEGIN { print int($limit * 10) }")
	for _ in $(seq 0 "$tries"); do
		CLEAN_STATE="{${FLAGGED:-0},[],undefined,false,false,false,false,false,false,false,false,false,false,0,0,$RECEIVE_PATTERN,$SCHEDULER_WALL_TIME,$SEND_PATTERN,0,$SYSTEM_MONITOR}"
		state=$(node_eval "$TARGET_STATE" | tr -d " \n")
		[ "$state" = "$CLEAN_STATE" ] && return 0
		sleep 0.1
	done
	echo "target not clean after ${limit}s: $state (want $CLEAN_STATE)"
	return 1
}

# bs_start ARGS...: run beamscope in batch mode in the background against
# the current node; output in $TRASH/bs.json, stderr in $TRASH/bs.err.
bs_start() {
	# emptied now, not when the background shell gets to it: waiting for
	# "attached to" must not find the words of the run before
	: >"$TRASH/bs.err"
	"$BEAMSCOPE" "${BS_NODE:-$NODE}" --batch --cookie-file "$COOKIE_FILE" \
		-o "$TRASH/bs.json" "$@" 2>"$TRASH/bs.err" &
	BS_PID=$!
}

# Wait until beamscope says it is tracing.
# counts_exact: the beamscope of bs_start (BS_NODE), run with --counts,
# counts bs_work:sink's 1000 sends and 1001 receives exactly, and leaves
# the node clean
counts_exact() {
	bs_wait_attached &&
	res=$(node_eval "{S, T} = bs_work:sink(1000, 10), pid_to_list(S) ++ \" \" ++ pid_to_list(T).") &&
	sink=$(echo "$res" | tr -d "\"" | cut -d" " -f1) &&
	sender=$(echo "$res" | tr -d "\"" | cut -d" " -f2) &&
	sleep 1 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e --arg s "$sink" "[.[] | select(.pid == \$s)] | last |
		.sends == 2 and .receives == 1001 and .spawns == 10" &&
	jqs -e --arg t "$sender" "[.[] | select(.pid == \$t)] | last |
		.sends == 1000 and .receives == 0" &&
	target_clean 3
}

bs_wait_attached() {
	for _ in $(seq 1 100); do
		grep -q 'attached to' "$TRASH/bs.err" 2>/dev/null && return 0
		kill -0 "$BS_PID" 2>/dev/null || break
		sleep 0.05
	done
	echo "beamscope did not attach:"; cat "$TRASH/bs.err"
	return 1
}

# bs_wait: wait for beamscope to exit; BS_RC holds its status.
bs_wait() {
	wait "$BS_PID"
	BS_RC=$?
}

# jq over the NDJSON output, slurped.
jqs() {
	jq -s "$@" "$TRASH/bs.json"
}

# ---- several nodes in one cluster ----

# start_cluster PREFIX N: N nodes with one random cookie, connected to each
# other.  Sets CNODES (short names), CNODES_FULL, CPIDS, COOKIE and
# COOKIE_FILE; NODE and friends are the first node.
start_cluster() {
	_cprefix=$1
	CNODES="" CNODES_FULL="" CPIDS=""
	shared=$(random_cookie)
	for _ci in $(seq 1 "$2"); do
		NODE_COOKIE=$shared start_node "${_cprefix}$_ci" || return 1
		CNODES="$CNODES $NODE"
		CNODES_FULL="$CNODES_FULL $NODE_FULL"
		CPIDS="$CPIDS $NODE_PID"
	done
	COOKIE=$shared
	COOKIE_FILE=$TRASH/cookie.cluster
	printf '%s\n' "$COOKIE" > "$COOKIE_FILE"
	chmod 400 "$COOKIE_FILE"
	set -- $CNODES
	first=$1
	for n in $CNODES_FULL; do
		NODE=$first
		[ "$(node_eval "net_adm:ping('$n').")" = pong ] || return 1
	done
	NODE=$first
}

# on_node NAME EXPR: node_eval on another node of the cluster.
on_node() {
	( NODE=$1; node_eval "$2" )
}

# ---- the interactive view, driven in tmux ----

tm() {
	tmux -L "$TMUX_SOCK" "$@"
}

# ui_session WIDTH HEIGHT COMMAND: a fresh tmux session "ui" running
# COMMAND.  A session left by an earlier test is closed first, and the
# server it ran in is given time to go: a new session that reaches a
# server still shutting down fails, so it is tried again.
ui_session() {
	tm kill-session -t ui 2>/dev/null
	for _ in $(seq 1 40); do
		tm has-session 2>/dev/null || break
		sleep 0.05
	done
	for _ in 1 2 3 4 5; do
		tm -f /dev/null new-session -d -s ui -x "$1" -y "$2" "$3" && return 0
		sleep 0.2
	done
	return 1
}

# ui_start [beamscope args...]: run the real binary in a detached tmux
# session of 100x30; its exit status lands in $TRASH/ui.rc.
ui_start() {
	# a session left by a failed test: close it and let it detach
	tm has-session -t ui 2>/dev/null && tm kill-session -t ui &&
		target_clean 3 >/dev/null
	rm -f "$TRASH/ui.rc"
	ui_session 100 30 \
		"XDG_STATE_HOME='$TRASH/state' '$BEAMSCOPE' '$NODE' --cookie-file '$COOKIE_FILE' $*; echo \$? >'$TRASH/ui.rc'; stty -a >'$TRASH/ui.stty'; sleep 600"
}

ui_screen() {
	tm capture-pane -p -t ui
}

# ui_wait PATTERN [SECONDS]: wait until the screen shows PATTERN (grep -E).
ui_wait() {
	tries=$(awk "BEGIN { print int(${2:-5} * 20) }")
	for _ in $(seq 1 "$tries"); do
		ui_screen | grep -qE -- "$1" && return 0
		sleep 0.05
	done
	echo "screen never showed: $1"
	ui_screen
	return 1
}

# bytes TEXT: a number as the table writes it in bytes ("6400k" ->
# 6400000, "3M" -> 3000000); an at-least value (">6400k", where measuring
# would cost the target too much) as its bound
bytes() {
	awk -v v="$1" 'BEGIN { m = 1; if (v ~ /k$/) m = 1000; if (v ~ /M$/) m = 1000000;
		sub(/^>/, "", v); sub(/[kM]$/, "", v); printf "%d\n", v * m }'
}

# eventually SECONDS CMD...: run CMD every 0.2 s until it succeeds, at most
# SECONDS; what beamscope asks of its agent lands a moment after the view
# shows it asked
eventually() {
	limit=$1; shift
	tries=$(awk "BEGIN { print int($limit * 5) }")
	for _ in $(seq 0 "$tries"); do
		"$@" && return 0
		sleep 0.2
	done
	echo "not true after ${limit}s: $*"
	return 1
}

# within A B: A within 10% of B
within() {
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b > 0 && d <= b / 10) }'
}

# ui_cell TITLE PATTERN: the number under the process table's column TITLE
# (numbers are right-aligned under their title) in the first row matching
# PATTERN (grep -E), wherever the columns are on this screen
ui_cell() {
	ui_screen | awk -v t="$1" -v pat="$2" '
		!e { i = index($0 " ", " " t " "); if (i) e = i + length(t); next }
		$0 ~ pat { s = substr($0, 1, e); sub(/.* /, "", s); print s; exit }'
}

ui_keys() {
	tm send-keys -t ui "$@"
}

# ui_exit_status [SECONDS]: wait for the binary to exit; prints its status.
ui_exit_status() {
	for _ in $(seq 1 $(( ${1:-5} * 20 ))); do
		[ -s "$TRASH/ui.rc" ] && { cat "$TRASH/ui.rc"; return 0; }
		sleep 0.05
	done
	echo "still running"
	return 1
}

# ui_open FILE [beamscope args...]: the view on a recording, in tmux as
# ui_start does.
ui_open() {
	rm -f "$TRASH/ui.rc"
	_f=$1
	shift
	ui_session 100 30 \
		"XDG_STATE_HOME='$TRASH/state' '$BEAMSCOPE' --open '$_f' $*; echo \$? >'$TRASH/ui.rc'; sleep 600"
}

# mmd_parse FILE...: Mermaid's own parser on the files, when
# scripts/setup-mermaid has installed it; else say so and pass (the
# structure is checked apart)
mmd_parse() {
	m=${BS_MERMAID:-$TOP/.mermaid}
	if ! [ -d "$m/node_modules/mermaid" ] || ! command -v node >/dev/null; then
		echo "no mermaid parser (scripts/setup-mermaid installs it): structure only"
		return 0
	fi
	cp "$TOP/test/mermaid-parse.mjs" "$m/.bs-parse-$$.mjs" &&
	node "$m/.bs-parse-$$.mjs" "$@"
	rc=$?
	rm -f "$m/.bs-parse-$$.mjs"
	return $rc
}

# ---- what a beamscope process costs ----

# ui_pid FILE: the pid of the view ui_open runs on FILE
ui_pid() {
	pgrep -f "^$BEAMSCOPE --open $1" | head -n 1
}

# cpu_ticks PID: the CPU time PID has used so far, in clock ticks
cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# peak_kb PID: the most memory PID has held so far (VmHWM), in kB
peak_kb() {
	awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"
}

# peak_run FILE COMMAND...: run COMMAND; the most memory it held, in kB,
# is the last line of FILE; its exit status is COMMAND's
peak_run() {
	_pf=$1
	shift
	/usr/bin/time -f %M -o "$_pf" "$@"
}
