#!/bin/sh
# The servers view with thousands of rows and 100000 calls in flight (the
# forged calls of t0588): it answers keys as it does with a few rows, and
# says what the bounds folded and gave up.
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || test_skip_all "tmux is not installed"

start_node bsuimany || exit 1
erlc -o "$TRASH/ebin" "$TOP/test/erl/bs_forge.erl" || exit 1
node_eval 'bs_forge:start(100).' >/dev/null

# key_ms KEY PATTERN: press KEY, and how many ms until the screen shows
# PATTERN (at most 20 s); what it waited for and the screen go to stderr
# when it never comes
key_ms() {
	t0=$(date +%s%N)
	ui_keys "$1" && ui_wait "$2" 20 >/dev/null ||
		{ echo "no $2 after $1" >&2; ui_screen >&2; return 1; }
	echo $(( ($(date +%s%N) - t0) / 1000000 ))
}

test_expect_success 'thousands of rows, 100000 calls in flight' '
	ui_start --gen-calls --high-water 1048576 &&
	ui_wait "tracing [0-9]+ processes" 10 &&
	node_eval "bs_forge:forge(1000, 300, 300000)." >/dev/null &&
	ui_keys v && ui_wait "SERVER" 10 &&
	ui_wait " [0-9]+/6[0-9]{3}  sort worst" 30 &&
	ui_wait "given up in flight" 30 &&
	ui_screen | head -3 && ui_screen | tail -2
'

test_expect_success 'keys are answered at once' '
	n=$(ui_screen | sed -n "s|.* [0-9]*/\([0-9]*\)  sort .*|\1|p" | head -1) &&
	echo "$n rows" &&
	a=$(key_ms End " $n/$n  sort") && b=$(key_ms Home " 1/$n  sort") &&
	c=$(key_ms ">" "SERVERv") && d=$(key_ms PageDown " [0-9]+/$n  sort SERVER") &&
	e=$(key_ms "<" " sort worst") &&
	echo "End $a ms, Home $b ms, sort $c ms, PageDown $d ms, sort back $e ms" &&
	for t in $a $b $c $d $e; do
		expect "$t" -lt 3000 || { echo "want under 3000 ms, got $t"; false; } || exit 1
	done
'

test_expect_success 'the folded kinds are rows of their own, and said so' '
	ui_wait "^  kinds past 64 a server: \(other\); [0-9]+ given up in flight" 5 &&
	ui_keys ">" ">" && ui_wait "KINDv" 5 && ui_keys Home &&
	ui_wait "^[ !] <0\.[0-9]+\.0> +\(other\) +0 " 5
'

test_expect_success 'Q: the target is clean' '
	ui_keys Q && expect "$(ui_exit_status 10)" = 0 &&
	node_eval "bs_forge:stop()." >/dev/null && target_clean 5
'
test_done
