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
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	jqs -e "[.[] | select(.name == \"auth\" or .to_name == \"auth\")] | length > 0" &&
	jqs -e "all(.[] | select(.name == \"auth\" or .to_name == \"auth\") | .payload; . == \"<redacted: it holds a cookie>\")" &&
	! grep -F "$COOKIE" "$TRASH/bs.json" && ! grep -F "$COOKIE" "$TRASH/bs.err" &&
	target_clean 2
'

test_expect_success 'batch: the cookie inside traced messages and call results is redacted' '
	bs_start --duration 0 --max-events 0 --call "erlang:get_cookie() -> return" --payload-bytes 40 &&
	bs_wait_attached &&
	node_eval "P = spawn(fun() -> receive _ -> receive _ -> ok end end end), C = erlang:get_cookie(), P ! {c, C}, P ! {b, binary:copy(atom_to_binary(C), 3)}, ok." >/dev/null &&
	sleep 1 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
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
	ui_wait "exported" && ui_keys Q && expect "$(ui_exit_status 5)" = 0 &&
	grep -q "redacted: it holds a cookie" rec.json &&
	! grep -F "$COOKIE" screen rec.json exp.json && target_clean 2
'

test_expect_success 'the servers view: a gen call carrying the cookie shows none of it' '
	erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_gen.erl" && node_eval "bs_gen:start()." >/dev/null &&
	ui_start && ui_wait " tracing [0-9]+:" 10 && ui_keys v && ui_wait "SERVER" &&
	ui_wait "gen calls paired" 10 &&
	node_eval "C = atom_to_list(erlang:get_cookie()), gen_server:call(bs_gen_srv, {put, C, C ++ [0]})." >/dev/null &&
	ui_wait " bs_gen_srv +put +1 " 5 && ui_keys Home Enter &&
	ui_wait "slowest calls to bs_gen_srv" 5 && ui_wait "redacted: it holds a cookie" 5 &&
	ui_screen >screen && ui_keys Q && expect "$(ui_exit_status 5)" = 0 &&
	! grep -F "$COOKIE" screen && target_clean 2
'

# ---- an Elixir node: the cookie's bytes, which Elixir writes as numbers
if ! start_elixir_node bscookieex; then
	say "no Elixir (apt-get install elixir): the Elixir cases are not run"
	test_done
fi
node_eval "register(bs_csink, spawn(fun F() -> receive _ -> F() end end)), ok." >/dev/null

# what must never be seen: the cookie, its first six characters, and its
# first six bytes as Erlang and as Elixir write byte values
FORBIDDEN=$TRASH/forbidden
{
	printf '%s\n' "$COOKIE" "$(printf %s "$COOKIE" | cut -c1-6)"
	printf %s "$COOKIE" | cut -c1-6 | od -An -tu1 | awk '{ $1 = $1; print }' | tr " " ","
	printf %s "$COOKIE" | cut -c1-6 | od -An -tu1 | awk '{ $1 = $1; print }' | sed "s/ /, /g"
} >"$FORBIDDEN"
no_cookie() {
	if grep -F -f "$FORBIDDEN" "$@"; then
		echo "a cookie in: $*"; return 1
	fi
}

# the cookie as bytes: in a binary, a string, a list of integers, and cut
SEND_BYTES='C = atom_to_binary(erlang:get_cookie()),
	[bs_csink ! T || T <- [<<C/binary, 0>>, binary_to_list(C) ++ [0],
		{x, binary_to_list(C) ++ [1000]}, binary:copy(<<0, C/binary>>, 3)]], ok.'

for syn in elixir erlang; do
	test_expect_success "Elixir node, $syn syntax, batch: the cookie as bytes is redacted" '
		bs_start --pids bs_csink --events receive --payload-bytes 40 --syntax '$syn' -d 0 &&
		bs_wait_attached && grep -q "'$syn' syntax" "$TRASH/bs.err" &&
		node_eval "$SEND_BYTES" >/dev/null &&
		for _ in $(seq 1 100); do
			[ "$(grep -c "\"type\":\"receive\"" "$TRASH/bs.json")" -ge 4 ] && break
			sleep 0.1
		done &&
		kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 && cat "$TRASH/bs.json" &&
		jqs -e "[.[] | select(.type == \"receive\")] | length == 4 and
			all(.payload == \"<redacted: it holds a cookie>\")" &&
		no_cookie "$TRASH/bs.json" "$TRASH/bs.err" && target_clean 2
	'
done

test_expect_success 'Elixir node: the view, its recording and its export: no cookie either' '
	ui_start --record "$TRASH/recex.json" --payload-bytes 40 && ui_wait " tracing [0-9]+:" 10 &&
	ui_keys ":focus :bs_csink" Enter && ui_wait "^ <0[.][0-9]+[.]0> :bs_csink" &&
	node_eval "$SEND_BYTES" >/dev/null && ui_wait "redacted: it holds a cookie" &&
	sleep 0.5 && ui_screen >screen &&
	expect "$(grep -c "redacted: it holds a cookie" screen)" -ge 4 &&
	ui_keys ":syntax erlang" Enter && ui_wait "erlang syntax" 5 && ui_screen >>screen &&
	ui_keys ":export $TRASH/expex.json" Enter &&
	ui_wait "exported" && ui_keys Q && expect "$(ui_exit_status 5)" = 0 &&
	expect "$(grep -c "redacted: it holds a cookie" recex.json)" -ge 4 &&
	expect "$(grep -o "redacted: it holds a cookie" expex.json | wc -l)" -ge 4 &&
	no_cookie screen recex.json expex.json && target_clean 2
'
test_done
