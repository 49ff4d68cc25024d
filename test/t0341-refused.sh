#!/bin/sh
# A name epmd knows whose port is closed is not a cookie problem: beamscope
# says nothing listens there, with exit 3; a wrong cookie still says so,
# with exit 4.
. "$(dirname "$0")/lib.sh"

start_node bsrefused || exit 1

# processes a test starts in its subshell: stopped when the test file exits
extra_pid() {
	echo "$1" >>"$TRASH/extra.pids"
}
trap 'for p in $(cat "$TRASH/extra.pids" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done; cleanup' EXIT
erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_epmd.erl" || exit 1

# fake_name NAME PORT: NAME registered with epmd at PORT while it runs
fake_name() {
	erl -noshell -noinput -pa "$TRASH/ebin" -run bs_epmd main "$1" "$2" \
		>"$TRASH/fake.$1.log" 2>&1 &
	extra_pid $!
	for _ in $(seq 1 100); do
		grep -q registered "$TRASH/fake.$1.log" && return 0
		sleep 0.05
	done
	cat "$TRASH/fake.$1.log"
	return 1
}

# a port nobody listens on: tcpmux's, which no one serves any more
closed_port() {
	echo 1
}

test_expect_success 'a registered name with nothing at its port: exit 3, says what happened' '
	fake_name "bsghost$$" "$(closed_port)" &&
	"$BEAMSCOPE" "bsghost$$" --batch --cookie-file "$COOKIE_FILE" 2>err; rc=$?
	cat err; expect "$rc" -eq 3 && expect "$(wc -l <err)" -eq 1 &&
	grep -q "node \"bsghost$$@.*\" is registered with epmd at port [0-9]*, but nothing accepts connections there (Connection refused)" err &&
	! grep -q cookie err
'

test_expect_success 'the view says the same' '
	tm kill-session -t ui 2>/dev/null
	tm -f /dev/null new-session -d -s ui -x 100 -y 30 \
		"\"$BEAMSCOPE\" bsghost$$ --cookie-file \"$COOKIE_FILE\" 2>\"$TRASH/ui.err\"; echo \$? >\"$TRASH/ui.rc\"; sleep 600" &&
	expect "$(ui_exit_status 10)" = 3 && cat ui.err && grep -q "nothing accepts connections there" ui.err
'

test_expect_success 'a wrong cookie is still a cookie problem: exit 4' '
	echo wrongcookie >wrong && chmod 400 wrong &&
	"$BEAMSCOPE" "$NODE" --batch --cookie-file wrong 2>err; rc=$?
	cat err; expect "$rc" -eq 4 && grep -q "refused the cookie" err
'
test_done
