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

test_expect_success 'every exit code in src/exitcode.h is documented' '
	for n in $(grep -oE "= [0-9]+," "$TOP/src/exitcode.h" | tr -dc "0-9\n"); do
		grep -q "^\.It $n\$" "$TOP/man/beamscope.1" || { echo "exit $n undocumented"; exit 1; }
	done
'
test_done
