#!/bin/sh
# The chart across two nodes: a send on one node paired with its receive
# on the other, drawn as one arrow with its latency; in batch (--chart)
# and in the view.
. "$(dirname "$0")/lib.sh"

start_cluster chc 2 || exit 1
set -- $CNODES; A=$1 B=$2
set -- $CNODES_FULL; AF=$1 BF=$2

on_node $B "bs_cluster:start_ponger(pong_2)." >/dev/null
on_node $A "bs_cluster:start_pinger(ping_1, '$BF', pong_2)." >/dev/null

test_expect_success 'batch --chart on two nodes: cross-node arrows, delivered, with latency' '
	: >err.txt &&
	"$BEAMSCOPE" $A $B --batch --cookie-file "$COOKIE_FILE" --pids ping_1,pong_2 \
		--chart mermaid -d 4 -o chart.mmd 2>err.txt & pid=$! &&
	# both nodes attached (each says so on its own line) before the pings
	for _ in $(seq 1 200); do grep -q "attached to $AF " err.txt &&
		grep -q "attached to $BF " err.txt && break; sleep 0.05; done &&
	grep -q "attached to $BF " err.txt &&
	sleep 0.5 && on_node $A "bs_cluster:go(ping_1, 3)." >/dev/null &&
	wait $pid && cat chart.mmd err.txt &&
	expect "$(grep -c "^    participant" chart.mmd)" = 3 &&
	grep -q "^    participant P[0-9] as ping_1 " chart.mmd &&
	grep -q "^    participant P[0-9] as pong_2 " chart.mmd &&
	ping=$(sed -n "s/^    participant \(P[0-9]\) as ping_1 .*/\1/p" chart.mmd) &&
	pong=$(sed -n "s/^    participant \(P[0-9]\) as pong_2 .*/\1/p" chart.mmd) &&
	expect "$(grep -c "^    $ping->>$pong: #123;ping,.*,[123]#125;" chart.mmd)" = 3 &&
	expect "$(grep -c "^    $pong->>$ping: #123;pong,[123]#125;" chart.mmd)" = 3 &&
	expect "$(grep -c "^    P[0-9]->>P[0-9]: #123;p[io]ng,.* (-*[0-9]* us)$" chart.mmd)" -ge 4 &&
	! grep -q "not received" chart.mmd && mmd_parse "$TRASH/chart.mmd"
'

test_expect_success 'the view on two nodes: the arrows between the nodes, with their latency' '
	rm -f "$TRASH/ui.rc" &&
	ui_session 120 30 "XDG_STATE_HOME='"'$TRASH/state'"' '"'$BEAMSCOPE'"' $A $B --cookie-file '"'$COOKIE_FILE'"' --pids ping_1,pong_2; echo \$? >'"'$TRASH/ui.rc'"'; sleep 600" &&
	ui_wait "tracing [0-9]+ processes on 2 nodes" 15 &&
	on_node $A "bs_cluster:go(ping_1, 1)." >/dev/null &&
	ui_wait "ping_1" 5 && ui_wait "pong_2" 5 &&
	ui_keys / ping_1 Enter && ui_wait "^ *<[^ ]*> +ping_1" && ui_keys Space &&
	ui_keys / pong_2 Enter && ui_wait "^ *<[^ ]*> +pong_2" && ui_keys Space &&
	ui_keys s && ui_wait "3 messages" &&
	on_node $A "bs_cluster:go(ping_1, 2)." >/dev/null &&
	ui_wait "8 messages" 10 &&
	# the arrow is drawn at the send; its latency once the receive is in
	ui_wait "[{]pong,2[}]  [(]-*[0-9]* us[)]" 5 &&
	ui_screen | tee screen.txt &&
	sed -n 2p screen.txt | grep -q "<0[.][0-9]*[.]0> *<0[.][0-9]*[.]0>" &&
	sed -n 3p screen.txt | grep -q "chc1.*chc2" &&
	expect "$(grep -c "[{]pong,[12][}]  (-*[0-9]* us)" screen.txt)" = 3 &&
	expect "$(grep -c "[{]ping,.*  (-*[0-9]* us)" screen.txt)" = 3 &&
	perl "$TOP/test/chart-read.pl" <screen.txt | tee rows.txt &&
	expect "$(grep -c "^ping_1 -> pong_2$" rows.txt)" = 3 &&
	expect "$(grep -c "^pong_2 -> ping_1$" rows.txt)" = 3 &&
	ui_keys Q && expect "$(ui_exit_status 5)" = 0
'
test_done
