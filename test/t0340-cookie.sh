#!/bin/sh
# No cookie is ever shown: when nodes connect to the target while it is
# traced, the auth process hands the cookie around; batch output, the view,
# its recording and its export show none of it.
. "$(dirname "$0")/lib.sh"

start_node bscookie || exit 1

# a node with the same cookie connects, and so does erl_call
visitors() {
	erl -sname "bsvisit$$_$1" -setcookie "$COOKIE" -noshell -noinput \
		-eval "pong = net_adm:ping('$NODE_FULL'), halt()." &&
	node_eval "ok." >/dev/null
}

test_expect_success 'batch: nodes connect during the trace; the cookie is nowhere' '
	bs_start --duration 0 --max-events 0 && bs_wait_attached &&
	visitors 1 && sleep 1 &&
	kill -INT "$BS_PID" && bs_wait && [ "$BS_RC" -eq 0 ] &&
	jqs -e "[.[] | select(.name == \"auth\" or .to_name == \"auth\")] | length > 0" &&
	jqs -e "all(.[] | select(.name == \"auth\" or .to_name == \"auth\") | .payload; . == \"<redacted: it holds a cookie>\")" &&
	! grep -F "$COOKIE" "$TRASH/bs.json" && ! grep -F "$COOKIE" "$TRASH/bs.err" &&
	target_clean 2
'

test_expect_success 'batch: the cookie inside traced messages and call results is redacted' '
	bs_start --duration 0 --max-events 0 --call "erlang:get_cookie() -> return" --payload-bytes 40 &&
	bs_wait_attached &&
	node_eval "P = spawn(fun() -> receive _ -> receive _ -> ok end end end), C = erlang:get_cookie(), P ! {c, C}, P ! {b, binary:copy(atom_to_binary(C), 3)}, ok." >/dev/null &&
	sleep 1 && kill -INT "$BS_PID" && bs_wait && [ "$BS_RC" -eq 0 ] &&
	jqs -e "any(.[]; .type == \"return\" and .value == \"<redacted: it holds a cookie>\")" &&
	jqs -e "[.[] | select(.type == \"receive\" and .payload == \"<redacted: it holds a cookie>\")] | length >= 2" &&
	! grep -F "$COOKIE" "$TRASH/bs.json" &&
	! grep -F "$(printf %s "$COOKIE" | cut -c1-6)" "$TRASH/bs.json" &&
	target_clean 2
'

test_expect_success 'the view, its recording and its export: no cookie either' '
	ui_start --record "$TRASH/rec.json" && ui_wait " tracing [0-9]+:" 10 &&
	ui_keys ":focus auth" Enter && ui_wait "^ <0[.][0-9]+[.]0> auth" &&
	visitors 2 && ui_wait "redacted: it holds a cookie" &&
	ui_screen >screen && ui_keys ":export $TRASH/exp.json" Enter &&
	ui_wait "exported" && ui_keys Q && [ "$(ui_exit_status 5)" = 0 ] &&
	grep -q "redacted: it holds a cookie" rec.json &&
	! grep -F "$COOKIE" screen rec.json exp.json && target_clean 2
'
test_done
