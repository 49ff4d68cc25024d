#!/bin/sh
# Odd and hostile messages: control characters, invalid UTF-8, huge and
# deeply nested terms.  The JSON stays valid and free of control bytes,
# the view shows them escaped and the terminal is left alone, big terms are
# cut on the target, and the target is untouched afterwards.
# Hostile recordings (--open): huge lines, huge exports, millions of
# processes, too many nodes; memory stays bounded whatever they hold.
. "$(dirname "$0")/lib.sh"

start_node bshost || exit 1
node_eval "bs_work:victim()." >/dev/null

test_expect_success 'batch: one valid, escaped, bounded line per message' '
	bs_start --events receive --pids bs_victim --duration 0 && bs_wait_attached &&
	n=$(node_eval "bs_work:hostile().") && echo "$n messages" && sleep 1 &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jq -c . "$TRASH/bs.json" >/dev/null &&
	iconv -f UTF-8 -t UTF-8 "$TRASH/bs.json" >/dev/null &&
	expect "$(tr -d "\n" <"$TRASH/bs.json" | LC_ALL=C tr -d "\040-\176\200-\377" | wc -c)" -eq 0 &&
	jqs -e --argjson n "$n" "[.[:-1][] | select(.type == \"receive\")] | length == \$n" &&
	jqs -e "all(.[:-1][]; (.payload | length) <= 260)" &&
	jqs -e "[.[:-1][] | select(.truncated)] | length >= 5" &&
	jqs -e "any(.[:-1][]; .payload == \"\\\"\\\\e]2;PWNEDa\\\"\")" &&
	jqs -e "any(.[:-1][]; .payload == \"'"'"'a\\\\e[31mb'"'"'\")" &&
	jqs -e "any(.[:-1][]; .payload == \"<<255,254,0,1,27,91,50,74>>\")" &&
	jqs -e "any(.[:-1][]; .payload == \"ünïcødé\")" &&
	expect "$(node_eval "is_process_alive(whereis(bs_victim)).")" = true &&
	target_clean 2
'

test_expect_success 'the view: the same messages, escaped; the terminal keeps its title and screen' '
	tm kill-session -t ui 2>/dev/null
	ui_start --events receive --pids bs_victim && ui_wait "tracing [0-9]+ process" 10 &&
	title=$(tm display-message -p -t ui "#{pane_title}") &&
	ui_keys ":focus bs_victim" Enter && ui_wait "^ <0[.][0-9]+[.]0> bs_victim" &&
	node_eval "bs_work:hostile()." >/dev/null &&
	ui_wait "received <-  <<255,254,0,1,27,91,50,74>>" &&
	ui_wait "received <-  \"\\\\e]2;PWNEDa\"" &&
	ui_keys End && ui_wait "received <-  3[.]14" &&
	ui_screen >screen && cat screen &&
	grep -q "tracing" screen &&
	expect "$(tm display-message -p -t ui "#{pane_title}")" = "$title" &&
	grep -qF "\"\\e]2;PWNEDa\"" screen &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'

test_expect_success 'the agent obeys only its beamscope; stray messages to beamscope are counted and ignored' '
	bs_start --events receive --pids bs_victim --duration 0 && bs_wait_attached &&
	expect "$(node_eval "R = make_ref(), beamscope_agent ! {beamscope, self(), R, stop}, receive {beamscope_reply, R, Re} -> Re after 3000 -> timeout end." | tr -d " ")" = "{error,not_owner}" &&
	node_eval "[{bs_any, N} ! M || N <- nodes(hidden), lists:prefix(\"beamscope\", atom_to_list(N)), M <- [junk, {beamscope_eos, x, y, z}, {beamscope_batch, 0, 0, 0, not_a_binary}, {rex, 1, 2}, lists:seq(1, 1000)]], ok." >/dev/null &&
	node_eval "bs_victim ! still_traced, ok." >/dev/null && sleep 1 &&
	kill -0 "$BS_PID" && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e "any(.[:-1][]; .payload == \"still_traced\")" &&
	jqs -c ".[-1] | {unknown_messages, malformed}" &&
	jqs -e ".[-1].type == \"summary\" and .[-1].unknown_messages + .[-1].malformed >= 4" &&
	target_clean 2
'
# freed memory goes back to the allocator, not to AddressSanitizer's
# quarantine, so a sanitized build's size means something too
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=1"

# recording KIND N: a recording made up to be hostile, on standard output
#   big N       N events of 1 MiB each
#   pids N      N events, each of a new process with a name
#   export N    one export on one line: N events of 1 KiB
#   line N      one event of N MiB, then a small one
#   nodes N     an event from each of N nodes
recording() {
	python3 - "$1" "$2" <<'EOF'
import sys
kind, n = sys.argv[1], int(sys.argv[2])
w = sys.stdout.write
ev = '{"type":"send","ts":%d,"node":"%s","pid":"<0.%d.0>",%s"to":"<0.1.0>","payload":"%s","truncated":false}'
if kind == 'big':
    p = 'a' * (1 << 20)
    for i in range(n):
        w(ev % (1000 + i, 'n@h', 100 + i % 50, '', p) + '\n')
elif kind == 'pids':
    for i in range(n):
        w(ev % (1000 + i, 'n@h', 100 + i, '"name":"p%d",' % i, 'x') + '\n')
elif kind == 'export':
    p = 'b' * 1024
    w('{"type":"export","node":"n@h","exported_ts":1,"evicted_events":0,'
      '"processes":[{"pid":"<0.100.0>","sends":%d,"receives":0,"spawns":0}],"events":[' % n)
    w(','.join(ev % (1000 + i, 'n@h', 100, '', p) for i in range(n)))
    w(']}\n')
elif kind == 'line':
    w(ev % (1000, 'n@h', 100, '', 'c' * (n << 20)) + '\n')
    w(ev % (1001, 'n@h', 101, '', 'small') + '\n')
elif kind == 'nodes':
    for i in range(n):
        w(ev % (1000 + i, 'n%d@h' % i, 85, '', 'x') + '\n')
EOF
}

# peak_below KB: the last run's most memory (peak_run) is below KB
peak_below() {
	got=$(tail -n 1 peak) && echo "peak: $got kB (at most $1)" && expect "$got" -lt "$1"
}

test_expect_success 'recording: a million processes replay in bounded memory' '
	recording pids 1000000 >pids.ndjson &&
	peak_run peak "$BEAMSCOPE" --open pids.ndjson --batch -o pids.out -n 0 2>err &&
	cat err && expect "$(grep -c "\"type\":\"send\"" pids.out)" -eq 1000000 &&
	peak_below 40000 &&
	peak_run peak "$BEAMSCOPE" --open pids.ndjson --batch --pids p7,p999999 \
		-o two.out 2>err &&
	expect "$(jq -r "select(.type == \"send\") | .name" two.out | tr "\n" " ")" = "p7 p999999 " &&
	peak_below 40000
'

test_expect_success 'recording: an endless pipe of new processes leaves the view flat' '
	mkfifo endless.fifo &&
	{ recording pids 100000000 >endless.fifo 2>/dev/null & } && writer=$! &&
	ui_open "$TRASH/endless.fifo" --ring 10000 &&
	ui_wait "^<0[.][0-9]+[.]0> +p[0-9]" &&
	pid=$(ui_pid "$TRASH/endless.fifo") && [ -n "$pid" ] &&
	sleep 3 && a=$(awk "/^VmRSS:/ { print \$2 }" /proc/$pid/status) &&
	sleep 10 && b=$(awk "/^VmRSS:/ { print \$2 }" /proc/$pid/status) &&
	echo "$a kB, then $b kB" && [ $((b - a)) -lt 30000 ] &&
	ui_keys q && expect "$(ui_exit_status)" = 0; rc=$?
	kill $writer 2>/dev/null; exit $rc
'

test_expect_success 'recording: events of 1 MiB are kept by the bytes, not only by the count' '
	recording big 250 >big.ndjson &&
	ui_open "$TRASH/big.ndjson" --ring 1000 &&
	ui_wait "opened .*: 250 events from 1 node" 60 &&
	pid=$(ui_pid "$TRASH/big.ndjson") && kb=$(peak_kb "$pid") &&
	echo "peak: $kb kB" && expect "$kb" -lt 150000 &&
	ui_keys q && expect "$(ui_exit_status)" = 0
'

test_expect_success 'recording: an export of 100 MB on one line is streamed' '
	recording export 100000 >export.json &&
	peak_run peak "$BEAMSCOPE" --open export.json --batch -o export.out 2>err &&
	cat err && expect "$(grep -c "\"type\":\"send\"" export.out)" -eq 100000 &&
	peak_below 50000 &&
	head -c 50000000 export.json >cut.json &&
	peak_run peak "$BEAMSCOPE" --open cut.json --batch -o cut.out 2>err &&
	cat err && grep -q "the export was cut short; what it held up to there is read" err &&
	expect "$(wc -l <cut.out)" -gt 40000 && peak_below 50000
'

# a line is gathered up to the cap (64 MiB) before it is known to be too
# long (about 70 MB at the peak; a build with AddressSanitizer copies it
# once more as it grows, about 150 MB); read whole, the 80 MiB line took
# 250 MB
test_expect_success 'recording: a line over 64 MiB is skipped as it is read, and said' '
	recording line 80 >line.ndjson &&
	peak_run peak "$BEAMSCOPE" --open line.ndjson --batch -o line.out 2>err &&
	cat err && grep -q "1 malformed line skipped, the first at line 1 (line too long)" err &&
	expect "$(jq -r "select(.type == \"send\") | .payload" line.out)" = small &&
	peak_below 180000
'

test_expect_success 'recording: past 1024 nodes, the lines of the others are malformed, saying why' '
	recording nodes 1030 >nodes.ndjson &&
	"$BEAMSCOPE" --open nodes.ndjson --batch -o nodes.out 2>err && cat err &&
	grep -q "6 malformed lines skipped, the first at line 1025 (more than 1024 nodes)" err &&
	expect "$(grep -c "\"type\":\"send\"" nodes.out)" -eq 1024 &&
	ui_open "$TRASH/nodes.ndjson" && ui_wait "the first at line 1025 .more than 1024 nodes" &&
	ui_keys q && expect "$(ui_exit_status)" = 0
'
test_done
