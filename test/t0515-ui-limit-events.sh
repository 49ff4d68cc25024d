#!/bin/sh
# One meaning of "event" for the event limit, the view's ev/s and the
# summaries: an event of a kind asked for, shipped whole or counted on the
# target.  In the view most processes are counted, not shipped, and a
# limit set with :limit while tracing reaches the tracer at once.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

start_node bslimev || exit 1

# the view, wide enough for the whole status line
ui_start_wide() {
	rm -f "$TRASH/ui.rc"
	ui_session 220 30 \
		"XDG_STATE_HOME='$TRASH/state' '$BEAMSCOPE' '$NODE' --cookie-file '$COOKIE_FILE' $*; echo \$? >'$TRASH/ui.rc'; sleep 600"
}

FLOOD='spawn(fun() -> [self() ! x || _ <- lists:seq(1, 5000)], [receive x -> ok end || _ <- lists:seq(1, 5000)] end), ok.'

test_expect_success ':limit events 500 while tracing stops at exactly 500 events' '
	ui_start_wide --events send,receive && ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys ":limit events 500" Enter && ui_wait "limits .*500 events" &&
	ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "$FLOOD" >/dev/null &&
	ui_wait "event limit \\(500\\) reached" 10 &&
	ui_keys ":export $TRASH/x.json" Enter && ui_wait "x.json" 5 &&
	for _ in $(seq 1 50); do [ -s "$TRASH/x.json" ] && break; sleep 0.1; done &&
	jq "[.processes[] | .sends + .receives] | add" "$TRASH/x.json" >sum &&
	cat sum && expect "$(cat sum)" = 500
'

test_expect_success 'stopped by the limit, the view quits and the target is clean' '
	ui_wait " 0 ev/s " 5 &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'
test_done
