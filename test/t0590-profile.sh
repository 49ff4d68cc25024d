#!/bin/sh
# The sampling profiler against processes whose stacks are known
# (test/erl/bs_prof.erl): bs_busy spends 4 reductions in f/1 for each in
# g/1 and never waits; bs_deep waits at the bottom of a recursion 30 deep
# under deep/1.  Batch --profile: the shares within 5 points, the whole
# stack with its root frame, the collapsed stacks summing to the samples,
# the budget kept; the view: the table, the flame graph with its zoom, the
# exports; and the target left clean.
. "$(dirname "$0")/lib.sh"

command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

mkdir -p "$TRASH/ebin" && erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_prof.erl" || exit 1
start_node bsprof || exit 1
node_eval "bs_prof:start()." >/dev/null
BUSY=$(node_eval 'pid_to_list(whereis(bs_busy)).' | tr -d ' \n"')
DEEP=$(node_eval 'pid_to_list(whereis(bs_deep)).' | tr -d ' \n"')
say "bs_busy $BUSY, bs_deep $DEEP"

test_expect_success '--profile needs the processes named, and batch mode' '
	expect_usage "$NODE" --batch --profile --cookie-file "$COOKIE_FILE" &&
	grep -q "named: --pids a,b" err &&
	expect_usage "$NODE" --profile --pids bs_busy --cookie-file "$COOKIE_FILE" &&
	grep -q "in the view, :profile" err &&
	expect_usage "$NODE" --batch --profile --pids bs_busy --profile-rate 0 &&
	grep -q "at least 1" err
'

test_expect_success 'batch --profile: samples of both processes, stats a second' '
	bs_start --profile --pids bs_busy,bs_deep -d 8 --profile-budget 3 \
		--profile-out "$TRASH/p.folded" && bs_wait_attached && bs_wait &&
	cat "$TRASH/bs.err" && expect "$BS_RC" -eq 0 &&
	nb=$(jqs "[.[] | select(.type == \"profile_sample\" and .pid == \"$BUSY\")] | length") &&
	nd=$(jqs "[.[] | select(.type == \"profile_sample\" and .pid == \"$DEEP\")] | length") &&
	say "samples: busy $nb, deep $nd" &&
	expect "$nb" -ge 300 && expect "$nd" -ge 300 &&
	jqs -e "[.[] | select(.type == \"profile_stats\")] | length >= 5" &&
	cp "$TRASH/bs.json" "$TRASH/rec.json"
'

test_expect_success 'the busy loop: f/1 80% and g/1 20% of its samples, within 5 points' '
	f=$(jqs "[.[] | select(.type == \"profile_sample\" and .pid == \"$BUSY\" and .stack[-1] == \"bs_prof:f/1\")] | length") &&
	g=$(jqs "[.[] | select(.type == \"profile_sample\" and .pid == \"$BUSY\" and .stack[-1] == \"bs_prof:g/1\")] | length") &&
	share=$(( 100 * f / (f + g) )) && say "f $f, g $g: f is $share%" &&
	expect "$share" -ge 75 && expect "$share" -le 85 &&
	jqs -e "[.[] | select(.type == \"profile_sample\" and .pid == \"$BUSY\")] |
		all(.stack[0] == \"bs_prof:busy/0\" and .status != \"waiting\" and .whole)"
'

test_expect_success 'the recursion 30 deep: whole, its root frame first, waiting' '
	jqs -r "[.[] | select(.type == \"profile_sample\" and .pid == \"$DEEP\")] |
		map([.stack[0], (.stack | length), .status, .whole] | @text) | unique | .[]" >deep.txt &&
	cat deep.txt &&
	expect "$(cat deep.txt)" = "[\"bs_prof:deep/1\",32,\"waiting\",true]"
'

test_expect_success 'the collapsed stacks parse and sum to the samples' '
	total=$(jqs "[.[] | select(.type == \"profile_sample\")] | length") &&
	awk "NF != 2 || \$2 !~ /^[0-9]+\$/ { bad++ } { sum += \$2 }
		END { print sum; exit bad > 0 }" "$TRASH/p.folded" >sum.txt &&
	expect "$(cat sum.txt)" -eq "$total" &&
	grep -q "^bs_prof:busy/0;bs_prof:f/1 [0-9]*\$" "$TRASH/p.folded" &&
	grep -q "^bs_prof:deep/1\(;bs_prof:rec/1\)\{31\};(waiting) [0-9]*\$" "$TRASH/p.folded" &&
	grep -q "stacks sampled written to" "$TRASH/bs.err"
'

test_expect_success 'the budget: at most 30 ms a second and one sample over; the waits bounded' '
	jqs -r ".[] | select(.type == \"profile_stats\") | .used_us" >used.txt &&
	jqs -r ".[] | select(.type == \"profile_stats\") | .waited_us" >waited.txt &&
	cat used.txt | tr "\n" " " && cat waited.txt | tr "\n" " " &&
	expect "$(sort -n used.txt | tail -1)" -le 35000 &&
	expect "$(sort -n waited.txt | tail -1)" -le 600000 &&
	jqs -e "[.[] | select(.type == \"profile_stats\") | .processes] | all(. == 2)"
'

test_expect_success 'the target is left clean' '
	target_clean 5
'

test_expect_success 'the view: :profile NAME, the table of functions' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys ":profile bs_busy" Enter &&
	ui_wait "profile of bs_busy: [0-9]+ samples" 5 &&
	ui_wait "bs_prof:g/1" 10 && sleep 2 &&
	ui_screen >screen.txt && cat screen.txt &&
	grep -A1 "^FUNCTION" screen.txt | tail -1 | grep -q "^bs_prof:f/1 " &&
	grep -E "^bs_prof:busy/0 +[0-9.]+% +[0-9]+ +100\.0%" screen.txt
'

test_expect_success 'Enter: the callers and callees of the function' '
	ui_keys Enter && ui_wait "CALLERS of bs_prof:f/1" &&
	ui_screen | grep -A1 "CALLERS of" | tail -1 | grep -q "bs_prof:busy/0" &&
	ui_keys Escape && ui_wait "^FUNCTION"
'

test_expect_success 'F: the flame graph; Enter zooms into a frame, Esc back out' '
	ui_keys F && ui_wait "all: [0-9]+ samples" &&
	ui_screen | grep -q "bs_prof:busy/0" &&
	ui_keys j && sleep 0.2 && ui_keys j && sleep 0.2 && ui_keys Enter &&
	ui_wait "zoomed into bs_prof:f/1" &&
	ui_keys Escape && ui_wait "zoomed into bs_prof:busy/0" &&
	ui_screen | grep -q "bs_prof:g/1" &&
	ui_keys Escape && ui_wait "flame graph: Enter" &&
	ui_keys / f/1 Enter && sleep 0.3 && ui_screen | grep -q "all:"
'

test_expect_success ':profile-export: collapsed stacks and speedscope JSON' '
	ui_keys ":profile-export $TRASH/v.folded" Enter &&
	ui_wait "samples written to .*v.folded" &&
	awk "NF != 2 { bad++ } { sum += \$2 } END { exit bad > 0 || sum == 0 }" \
		"$TRASH/v.folded" &&
	grep -q "^bs_prof:busy/0;bs_prof:f/1 " "$TRASH/v.folded" &&
	ui_keys ":profile-export $TRASH/v.json" Enter &&
	ui_wait "samples written to .*v.json .speedscope" &&
	jq -e ".profiles[0].type == \"sampled\" and
		(.profiles[0].weights | add) == (.profiles[0].endValue) and
		([.shared.frames[].name] | index(\"bs_prof:f/1\")) != null and
		(.profiles[0].samples | length) == (.profiles[0].weights | length)" \
		"$TRASH/v.json"
'

test_expect_success ':profile top 1: the process leading by reductions, found by the scan' '
	ui_keys F && ui_wait "^FUNCTION" &&
	ui_keys ":profile top 1" Enter &&
	ui_wait "profile of the top 1 by reductions" 5 &&
	ui_wait "^bs_prof:f/1 " 15 &&
	ui_screen | grep -q "^bs_prof:busy/0 " &&
	! ui_screen | grep -q "bs_prof:rec/1"
'

test_expect_success 'q closes the profile and stops sampling; quitting leaves the node clean' '
	ui_keys q && ui_wait "^PID " && ui_keys q &&
	expect "$(ui_exit_status 10)" = 0 && target_clean 5
'

test_expect_success '--open of the batch output: f shows its stacks' '
	n=$(jq -s "[.[] | select(.type == \"profile_sample\")] | length" "$TRASH/rec.json") &&
	ui_session 100 30 "XDG_STATE_HOME=$TRASH/state $BEAMSCOPE --open $TRASH/rec.json; sleep 600" &&
	ui_wait "replayed|recording|events" 10 && ui_keys f &&
	ui_wait "^bs_prof:f/1 " 5 && ui_screen | grep -q "^(waiting) " &&
	ui_keys ":profile-export $TRASH/r.folded" Enter &&
	ui_wait "samples written to" 5 &&
	expect "$(awk "{ s += \$2 } END { print s }" "$TRASH/r.folded")" -eq "$n"
'

test_expect_success 'a hostile profile_sample line is skipped and counted' '
	printf "%s\n" "{\"type\":\"profile_sample\",\"ts\":1,\"node\":\"a@b\",\"pid\":\"<0.1.0>\",\"status\":\"running\",\"whole\":true,\"stack\":[1,2]}" \
		"{\"type\":\"profile_sample\",\"ts\":1,\"node\":\"a@b\",\"pid\":\"<0.1.0>\",\"status\":\"running\",\"whole\":true,\"stack\":[\"m:f/0\"]}" \
		>"$TRASH/bad.json" &&
	"$BEAMSCOPE" --open "$TRASH/bad.json" --batch -o "$TRASH/bad.out" 2>err; rc=$? &&
	cat err && expect "$rc" -eq 0 &&
	grep -q "1 malformed line skipped, the first at line 1 (bad stack)" err &&
	jq -s -e "[.[] | select(.type == \"profile_sample\")] | length == 1 and
		.[0].stack == [\"m:f/0\"]" "$TRASH/bad.out"
'

test_done
