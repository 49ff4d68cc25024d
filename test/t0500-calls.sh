#!/bin/sh
# Call tracing: patterns compiled on the target, guards, return values,
# exceptions, errors that name line and column, other tools' patterns left
# alone, patterns removed on every exit path, and --follow.
. "$(dirname "$0")/lib.sh"

start_node bscall -eval "code:ensure_loaded(bs_calls)" || exit 1

# trace_calls ARGS... -- EXPR: run beamscope with ARGS while EXPR runs
trace_calls() {
	bs_start --duration 0 --events spawn "$@" && bs_wait_attached &&
	node_eval "$EXPR" >/dev/null && sleep 0.4 &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0
}

test_expect_success 'exact call count of a function called 100 times' '
	EXPR="bs_calls:run(100)." trace_calls --call bs_calls:add/2 &&
	jqs -e "[.[] | select(.type == \"call\" and .mfa == \"bs_calls:add/2\")] | length == 100" &&
	jqs -e "[.[] | select(.type == \"return\")] | length == 0" &&
	jqs -e "[.[] | select(.type == \"call\") | .args] == [range(1; 101) | \"[\(.),1]\"]" &&
	jqs -e ".[-1].patterns == [{\"pattern\": \"bs_calls:add/2\", \"functions\": 1}]" &&
	target_clean 2
'

test_expect_success 'return values, in order, with the time since the call' '
	EXPR="bs_calls:run(100)." trace_calls --call "bs_calls:add(_, _) -> return" &&
	jqs -e "[.[] | select(.type == \"return\")] | length == 100 and
		([.[].value] == [range(2; 102) | tostring]) and all(.elapsed_us >= 0)" &&
	target_clean 2
'

test_expect_success 'mod:fun/arity -> return: every call, with its return value' '
	EXPR="bs_calls:run(100)." trace_calls --call "bs_calls:add/2 -> return" &&
	jqs -e "[.[] | select(.type == \"call\")] | length == 100" &&
	jqs -e "[.[] | select(.type == \"return\")] | length == 100 and
		([.[].value] == [range(2; 102) | tostring])" &&
	jqs -e ".[-1].patterns == [{\"pattern\": \"bs_calls:add/2 -> return\", \"functions\": 1}]" &&
	target_clean 2
'

test_expect_success 'mod:fun -> return, stack: every arity, the caller and the exception' '
	EXPR="catch bs_calls:crash(7)." trace_calls --call "bs_calls:crash -> return, stack" &&
	jqs -e "[.[] | select(.type == \"exception\")] | length == 1 and .[0].mfa == \"bs_calls:crash/1\"" &&
	jqs -e "[.[] | select(.type == \"call\")][0].caller | test(\"^[{]erl_eval,\")" &&
	target_clean 2
'

test_expect_success 'exceptions, and the caller with stack' '
	EXPR="catch bs_calls:crash(7)." trace_calls --call "bs_calls:crash(_) -> return, stack" &&
	jqs -e "[.[] | select(.type == \"exception\")] | length == 1 and .[0].class == \"error\" and
		.[0].reason == \"{bad_input,7}\" and .[0].mfa == \"bs_calls:crash/1\" and .[0].elapsed_us >= 0" &&
	jqs -e "[.[] | select(.type == \"call\")][0].caller | test(\"^[{]erl_eval,\")" &&
	target_clean 2
'

test_expect_success 'a guard filters: exactly the 10 calls with A > 90' '
	EXPR="bs_calls:run(100)." trace_calls --call "bs_calls:add(A, _) when A > 90" &&
	jqs -e "[.[] | select(.type == \"call\") | .args] == [range(91; 101) | \"[\(.),1]\"]"
'

test_expect_success 'local functions are traced' '
	EXPR="bs_calls:run(100)." trace_calls --call bs_calls:double/1 &&
	jqs -e "[.[] | select(.type == \"call\" and .mfa == \"bs_calls:double/1\")] | length == 100"
'

RAW_MS='bs_calls:add/2 [{['"'"'$1'"'"', '"'"'_'"'"'], [{'"'"'<'"'"', '"'"'$1'"'"', 6}], []}]'
test_expect_success 'a raw match spec is accepted' '
	echo "$RAW_MS" &&
	EXPR="bs_calls:run(100)." trace_calls --call "$RAW_MS" &&
	jqs -e "[.[] | select(.type == \"call\")] | length == 5"
'

test_expect_success 'wildcards: every function of the module, locals included' '
	EXPR="bs_calls:run(3)." trace_calls --call "bs_calls:_" &&
	jqs -e "[.[] | select(.type == \"call\") | .mfa] | unique | contains([\"bs_calls:add/2\", \"bs_calls:double/1\", \"bs_calls:run/1\"])" &&
	jqs -e "[.[] | select(.type == \"call\" and .mfa == \"bs_calls:add/2\")] | length == 3" &&
	jqs -e ".[-1].patterns[0].functions >= 5" && target_clean 2
'

bad_pattern() {
	target_clean 5 >/dev/null  # the run before has left the node
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" -d 0.5 --call "$1" 2>err >/dev/null
	rc=$?
	cat err
	expect "$rc" -eq "$2" && expect "$(wc -l <err)" -eq 1 && grep -qE -- "$3" err && target_clean 2
}

test_expect_success 'syntax error: line, column and the problem' '
	bad_pattern "bs_calls:add(A, ) -> return" 2 "line 1, column 17: syntax error before: .\)."
'
test_expect_success 'bad token' '
	bad_pattern "bs_calls:add(A, \"oops) -> return" 2 "line 1, column [0-9]+: unterminated string"
'
test_expect_success 'illegal guard' '
	bad_pattern "bs_calls:add(A, _) when foo(A) -> return" 2 "line 1, column [0-9]+: .*foo/1.*cannot be translated"
'
test_expect_success 'unknown action' '
	bad_pattern "bs_calls:add(A, _) -> retrun" 2 "column 23: an action is return or stack"
'
test_expect_success 'an unknown action or none after mod:fun/arity ->' '
	bad_pattern "bs_calls:add/2 -> retrun" 2 "column 19: an action is return or stack" &&
	bad_pattern "bs_calls:add/2 ->" 2 "column 16: an action [(]return or stack[)] must follow" &&
	bad_pattern "bs_calls:add/2 -> return stack" 2 "column 26: expected , or the end after an action"
'
test_expect_success 'bad arity' '
	bad_pattern "bs_calls:add/x" 2 "column 13: expected an arity"
'
test_expect_success 'module wildcard refused' '
	bad_pattern "_:add/2" 2 "column 1: the module cannot be a wildcard"
'
test_expect_success 'bad raw match spec' '
	bad_pattern "bs_calls:add/2 [{x}]" 2 "column 16: .*not a tuple of arity 3"
'
test_expect_success 'unknown module: says so, exit 6, nothing traced' '
	bad_pattern "no_such_module:f/1" 6 "module no_such_module is not loaded"
'
test_expect_success 'unknown function: says so, exit 6, nothing traced' '
	bad_pattern "bs_calls:nope/3" 6 "no function of the module matches"
'

test_expect_success "another tool's pattern is left alone and reported (OTP 25-26), ours beside it (27+)" '
	node_eval "erlang:trace_pattern({bs_calls, double, 1}, true, [local])." &&
	EXPR="bs_calls:run(2)." trace_calls --call "bs_calls:_" &&
	if sessions_here; then
		! grep -q "already has a trace pattern" "$TRASH/bs.err" &&
		jqs -e ".[-1].skipped_functions == [] and ([.[] | select(.type == \"call\" and .mfa == \"bs_calls:double/1\")] | length > 0)"
	else
		grep -q "bs_calls:double/1 already has a trace pattern set by someone else; skipped" "$TRASH/bs.err" &&
		jqs -e ".[-1].skipped_functions == [\"bs_calls:double/1\"]"
	fi &&
	expect "$(node_eval "{erlang:trace_info({bs_calls, double, 1}, match_spec), erlang:trace_info({bs_calls, add, 2}, match_spec)}." | tr -d " ")" = "{{match_spec,[]},{match_spec,false}}" &&
	node_eval "erlang:trace_pattern({bs_calls, double, 1}, false, [local])." && target_clean 2
'

for sig in INT KILL; do
	test_expect_success "patterns removed when beamscope gets SIG$sig" '
		bs_start --duration 0 --call "bs_calls:_" && bs_wait_attached &&
		expect "$(our_info "{bs_calls, add, 2}" match_spec | tr -d " ")" != "{match_spec,false}" &&
		kill -'$sig' "$BS_PID" && bs_wait && target_clean 2
	'
done

test_expect_success 'patterns removed at the end of a run (duration)' '
	bs_start --duration 0.5 --call "bs_calls:add/2" && bs_wait && expect "$BS_RC" -eq 0 && target_clean 2
'

test_expect_success '--follow: a tree of known shape, and nothing else' '
	root=$(node_eval "{_, T} = bs_calls:tree(), T." | tr -d "\"") && echo "root $root" &&
	bs_start --follow "$root" --events spawn,exit --call bs_calls:add/2 --duration 0 && bs_wait_attached &&
	node_eval "list_to_pid(\"$root\") ! go, bs_calls:run(5)." >/dev/null && sleep 0.6 &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e "[.[] | select(.type == \"spawn\")] | length == 9" &&
	jqs -e "[.[] | select(.type == \"call\")] | length == 10 and all(.args != \"[1,1]\" or true)" &&
	jqs -e "[.[:-1][] | .pid] | unique | length == 10" &&
	jqs -e "[.[] | select(.type == \"exit\")] | length == 10" &&
	jqs -e ".[-1].traced_processes == 1" && target_clean 2
'

test_expect_success '--follow with --pids is refused' '
	"$BEAMSCOPE" "$NODE" --batch --follow "<0.1.0>" --pids all 2>err; [ $? -eq 2 ] && grep -q "cannot be used together" err
'
test_done
