#!/bin/sh
# The C unit tests run clean under valgrind: no invalid access, no
# uninitialised value used, no memory lost.
. "$(dirname "$0")/lib.sh"

command -v valgrind >/dev/null || test_skip_all "valgrind missing: run scripts/setup"
for t in "$BUILD"/test/*.t; do
	# a sanitized build carries its own checker; valgrind cannot run it
	if nm "$t" 2>/dev/null | grep -q __asan_init; then
		test_skip_all "the unit tests are built with AddressSanitizer"
	fi
done

for t in "$BUILD"/test/*.t; do
	test_expect_success "$(basename "$t") under valgrind" '
		cd "$TOP" && valgrind -q --error-exitcode=1 --leak-check=full \
			--errors-for-leak-kinds=definite,indirect "'"$t"'" >"$TRASH/tap" 2>"$TRASH/vg" &&
		! grep -q "^not ok" "$TRASH/tap" && [ ! -s "$TRASH/vg" ] || { cat "$TRASH/vg" "$TRASH/tap"; false; }
	'
done
test_done
