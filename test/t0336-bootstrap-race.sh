#!/bin/sh
# Two beamscopes attaching at the same moment: one wins, the other is
# refused with the words a second session gets, and no sequence of
# sessions leaves beamscope's modules loaded.  To make them meet every
# time, the target's code server is held while both start: both get as far
# as they can before anything is loaded.
. "$(dirname "$0")/lib.sh"

start_node bsrace || exit 1

# held until bs_hold gets go; the suspension ends with its holder
HOLD='register(bs_hold, spawn(fun() -> C = whereis(code_server), true = erlang:suspend_process(C), receive go -> erlang:resume_process(C) end end)), ok.'

race() {
	node_eval "$HOLD" >/dev/null &&
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --duration 9 \
		-o a.json 2>a.err & pa=$!
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --duration 9 \
		-o b.json 2>b.err & pb=$!
	sleep 1.5
	node_eval "bs_hold ! go, ok." >/dev/null
	wait $pa; ra=$?
	wait $pb; rb=$?
	echo "exit $ra and $rb"; cat a.err b.err
	if [ $ra -eq 0 ]; then loser=b.err; else loser=a.err; fi
	expect "$(printf "%s\n" $ra $rb | sort | tr -d "\n")" = 06 &&
	expect "$(wc -l <$loser)" -eq 1 &&
	grep -q "^beamscope: node \"$NODE_FULL\" is already being traced by another beamscope (agent <0[.][0-9]*[.][0-9]*>), which is still there; wait for it to end, it cleans up by itself\$" $loser &&
	! grep -q "{error" a.err b.err &&
	target_clean 3
}

for round in 1 2 3; do
	test_expect_success "two at once, round $round: one wins, the other is refused, nothing stays" 'race'
done

test_expect_success 'sessions one after the other, at once, leave nothing either' '
	for i in 1 2 3; do
		"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --duration 0.3 \
			-o s.json 2>s.err || { cat s.err; exit 1; }
	done && target_clean 2
'
test_done
