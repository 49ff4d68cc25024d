#!/bin/sh
# src/ keeps its layers (make layers): each folder uses only itself and
# the folders below it, the front ends never each other; and the check
# catches each kind of break planted in a copy of the tree.
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
test_done
