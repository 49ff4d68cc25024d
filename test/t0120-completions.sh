#!/bin/sh
# Shell completions: bash's completion function driven through COMP_WORDS
# and COMP_CWORD, node names from a real node's epmd; every option of
# --help offered by bash, zsh and fish; zsh and fish run for real when
# installed.
. "$(dirname "$0")/lib.sh"

BASH_COMP=$TOP/completions/beamscope.bash
ZSH_COMP=$TOP/completions/_beamscope
FISH_COMP=$TOP/completions/beamscope.fish

# bash_complete WORD...: what bash offers for the command line WORD..., the
# cursor at the end of the last word; one a line, sorted.  The function is
# the one `complete -p beamscope` names.
bash_complete() {
	bash -c '
		. "$1" || exit 1
		shift
		spec=$(complete -p beamscope) || exit 1
		fn=${spec#*-F }
		fn=${fn%% *}
		COMP_WORDS=("$@")
		COMP_CWORD=$(($# - 1))
		COMP_LINE="$*"
		COMP_POINT=${#COMP_LINE}
		"$fn" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
		printf "%s\n" "${COMPREPLY[@]}"
	' bash "$BASH_COMP" "$@" | sed "/^\$/d" | sort
}

# The long options of --help, from its option lines; the event kinds.
"$BEAMSCOPE" --help | grep -oE -- "^ +(-[a-zA-Z], )?--[a-z][a-z-]*" |
	sed "s/.*--/--/" | sort -u >help.opts
sed -n "/define EVENT_KINDS/,/^\$/p" "$TOP/src/term/event.h" |
	grep -oE "X\([A-Z]+, *\"[a-z_]+\"" | sed "s/.*\"\(.*\)\"/\1/" | sort >kinds

test_expect_success 'complete -p: bash completes beamscope with a function' '
	bash -c ". \"$BASH_COMP\" && complete -p beamscope" >spec && cat spec &&
	grep -qE "^complete -F [_a-z]+ beamscope\$" spec
'

test_expect_success 'bash offers every option of --help, and no other' '
	expect "$(wc -l <help.opts)" -gt 20 &&
	bash_complete "$BEAMSCOPE" -- >offered &&
	diff help.opts offered
'

test_expect_success 'bash: a prefix completes to its option' '
	expect "$(bash_complete "$BEAMSCOPE" --ev)" = --events &&
	expect "$(bash_complete "$BEAMSCOPE" --no-c)" = --no-config &&
	bash_complete "$BEAMSCOPE" --co >co && printf "%s\n" --cookie --cookie-file --counts | diff - co
'

test_expect_success 'bash: --events offers the kinds of src/term/event.h' '
	expect "$(wc -l <kinds)" -ge 8 &&
	bash_complete "$BEAMSCOPE" --events "" >offered && diff kinds offered &&
	bash_complete "$BEAMSCOPE" -e "" >offered && diff kinds offered
'

test_expect_success 'bash: --events completes after a comma, without the kinds given' '
	bash_complete "$BEAMSCOPE" --events send,re >offered &&
	printf "%s\n" send,receive send,register | diff - offered &&
	bash_complete "$BEAMSCOPE" --events send,receive, >offered && cat offered &&
	expect "$(wc -l <offered)" -eq $(( $(wc -l <kinds) - 2 )) &&
	! grep -qE ",(send|receive)\$" offered && grep -qx send,receive,gc offered
'

test_expect_success 'bash: --events=LIST, with = a word of its own or not' '
	expect "$(bash_complete "$BEAMSCOPE" --events = send,sp)" = send,spawn &&
	expect "$(bash_complete "$BEAMSCOPE" --events=send,sp)" = --events=send,spawn &&
	bash_complete "$BEAMSCOPE" --events = >offered && diff kinds offered
'

test_expect_success 'bash: --on-limit, --pids and --output' '
	expect "$(bash_complete "$BEAMSCOPE" --on-limit "" | tr "\n" " ")" = "shed stop " &&
	expect "$(bash_complete "$BEAMSCOPE" --on-limit=s | tr "\n" " ")" = "--on-limit=shed --on-limit=stop " &&
	expect "$(bash_complete "$BEAMSCOPE" --pids "" | tr "\n" " ")" = "all existing new " &&
	mkdir -p outdir && : >outdir/trace.json &&
	expect "$(bash_complete "$BEAMSCOPE" -o outdir/tr)" = outdir/trace.json &&
	expect "$(bash_complete "$BEAMSCOPE" --cookie-file outdir/tr)" = outdir/trace.json &&
	[ -z "$(bash_complete "$BEAMSCOPE" --duration "")" ]
'

start_node bscomp || exit 1
prefix=${NODE%_*}_

test_expect_success 'bash completes a running node name from epmd' '
	echo "prefix $prefix node $NODE" &&
	expect "$(bash_complete "$BEAMSCOPE" "$prefix")" = "$NODE" &&
	bash_complete "$BEAMSCOPE" "" >offered && grep -qx "$NODE" offered &&
	bash_complete "$BEAMSCOPE" -d 5 --events send "" >offered && grep -qx "$NODE" offered &&
	bash_complete "$BEAMSCOPE" --batch -o x.json "$prefix" >offered && grep -qx "$NODE" offered
'

test_expect_success 'bash: a second node (several at once); after --list, hosts instead' '
	expect "$(bash_complete "$BEAMSCOPE" "$NODE" "$prefix")" = "$NODE" &&
	expect "$(bash_complete "$BEAMSCOPE" --cluster "$NODE" --pids all "$prefix")" = "$NODE" &&
	expect "$(bash_complete "$BEAMSCOPE" --pids "$NODE" "$prefix")" = "$NODE" &&
	bash_complete "$BEAMSCOPE" --list "" >offered &&
	! grep -qx "$NODE" offered
'

test_expect_success 'bash: no nodes offered when epmd is not there' '
	[ -z "$(ERL_EPMD_PORT=1 bash_complete "$BEAMSCOPE" "$prefix")" ]
'

# zsh: options are those _arguments specs name: --name[ --name= {..,--name}
test_expect_success 'the zsh completion offers every option of --help, and no other' '
	grep -oE -- "--[a-z][a-z-]*(\\[|=|\\}|,)" "$ZSH_COMP" | sed "s/.\$//" | sort -u >zsh.opts &&
	diff help.opts zsh.opts &&
	grep "_values" "$ZSH_COMP" >values &&
	while read -r k; do grep -qw "$k" values || { echo "zsh lacks kind $k"; exit 1; }; done <kinds
'

test_expect_success 'the fish completion offers every option of --help, and no other' '
	grep -oE "^complete -c beamscope .*-l [a-z][a-z-]*" "$FISH_COMP" |
		sed "s/.*-l /--/" | sort -u >fish.opts &&
	diff help.opts fish.opts &&
	grep "^    for k in" "$FISH_COMP" >values &&
	while read -r k; do grep -qw "$k" values || { echo "fish lacks kind $k"; exit 1; }; done <kinds
'

if command -v zsh >/dev/null; then
	test_expect_success 'zsh -n: the zsh completion parses' '
		zsh -n "$ZSH_COMP"
	'
fi

if command -v fish >/dev/null; then
	# fish_complete LINE: what fish offers for LINE, candidates only, sorted.
	fish_complete() {
		PATH=$BUILD:$PATH fish -N -c "source '$FISH_COMP'; complete -C '$1'" |
			cut -f1 | sort
	}
	test_expect_success 'fish -n: the fish completion parses' '
		fish -n "$FISH_COMP"
	'
	test_expect_success 'fish: options, kinds after a comma, stop|shed' '
		fish_complete "beamscope --" | sed "/^--.*=/d" | sort -u >offered &&
		diff help.opts offered &&
		fish_complete "beamscope --events send,re" >offered &&
		printf "%s\n" send,receive send,register | diff - offered &&
		fish_complete "beamscope --events=" | sed "s/^--events=//" >offered &&
		diff kinds offered &&
		expect "$(fish_complete "beamscope --on-limit " | tr "\n" " ")" = "shed stop "
	'
	test_expect_success 'fish completes a running node name, also a second one' '
		expect "$(fish_complete "beamscope -d 5 $prefix")" = "$NODE" &&
		expect "$(fish_complete "beamscope $NODE $prefix")" = "$NODE" &&
		[ -z "$(fish_complete "beamscope -d $prefix")" ]
	'
fi

if command -v zsh >/dev/null && command -v tmux >/dev/null; then
	# zsh_type KEYS...: type into an interactive zsh in tmux, then read
	# the line back.
	zsh_start() {
		mkdir -p zdot &&
		cat >zdot/.zshrc <<-EOF &&
		PS1='zsh%% '
		fpath=('$TOP/completions' \$fpath)
		autoload -Uz compinit && compinit -u -D
		PATH='$BUILD':\$PATH
		EOF
		tm -f /dev/null new-session -d -s zsh -x 150 -y 20 \
			"ZDOTDIR='$TRASH/zdot' zsh -i" &&
		zsh_wait "^zsh%\$"
	}
	zsh_wait() {
		for _ in $(seq 1 100); do
			tm capture-pane -p -t zsh | grep -qE -- "$1" && return 0
			sleep 0.05
		done
		echo "zsh never showed: $1"; tm capture-pane -p -t zsh
		return 1
	}
	test_expect_success 'zsh completes kinds after a comma and a running node name' '
		zsh_start &&
		tm send-keys -t zsh "beamscope --events=send,rec" Tab &&
		zsh_wait "^zsh% beamscope --events=send,receive" &&
		tm send-keys -t zsh ",sp" Tab " --on-l" Tab "sh" Tab " $prefix" Tab &&
		zsh_wait "^zsh% beamscope --events=send,receive,spawn --on-limit=shed $NODE\$" &&
		tm send-keys -t zsh C-u "beamscope --pi" Tab Tab &&
		zsh_wait "^all +existing +new" &&
		tm kill-session -t zsh
	'
fi
test_done
