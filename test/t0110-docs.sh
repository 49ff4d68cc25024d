#!/bin/sh
# The man page documents every option --help knows, and nothing else; it
# renders without warnings.
. "$(dirname "$0")/lib.sh"

test_expect_success 'man page renders without warnings' '
	groff -ww -z -mdoc "$TOP/man/beamscope.1" 2>warn; cat warn; [ ! -s warn ]
'

test_expect_success 'every option in --help is in the man page, and back' '
	"$BEAMSCOPE" --help | grep -oE -- "--[a-z][a-z-]+" | sort -u >help.opts &&
	grep -oE "^\.It (Fl [a-zA-Z] , )?Fl -[a-z][a-z-]+" "$TOP/man/beamscope.1" |
		sed "s/.*Fl -/--/" | sort -u >man.opts &&
	diff help.opts man.opts
'

test_expect_success 'the examples use only options --help knows' '
	sed -n "/^\.Sh EXAMPLES/,/^\.Sh /p" "$TOP/man/beamscope.1" |
		grep -oE -- "--[a-z][a-z-]+" | sort -u >example.opts &&
	expect "$(wc -l <example.opts)" -gt 5 &&
	comm -23 example.opts help.opts >unknown && cat unknown && [ ! -s unknown ]
'

test_expect_success 'every exit code in src/base/exitcode.h is documented' '
	for n in $(grep -oE "= [0-9]+," "$TOP/src/base/exitcode.h" | tr -dc "0-9\n"); do
		grep -q "^\.It $n\$" "$TOP/man/beamscope.1" || { echo "exit $n undocumented"; exit 1; }
	done
'
test_expect_success 'every command in the command table is in the man page' '
	grep -oE "^[[:space:]]*X\([A-Z_]+, *\"[a-z]+\"" "$TOP/src/spec/cmd.h" | sed "s/.*\"\(.*\)\"/\1/" >cmds &&
	expect "$(wc -l <cmds)" -gt 10 &&
	while read -r c; do
		grep -q "^\.It Ic $c\( \|\$\)" "$TOP/man/beamscope.1" || { echo "command $c undocumented"; exit 1; }
	done <cmds &&
	sed -n "/^\.Ss Commands/,/^\.El/p" "$TOP/man/beamscope.1" |
		grep -oE "^\.It Ic [a-z]+" | sed "s/.It Ic //" | sort -u >man.cmds &&
	expect "$(wc -l <man.cmds)" -eq "$(wc -l <cmds)" &&
	for c in $(cat man.cmds); do grep -qx "$c" cmds || { echo "man documents unknown command $c"; exit 1; }; done
'

# the key table: X(REQUEST, "keys", "hint", "help"); keys are names joined by ", "
grep -oE "^[[:space:]]*X\([A-Z_]+, *\"[^\"]+\"" "$TOP/ui/keys.h" | sed "s/.*\"\(.*\)\"/\1/" >keys

test_expect_success 'every key in the key table is in the man page, and back' '
	expect "$(wc -l <keys)" -gt 15 &&
	while read -r k; do
		grep -qxF ".It Ic $k" "$TOP/man/beamscope.1" || { echo "key $k undocumented"; exit 1; }
	done <keys &&
	sed -n "/^\.Ss Keys/,/^\.El/p" "$TOP/man/beamscope.1" |
		grep "^\.It Ic " | sed "s/^\.It Ic //" >man.keys &&
	while read -r k; do
		grep -qxF "$k" keys || { echo "man documents unknown key $k"; exit 1; }
	done <man.keys
'

test_expect_success 'every key name in the key table is one the key map knows, bound once' '
	sed "s/, /\n/g" keys >names &&
	sort names | uniq -d >twice && cat twice && [ ! -s twice ] &&
	grep -vxE ".|F([1-9]|1[0-2])" names | while read -r k; do
		grep -qF "{ \"$k\"," "$TOP/ui/keys.c" || { echo "unknown key name $k"; exit 1; }
	done
'
test_done
