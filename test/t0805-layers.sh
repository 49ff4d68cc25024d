#!/bin/sh
# src/ keeps its layers (make layers): each folder uses only itself and
# the folders below it, the front ends never each other; and the check
# catches each kind of break planted in a copy of the tree; no file or
# function grows past its size (scripts/sizes).
. "$(dirname "$0")/lib.sh"

LAYERS=$(make -s -C "$TOP" --no-print-directory -f Makefile -f - print-layers <<'MK'
print-layers:
	@echo $(LAYERS)
MK
)

test_expect_success 'the tree keeps its layers' '
	expect "$(echo $LAYERS | wc -w)" -ge 5 &&
	"$TOP/scripts/layers" -C "$TOP" $LAYERS >out &&
	expect "$(cat out)" = ""
'

test_expect_success 'each kind of break is found and said, one line each' '
	mkdir tree && cp -r "$TOP/src" "$TOP/ui" "$TOP/batch" tree/ &&
	low=$(echo $LAYERS | cut -d" " -f1) && high=$(echo $LAYERS | awk "{print \$NF}") &&
	lowc=$(ls tree/src/$low/*.c | head -1) && highh=$(ls tree/src/$high/*.h | head -1) &&
	sed -i "1i #include \"${highh##*/}\"" "$lowc" &&
	sed -i "1i #include \"app.h\"" "$lowc" &&
	sed -i "1i #include \"gensum.h\"" tree/ui/draw.c &&
	priv=$(ls tree/src/*/*_priv.h | head -1) && privdir=${priv#tree/src/} &&
	privdir=${privdir%%/*} &&
	sed -i "1i #include \"${priv##*/}\"" tree/ui/view.c &&
	mkdir tree/src/misc && touch tree/src/stray.c &&
	! "$TOP/scripts/layers" -C tree $LAYERS >out &&
	cat out &&
	grep -q "^layers: ${lowc#tree/} includes $high/${highh##*/}: $low is below $high" out &&
	grep -q "^layers: ${lowc#tree/} includes ui/app.h: src/ never uses a front end" out &&
	grep -q "^layers: ui/draw.c includes batch/gensum.h: the front ends do not use each other" out &&
	grep -q "^layers: src/misc/ is not a layer" out &&
	grep -q "^layers: src/stray.c: src/ holds main.c" out &&
	grep -q "^layers: ui/view.c includes $privdir/${priv##*/}: private to src/$privdir/" out &&
	expect "$(wc -l <out)" -eq 6
'
test_expect_success 'no file or function past its size but the known ones' '
	"$TOP/scripts/sizes" -C "$TOP" >out; rc=$?; cat out &&
	expect "$rc" -eq 0 && expect "$(cat out)" = ""
'

test_expect_success 'a function grown past 120 lines, a file past 800 and a known one split are each said' '
	mkdir sized && cp -r "$TOP/src" "$TOP/ui" "$TOP/batch" "$TOP/nif" "$TOP/scripts" sized/ &&
	{ printf "int grown(void)\n{\n"; seq 1 121 | sed "s/.*/\tx();/"; printf "}\n"; } >>sized/src/base/clock.c &&
	seq 1 801 | sed "s|.*|/* filler */|" >>sized/ui/keys.c &&
	echo "file src/base/sbuf.c" >>sized/scripts/sizes.known &&
	! "$TOP/scripts/sizes" -C sized >out && cat out &&
	grep -qx "sizes: function src/base/clock.c grown is past its size (files 800 lines, functions 120): split it" out &&
	grep -qx "sizes: file ui/keys.c is past its size (files 800 lines, functions 120): split it" out &&
	grep -qx "sizes: file src/base/sbuf.c is within its size now: take it off scripts/sizes.known" out &&
	expect "$(wc -l <out)" -eq 3
'
test_done
