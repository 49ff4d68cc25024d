#!/bin/sh
# What beamscope leaves and does not leave on the target while it runs:
# the NIF file, its own processes' events; and long node names.
. "$(dirname "$0")/lib.sh"

mkdir -p "$TRASH/target-tmp"
LONGNAMES=1 start_node bslong -env TMPDIR "$TRASH/target-tmp" || exit 1

test_expect_success 'long names attach; no NIF file left; agent and workers untraced' '
	BS_NODE=$NODE_FULL bs_start --duration 0 && bs_wait_attached &&
	grep -q "attached to $NODE_FULL" "$TRASH/bs.err" &&
	echo "the NIF file and its directory are gone once loaded" &&
	[ -z "$(ls -A "$TRASH/target-tmp")" ] &&
	ours=$(node_eval "A = whereis(beamscope_agent), {monitors, Ms} = process_info(A, monitors), string:join([pid_to_list(P) || P <- [A | [W || {process, W} <- Ms]]], \",\")." | tr -d "\"") &&
	echo "ours: $ours" && expect "$(echo "$ours" | tr "," "\n" | wc -l)" -ge 2 &&
	node_eval "bs_work:sink(500, 2), ok." && sleep 0.3 &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e "(.[-1].events > 1000)" &&
	jqs -e --arg ours "$ours" "(\$ours | split(\",\")) as \$o |
		[.[:-1][] | select(.pid as \$p | \$o | index(\$p))] | length == 0" &&
	target_clean 2
'

test_expect_success '-l with a bare name uses long names' '
	"$BEAMSCOPE" "$NODE" -l --batch --cookie-file "$COOKIE_FILE" -d 0.2 -q >out.json &&
	tail -n 1 out.json | jq -e ".node == \"$NODE_FULL\""
'
test_done
