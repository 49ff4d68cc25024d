#!/bin/sh
# :syntax renders again what is already on screen: on an Elixir node, the
# table's names (a registered GenServer by its alias, one with no name by
# its initial call), the process log, the open event, the sequence chart
# and its exports turn into Erlang text with :syntax erlang and back with
# :syntax elixir, with nothing new captured in between.  Names typed in
# Elixir form (:focus Shop.Cache) find their process.
. "$(dirname "$0")/lib.sh"
have_elixir || test_skip_all "no elixirc (apt-get install elixir)"
command -v tmux >/dev/null || test_skip_all "tmux is not installed"

start_elixir_node bssyntax "$TOP/test/erl/bs_shop.ex" || exit 1
# a release loads every module at boot, struct modules too (t0365 tests a
# node that has not loaded one)
node_eval "code:ensure_loaded('Elixir.Shop.Order')." | grep -q module || exit 1
node_eval "'Elixir.Shop':start()." | grep -q ok || exit 1
W=$(node_eval "pid_to_list('Elixir.Shop':start_worker())." | tr -d '"')
case $W in "<0."*) ;; *) echo "no worker: $W"; exit 1 ;; esac
# the pid as a pattern: <0.N.0> with the dots literal
WP=$(printf '%s' "$W" | sed 's/[.]/[.]/g')

ORDER_EX='%Shop[.]Order[{]id: 1, items: [[]"book", "pen"[]], status: :new, total: 300[.]0[}]'
# the order of a map's keys in Erlang is the release's: as the node prints it
ORDER_ERL=$(ere "$(erl_text "#{'__struct__' => 'Elixir.Shop.Order', id => 1, items => [<<\"book\">>, <<\"pen\">>], status => new, total => 300.0}")")
say "Shop.Order in Erlang: $ORDER_ERL"

# the text of an export, its escapes undone
unescape() {
	perl -pe 's/<U\+([0-9A-F]{4})>/chr(hex($1))/ge; s/#(\d+);/chr($1)/ge' "$1"
}

test_expect_success 'Elixir names in the table: an alias, and an initial call for no name' '
	ui_session 220 40 "XDG_STATE_HOME='"'$TRASH/state'"' '"'$BEAMSCOPE'"' '"'$NODE'"' --cookie-file '"'$COOKIE_FILE'"' --no-config --events send,receive --payload-bytes 1000; echo \$? >'"'$TRASH/ui.rc'"'; sleep 600" &&
	ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "'"'"'Elixir.Shop'"'"':work(1)." >/dev/null &&
	ui_keys / Shop Enter &&
	ui_wait "^$WP +Shop[.]Worker[.]init/1 " 5 &&
	ui_wait "^<0[.][0-9]+[.]0> +Shop[.]Cache " 5 &&
	ui_screen >screen && ! grep -q "Elixir[.]Shop" screen
'

test_expect_success ':syntax erlang turns the names on screen into Erlang, :syntax elixir back' '
	ui_keys ":syntax erlang" Enter && ui_wait "erlang syntax" 5 &&
	ui_wait "^$WP +'"'"'Elixir[.]Shop[.]Worker'"'"':init/1 " 5 &&
	ui_wait "^<0[.][0-9]+[.]0> +Elixir[.]Shop[.]Cache " 5 &&
	ui_keys ":syntax elixir" Enter && ui_wait "elixir syntax" 5 &&
	ui_wait "^$WP +Shop[.]Worker[.]init/1 " 5 &&
	ui_wait "^<0[.][0-9]+[.]0> +Shop[.]Cache " 5
'

test_expect_success ':focus Shop.Cache opens its log; :syntax turns its lines into Erlang and back' '
	ui_keys ":focus Shop.Cache" Enter && ui_wait "nothing captured|Shop[.]Cache" 5 &&
	node_eval "'"'"'Elixir.Shop'"'"':work(1)." >/dev/null &&
	ui_wait "received <-  [{]:\"[$]gen_call\", [{]#PID<0[.][0-9]+[.]0>, .*[{]:put, $ORDER_EX[}][}]" 5 &&
	ui_wait "sent +-> .*[{][[]:alias [|] #Reference<" 5 &&
	ui_keys ":syntax erlang" Enter &&
	ui_wait "erlang syntax; [0-9]+ events shown again [(][0-9]+ ms[)]" 5 &&
	ui_wait "received <-  [{].[$]gen_call.,[{]<0[.][0-9]+[.]0>,.*[{]put,$ORDER_ERL[}][}]" 5 &&
	ui_wait "Elixir[.]Shop[.]Cache" &&
	ui_screen >screen && ! grep -q "%Shop[.]Order" screen &&
	! grep -q "[{]:put" screen &&
	ui_keys ":syntax elixir" Enter && ui_wait "elixir syntax; " 5 &&
	ui_wait "received <-  [{]:\"[$]gen_call\", .*[{]:put, $ORDER_EX[}][}]" 5 &&
	ui_screen >screen && ! grep -q "__struct__" screen
'

test_expect_success 'the open event is laid out again in the new syntax' '
	ui_keys G && ui_keys k && ui_keys Enter &&
	ui_wait "^message [(]" 5 && ui_wait "%Shop[.]Order[{]" 5 &&
	ui_keys ":syntax erlang" Enter && ui_wait "erlang syntax; " 5 &&
	ui_wait "__struct__. => .Elixir[.]Shop[.]Order." 5 &&
	ui_screen >screen && ! grep -q "%Shop[.]Order" screen &&
	ui_keys ":syntax elixir" Enter && ui_wait "elixir syntax; " 5 &&
	ui_wait "%Shop[.]Order[{]" 5 &&
	ui_keys q && ui_keys q && ui_wait "PID +NAME" 5
'

test_expect_success 'Tab offers names as the syntax writes them; :focus takes either form' '
	ui_keys ":focus :code_serv" Tab && ui_wait ":focus :code_server" 5 &&
	ui_keys Enter && ui_wait "^ <0[.][0-9]+[.]0> :code_server " 5 && ui_keys q &&
	ui_wait "PID +NAME" 5 &&
	ui_keys ":syntax erlang" Enter && ui_wait "erlang syntax" 5 &&
	ui_keys ":focus Shop.Cache" Enter &&
	ui_wait "^ <0[.][0-9]+[.]0> Elixir[.]Shop[.]Cache " 5 && ui_keys q &&
	ui_keys ":focus code_serv" Tab && ui_wait ":focus code_server" 5 &&
	ui_keys C-u Escape && ui_wait "PID +NAME" 5 &&
	ui_keys ":syntax elixir" Enter && ui_wait "elixir syntax" 5
'

test_expect_success 'the chart of Elixir processes: Elixir names and messages, on screen and exported' '
	ui_keys / Shop.Worker Enter && ui_wait "^$WP +Shop[.]Worker" 5 &&
	ui_keys Space && sleep 0.3 &&
	ui_keys / Shop.Cache Enter && ui_wait "^<0[.][0-9]+[.]0> +Shop[.]Cache " 5 &&
	ui_keys Space && sleep 0.3 &&
	ui_keys s && ui_wait "[0-9]+ messages" 5 &&
	node_eval "'"'"'Elixir.Shop'"'"':work(1)." >/dev/null &&
	ui_wait "([5-9]|[1-9][0-9]) messages" 5 &&
	ui_wait "^ time +Shop[.]Worker[.]init/ +Shop[.]Cache +others" &&
	ui_wait "[{]:\"[$]gen_call\"" &&
	ui_keys ":chart-export $TRASH/ex.puml" Enter && ui_wait "wrote .* to .*ex[.]puml" 5 &&
	ui_keys ":chart-export $TRASH/ex.mmd" Enter && ui_wait "wrote .* to .*ex[.]mmd" 5 &&
	for f in ex.puml ex.mmd; do
		unescape $f >$f.txt && cat $f.txt &&
		grep -q "Shop[.]Worker[.]init/1" $f.txt &&
		grep -q "Shop[.]Cache" $f.txt && ! grep -q "Elixir[.]Shop" $f.txt &&
		grep -q "[{]:put, $ORDER_EX[}][}]" $f.txt || return 1
	done
'

test_expect_success ':syntax erlang turns the chart and its exports into Erlang, and back' '
	ui_keys ":syntax erlang" Enter && ui_wait "erlang syntax; " 5 &&
	ui_wait "^ time +'"'"'Elixir[.]Shop[.]Work +Elixir[.]Shop[.]Cache +others" 5 &&
	ui_wait "[{].[$]gen_call.,[{]<0[.]" 5 &&
	ui_screen >screen && ! grep -q "gen_call\"" screen &&
	ui_keys ":chart-export $TRASH/erl.mmd" Enter && ui_wait "wrote .* to .*erl[.]mmd" 5 &&
	unescape erl.mmd >erl.txt && cat erl.txt &&
	grep -q "Elixir[.]Shop[.]Cache" erl.txt &&
	grep -qE "[{]put,$ORDER_ERL[}][}]" erl.txt && ! grep -q "%Shop" erl.txt &&
	ui_keys ":syntax elixir" Enter && ui_wait "elixir syntax; " 5 &&
	ui_wait "[{]:\"[$]gen_call\"" 5 &&
	ui_screen >screen && ! grep -q "Elixir[.]Shop" screen
'

test_expect_success 'the servers view: Elixir names and requests, in Erlang after :syntax erlang' '
	ui_keys q && ui_wait "PID +NAME" 5 &&
	ui_keys v && ui_wait "SERVER" 5 &&
	ui_wait "tracing [0-9]+ processes on .*, gen calls paired" 10 &&
	node_eval "'"'"'Elixir.Shop'"'"':work(2)." >/dev/null &&
	ui_wait " Shop[.]Cache +put +2 " 5 &&
	ui_keys Home && found= &&
	for _ in 1 2 3 4 5; do
		# the rows: other servers are called too (OTP 29 asks auth for
		# a cookie when a node connects), in an order of their own
		ui_keys Enter
		ui_wait "slowest calls to Shop[.]Cache [(]put[)]" 1 >/dev/null && found=1 && break
		ui_keys Escape Down
	done && [ -n "$found" ] &&
	ui_wait "[{]:put, %Shop[.]Order[{]id: [12], .*[.][.][.].*[}][}] -> :ok" 5 &&
	ui_keys ":syntax erlang" Enter && ui_wait "erlang syntax; " 5 &&
	ui_wait "slowest calls to Elixir[.]Shop[.]Cache [(]put[)]" 5 &&
	ui_wait "[{]put,#[{].*id => [12],.* -> ok" 5 &&
	ui_screen | grep "put,#" &&
	ui_screen >screen && ! grep -q "%Shop" screen &&
	ui_keys ":syntax elixir" Enter && ui_wait "elixir syntax; " 5 &&
	ui_wait "[{]:put, %Shop[.]Order[{]id: [12], .*[.][.][.].*[}][}] -> :ok" 5 &&
	ui_keys Escape Escape && ui_wait "PID +NAME" 5
'

test_expect_success 'quit leaves the target clean' '
	ui_keys ":quit" Enter && expect "$(ui_exit_status 10)" = 0 &&
	target_clean 5
'

test_expect_success 'a recording keeps the syntax it was written in, and :syntax says so' '
	bs_start --events send,receive --payload-bytes 1000 --duration 0 &&
	bs_wait_attached &&
	node_eval "'"'"'Elixir.Shop'"'"':work(1)." >/dev/null &&
	for _ in $(seq 1 60); do
		grep -qF "%Shop.Order{id: 1" "$TRASH/bs.json" && break
		sleep 0.1
	done &&
	kill -INT "$BS_PID" && bs_wait && expect "$BS_RC" -eq 0 &&
	cp "$TRASH/bs.json" rec.ndjson &&
	ui_open "$TRASH/rec.ndjson" && ui_wait "opened .*rec.ndjson" 10 &&
	ui_keys ":syntax erlang" Enter &&
	ui_wait "a recording keeps the syntax it was written in; --syntax applies when attaching to a node" 5 &&
	ui_keys ":focus Shop.Cache" Enter &&
	ui_wait "received <-  [{]:\"[$]gen_call\", [{]#PID<0[.]" 5 &&
	ui_keys ":quit" Enter && expect "$(ui_exit_status 10)" = 0 &&
	target_clean 5
'

test_done
