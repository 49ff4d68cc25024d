#!/bin/sh
# Recordings: what batch mode writes, what :export and :record write, reopen
# with --open: in the view (the same counts, log lines and spawn tree as
# the live view showed) and in batch mode (replayed through --pids); bad
# files give one clear line and no crash.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || test_skip_all "tmux is not installed"

start_node bsopen || exit 1

# the sink's row: sent, received, spawned
sink_row_ok() {
	ui_screen | grep -E "^<0[.][0-9]+[.]0> +bs_sink" | tee row &&
	[ "$(wc -l <row)" -eq 1 ] &&
	[ "$(ui_cell SENT "^<0[.][0-9]+[.]0> +bs_sink")" = "$1" ] &&
	[ "$(ui_cell RECV "^<0[.][0-9]+[.]0> +bs_sink")" = "$2" ] &&
	[ "$(ui_cell SPAWN "^<0[.][0-9]+[.]0> +bs_sink")" = "$3" ]
}

test_expect_success 'a batch capture of a known workload' '
	bs_start --duration 0 --max-events 0 && bs_wait_attached &&
	node_eval "bs_work:sink(1000, 10), ok." >/dev/null &&
	sleep 0.5 && kill -INT $BS_PID && bs_wait && [ "$BS_RC" -eq 0 ] &&
	cp "$TRASH/bs.json" rec.ndjson &&
	jq -s -e "[.[] | select(.name == \"bs_sink\" and .type == \"receive\")] | length == 1001" rec.ndjson
'

test_expect_success '--open in the view: the counts of the live view, from the file' '
	ui_open "$TRASH/rec.ndjson" && ui_wait "recording .*rec.ndjson" &&
	ui_wait "opened .*rec.ndjson: [0-9]+ events from 1 node" &&
	ui_keys / bs_sink Enter && ui_wait "bs_sink" &&
	sink_row_ok 2 1001 10
'

test_expect_success '--open in the view: the spawn tree has the ten children, exited normally' '
	ui_keys t && ui_wait "spawn tree" &&
	ui_screen >tree.txt && cat tree.txt &&
	grep -A10 "bs_sink" tree.txt | tail -n 10 |
		grep -c "\`- <0[.][0-9]*[.]0> .*exited: normal" >n &&
	[ "$(cat n)" -eq 10 ]
'

test_expect_success '--open in the view: the process log, in order' '
	ui_keys q && ui_wait "PID +NAME" &&
	ui_keys ":focus bs_sink" Enter && ui_wait "received <-  stop" &&
	ui_screen >tail.txt &&
	grep -n "received <-  {msg,1000}" tail.txt &&
	[ "$(grep -c "spawned  <0" tail.txt)" -eq 10 ] &&
	a=$(grep -n "{msg,1000}" tail.txt | cut -d: -f1) &&
	c=$(grep -n "received <-  stop" tail.txt | cut -d: -f1) &&
	[ "$a" -lt "$c" ]
'

test_expect_success 'in a recording, commands that need a node say so' '
	ui_keys q && ui_wait "PID +NAME" &&
	ui_keys ":on" Enter && ui_wait "needs a live node; this is a recording" &&
	ui_keys ":call bs_work:sink/2" Enter &&
	ui_wait ":call needs a live node" &&
	ui_keys q && [ "$(ui_exit_status)" = 0 ]
'

test_expect_success '--open --batch --pids NAME writes exactly that process'"'"'s events' '
	"$BEAMSCOPE" --open rec.ndjson --batch --pids bs_sink -o cut.ndjson 2>err &&
	cat err &&
	sink=$(jq -r "select(.name == \"bs_sink\") | .pid" rec.ndjson | head -n 1) &&
	jq -c "select(.pid == \"$sink\" and .type != \"summary\")" rec.ndjson >want &&
	jq -c . cut.ndjson >got &&
	[ "$(wc -l <want)" -gt 1000 ] && diff want got
'

test_expect_success '--open --batch --events spawn keeps only spawns' '
	"$BEAMSCOPE" --open rec.ndjson --batch --events spawn 2>err |
		jq -r .type | sort -u >types && cat types &&
	[ "$(cat types)" = "$(printf "spawn\nspawned")" ]
'

test_expect_success 'an :export file reopens with the same counts' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "bs_work:sink(500, 4), ok." >/dev/null && sleep 1.5 &&
	ui_keys / bs_sink Enter && ui_wait "bs_sink" && sink_row_ok 2 501 4 &&
	ui_keys ":export $TRASH/exp.json" Enter && ui_wait "exported" &&
	ui_keys Q && ui_exit_status >/dev/null &&
	ui_open "$TRASH/exp.json" && ui_wait "opened .*exp.json" &&
	ui_keys / bs_sink Enter && ui_wait "bs_sink" && sink_row_ok 2 501 4 &&
	ui_keys Q && [ "$(ui_exit_status)" = 0 ]
'

test_expect_success ':record during a flood writes valid NDJSON that reopens' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys ":record $TRASH/live.ndjson" Enter && ui_wait "recording to" &&
	node_eval "bs_work:flood(4, 1)." >/dev/null &&
	ui_keys ":record" Enter && ui_wait "recorded [0-9]+ events" &&
	n=$(ui_screen | sed -n "s/.*recorded \([0-9]*\) events.*/\1/p") &&
	ui_keys Q && ui_exit_status >/dev/null &&
	jq -c . live.ndjson >/dev/null &&
	[ "$(jq -s "[.[] | select(.type != \"counts\")] | length" live.ndjson)" -eq "$n" ] &&
	[ "$(jq -s "[.[] | select(.type == \"spawn\")] | length" live.ndjson)" -ge 8 ] &&
	jq -s "[.[] | select(.type == \"counts\")] | group_by(.pid) |
		map(last.sends) | add" live.ndjson >sent.rec &&
	[ "$(cat sent.rec)" -gt 10000 ] &&
	"$BEAMSCOPE" --open live.ndjson --batch -o again.ndjson 2>err && cat err &&
	jq -s "[.[] | select(.type == \"counts\")] | group_by(.pid) |
		map(last.sends) | add" again.ndjson >sent.again &&
	diff sent.rec sent.again && target_clean 3
'

test_expect_success 'a recording of a flood reopens in the view with its counts' '
	ui_open "$TRASH/live.ndjson" && ui_wait "opened .*live.ndjson" &&
	ui_keys ":sort sends" Enter &&
	for _ in $(seq 1 100); do
		# more than 1000: four digits and more, or 100k, 2M
		top=$(ui_cell SENT "^<0[.][0-9]+[.]0> ")
		echo "$top" | grep -qE "^([1-9][0-9]{3,}|[0-9]+[kM])$" && break
		sleep 0.05
	done &&
	echo "top: $top" && echo "$top" | grep -qE "^([1-9][0-9]{3,}|[0-9]+[kM])$" &&
	ui_keys Q && [ "$(ui_exit_status)" = 0 ]
'

test_expect_success 'an empty file: one clear line, no crash' '
	: >empty.ndjson &&
	! "$BEAMSCOPE" --open empty.ndjson --batch 2>err && cat err &&
	grep -q "^beamscope: \"empty.ndjson\" is empty" err && [ "$(wc -l <err)" -eq 1 ]
'

test_expect_success 'a binary file: one clear line, no crash' '
	head -c 4096 "$BEAMSCOPE" >bin.ndjson &&
	! "$BEAMSCOPE" --open bin.ndjson --batch 2>err && cat err &&
	grep -q "not a beamscope recording" err && [ "$(wc -l <err)" -eq 1 ]
'

test_expect_success 'a missing file: one clear line' '
	! "$BEAMSCOPE" --open nothere.ndjson --batch 2>err && cat err &&
	grep -q "nothere.ndjson" err && [ "$(wc -l <err)" -eq 1 ]
'

test_expect_success 'malformed lines are skipped and counted, a cut last line ignored' '
	head -n 20 rec.ndjson >bad.ndjson && echo "{not json" >>bad.ndjson &&
	sed -n "21,40p" rec.ndjson >>bad.ndjson &&
	printf "%s" "{\"type\":\"send\",\"ts\":1" >>bad.ndjson &&
	"$BEAMSCOPE" --open bad.ndjson --batch -o out.ndjson 2>err && cat err &&
	[ "$(wc -l <out.ndjson)" -eq 40 ] &&
	grep -q "1 malformed line skipped, the first at line 21" err &&
	grep -q "the last line was cut short" err
'

test_expect_success 'the view opens a file with bad lines and says so' '
	ui_open "$TRASH/bad.ndjson" && ui_wait "malformed line skipped, the first at line 21" &&
	ui_keys Q && [ "$(ui_exit_status)" = 0 ]
'

test_expect_success '--open takes no node, and --record needs one' '
	! "$BEAMSCOPE" --open rec.ndjson $NODE --batch 2>err && cat err &&
	grep -q "give no node" err &&
	! "$BEAMSCOPE" --open rec.ndjson --record x.ndjson 2>err && cat err &&
	grep -q "needs a live node" err
'

test_done
