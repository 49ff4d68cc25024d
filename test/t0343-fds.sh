#!/bin/sh
# Started with standard input, output or error closed, beamscope opens
# them on /dev/null first: nothing it writes lands in the distribution
# stream or the signal pipe, and the run ends the way it should.
. "$(dirname "$0")/lib.sh"

start_node bsfds || exit 1

test_expect_success '0, 1 and 2 closed: the run goes to its end, the target holds no stray binary' '
	before=$(node_eval "erlang:memory(binary).") &&
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --duration 2 \
		-o "$TRASH/out.json" 0<&- 1>&- 2>&-; rc=$?
	after=$(node_eval "erlang:memory(binary).") &&
	echo "rc $rc, binary $before -> $after" && expect "$rc" -eq 0 &&
	jq -s -e ".[-1].type == \"summary\" and .[-1].ended == \"duration\"" out.json &&
	expect "$after" -lt $((before + 50000000)) && target_clean 2
'

test_expect_success '0 and 2 closed: not taken for a signal, the run lasts its --duration' '
	start=$(date +%s%N) &&
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --duration 2 \
		0<&- 2>&- >out2.json; rc=$?
	ms=$(( ($(date +%s%N) - start) / 1000000 )) &&
	echo "rc $rc after $ms ms" && expect "$rc" -eq 0 && expect "$ms" -ge 1900 &&
	jq -s -e ".[-1].ended == \"duration\"" out2.json && target_clean 2
'

test_expect_success '2 closed and an error: exit status alone, nothing written elsewhere' '
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$TRASH/none" -o out3.json 2>&-; rc=$?
	expect "$rc" -eq 2 && [ ! -s out3.json ]
'
test_done
