#!/bin/sh
# The process table's columns: sized from what they hold and the terminal.
# Pids with large numbers and long registered names never run into each
# other; at 80 columns the pid, the name, the counts, MEM, REDS/s and the
# sort column stay, and the current function gives way first, then HEAP
# and REDS.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

start_node bscols || exit 1
erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_churn.erl" || exit 1

# 45 000 processes come and go first, so that the next pids have five-digit
# numbers (and a serial); then 20 idle ones registered with long names
NAME=a_registered_name_long_enough_to_fill_the_table
node_eval "bs_churn:wrap(45000)." >/dev/null
node_eval "bs_churn:named(\"$NAME\", 20)." >/dev/null

# ui_cols COLS [PREFIX N]: the view in a terminal COLS wide, filtered to
# the N processes registered as PREFIX... (the 20), each sent a message
ui_cols() {
	_prefix=${2:-$NAME} _n=${3:-20}
	tm kill-session -t ui 2>/dev/null && target_clean 3 >/dev/null
	ui_session "$1" 30 \
		"XDG_STATE_HOME='$TRASH/state' '$BEAMSCOPE' '$NODE' --cookie-file '$COOKIE_FILE'; sleep 600" &&
	ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "[P ! hi || N <- registered(), lists:prefix(\"$_prefix\", atom_to_list(N)), P <- [whereis(N)]], ok." >/dev/null &&
	ui_keys / "$_prefix" Enter && ui_wait " [0-9]+/$_n "
}

# the rows: a pid, whole, then a space
rows() {
	ui_screen | grep -E "^<0[.]"
}

test_expect_success 'the workload: pids with five-digit numbers' '
	node_eval "pid_to_list(whereis(${NAME}_1))." | tee pid &&
	grep -E "^\"<0[.][0-9]{5}[.][0-9]+>\"$" pid
'

test_expect_success '80 columns: pids whole, then the name; the counts, MEM and REDS/s stay; CURRENT, HEAP and REDS go' '
	ui_cols 80 && rows >rows80 &&
	expect "$(wc -l <rows80)" -eq 20 &&
	! grep -vE "^<0[.][0-9]{5}[.][0-9]+> +a_registered_name" rows80 &&
	expect "$(cut -d" " -f1 rows80 | sort -u | wc -l)" -eq 20 &&
	ui_screen | sed -n 1p >hdr80 && cat hdr80 &&
	grep -E "^PID +NAME +SENT +S/s +RECV +R/s +SPAWN +MQ +MEM +REDS/s *$" hdr80 &&
	awk "{ exit !(NF == 10 && \$5 == 1 && \$8 ~ /^([0-9]+|-)\$/ && \$NF ~ /^([0-9]+k?|-)\$/) }" rows80
'

test_expect_success '80 columns, sorted by CURRENT: it stays, the name gives way' '
	ui_keys ":sort current" Enter && ui_wait "sort CURRENT asc" &&
	ui_screen | sed -n 1p | grep -E "^PID +NAME +CURRENT +SENT +S/s +RECV +R/s +SPAWN +MQ( +MEM)?( +REDS/s)? *$" &&
	rows >rows80c && cat rows80c &&
	! grep -vE "^<0[.][0-9]{5}[.][0-9]+> +a_registered.* bs_churn:old/0 +[0-9]" rows80c
'

test_expect_success '160 columns: every column, the names whole' '
	ui_cols 160 && rows >rows160 && cat rows160 &&
	ui_screen | sed -n 1p | grep -E "^PID +NAME +CURRENT +SENT +S/s +RECV +R/s +SPAWN +MQ +MEM +REDS +REDS/s +HEAP( +SENT 30s( +RECV 30s)?)? *$" &&
	! grep -vE "^<0[.][0-9]{5}[.][0-9]+> +${NAME}_[0-9]+ +bs_churn:old/0 +[0-9]" rows160 &&
	ui_keys Q && target_clean 3
'

# ---- wide characters: a CJK name takes two columns a character; this
# one, 24 of them, is cut at 80 columns
WIDE=bsw_x漢字の名前テスト漢字の名前テスト漢字の名前テスト
node_eval "[register(list_to_atom(N), spawn(fun F() -> receive _ -> F() end end)) || N <- [\"bsw_x\" ++ lists:append(lists:duplicate(3, [16#6F22, 16#5B57, 16#306E, 16#540D, 16#524D, 16#30C6, 16#30B9, 16#30C8])), \"bsw_ascii_name_here\"]], ok." >/dev/null

# wide_cell TITLE PATTERN: ui_cell, reading the screen by the columns the
# terminal shows (a wide character takes two), not by bytes or characters
wide_cell() {
	ui_screen | perl -CSA -e '
		my ($t, $pat) = @ARGV;
		my $e;
		while (my $l = <STDIN>) {
			chomp $l;
			$l =~ s/([\p{Ea=W}\p{Ea=F}])/$1\x{0}/g;
			if (!defined $e) {
				my $i = index(" $l ", " $t ");
				$e = $i + length($t) if $i >= 0;
				next;
			}
			next unless $l =~ /$pat/;
			my $s = substr($l, 0, $e);
			$s =~ s/.* //;
			$s =~ s/\x{0}//g;
			print "$s\n";
			last;
		}' "$1" "$2"
}

# ui_wide COLS: the view COLS wide, the two bsw_ processes, each sent one
# message
ui_wide() {
	ui_cols "$1" bsw_ 2 && ui_wait "^<0[.].* bsw_x" 5 &&
	ui_screen >"wide$1" && cat "wide$1"
}

# the cells of both rows under RECV, SENT and MQ: 1, 0, 0 in each
wide_aligned() {
	for who in bsw_x bsw_ascii; do
		got=$(wide_cell RECV "$who")/$(wide_cell SENT "$who")/$(wide_cell MQ "$who")
		expect "$got" = 1/0/0 || { echo "$who: RECV/SENT/MQ want 1/0/0, got $got"; return 1; }
	done
}

test_expect_success '160 columns: a CJK name whole, and its row'"'"'s cells under their titles' '
	ui_wide 160 && grep -q "^<0[.][0-9]*[.][0-9]*> *$WIDE " wide160 &&
	wide_aligned
'

test_expect_success '80 columns: the CJK name cut on a character, the cells still aligned' '
	ui_wide 80 && wide_aligned &&
	name=$(grep "bsw_x" wide80 | sed "s/^<[^>]*> *//; s/ .*//") &&
	echo "name cell: $name" && expect "$name" != "$WIDE" &&
	case "$WIDE" in "$name"*) ;; *) false ;; esac &&
	ui_keys Q && target_clean 3
'
test_done
