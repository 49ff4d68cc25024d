#!/bin/sh
# The process table's sparklines: sends and receives a second over the
# last 30 seconds, one per row, read back from the terminal at 160x50 (in
# Unicode blocks, and in ASCII with --ascii), gone at 80x24 before any
# number goes, and sortable by their sums.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

start_node bsspark || exit 1
erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_spark.erl" || exit 1

# spk_start COLS ROWS [args]: the view in a UTF-8 terminal, filtered to
# the workload's three
spk_start() {
	c=$1 r=$2; shift 2
	tm kill-session -t ui 2>/dev/null && target_clean 3 >/dev/null
	ui_session "$c" "$r" \
		"LANG=C.UTF-8 LC_ALL=C.UTF-8 XDG_STATE_HOME='$TRASH/state' '$BEAMSCOPE' '$NODE' --cookie-file '$COOKIE_FILE' $*; sleep 600" &&
	ui_wait "tracing [0-9]+ processes" 10 &&
	ui_keys / bs_spk_ Enter && ui_wait "filter \"bs_spk_\"" 10
}

# cell NAME TITLE: the text under a sparkline column's title (titles are
# left-aligned over cells as wide as the column) in NAME's row, in
# characters
cell() {
	ui_screen | perl -CSD -ne '
		BEGIN { ($n, $t) = splice(@ARGV, 0, 2) }
		if (!defined $s) { $s = index($_, $t); next if $s < 0;
			# the cell runs to the next title, or the end
			$w = substr($_, $s + length($t)) =~ /^( *\S)/ ?
				length($t) + length($1) - 2 : -1;
			next }
		chomp;
		if (/ \Q$n\E /) {
			print $w < 0 ? substr($_, $s) : substr($_, $s, $w), "\n"; exit }' "$1" "$2"
}

test_expect_success 'node: a steady, a bursting and a quiet process' '
	spk_start 160 50 &&
	node_eval "bs_spark:start()." >/dev/null &&
	node_eval "bs_spk_quiet ! hi, ok." >/dev/null &&
	ui_wait " bs_spk_steady " 10 && ui_wait " bs_spk_quiet " 10 &&
	ui_wait " [0-9]+/3 " 10 &&
	ui_screen | grep -E "^PID " | tee hdr &&
	grep -E " HEAP +SENT 30s +RECV 30s *$" hdr
'

test_expect_success '160x50: the steady row has bars to the newest second' '
	sleep 4 && ui_screen >screen1 && cat screen1 | sed -n 1,5p &&
	cell bs_spk_steady "SENT 30s" >s1 && cat s1 &&
	perl -CSD -0777 -ne "exit !(/^ *[\x{2581}-\x{2588}]{3,}\n?\z/)" s1 &&
	cell bs_spk_steady "RECV 30s" >r1 && cat r1 &&
	perl -CSD -0777 -ne "exit !(/[\x{2581}-\x{2588}]\n?\z/)" r1 &&
	cell bs_spk_quiet "SENT 30s" >q1 && echo "quiet [$(cat q1)]" &&
	expect "$(wc -l <q1)" -eq 1 && ! grep -q "[^ ]" q1
'

test_expect_success 'a burst shows as bars, then blanks for the quiet seconds since' '
	node_eval "bs_spk_burst ! go, ok." >/dev/null &&
	ui_wait " bs_spk_burst " 5 && sleep 8 &&
	cell bs_spk_burst "SENT 30s" >b1 && echo "burst [$(cat b1)]" &&
	perl -CSD -0777 -ne "exit !(/[\x{2581}-\x{2588}]{3,} {2,}\n?\z/)" b1
'

test_expect_success ':sort sent30 puts the most sent over 30 s first' '
	ui_keys ":sort sent30" Enter && ui_wait "sort SENT 30s desc" 5 &&
	ui_screen | awk "/^PID /{getline; print; exit}" | tee first &&
	grep " bs_spk_burst " first &&
	ui_keys I && ui_wait "sort SENT 30s asc" 5 &&
	ui_screen | awk "/^PID /{getline; print; exit}" | grep " bs_spk_quiet "
'

test_expect_success '80x24: the sparklines go first, the counts stay' '
	tm resize-window -t ui -x 80 -y 24 && sleep 1.5 &&
	ui_screen | grep -E "^PID " | tee hdr80 &&
	! grep -q "30s" hdr80 &&
	grep -E "SENT +S/s +RECV +R/s" hdr80
'

test_expect_success '--ascii: the same bars in ASCII' '
	spk_start 160 50 --ascii && ui_wait " bs_spk_steady " 10 && sleep 3 &&
	cell bs_spk_steady "SENT 30s" >a1 && echo "ascii [$(cat a1)]" &&
	grep -qE "^ *[.,~=+*#-]{2,}$" a1 &&
	! LC_ALL=C grep -q "[^ -~]" a1 &&
	ui_keys Q && target_clean 3
'

test_done
