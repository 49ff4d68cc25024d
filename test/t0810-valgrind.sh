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

# two at a time (the machine's two cores), each into files of its own
# shellcheck disable=SC2016
ls "$BUILD"/test/*.t | (cd "$TOP" && xargs -P 2 -n 1 sh -c '
	n=$(basename "$1")
	valgrind -q --error-exitcode=1 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect "$1" >"$0/$n.tap" 2>"$0/$n.vg"
	echo $? >"$0/$n.rc"' "$TRASH")

for t in "$BUILD"/test/*.t; do
	n=$(basename "$t")
	test_expect_success "$n under valgrind" '
		[ "$(cat "$TRASH/'"$n"'.rc")" = 0 ] && ! grep -q "^not ok" "$TRASH/'"$n"'.tap" &&
		[ ! -s "$TRASH/'"$n"'.vg" ] || { cat "$TRASH/'"$n"'.vg" "$TRASH/'"$n"'.tap"; false; }
	'
done
test_done
