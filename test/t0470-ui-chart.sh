#!/bin/sh
# The sequence chart: Space tags processes in the table, s charts them.
# A known exchange between three processes (bs_chat: a ping-pong, a relay
# through a third, an exit with a reason) read back from the screen: the
# arrows in the right columns and order, the exit on its lifeline, the
# exact message count; then the exports of the same chart.
. "$(dirname "$0")/lib.sh"

command -v tmux >/dev/null || { echo "1..0 # SKIP tmux missing"; exit 1; }

mkdir -p "$TRASH/ebin" && erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_chat.erl" || exit 1
start_node bschart || exit 1
node_eval "bs_chat:start()." >/dev/null

chart() {
	ui_screen >screen.txt && perl "$TOP/test/chart-read.pl" <screen.txt
}

test_expect_success 'Space tags three processes; s charts them' '
	ui_start && ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "bs_chat:wake()." >/dev/null &&
	ui_keys / bs_chat_ Enter && ui_wait "bs_chat_c" 5 &&
	ui_wait "bs_chat_a" && ui_wait "bs_chat_b" &&
	ui_keys Space Space Space && sleep 0.3 &&
	ui_keys s && ui_wait "0 messages" &&
	ui_screen | grep -E "others" &&
	ui_screen | grep -E "bs_chat_a" && ui_screen | grep -E "bs_chat_c"
'

test_expect_success 'the exchange: arrows in order, in their columns, the exit on its lifeline' '
	node_eval "bs_chat:go()." >/dev/null &&
	ui_wait "7 messages" 10 && ui_wait "exit [{]shutdown,bye[}]" &&
	chart >rows.txt && cat rows.txt &&
	grep -v ^COLUMNS rows.txt >got.txt &&
	cat >want.txt <<-\EOT &&
	others -> bs_chat_a
	bs_chat_a -> bs_chat_b
	bs_chat_b -> bs_chat_a
	bs_chat_a -> bs_chat_b
	bs_chat_b -> bs_chat_a
	bs_chat_a -> bs_chat_c
	bs_chat_c -> bs_chat_b
	X bs_chat_b
	EOT
	diff -u want.txt got.txt &&
	grep -c "[{]p[io]ng,[12][}]" screen.txt | grep -qx 4 &&
	grep -q "[{]relayed,hello[}]" screen.txt &&
	! grep -q "not received" screen.txt
'

# the text of an SVG, one <text> a line, entities undone
svg_text() {
	perl -ne 'while (/<text[^>]*>([^<]*)<\/text>/g) { my $t = $1;
		$t =~ s/&lt;/</g; $t =~ s/&gt;/>/g; $t =~ s/&quot;/"/g;
		$t =~ s/&#39;/\x27/g; $t =~ s/&#160;/ /g; $t =~ s/&amp;/&/g;
		print "$t\n" }' "$1"
}

# structure of a Mermaid sequence diagram: participants declared once,
# arrows between declared ones, message text with no character that could
# end a statement or start an entity of its own; prints the arrow count
mmd_check() {
	perl -e '
		my ($n, %decl) = (0);
		my $first = <STDIN>;
		die "first line: $first" unless $first eq "sequenceDiagram\n";
		while (<STDIN>) {
			die "control character: $_" if /[\x00-\x09\x0b-\x1f\x7f]/;
			if (/^    participant (P\d+) as (.*)$/) {
				die "declared twice: $1\n" if $decl{$1}++;
				next;
			}
			my $text;
			if (/^    (P\d+)(->>|--\)|-x)(P\d+): (.*)$/) {
				die "undeclared: $_" unless $decl{$1} && $decl{$3};
				$n++;
				$text = $4;
			} elsif (/^    Note over (P\d+)(,P\d+)?: (.*)$/) {
				$text = $3;
			} else {
				die "not a statement: $_";
			}
			(my $bare = $text) =~ s/#\d+;//g;
			die "unescaped: $text\n" if $bare =~ /[;#<>"{}\\]/;
			die "too long: $text\n" if length($text) > 1200;
		}
		print "$n\n";' <"$1"
}

test_expect_success ':chart-export writes PlantUML that plantuml renders, every message in order' '
	command -v plantuml >/dev/null || { echo "plantuml missing (scripts/setup)"; exit 1; }
	ui_keys ":chart-export $TRASH/chart.puml" Enter &&
	ui_wait "wrote 7 messages between 3 processes to .*chart.puml" &&
	plantuml -tsvg chart.puml && test -s chart.svg &&
	svg_text chart.svg >svg.txt && cat svg.txt &&
	cat >want.txt <<-\EOT &&
	go
	{ping,1}
	{pong,1}
	{ping,2}
	{pong,2}
	{relay,hello}
	{relayed,hello}
	exit {shutdown,bye}
	EOT
	grep -x -F -f want.txt svg.txt >got.txt && diff -u want.txt got.txt &&
	grep -x -F "bs_chat_a" svg.txt && grep -x -F "others" svg.txt
'

test_expect_success ':chart-export writes a Mermaid sequenceDiagram: participants once, one arrow per message' '
	ui_keys ":chart-export $TRASH/chart.mmd" Enter &&
	ui_wait "wrote 7 messages between 3 processes to .*chart.mmd" &&
	cat chart.mmd && expect "$(mmd_check chart.mmd)" = 7 && mmd_parse "$TRASH/chart.mmd" &&
	expect "$(grep -c "^    participant" chart.mmd)" = 4 &&
	grep -q "^    participant P[0-9] as bs_chat_b #60;0[.][0-9]*[.]0#62;$" chart.mmd &&
	grep -q "^    Note over P[0-9]: exit #123;shutdown,bye#125;$" chart.mmd &&
	ui_keys ":chart-export $TRASH/chart.txt" Enter &&
	ui_wait "cannot tell the format of .*chart.txt" && ! test -e chart.txt
'

test_expect_success 'a hostile message breaks neither the screen nor the exports' '
	cat >hostile.erl <<-\EOT &&
	bs_chat:say({"quote\"semi;hash#lt<gt>", <<27,"[2J",7,0,10,13>>,
	             list_to_atom([27,93,48,59,116,7,10,13]), [10,13,27],
	             lists:duplicate(3000, $x)}).
	EOT
	node_eval "$(cat hostile.erl)" &&
	ui_wait "9 messages" 10 &&
	ui_screen >screen.txt && cat screen.txt &&
	expect "$(wc -l <screen.txt)" = 30 &&
	sed -n 1p screen.txt | grep -q "^ time  *bs_chat_b  *bs_chat_c  *bs_chat_a  *others" &&
	tail -n 2 screen.txt | head -n 1 | grep -q "9 messages" &&
	chart >rows.txt && tail -n 2 rows.txt | head -n 1 | grep -qx "others -> bs_chat_a" &&
	tail -n 1 rows.txt | grep -qx "bs_chat_a -> bs_chat_c" &&
	ui_keys ":chart-export $TRASH/bad.mmd" Enter && ui_wait "wrote 9 messages .*bad.mmd" &&
	ui_keys ":chart-export $TRASH/bad.puml" Enter && ui_wait "wrote 9 messages .*bad.puml" &&
	cat bad.mmd && expect "$(mmd_check bad.mmd)" = 9 && mmd_parse "$TRASH/bad.mmd" &&
	tail -n 1 bad.mmd | grep -q "^    P[0-9]->>P[0-9]: #123;#34;quote#92;#34;semi#59;hash#35;lt#60;gt#62;#34;,.*[.][.][.]$" &&
	! grep -q "$(printf "\033")" bad.mmd bad.puml &&
	expect "$(wc -l <bad.puml)" = "$(($(wc -l <chart.puml) + 2))" &&
	plantuml -tsvg bad.puml && svg_text bad.svg >svg.txt && cat svg.txt &&
	cat >want.txt <<-\EOT &&
	{"quote\"semi;hash#lt<gt>",<<27,91,50,74,7,0,10,13>>,
	'"'"'\e]0;t\007\n\r'"'"'
	EOT
	expect "$(tail -n 1 svg.txt | grep -o -F -f want.txt | wc -l)" = 2 && tail -n 1 svg.txt | grep -q "[.][.][.]$"
'

test_expect_success 'too narrow for its columns, the chart says so instead of wrapping' '
	tm resize-window -t ui -x 30 -y 12 && ui_wait "  chart needs 33 columns" &&
	ui_screen | perl -CSD -ne "chomp; exit 1 if length > 30" &&
	tm resize-window -t ui -x 100 -y 30 && ui_wait "^ time  *bs_chat_b"
'

test_expect_success 'Enter shows the message under the cursor whole; q leaves the chart clean' '
	ui_keys Enter && ui_wait "event: q closes" && ui_screen | grep -q "message" &&
	ui_keys q && ui_wait "9 messages" &&
	ui_keys q && ui_wait "PID +NAME" &&
	ui_keys ":chart" Enter && ui_wait "9 messages" &&
	ui_keys s && ui_wait "PID +NAME" && ui_keys Q && expect "$(ui_exit_status 5)" = 0 &&
	target_clean 2
'
test_done
