#!/bin/sh
# The view against what a recording can hold: a payload nested 100000 deep
# opens whole, cut at 64 levels as a live term is, and the view goes on;
# and whatever kills the view (a fatal signal), the terminal is given back
# as it was: cooked mode, the main screen, the cursor shown.
. "$(dirname "$0")/lib.sh"

command -v tmux >/dev/null || test_skip_all "tmux is not installed"

# [[[...]]] 100000 deep, received by "deep", then an event after it
perl -e '
	my $p = "[" x 100000 . "]" x 100000;
	print qq({"type":"receive","ts":1763790000000000,"node":"t\@h","pid":"<0.80.0>","name":"deep","payload":"$p"}\n);
	print qq({"type":"receive","ts":1763790000000100,"node":"t\@h","pid":"<0.80.0>","name":"deep","payload":"after"}\n);
' >deep.ndjson

test_expect_success 'a payload nested 100000 deep: Enter shows it cut, the view goes on' '
	ui_open "$TRASH/deep.ndjson" && ui_wait "opened .*deep.ndjson" 10 &&
	ui_keys ":focus deep" Enter && ui_wait "received <-  after" 5 &&
	ui_keys k Enter && ui_wait "event: q closes" 10 &&
	ui_wait "cut: groups nested deeper than 64 levels show as [.][.][.]" 10 &&
	ui_keys End && ui_wait "[]]]]" 5 && ui_screen >detail.txt &&
	ui_keys Home && ui_wait "message \(200000 bytes\):" 5 &&
	ui_screen >>detail.txt && grep -q "[.][.][.]" detail.txt &&
	ui_keys q && ui_wait "received <-  after" 5 &&
	ui_keys j Enter && ui_wait "message \(5 bytes\):" 5 &&
	ui_keys q Q && expect "$(ui_exit_status 5)" = 0
'

# ui_crash SIGNAL: the view on the recording, killed by SIGNAL once drawn;
# then the pane's terminal is looked at from the shell that ran it
ui_crash() {
	rm -f "$TRASH/ui.rc" "$TRASH/ui.stty"
	ui_session 100 30 \
		"'$BEAMSCOPE' --open '$TRASH/deep.ndjson'; echo \$? >'$TRASH/ui.rc'; stty -a >'$TRASH/ui.stty'; sleep 600" &&
	ui_wait "opened .*deep.ndjson" 10 &&
	expect "$(tm display -p -t ui "#{alternate_on}")" = 1 &&
	shell=$(tm display -p -t ui "#{pane_pid}") &&
	bs=$(pgrep -P "$shell" -x beamscope) && [ -n "$bs" ] &&
	kill -s "$1" "$bs" && ui_exit_status 5 >rc.txt && cat rc.txt &&
	expect "$(cat rc.txt)" -gt 128 &&
	for _ in $(seq 1 50); do [ -s "$TRASH/ui.stty" ] && break; sleep 0.1; done &&
	cat "$TRASH/ui.stty" &&
	# cooked: lines, echo, signals from keys, CR read as NL
	for flag in icanon echo isig icrnl; do
		grep -qw -- "$flag" "$TRASH/ui.stty" &&
		! grep -qw -- "-$flag" "$TRASH/ui.stty" || { echo "not $flag"; return 1; }
	done &&
	got=$(tm display -p -t ui "#{alternate_on} #{cursor_flag} #{keypad_flag} #{keypad_cursor_flag}") &&
	{ [ "$got" = "0 1 0 0" ] || {
		echo "alternate screen, cursor shown, keypad, cursor keys: want 0 1 0 0, got $got"
		return 1; }; }
}

for s in SEGV BUS ABRT FPE ILL; do
	test_expect_success "SIG$s kills the view: the terminal is as it was" "ui_crash $s"
done
test_done
