#!/bin/sh
# Whatever comes from outside is escaped wherever it is shown: names epmd
# knows, function names in messages, atoms in the JSON and in the view.
. "$(dirname "$0")/lib.sh"

start_node bsesc || exit 1

# processes a test starts in its subshell: stopped when the test file exits
extra_pid() {
	echo "$1" >>"$TRASH/extra.pids"
}
trap 'for p in $(cat "$TRASH/extra.pids" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done; cleanup' EXIT
erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_epmd.erl" || exit 1

# no escape character, C1 control, line separator or bidi override, and
# none of the characters a terminal shows as nothing: zero-width space,
# joiners, byte order mark, soft hyphen
clean() {
	! LC_ALL=C grep -q "$(printf '\033')" "$@" &&
	! LC_ALL=C grep -qE "$(printf '\302[\200-\237]|\342\200[\250-\256]')" "$@" &&
	! LC_ALL=C grep -qE "$(printf '\342\200[\213-\217]|\357\273\277|\302\255')" "$@"
}

EVIL=$(printf 'bsevil\033]2;PWNED\007\033[31m%s' $$)

test_expect_success 'an epmd name with escape sequences: escaped by beamscope, --list and "not found"' '
	erl -noshell -noinput -pa "$TRASH/ebin" -run bs_epmd main "$EVIL" 1 >fake.log 2>&1 &
	fake=$! && extra_pid $fake
	for _ in $(seq 1 100); do grep -q registered fake.log && break; sleep 0.05; done
	grep -q registered fake.log &&
	"$BEAMSCOPE" 2>none.err; "$BEAMSCOPE" --list >list.out 2>&1;
	"$BEAMSCOPE" nosuchnode --batch --cookie-file "$COOKIE_FILE" 2>nf.err; rc=$?
	kill -9 $fake  # other names lists stay plain
	cat none.err list.out nf.err; expect "$rc" -eq 3 &&
	grep -qF "bsevil\\x{1B}]2;PWNED\\x{7}\\x{1B}[31m" list.out &&
	grep -qF "bsevil\\x{1B}]2;PWNED" none.err && grep -qF "bsevil\\x{1B}]2;PWNED" nf.err &&
	clean none.err list.out nf.err
'

test_expect_success 'a function name with escapes in "already has a trace pattern"' '
	node_eval "Fs = [{attribute,1,module,bs_esc},{attribute,1,export,[{list_to_atom(\"f\\e[2J\"),0}]},{function,1,list_to_atom(\"f\\e[2J\"),0,[{clause,1,[],[],[{atom,1,ok}]}]}], {ok, M, B} = compile:forms(Fs), {module, M} = code:load_binary(M, \"bs_esc.erl\", B), erlang:trace_pattern({bs_esc, list_to_atom(\"f\\e[2J\"), 0}, true, [global])." &&
	# the message exists where the legacy session is beamscope'"'"'s
	if sessions_here; then legacy=--legacy; else legacy=; fi
	"$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" --call "bs_esc:_" \
		--duration 1 $legacy -o tp.json 2>tp.err; rc=$?
	cat tp.err; expect "$rc" -eq 0 && grep -q "already has a trace pattern" tp.err &&
	clean tp.err tp.json &&
	node_eval "erlang:trace_pattern({bs_esc, list_to_atom(\"f\\e[2J\"), 0}, false, [global])." &&
	target_clean 2
'

test_expect_success 'JSON: atoms with C1 controls, U+2028 and U+202E are escaped' '
	node_eval "bs_work:victim()." >/dev/null &&
	bs_start --events receive --pids bs_victim --duration 0 && bs_wait_attached &&
	node_eval "[bs_victim ! A || A <- [list_to_atom([\$a, 16#85, \$b]), list_to_atom([\$c, 16#2028, \$d]), list_to_atom([\$e, 16#202E, \$f])]], ok." >/dev/null &&
	sleep 1 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	grep -F "\\u0085" "$TRASH/bs.json" && grep -F "\\u2028" "$TRASH/bs.json" &&
	grep -F "\\u202e" "$TRASH/bs.json" && clean "$TRASH/bs.json" &&
	jqs -e "[.[] | select(.payload == \"'"'"'e\u202ef'"'"'\")] | length == 1" &&
	target_clean 2
'

test_expect_success '--summary: server names and request kinds from the target are escaped' '
	bs_start --gen-calls --summary --duration 0 && bs_wait_attached &&
	node_eval "E = list_to_atom(\"bsevil\" ++ [27] ++ \"]2;X\" ++ [7]),
		GC = list_to_atom([36 | \"gen_call\"]),
		S = spawn(fun L() -> receive {GC, F, _} -> gen:reply(F, ok), L() end end),
		register(E, S), [ok = gen_server:call(S, E) || _ <- [1, 2, 3]],
		unregister(E), exit(S, kill), ok." >/dev/null &&
	sleep 1 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	cat "$TRASH/bs.err" && grep -q "slowest servers" "$TRASH/bs.err" &&
	grep -E "^ +3 .*bsevil" "$TRASH/bs.err" && clean "$TRASH/bs.err" &&
	target_clean 2
'

test_expect_success 'the view shows them as ?, never raw' '
	tm kill-session -t ui 2>/dev/null
	ui_start --events receive --pids bs_victim && ui_wait " tracing [0-9]+:" 10 &&
	ui_keys ":focus bs_victim" Enter && ui_wait "^ <0[.][0-9]+[.]0> bs_victim" &&
	node_eval "bs_victim ! list_to_atom([\$g, 16#202E, \$h, 16#9B, \$i]), ok." >/dev/null &&
	ui_wait "received <-  .g[?]h[?]i." && ui_screen >screen && clean screen &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'
# a name that reads "zwsh" with a zero-width space, a BOM and a soft
# hyphen between its letters
INVISIBLE='[$z, 16#200B, $w, 16#FEFF, $s, 16#AD, $h]'

test_expect_success 'a name with a zero-width space, a BOM and a soft hyphen: escaped in JSON and messages' '
	node_eval "register(list_to_atom($INVISIBLE), spawn(fun F() -> receive _ -> F() end end)), ok." >/dev/null &&
	bs_start --events receive --duration 0 && bs_wait_attached &&
	node_eval "list_to_atom($INVISIBLE) ! hello, ok." >/dev/null &&
	sleep 1 && kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	grep -F "\"name\":\"z\\u200bw\\ufeffs\\u00adh\"" "$TRASH/bs.json" &&
	clean "$TRASH/bs.json" && target_clean 2 &&
	! "$BEAMSCOPE" "$NODE" --batch --cookie-file "$COOKIE_FILE" -d 1 \
		--pids "$(printf "nope\342\200\213x\357\273\277y\302\255z")" 2>pids.err &&
	cat pids.err && grep -F "nope\\x{200B}x\\x{FEFF}y\\x{AD}z" pids.err && clean pids.err &&
	target_clean 2
'

test_expect_success 'the view shows the invisible characters of a name as ?, never raw' '
	tm kill-session -t ui 2>/dev/null
	ui_start && ui_wait " tracing [0-9]+:" 10 &&
	node_eval "list_to_atom($INVISIBLE) ! hello, ok." >/dev/null &&
	ui_keys / z Enter && ui_wait " z[?]w[?]s[?]h " 5 && ui_screen >screen && clean screen &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0 && target_clean 2
'
test_done
