# bash completion for beamscope                            -*- shell-script -*-
#
# Completes the options (the long names of `beamscope --help`), their
# arguments where there are few to choose from (event kinds, after a comma
# too; stop|shed; all|new|existing; the alarms of --alarm; files), node
# names from epmd through
# `beamscope --list`, and host names after --list.  Needs nothing from the
# bash-completion package.

_beamscope_options='--batch --output --open --record --events --pids --call --match --follow
	--duration --max-events --payload-bytes --rate --on-limit --syntax --counts
	--interval --gen-calls --slower-than --stuck --chart --profile --profile-out
	--profile-rate --profile-budget --profile-calls --alarm --summary --node-stats --ascii --cookie-file --cookie --port --ssl-dist-optfile --tls-cert --tls-key --tls-ca --tls-verify --longnames --list --cluster
	--reconnect --ring --workers
	--high-water --dependency-timeout --take-over --legacy --exact --quiet --no-config --help --version'

# Whether option $1 takes an argument.
_beamscope_takes_arg()
{
	case $1 in
	--output|-o|--open|--record|--events|-e|--pids|-p|--call|-c|--match|--follow|-f|--duration|-d|\
	--max-events|-n|--payload-bytes|--rate|-r|--on-limit|--syntax|--interval|\
	--slower-than|--stuck|--chart|--profile-out|--profile-rate|--profile-budget|--profile-calls|--alarm|\
	--cookie-file|--cookie|--port|--ssl-dist-optfile|--tls-cert|--tls-key|--tls-ca|--tls-verify|--ring|--workers|--high-water|--dependency-timeout)
		return 0 ;;
	esac
	return 1
}

_beamscope_kinds='send receive spawn exit link register gc running timeout gen_call'

# _beamscope_list PREFIX CUR: the kinds that complete the last item of a
# comma-separated list CUR, each written out with the items before it.
_beamscope_list()
{
	local pre="" last=$2 k
	if [[ $last == *,* ]]; then
		pre=${last%,*},
		last=${last##*,}
	fi
	for k in $_beamscope_kinds; do
		[[ ,$pre == *,"$k",* ]] && continue
		[[ $k == "$last"* ]] && COMPREPLY+=("$1$pre$k")
	done
	# more may follow after a comma
	compopt -o nospace 2>/dev/null
}

_beamscope_alarm_names='long_gc long_schedule large_heap long_message_queue busy_port busy_dist_port'

# _beamscope_alarms PREFIX CUR: what completes the last item of --alarm's
# list CUR, written out with the items before it: on (alone), an alarm not
# named yet as NAME=, or after NAME= the values off (and on for the busy
# ones); a time, a size or a count is for the user to type.
_beamscope_alarms()
{
	local pre="" last=$2 k v
	if [[ $last == *,* ]]; then
		pre=${last%,*},
		last=${last##*,}
	else
		[[ on == "$last"* ]] && COMPREPLY+=("$1on")
	fi
	if [[ $last == *=* ]]; then
		k=${last%%=*}
		for v in off on; do
			[[ $v == on && $k != busy_*port ]] && continue
			[[ $k=$v == "$last"* ]] && COMPREPLY+=("$1$pre$k=$v")
		done
		return
	fi
	for k in $_beamscope_alarm_names; do
		[[ ,$pre == *,"$k"[=,]* ]] && continue
		[[ $k == "$last"* ]] && COMPREPLY+=("$1$pre$k=")
	done
	# a value follows the '='
	compopt -o nospace 2>/dev/null
}

# _beamscope_alarm_value EQ: whether the word EQ, an '=', follows a NAME of
# --alarm's list, where bash broke the words at each '=' (--alarm long_gc =
# 20ms,large_heap = ...): what is typed after it is NAME's value.
_beamscope_alarm_value()
{
	local k=$(($1 - 1))
	((k >= 1)) && [[ ${COMP_WORDS[k+1]} == = && ${COMP_WORDS[k]} != -* ]] ||
		return 1
	while ((k > 1)); do
		case ${COMP_WORDS[k-1]} in
		--alarm) return 0 ;;
		=) [[ ${COMP_WORDS[k-2]} == --alarm ]] && return 0
		   ((k -= 2)) ;;
		*) return 1 ;;
		esac
	done
	return 1
}

# _beamscope_nodes BEAMSCOPE CUR: the names epmd knows on this host.
_beamscope_nodes()
{
	local n
	while IFS= read -r n; do
		[[ $n == "$2"* ]] && COMPREPLY+=("$n")
	done < <("$1" --list 2>/dev/null)
}

_beamscope()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev="" opt="" pre="" i w
	local node_given="" list_given=""
	COMPREPLY=()
	((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD-1]}

	# --opt=value: one word, or three when '=' breaks words
	if [[ $cur == --*=* ]]; then
		opt=${cur%%=*}
		pre=$opt=
		cur=${cur#*=}
	elif [[ $cur == = && $prev == --* ]]; then
		opt=$prev
		cur=""
	elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
		opt=${COMP_WORDS[COMP_CWORD-2]}
	elif [[ $prev == -* ]]; then
		opt=$prev
	fi

	# after NAME= in --alarm's list: its value, then the next alarm; the
	# '=' is the word being typed when the cursor is right after it
	i=-1
	if [[ $cur == = ]]; then
		i=$COMP_CWORD w=""
	elif [[ $prev == = ]]; then
		i=$((COMP_CWORD - 1)) w=$cur
	fi
	if ((i > 1)) && _beamscope_alarm_value "$i"; then
		if [[ $w == *,* ]]; then
			_beamscope_alarms "" "$w"
		else
			_beamscope_alarms "" "${COMP_WORDS[i-1]##*,}=$w"
			COMPREPLY=("${COMPREPLY[@]#*=}")
			# more may follow after a comma
			compopt -o nospace 2>/dev/null
		fi
		return 0
	fi

	if [[ -n $opt ]] && _beamscope_takes_arg "$opt"; then
		case $opt in
		--events|-e)
			_beamscope_list "$pre" "$cur" ;;
		--alarm)
			_beamscope_alarms "$pre" "$cur" ;;
		--on-limit)
			COMPREPLY=($(compgen -P "$pre" -W 'stop shed' -- "$cur")) ;;
		--syntax)
			COMPREPLY=($(compgen -P "$pre" -W 'auto erlang elixir' -- "$cur")) ;;
		--chart)
			COMPREPLY=($(compgen -P "$pre" -W 'plantuml mermaid' -- "$cur")) ;;
		--tls-verify)
			COMPREPLY=($(compgen -P "$pre" -W 'verify_peer verify_none' -- "$cur")) ;;
		--pids|-p)
			COMPREPLY=($(compgen -P "$pre" -W 'all new existing' -- "$cur")) ;;
		--output|-o|--open|--record|--cookie-file|--profile-out|--ssl-dist-optfile|--tls-cert|--tls-key|--tls-ca)
			compopt -o filenames 2>/dev/null
			COMPREPLY=($(compgen -f -- "$cur")) ;;
		esac
		# the others take a number, a pattern or a process: nothing to offer
		return 0
	fi

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$_beamscope_options" -- "$cur"))
		return 0
	fi

	# a word of its own: NODE, or HOST after --list
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [[ $w == --list ]]; then
			list_given=1
		elif _beamscope_takes_arg "$w"; then
			# its argument, after a '=' word or not
			[[ ${COMP_WORDS[i+1]:-} == = ]] && ((i++))
			((i++))
		elif [[ $w != -* ]]; then
			node_given=1
		fi
	done
	if [[ -n $list_given ]]; then
		[[ -z $node_given ]] && COMPREPLY=($(compgen -A hostname -- "$cur"))
	else
		# one node or several
		_beamscope_nodes "$1" "$cur"
	fi
	return 0
}

complete -F _beamscope beamscope
