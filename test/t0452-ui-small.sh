#!/bin/sh
# Small things a new user meets in the view: keys as terminals send them,
# help, the tree, messages, export paths, and what is said without a
# terminal.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

start_node bssmall || exit 1

# ui_start_term TERM [beamscope args...]: ui_start, with TERM set as many
# terminal emulators set it
ui_start_term() {
	_term=$1
	shift
	tm kill-session -t ui 2>/dev/null && target_clean 3 >/dev/null
	rm -f "$TRASH/ui.rc"
	tm -f /dev/null new-session -d -s ui -x 100 -y 30 \
		"TERM=$_term XDG_STATE_HOME='$TRASH/state' '$BEAMSCOPE' '$NODE' --cookie-file '$COOKIE_FILE' $*; echo \$? >'$TRASH/ui.rc'; sleep 600"
}

# ui_gone PATTERN: wait until the screen no longer shows PATTERN (a key
# sent is not yet a key read: the old screen is still there meanwhile)
ui_gone() {
	for _ in $(seq 1 100); do
		ui_screen | grep -qE -- "$1" || return 0
		sleep 0.05
	done
	echo "screen still shows: $1"
	ui_screen
	return 1
}

# a parent with 40 children, so that the spawn tree is longer than a page
node_eval "spawn(fun() -> register(parent40, self()), receive go -> [spawn(fun bs_work:idle/0) || _ <- lists:seq(1, 40)] end, receive stop -> ok end end), ok." >/dev/null

test_expect_success 'Home and End as ESC [ 1 ~ and ESC [ 4 ~ (TERM=xterm-256color)' '
	ui_start_term xterm-256color && ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "parent40 ! go, ok." >/dev/null &&
	ui_keys t && ui_wait "spawn tree" && ui_wait "\`- " &&
	for _ in $(seq 1 50); do
		[ "$(ui_screen | grep -c "\`- ")" -ge 27 ] && break
		sleep 0.1
	done && ui_keys q &&
	ui_wait " [0-9]+/[0-9]+ " &&
	tm send-keys -t ui -H 1b 5b 34 7e && ui_wait " ([0-9]+)/\\1 " 2 &&
	tm send-keys -t ui -H 1b 5b 31 7e && ui_wait " 1/[0-9]+ " 2 &&
	tm send-keys -t ui -H 1b 5b 38 7e && ui_wait " ([0-9]+)/\\1 " 2 &&
	tm send-keys -t ui -H 1b 5b 37 7e && ui_wait " 1/[0-9]+ " 2 &&
	tm send-keys -t ui -H 1b 4f 46 && ui_wait " ([0-9]+)/\\1 " 2 &&
	tm send-keys -t ui -H 1b 4f 48 && ui_wait " 1/[0-9]+ " 2
'

test_expect_success 'End reaches the end of the spawn tree; reopened, the tree starts at its root' '
	ui_keys t && ui_wait "spawn tree" &&
	ui_screen | sed -n 2p | grep -v "\`-" &&
	tm send-keys -t ui -H 1b 5b 34 7e &&
	# the last page is parent40 s children; one root of another tree may
	# follow them (a process an rpc of the test or the node spawned since)
	for _ in $(seq 1 50); do
		[ "$(ui_screen | sed -n 2,28p | grep -c "\`- ")" -ge 26 ] && break
		sleep 0.1
	done &&
	expect "$(ui_screen | sed -n 2,28p | grep -c "\`- ")" -ge 26 &&
	ui_keys q && ui_gone "spawn tree" && ui_keys t && ui_wait "spawn tree" &&
	for _ in $(seq 1 50); do
		ui_screen | sed -n 2p >root.txt
		! grep -q "\`-" root.txt && grep -q "<0[.]" root.txt && break
		sleep 0.1
	done &&
	cat root.txt && ! grep "\`-" root.txt && grep "<0[.]" root.txt
'

test_expect_success 'help: PgDn and PgUp move by pages' '
	ui_keys q "?" && ui_wait "help: q closes" &&
	ui_screen | sed -n 2p | grep "^Keys" &&
	ui_screen | sed -n 28p >last.txt && [ -s last.txt ] &&
	ui_keys PgDn && sleep 0.3 && ui_screen | sed -n 2p >p1.txt &&
	! grep "^Keys" p1.txt &&
	! ui_screen | sed -n 2,28p | grep -qxF "$(cat last.txt)" &&
	ui_keys PgUp && sleep 0.3 && ui_screen | sed -n 2p | grep "^Keys" &&
	ui_keys PgDn PgDn PgUp && sleep 0.3 && ! ui_screen | sed -n 2p | grep "^Keys" &&
	ui_keys PgUp && sleep 0.3 && ui_screen | sed -n 2p | grep "^Keys" &&
	ui_keys End && sleep 0.3 && ui_screen | sed -n 28p | grep -E "~6400k +MEM, HEAP: measured"
'

test_expect_success 'help: a long argument list keeps a gap before its help' '
	ui_screen | grep -E "limit duration[|]events[|]payload[|]stuck N  +set a limit"
'

test_expect_success 'a later command that works clears the last error' '
	tm resize-window -t ui -x 340 -y 30 && sleep 0.3 &&
	ui_keys q ":frobnicate" Enter && ui_wait "last error: unknown command" &&
	ui_keys ":sort pid" Enter && sleep 0.3 &&
	! ui_screen | grep "last error" &&
	ui_keys ":sort nosuch" Enter && ui_wait "last error: unknown column" &&
	tm resize-window -t ui -x 100 -y 30
'

test_expect_success ':export expands ~ and says so when given a directory' '
	ui_keys ":export ~/x.json" Enter && ui_wait "exported [0-9]+ processes" &&
	jq -e ".type == \"export\"" "$TRASH/x.json" &&
	mkdir -p "$TRASH/adir" &&
	ui_keys ":export $TRASH/adir" Enter && ui_wait "is a directory" &&
	ui_screen | grep "name a file" && ! ui_screen | grep "make room" &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'

test_expect_success 'one process traced is one process' '
	node_eval "bs_work:spinner()." >/dev/null &&
	ui_start --pids bs_spinner && ui_wait "tracing 1 process on" 10 &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'

test_expect_success 'no terminal and no such node: the node is what is said' '
	! "$BEAMSCOPE" nosuch_$$ --cookie-file "$COOKIE_FILE" </dev/null >out 2>err &&
	cat err && grep "node \"nosuch_$$@.*\" not found" err && ! grep terminal err
'

test_expect_success 'no terminal, the node is there: it needs a terminal' '
	! "$BEAMSCOPE" "$NODE" --cookie-file "$COOKIE_FILE" </dev/null >out 2>err &&
	cat err && grep "needs a terminal" err && grep -- "--batch" err &&
	target_clean 2
'
test_done
