# fish completion for beamscope: the options of `beamscope --help` with
# their arguments where there are few to choose from (event kinds, after a
# comma too; stop|shed; all|new|existing; the alarms of --alarm; files),
# node names from epmd through `beamscope --list`, and host names after
# --list.

# The event kinds that complete the last item of the list being typed,
# each written out with the items before it.
function __beamscope_kinds
    set -l tok (commandline -ct | string replace -r -- '^(--events=|-e)' '')
    set -l pre ''
    if string match -q -- '*,*' $tok
        set pre (string replace -r -- '[^,]*$' '' $tok)
    end
    set -l given (string split , -- $pre)
    for k in send receive spawn exit link register gc running timeout gen_call
        contains -- $k $given; or printf '%s%s\n' $pre $k
    end
end

# What completes the last item of --alarm's list, written out with the
# items before it: on (alone), an alarm not named yet as NAME=, or after
# NAME= the values off (and on for the busy ones); a time, a size or a
# count is for the user to type.
function __beamscope_alarms
    set -l tok (commandline -ct | string replace -r -- '^--alarm=' '')
    set -l pre ''
    if string match -q -- '*,*' $tok
        set pre (string replace -r -- '[^,]*$' '' $tok)
    else
        echo on
    end
    set -l last (string replace -r -- '^.*,' '' $tok)
    if string match -q -- '*=*' $last
        set -l k (string replace -r -- '=.*' '' $last)
        printf '%s%s=off\n' $pre $k
        string match -q -- 'busy_*port' $k; and printf '%s%s=on\n' $pre $k
        return
    end
    set -l given (string split , -- $pre | string replace -r -- '=.*' '')
    for k in long_gc long_schedule large_heap long_message_queue busy_port busy_dist_port
        contains -- $k $given; or printf '%s%s=\n' $pre $k
    end
end

# Options that take an argument: their values are not NODE.
function __beamscope_takes_arg
    contains -- $argv[1] -o --output --open --record -e --events -p --pids -c --call --match \
        -f --follow -d --duration -n --max-events --payload-bytes -r --rate \
        --on-limit --syntax --interval --slower-than --stuck --chart --profile-out --profile-rate --profile-budget --profile-calls --alarm --cookie-file --cookie --port --ssl-dist-optfile --tls-cert --tls-key --tls-ca --tls-verify --ring --workers \
        --high-water --dependency-timeout
end

# Whether the word being typed is a NODE (or HOST after --list), not the
# argument of an option: several nodes may be given.
function __beamscope_wants_word
    set -l words (commandline -opc)
    set -e words[1]
    set -l skip 0
    for w in $words
        if test $skip = 1
            set skip 0
        else if __beamscope_takes_arg $w
            set skip 1
        end
    end
    test $skip = 0
end

function __beamscope_listing
    contains -- --list (commandline -opc)
end

function __beamscope_nodes
    set -l cmd (commandline -opc)[1]
    $cmd --list 2>/dev/null
end

complete -c beamscope -f
complete -c beamscope -n '__beamscope_wants_word; and not __beamscope_listing' -a '(__beamscope_nodes)' -d node
complete -c beamscope -n '__beamscope_wants_word; and __beamscope_listing' -a '(__fish_print_hostnames)' -d host

complete -c beamscope -l batch -d 'write events as JSON lines instead of opening the interactive view'
complete -c beamscope -s o -l output -r -F -d 'write to FILE instead of standard output'
complete -c beamscope -l open -r -F -d 'reopen a recording instead of a node'
complete -c beamscope -l record -r -F -d 'the view: record everything it receives to FILE'
complete -c beamscope -s e -l events -x -a '(__beamscope_kinds)' -d 'kinds of events to trace'
complete -c beamscope -s p -l pids -x -a 'all new existing' -d 'processes to trace'
complete -c beamscope -s c -l call -x -d 'trace the calls a pattern names (mod:fun/arity)'
complete -c beamscope -l match -x -d 'ship only the messages matching an Erlang pattern [when Guard]'
complete -c beamscope -s f -l follow -x -d 'trace a process and everything it spawns'
complete -c beamscope -s d -l duration -x -d 'stop after SECONDS'
complete -c beamscope -s n -l max-events -x -d 'stop after N events'
complete -c beamscope -l payload-bytes -x -d 'cut messages to N bytes on the target'
complete -c beamscope -s r -l rate -x -d 'at most N events per second'
complete -c beamscope -l on-limit -x -a 'stop shed' -d 'what to do over --rate'
complete -c beamscope -l syntax -x -a 'auto erlang elixir' -d 'print terms and names as this language does'
complete -c beamscope -l counts -d 'batch: per-process counts instead of events'
complete -c beamscope -l interval -x -d 'batch --counts, --gen-calls: write counts, call statistics every SECONDS'
complete -c beamscope -l gen-calls -d 'batch: gen_server/gen_statem call latency per server and request kind'
complete -c beamscope -l slower-than -x -d 'batch: a slow_call line for every gen call slower than MS'
complete -c beamscope -l stuck -x -d 'a gen call in flight longer than SECONDS is stuck'
complete -c beamscope -l chart -x -a 'plantuml mermaid' -d 'batch: a sequence chart of the --pids or --follow processes'
complete -c beamscope -l profile -d 'batch: sample the stacks of the --pids or --follow processes'
complete -c beamscope -l profile-out -r -F -d 'batch --profile: write the stacks sampled to FILE as collapsed stacks'
complete -c beamscope -l profile-rate -x -d 'samples a second in all'
complete -c beamscope -l profile-budget -x -d 'the sampler time on the target, in percent of one scheduler'
complete -c beamscope -l profile-calls -x -d 'batch: count and time every call of the functions named: mod, mod:fun or mod:fun/N,...'
complete -c beamscope -l alarm -x -a '(__beamscope_alarms)' -d 'the VM alarms as events: on, or NAME=VALUE,...'
complete -c beamscope -l summary -d 'batch: the busiest processes and the slowest servers at the end'
complete -c beamscope -l node-stats -d 'sample each node once a second: the view header, batch node_stats lines'
complete -c beamscope -l ascii -d 'the view: draw rates and lines with ASCII characters only'
complete -c beamscope -l cookie-file -r -F -d 'read the cookie from FILE'
complete -c beamscope -l cookie -x -d 'the cookie itself (prefer --cookie-file)'
complete -c beamscope -l port -x -d 'the node distribution port, without epmd'
complete -c beamscope -l ssl-dist-optfile -r -F -d 'the node TLS distribution options file'
complete -c beamscope -l tls-cert -r -F -d 'TLS: our certificate'
complete -c beamscope -l tls-key -r -F -d 'TLS: its private key'
complete -c beamscope -l tls-ca -r -F -d 'TLS: the CA of the node certificate'
complete -c beamscope -l tls-verify -x -a 'verify_peer verify_none' -d 'TLS: check the node certificate'
complete -c beamscope -s l -l longnames -d 'NODE is a long name'
complete -c beamscope -l list -d 'list the nodes epmd knows on HOST'
complete -c beamscope -l cluster -d 'also attach to every visible node the given nodes are connected to'
complete -c beamscope -l reconnect -d 'attach again to a node that was lost, when it comes back'
complete -c beamscope -l ring -x -d 'events the interactive view keeps'
complete -c beamscope -l workers -x -d 'worker processes on the target'
complete -c beamscope -l high-water -x -d 'events in flight per worker before the target drops'
complete -c beamscope -l dependency-timeout -x -d 'the target cleans up after SECONDS without beamscope'
complete -c beamscope -l take-over -d 'legacy tracing: take what another tracer holds, give it back at the end'
complete -c beamscope -l legacy -d 'OTP 27 and later: trace in the shared legacy session, not a session of its own'
complete -c beamscope -l exact -d 'batch: exit with status 7 if the final counts are not complete'
complete -c beamscope -s q -l quiet -d 'no progress lines on standard error'
complete -c beamscope -l no-config -d 'do not read ~/.config/beamscope/config'
complete -c beamscope -s h -l help -d 'show the help'
complete -c beamscope -s V -l version -d 'show version and OTP releases'
