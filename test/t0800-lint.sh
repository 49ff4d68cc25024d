#!/bin/sh
# cppcheck and clang-tidy (.clang-tidy) find nothing in src/ and ui/.
. "$(dirname "$0")/lib.sh"

command -v cppcheck >/dev/null && command -v clang-tidy >/dev/null ||
	test_skip_all "cppcheck or clang-tidy missing: run scripts/setup"

test_expect_success 'make lint is clean' '
	make -C "$TOP" -s lint BUILD="$BUILD"
'
test_done
