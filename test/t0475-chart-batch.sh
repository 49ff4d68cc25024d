#!/bin/sh
# batch --chart: the chart of the --pids processes instead of JSON lines,
# live from a node and from a recording, as Mermaid and PlantUML.
. "$(dirname "$0")/lib.sh"

mkdir -p "$TRASH/ebin" && erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_chat.erl" || exit 1
start_node bschartb || exit 1
node_eval "bs_chat:start()." >/dev/null

# "FROM -> TO" for every arrow of a Mermaid chart, participants by name;
# "X NAME" for an exit
mmd_rows() {
	perl -ne '
		if (/^    participant (P\d+) as (\S+)/) { $n{$1} = $2; next }
		if (/^    (P\d+)(?:->>|--\)|-x)(P\d+): /) { print "$n{$1} -> $n{$2}\n"; next }
		if (/^    Note over (P\d+): exit/) { print "X $n{$1}\n" }' "$1"
}
puml_rows() {
	perl -ne '
		if (/^participant "([^"\\]*?)(?:\\n[^"]*)?" as (P\d+)/) { my ($m, $p) = ($1, $2); $m =~ s/<U\+005F>/_/g; $n{$p} = $m; next }
		if (/^(P\d+) (?:->|-->|->x) (P\d+) : /) { print "$n{$1} -> $n{$2}\n"; next }
		if (/^note over (P\d+): exit/) { print "X $n{$1}\n" }' "$1"
}

cat >want.txt <<\EOT
others -> bs_chat_a
bs_chat_a -> bs_chat_b
bs_chat_b -> bs_chat_a
bs_chat_a -> bs_chat_b
bs_chat_b -> bs_chat_a
bs_chat_a -> bs_chat_c
bs_chat_c -> bs_chat_b
X bs_chat_b
EOT

test_expect_success '--chart mermaid: the exchange, live from a node' '
	bs_start --pids bs_chat_a,bs_chat_b,bs_chat_c --chart mermaid -d 3 &&
	bs_wait_attached && node_eval "bs_chat:go()." >/dev/null &&
	bs_wait && expect "$BS_RC" = 0 && cat "$TRASH/bs.json" "$TRASH/bs.err" &&
	head -n 1 "$TRASH/bs.json" | grep -qx sequenceDiagram &&
	mmd_rows "$TRASH/bs.json" >got.txt && diff -u want.txt got.txt &&
	cp "$TRASH/bs.json" chart.mmd && mmd_parse "$TRASH/chart.mmd" &&
	grep -q "a chart of 7 messages between 3 processes" "$TRASH/bs.err" &&
	target_clean 2
'

test_expect_success '--chart plantuml from a recording (--open) gives the same chart' '
	node_eval "bs_chat:start()." >/dev/null &&
	bs_start --pids bs_chat_a,bs_chat_b,bs_chat_c -d 3 &&
	bs_wait_attached && node_eval "bs_chat:go()." >/dev/null &&
	bs_wait && expect "$BS_RC" = 0 && cp "$TRASH/bs.json" rec.ndjson &&
	"$BEAMSCOPE" --open rec.ndjson --batch --pids bs_chat_a,bs_chat_b,bs_chat_c \
		--chart plantuml -o rec.puml 2>err.txt && cat rec.puml err.txt &&
	puml_rows rec.puml >got.txt && diff -u want.txt got.txt &&
	plantuml -tsvg rec.puml && test -s rec.svg
'

test_expect_success '--chart with --follow: the followed process and what it talks to' '
	bs_start --follow bs_chat_a --chart plantuml -d 2 && bs_wait_attached &&
	node_eval "bs_chat:say(followed)." >/dev/null &&
	bs_wait && expect "$BS_RC" = 0 && cat "$TRASH/bs.json" &&
	puml_rows "$TRASH/bs.json" >got.txt &&
	printf "others -> bs_chat_a\nbs_chat_a -> others\n" >want.txt &&
	diff -u want.txt got.txt && grep -q "^P0 -> P1 : followed$" "$TRASH/bs.json"
'

# arrows whose label is not empty: "FROM -> TO : LABEL" of each one; a
# label may only be followed by a note in brackets, as " (not received)"
mmd_labels() {
	perl -ne 'print "$1\n" if /^    P\d+(?:->>|--\)|-x)P\d+: (.*)$/ && $1 !~ /^(?: \(.*\))*$/' "$1"
}
puml_labels() {
	perl -ne 'print "$1\n" if /^P\d+ (?:->|-->|->x) P\d+ : (.*)$/ && $1 !~ /^(?: \(.*\))*$/' "$1"
}
# (the arrows are compared as sets: with no text, which send a receive
# pairs with is the pairing's business, not this test's)
# malloc fills what it gives with a byte (glibc; AddressSanitizer fills by
# itself): a label read from memory never written shows it
export MALLOC_PERTURB_=90

test_expect_success '--chart with --payload-bytes 0: every arrow, and no label' '
	node_eval "bs_chat:start()." >/dev/null &&
	bs_start --pids bs_chat_a,bs_chat_b,bs_chat_c --chart mermaid -d 3 \
		--payload-bytes 0 && bs_wait_attached &&
	node_eval "bs_chat:go()." >/dev/null &&
	bs_wait && expect "$BS_RC" = 0 && cat "$TRASH/bs.json" &&
	printf "%s\n" "others -> bs_chat_a" "bs_chat_a -> bs_chat_b" "bs_chat_b -> bs_chat_a" \
		"bs_chat_a -> bs_chat_b" "bs_chat_b -> bs_chat_a" "bs_chat_a -> bs_chat_c" \
		"bs_chat_c -> bs_chat_b" "X bs_chat_b" >want.txt &&
	mmd_rows "$TRASH/bs.json" | sort >got.txt && sort want.txt | diff -u - got.txt &&
	mmd_labels "$TRASH/bs.json" >labels.txt && { [ ! -s labels.txt ] || {
		echo "labels that should be empty:"; cat labels.txt; false; }; } &&
	cp "$TRASH/bs.json" empty.mmd && mmd_parse "$TRASH/empty.mmd"
'

test_expect_success '--chart of a recording whose payloads are "": no label' '
	jq -c "if has(\"payload\") then .payload = \"\" else . end" rec.ndjson >empty.ndjson &&
	grep -q "\"payload\":\"\"" empty.ndjson &&
	"$BEAMSCOPE" --open empty.ndjson --batch --pids bs_chat_a,bs_chat_b,bs_chat_c \
		--chart plantuml -o empty.puml 2>err.txt && cat empty.puml err.txt &&
	printf "%s\n" "others -> bs_chat_a" "bs_chat_a -> bs_chat_b" "bs_chat_b -> bs_chat_a" \
		"bs_chat_a -> bs_chat_b" "bs_chat_b -> bs_chat_a" "bs_chat_a -> bs_chat_c" \
		"bs_chat_c -> bs_chat_b" "X bs_chat_b" >want.txt &&
	puml_rows empty.puml | sort >got.txt && sort want.txt | diff -u - got.txt &&
	puml_labels empty.puml >labels.txt && { [ ! -s labels.txt ] || {
		echo "labels that should be empty:"; cat labels.txt; false; }; } &&
	plantuml -tsvg empty.puml && test -s empty.svg
'

test_expect_success 'the same under valgrind: no uninitialised byte read' '
	if ! command -v valgrind >/dev/null || nm "$BEAMSCOPE" | grep -q __asan_init; then
		echo "no valgrind, or a sanitized build (which fills by itself): skipped"
		exit 0
	fi
	valgrind -q --error-exitcode=9 "$BEAMSCOPE" --open empty.ndjson --batch \
		--pids bs_chat_a,bs_chat_b,bs_chat_c --chart mermaid -o vg.mmd 2>vg.txt ||
		{ cat vg.txt; false; }
'

test_expect_success '--chart says what it needs' '
	! "$BEAMSCOPE" --open rec.ndjson --batch --chart mermaid 2>err.txt &&
	grep -q "^beamscope: --chart needs the processes to chart: --pids a,b,c or --follow" err.txt &&
	! "$BEAMSCOPE" --open rec.ndjson --batch --pids bs_chat_a --chart svg 2>err.txt &&
	grep -q "\"svg\": plantuml or mermaid" err.txt &&
	! "$BEAMSCOPE" --open rec.ndjson --pids bs_chat_a --chart mermaid 2>err.txt &&
	grep -q "chart is for batch mode" err.txt
'
test_done
