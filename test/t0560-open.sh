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
	expect "$(wc -l <row)" -eq 1 &&
	expect "$(ui_cell SENT "^<0[.][0-9]+[.]0> +bs_sink")" = "$1" &&
	expect "$(ui_cell RECV "^<0[.][0-9]+[.]0> +bs_sink")" = "$2" &&
	expect "$(ui_cell SPAWN "^<0[.][0-9]+[.]0> +bs_sink")" = "$3"
}

test_expect_success 'a batch capture of a known workload' '
	bs_start --duration 0 --max-events 0 && bs_wait_attached &&
	node_eval "bs_work:sink(1000, 10), ok." >/dev/null &&
	sleep 0.5 && kill -INT $BS_PID && bs_wait && expect "$BS_RC" -eq 0 &&
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
	expect "$(cat n)" -eq 10
'

test_expect_success '--open in the view: the process log, in order' '
	ui_keys q && ui_wait "PID +NAME" &&
	ui_keys ":focus bs_sink" Enter && ui_wait "received <-  stop" &&
	ui_screen >tail.txt &&
	grep -n "received <-  {msg,1000}" tail.txt &&
	expect "$(grep -c "spawned  <0" tail.txt)" -eq 10 &&
	a=$(grep -n "{msg,1000}" tail.txt | cut -d: -f1) &&
	c=$(grep -n "received <-  stop" tail.txt | cut -d: -f1) &&
	expect "$a" -lt "$c"
'

test_expect_success 'in a recording, commands that need a node say so' '
	ui_keys q && ui_wait "PID +NAME" &&
	ui_keys ":on" Enter && ui_wait "needs a live node; this is a recording" &&
	ui_keys ":call bs_work:sink/2" Enter &&
	ui_wait ":call needs a live node" &&
	ui_keys q && expect "$(ui_exit_status)" = 0
'

test_expect_success '--open --batch --pids NAME writes exactly that process'"'"'s events' '
	"$BEAMSCOPE" --open rec.ndjson --batch --pids bs_sink -o cut.ndjson 2>err &&
	cat err &&
	sink=$(jq -r "select(.name == \"bs_sink\") | .pid" rec.ndjson | head -n 1) &&
	jq -c "select(.pid == \"$sink\" and .type != \"summary\")" rec.ndjson >want &&
	jq -c "select(.type != \"summary\")" cut.ndjson >got &&
	expect "$(wc -l <want)" -gt 1000 && diff want got
'

test_expect_success '--open --batch --events spawn keeps only spawns' '
	"$BEAMSCOPE" --open rec.ndjson --batch --events spawn 2>err |
		jq -r "select(.type != \"summary\") | .type" | sort -u >types && cat types &&
	expect "$(cat types)" = "$(printf "spawn\nspawned")"
'

test_expect_success 'an :export file reopens with the same counts' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "bs_work:sink(500, 4), ok." >/dev/null && sleep 1.5 &&
	ui_keys / bs_sink Enter && ui_wait "bs_sink" && sink_row_ok 2 501 4 &&
	ui_keys ":export $TRASH/exp.json" Enter && ui_wait "exported" &&
	ui_keys Q && ui_exit_status >/dev/null &&
	ui_open "$TRASH/exp.json" && ui_wait "opened .*exp.json" &&
	ui_keys / bs_sink Enter && ui_wait "bs_sink" && sink_row_ok 2 501 4 &&
	ui_keys Q && expect "$(ui_exit_status)" = 0
'

test_expect_success 'an export reopened keeps its processes'"'"' labels (read after its events)' '
	printf "%s\n" "{\"type\":\"export\",\"node\":\"n@h\",\"exported_ts\":1,\"evicted_events\":0,\"processes\":[{\"pid\":\"<0.85.0>\",\"label\":\"my_server:init/1\",\"sends\":1,\"receives\":0,\"spawns\":0}],\"events\":[{\"type\":\"send\",\"ts\":5,\"node\":\"n@h\",\"pid\":\"<0.85.0>\",\"to\":\"<0.1.0>\",\"payload\":\"x\",\"truncated\":false}]}" >label.json &&
	ui_open "$TRASH/label.json" && ui_wait "opened .*label.json" &&
	ui_wait "^<0[.]85[.]0> +my_server:init/1 " &&
	ui_keys q && expect "$(ui_exit_status)" = 0
'

test_expect_success ':record during a flood writes valid NDJSON that reopens' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys ":record $TRASH/live.ndjson" Enter && ui_wait "recording to" &&
	node_eval "bs_work:flood(4, 1)." >/dev/null &&
	ui_keys ":record" Enter && ui_wait "recorded [0-9]+ events" &&
	n=$(ui_screen | sed -n "s/.*recorded \([0-9]*\) events.*/\1/p") &&
	ui_keys Q && ui_exit_status >/dev/null &&
	jq -c . live.ndjson >/dev/null &&
	expect "$(jq -s "[.[] | select(.type != \"counts\")] | length" live.ndjson)" -eq "$n" &&
	expect "$(jq -s "[.[] | select(.type == \"spawn\")] | length" live.ndjson)" -ge 8 &&
	jq -s "[.[] | select(.type == \"counts\")] | group_by(.pid) |
		map(last.sends) | add" live.ndjson >sent.rec &&
	expect "$(cat sent.rec)" -gt 10000 &&
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
	ui_keys Q && expect "$(ui_exit_status)" = 0
'

test_expect_success 'an empty file: one clear line, no crash' '
	: >empty.ndjson &&
	! "$BEAMSCOPE" --open empty.ndjson --batch 2>err && cat err &&
	grep -q "^beamscope: \"empty.ndjson\" is empty" err && expect "$(wc -l <err)" -eq 1
'

test_expect_success 'a binary file: one clear line, no crash' '
	head -c 4096 "$BEAMSCOPE" >bin.ndjson &&
	! "$BEAMSCOPE" --open bin.ndjson --batch 2>err && cat err &&
	grep -q "not a beamscope recording" err && expect "$(wc -l <err)" -eq 1
'

test_expect_success 'a missing file: one clear line' '
	! "$BEAMSCOPE" --open nothere.ndjson --batch 2>err && cat err &&
	grep -q "nothere.ndjson" err && expect "$(wc -l <err)" -eq 1
'

test_expect_success 'malformed lines are skipped and counted, a cut last line ignored' '
	head -n 20 rec.ndjson >bad.ndjson && echo "{not json" >>bad.ndjson &&
	sed -n "21,40p" rec.ndjson >>bad.ndjson &&
	printf "%s" "{\"type\":\"send\",\"ts\":1" >>bad.ndjson &&
	"$BEAMSCOPE" --open bad.ndjson --batch -o out.ndjson 2>err && cat err &&
	expect "$(grep -vc "\"type\":\"summary\"" out.ndjson)" -eq 40 &&
	tail -n 1 out.ndjson | jq -e ".type == \"summary\" and .malformed == 1 and .truncated" &&
	grep -q "1 malformed line skipped, the first at line 21" err &&
	grep -q "the last line was cut short" err
'

test_expect_success 'the view opens a file with bad lines and says so' '
	ui_open "$TRASH/bad.ndjson" && ui_wait "malformed line skipped, the first at line 21" &&
	ui_keys Q && expect "$(ui_exit_status)" = 0
'

test_expect_success '--open takes no node, and --record needs one' '
	! "$BEAMSCOPE" --open rec.ndjson $NODE --batch 2>err && cat err &&
	grep -q "give no node" err &&
	! "$BEAMSCOPE" --open rec.ndjson --record x.ndjson 2>err && cat err &&
	grep -q "needs a live node" err
'

# sends N [FIRST]: N send lines of one node, a process each (its number
# from FIRST), as batch mode writes them
sends() {
	awk -v n="$1" -v f="${2:-100}" 'BEGIN { for (i = 0; i < n; i++)
		printf "{\"type\":\"send\",\"ts\":%d,\"node\":\"n@h\",\"pid\":\"<0.%d.0>\",\"to\":\"<0.1.0>\",\"payload\":\"x\",\"truncated\":false}\n", 1000 + i, f + i }'
}

test_expect_success 'the output is never the recording, by any name; it stays whole' '
	cp rec.ndjson same.ndjson && sum=$(cksum <same.ndjson) &&
	ln same.ndjson hard.ndjson && ln -s same.ndjson soft.ndjson &&
	! "$BEAMSCOPE" --open same.ndjson --batch -o same.ndjson 2>err && cat err &&
	grep -q "^beamscope: \"same.ndjson\" is the recording being read; choose another -o FILE$" err &&
	expect "$(wc -l <err)" -eq 1 &&
	! "$BEAMSCOPE" --open same.ndjson --batch -o hard.ndjson 2>err && cat err &&
	grep -q "is the recording being read" err &&
	! "$BEAMSCOPE" --open same.ndjson --batch -o soft.ndjson 2>err && cat err &&
	grep -q "is a symbolic link" err &&
	! "$BEAMSCOPE" --open same.ndjson --batch >>same.ndjson 2>err && cat err &&
	grep -q "standard output is the recording being read" err &&
	expect "$(cksum <same.ndjson)" = "$sum"
'

test_expect_success 'an output is left alone when the input cannot be opened, and replaced only once whole' '
	echo keep >kept.ndjson &&
	! "$BEAMSCOPE" --open nothere.ndjson --batch -o kept.ndjson 2>err && cat err &&
	expect "$(cat kept.ndjson)" = keep &&
	echo old >out.ndjson && chmod 640 out.ndjson &&
	"$BEAMSCOPE" --open rec.ndjson --batch -o out.ndjson 2>err && cat err &&
	expect "$(wc -l <out.ndjson)" -gt 1000 &&
	expect "$(stat -c %a out.ndjson)" = 640 &&
	expect "$(ls | grep -c "out.ndjson.tmp")" -eq 0
'

test_expect_success 'a replay runs whole: 150000 events in, 150000 out' '
	sends 150000 >many.ndjson &&
	"$BEAMSCOPE" --open many.ndjson --batch -o all.ndjson --exact 2>err; rc=$?
	cat err && expect "$rc" -eq 0 &&
	expect "$(grep -c "\"type\":\"send\"" all.ndjson)" -eq 150000 &&
	grep -q "150000 events written" err &&
	tail -n 1 all.ndjson | jq -e ".type == \"summary\" and .ended == \"end_of_recording\" and
		.events == 150000 and .over_limit == 0 and .replayed == \"many.ndjson\""
'

test_expect_success 'a replay cut by --max-events says so, even with -q; --exact fails' '
	"$BEAMSCOPE" --open many.ndjson --batch -o cut.ndjson -n 1000 -q --exact 2>err; rc=$?
	cat err && expect "$rc" -eq 7 &&
	expect "$(grep -c "\"type\":\"send\"" cut.ndjson)" -eq 1000 &&
	tail -n 1 cut.ndjson | jq -e ".type == \"summary\" and .ended == \"max_events\" and
		.events == 1000 and .over_limit > 0 and .limits.max_events == 1000" &&
	grep -q "stopped at --max-events 1000, the rest was not read" err &&
	grep -q "1000 events written from \"many.ndjson\", cut at --max-events 1000 (--exact: exit 7)" err &&
	"$BEAMSCOPE" --open many.ndjson --batch -o cut.ndjson -n 150000 --exact 2>err &&
	! grep -q "cut at" err
'

test_expect_success 'counts lines replayed keep their series and their times' '
	for t in 1 2 3; do
		for p in 85 86; do
			printf "{\"type\":\"counts\",\"ts\":%d000000,\"node\":\"n@h\",\"pid\":\"<0.%d.0>\",\"sends\":%d,\"receives\":%d,\"spawns\":0}\n" $t $p $((t * p)) $t
		done
	done >counts.ndjson &&
	"$BEAMSCOPE" --open counts.ndjson --batch -o series.ndjson --counts 2>err && cat err &&
	jq -c "[.ts, .pid, .sends, .receives]" counts.ndjson >want &&
	jq -c "select(.type == \"counts\") | [.ts, .pid, .sends, .receives]" series.ndjson >got &&
	diff want got &&
	"$BEAMSCOPE" --open counts.ndjson --batch -o series.ndjson 2>err &&
	jq -c "select(.type == \"counts\") | [.ts, .pid, .sends, .receives]" series.ndjson >got &&
	diff want got
'

test_expect_success 'a recording of 40 nodes: every event, from 40 nodes' '
	awk "BEGIN { for (i = 0; i < 40; i++)
		printf \"{\\\"type\\\":\\\"send\\\",\\\"ts\\\":%d,\\\"node\\\":\\\"n%d@h\\\",\\\"pid\\\":\\\"<0.85.0>\\\",\\\"payload\\\":\\\"x\\\",\\\"truncated\\\":false}\\n\", 1000 + i, i }" >nodes40.ndjson &&
	"$BEAMSCOPE" --open nodes40.ndjson --batch -o n40.ndjson 2>err && cat err &&
	grep -q "40 events from 40 nodes" err &&
	expect "$(jq -r "select(.type == \"send\") | .node" n40.ndjson | sort -u | wc -l)" -eq 40 &&
	tail -n 1 n40.ndjson | jq -e ".type == \"summary\" and (.nodes | length) == 40" &&
	ui_open "$TRASH/nodes40.ndjson" && ui_wait "opened .*: 40 events from 40 nodes" &&
	ui_keys ":node n39@h" Enter && ui_wait "showing the processes of n39@h" &&
	ui_keys q && expect "$(ui_exit_status)" = 0
'

test_expect_success 'a file whose size says 0 (/proc) is read, not called empty' '
	! "$BEAMSCOPE" --open /proc/self/status --batch 2>err && cat err &&
	grep -q "\"/proc/self/status\" is not a beamscope recording: line 1 is not JSON" err
'

test_expect_success 'the view over a recording is idle when idle' '
	ui_open "$TRASH/rec.ndjson" && ui_wait "opened .*rec.ndjson" &&
	pid=$(ui_pid "$TRASH/rec.ndjson") && [ -n "$pid" ] &&
	a=$(cpu_ticks "$pid") && sleep 3 && b=$(cpu_ticks "$pid") &&
	echo "$((b - a)) ticks in 3 s" &&
	[ $((b - a)) -lt 30 ] &&
	ui_keys q && expect "$(ui_exit_status)" = 0
'

# quiet_pipe FIFO: five lines of the capture, 20 quiet seconds, three more;
# the writer's pid in $TRASH/writer.pid
quiet_pipe() {
	rm -f "$1" && mkfifo "$1" || return 1
	{ head -n 5 rec.ndjson; sleep 20; tail -n 3 rec.ndjson; } >"$1" &
	echo $! >"$TRASH/writer.pid"
}

test_expect_success 'a pipe that goes quiet: the view reads what came, says it waits, keys work, q quits' '
	quiet_pipe quiet.fifo &&
	ui_open "$TRASH/quiet.fifo" &&
	ui_wait "reading: 5 events so far, waiting for more" &&
	! ui_screen | grep -q "loading 100%" &&
	pid=$(ui_pid "$TRASH/quiet.fifo") &&
	a=$(cpu_ticks "$pid") && sleep 2 && b=$(cpu_ticks "$pid") &&
	echo "$((b - a)) ticks in 2 s" && [ $((b - a)) -lt 20 ] &&
	ui_keys ":" && ui_wait "^:" 2 && ui_keys Escape &&
	ui_keys q && expect "$(ui_exit_status 3)" = 0; rc=$?
	kill "$(cat writer.pid)" 2>/dev/null; exit $rc
'

test_expect_success 'a pipe that goes quiet: batch mode ends on SIGINT with what it read' '
	quiet_pipe quiet.fifo &&
	{ "$BEAMSCOPE" --open quiet.fifo --batch -o piped.ndjson 2>err & } &&
	bs=$! && sleep 2 && kill -INT $bs &&
	for _ in $(seq 1 30); do kill -0 $bs 2>/dev/null || break; sleep 0.1; done
	! kill -0 $bs 2>/dev/null; gone=$?
	wait $bs; rc=$?
	kill "$(cat writer.pid)" 2>/dev/null
	cat err && expect "$gone" -eq 0 && expect "$rc" -eq 0 &&
	expect "$(grep -c "\"type\":\"summary\"" piped.ndjson)" -eq 1 &&
	tail -n 1 piped.ndjson | jq -e ".ended == \"interrupted\" and .events == 5" &&
	grep -q "interrupted: 5 events written from \"quiet.fifo\"" err
'

test_expect_success 'writers never follow a link to a file: -o, --chart -o, :export, :chart-export' '
	echo precious >precious.txt && ln -sf precious.txt trap.json &&
	! "$BEAMSCOPE" --open rec.ndjson --batch -o trap.json 2>err && cat err &&
	grep -q "\"trap.json\" is a symbolic link, not followed; choose another -o FILE" err &&
	! "$BEAMSCOPE" --open rec.ndjson --batch --pids bs_sink --chart mermaid -o trap.json 2>err &&
	cat err && grep -q "is a symbolic link" err &&
	ui_open "$TRASH/rec.ndjson" && ui_wait "opened .*rec.ndjson" &&
	ui_keys ":export $TRASH/trap.json" Enter && ui_wait "is a symbolic link, not followed" &&
	ui_keys / bs_sink Enter && ui_wait "bs_sink" && ui_keys Space &&
	ln -sf precious.txt trap.mmd &&
	ui_keys ":chart-export $TRASH/trap.mmd" Enter && ui_wait "is a symbolic link, not followed" &&
	ui_keys ":export $TRASH/fine.json" Enter && ui_wait "exported" &&
	ui_keys q && expect "$(ui_exit_status)" = 0 &&
	expect "$(cat precious.txt)" = precious &&
	expect "$(ls | grep -c "[.]tmp")" -eq 0 && jq -e ".type == \"export\"" fine.json
'

test_done
