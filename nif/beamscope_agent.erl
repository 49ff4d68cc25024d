%% beamscope_agent: everything beamscope runs on the target, as plain
%% processes; the wire protocol is nif/PROTOCOL.md.
%%
%% Owns the bootstrap of the tracer (its module and its NIF library), the
%% agent process that answers the Owner (the C node), the workers that batch
%% events to the Owner, and the cleanup that leaves the node as it was.
%%
%% Invariants:
%%  * one agent per node, registered as beamscope_agent; the name is held
%%    until the session's last process is gone (the final purge kills it),
%%    so a new bootstrap never loads this module while one of ours runs it;
%%  * only the Owner's requests are obeyed: they carry the session's secret,
%%    of which the agent keeps only a digest; everything the agent and its
%%    workers send the Owner goes to its registered name, so that the Owner
%%    can tell them from anyone else by the sender;
%%  * a session never takes more memory than the cap the tracer enforces;
%%  * call patterns carry only actions that end with the session;
%%  * a head in Elixir form is parsed by the node's Elixir, never evaluated,
%%    and makes no atom and no output on the node; a pattern in Erlang
%%    form makes no atom either (Reading a pattern without making atoms);
%%  * no process_info item that walks a list of a process (its message
%%    queue, its links) is asked where its predicted cost is high (Dear
%%    process_info items);
%%  * the agent and its workers are never traced, and the agent spawns no
%%    process while new_processes may be traced (it would be traced);
%%  * only flags whose tracer is beamscope_tracer are ever cleared: another
%%    tracer's processes are left exactly as they were;
%%  * the one node-wide setting changed beyond tracing is scheduler_wall_time,
%%    and only through the agent's own count (node samples): lowered at
%%    cleanup, dropped by the VM if the agent dies;
%%  * every way out (stop, nodedown, owner silence, a worker's death, a crash
%%    of the agent itself) goes through the same cleanup, which ends with
%%    our modules unloaded (beamscope_elixir, loaded only for heads in
%%    Elixir form, goes with the tracer); if the agent is killed, its workers clean up
%%    instead (one of them, the one that takes the name);
%%  * no fun of this module is ever handed to another process, so the final
%%    purge can only kill our own processes.
-module(beamscope_agent).

-export([start/4]).
%% entry points of the processes we spawn
-export([agent/5, worker/5]).
%% the top-N scan, a step at a time (scripts/bench-ui top runs it), and
%% the table's samples (scripts/bench-ui procinfo)
-export([top_new/2, top_new/3, top_step/3, top_passed/1, sample_rows/1]).

-include("beamscope_ms.hrl").

-define(NAME, beamscope_agent).
%% the bootstrap lock's name (PROTOCOL.md)
-define(LOCK, beamscope_bootstrap).
-define(TRACER, beamscope_tracer).
%% the reader of call patterns in Elixir form, loaded only for them
-define(ELIXIR, beamscope_elixir).
-define(START_TIMEOUT, 10000).
%% workers drain for at most this long ...
-define(DRAIN_MS, 1000).
%% ... and the agent waits this long for all of them (a worker may be held
%% up sending its last batches), then speaks for the ones that did not finish
-define(WORKERS_MS, 3000).
%% the loop runs at least this often, and a gap much longer than that means
%% the VM could not run us: the Owner's silence is then not held against it
-define(TICK_MS, 500).
-define(PAUSE_MS, 2000).
%% where the Owner, a remote node, receives what we send
-define(OWNER_NAME, beamscope).
-define(SECRET_MIN, 16).
-define(SECRET_MAX, 64).
%% how long a failed start/4 waits for its caller to leave this module
-define(CALLER_MS, 5000).
-define(MAX_WORKERS, 1024).
%% the NIF's limits
-define(MAX_PAYLOAD, 16#4000000).
-define(MAX_HIGH_WATER, 16#40000000).
-define(STATE, '$beamscope_state').
-define(LEAVING, '$beamscope_leaving').

%% event kinds as in the NIF; register is always on (PROTOCOL.md)
-define(KINDS, [{send, 1}, {'receive', 2}, {spawn, 4}, {exit, 8},
                {link, 16}, {register, 32}, {gc, 128}, {running, 256},
                {timeout, 512}, {gen_call, 1024}]).
-define(K_RECEIVE, 2).
-define(K_TIMEOUT, 512).
-define(K_REGISTER, 32).
-define(K_CALL, 64).
%% the receive pattern marks the receive timeouts of shipped processes with
%% this (PROTOCOL.md, receive timeouts), and names at most this many
-define(TIMEOUT_MARK, '$beamscope_timeout').
-define(TIMEOUT_PIDS_MAX, 64).
%% --match: a message the pattern does not match, let through to be
%% counted (or for its gen call record), never shipped (PROTOCOL.md)
-define(OTHER_MARK, '$beamscope_other').
%% the first clause of every send or receive pattern we set: it never
%% matches (its guard is false), and it says whose the pattern is
-define(OURS, {'_', [false], [{message, '$beamscope'}]}).

%% The top-N scan: every process is looked at once a pass, a slice a
%% second within a time budget; the best N of the pass so far and of the
%% last whole pass are the candidates, sampled every second with the rows
%% on screen.  Reductions a second take two looks a second apart: a
%% slice's first looks are kept (prev) for its second ones.  A pass walks
%% the node with erlang:processes_iterator/0 where the VM has it (OTP 28),
%% else a list of erlang:processes() taken at its start.
-record(top, {metric :: memory | reductions | message_queue_len,
              n :: pos_integer(),
              walk = list :: iterator | list,
              todo = [] :: [pid()] | tuple(),       % this pass, not yet seen:
                                                    % a list or an iterator
              ours = [] :: [pid()],                 % skipped by the iterator
              prev = [] :: [{pid(), integer()}],    % first looks, reductions
              prev_us = 0 :: integer(),
              best = [] :: [{number(), pid()}],     % this pass, best first
              last = [] :: [{number(), pid()}],     % the last whole pass
              started = none :: none | integer(),   % this pass began, ms
              pass_ms = 0 :: non_neg_integer(),     % the last whole pass took
              scanned = 0 :: non_neg_integer(),     % of this pass
              total = 0 :: non_neg_integer(),       % processes this pass
              passes = 0 :: non_neg_integer()}).

-record(st, {owner :: pid(),
             dest :: pid() | {atom(), node()},    % where the Owner receives
             key :: binary(),                     % md5 of the session's secret
             owner_mon :: reference() | undefined, % a local Owner only
             workers :: [{non_neg_integer(), pid(), reference()}],
             session = none :: none | reference(),
             dep_ms :: pos_integer(),
             heard :: integer(),                   % Owner last heard, ms
             awake :: integer(),                   % the loop last ran, ms
             high_water :: pos_integer(),
             %% count tier
             interval = 0 :: non_neg_integer(),   % 0: event tier
             cseq = 0 :: non_neg_integer(),       % counts messages sent
             overflow = 0 :: integer(),
             active = #{} :: map(),               % pids counted lately
             focus = [] :: [pid()],
             %% what the Owner shows: sampled each second as well
             shown = [] :: [pid()],
             %% whose receive timeouts are shipped: all, the listed roots,
             %% or none when the receive pattern is another tool's
             timeouts = none :: none | all | [pid()],
             %% the receive kinds asked for: messages, timeouts (the
             %% receive pattern rejects what is not asked for)
             recv = {true, true} :: {boolean(), boolean()},
             %% --match, compiled: the send pattern, and the receive
             %% pattern's clauses after the timeouts; none: no --match
             match = none :: none | {list(), list()},
             %% call patterns we set, to remove them at cleanup
             patterns = [] :: [mfa()],
             %% where flags and patterns are set (Two ways to trace): the
             %% node's one shared session (legacy), or a trace session of
             %% our own, {session, Handle}; only the agent holds the handle
             tr = legacy :: legacy | {session, term()},
             %% legacy, --take-over: what another tracer held, given back
             %% at cleanup: {Pid | new_processes, Flags, TracerOpt} and
             %% {send | 'receive', MatchSpec}
             taken = [] :: [tuple()],
             %% what the check looks at every ?CHECK_MS (Cleared by someone
             %% else), and what it found cleared
             watch = none :: none | {boolean(), [pid()], [mfa()],
                                     [send | 'receive']},
             cleared = [] :: [atom()],
             %% the receive pattern last set, read back to know it holds
             %% (Receive timeouts and --match), and whether the receive
             %% flag was set
             rms = none :: none | list(),
             rflag = false :: boolean(),
             %% {UserKinds, MaxEvents, DurationMs, Rate, Shed}, and the last
             %% {Tripped, Shed} told to Owner
             limits = {0, 0, 0, 0, false},
             told = {none, 0},
             %% node samples (the view's header): the timer while they
             %% are on, and the last scheduler_wall_time, for deltas
             node = none :: none | reference(),
             swt = [] :: [{pos_integer(), integer(), integer()}],
             %% top-N (the view's top mode): the scan for candidates
             top = none :: none | #top{}}).

-define(LIMITS_MS, 100).
%% flags cleared by someone else are looked for this often, on at most
%% this many of the processes and functions traced
-define(CHECK_MS, 1000).
-define(CHECK_MAX, 32).

-define(INFO_MS, 1000).
-define(INFO_MAX, 2000).
%% dear process_info items (see Dear process_info items): what a queued
%% message costs a walk at worst, in ns (measured 9 on an idle node, some
%% 100 on a busy one), the longest walk of a queue ever asked for, the
%% budget of a turn, in us, the share of a scheduler a process may take
%% (one call per 100 times its cost), the calls remembered and for how
%% long, and what a queued message takes at least, in words
-define(MSG_NS, 100).
-define(DEAR_MAX_US, 2000).
-define(DEAR_BUDGET_US, 10000).
-define(DEAR_SHARE, 100).
-define(DEAR, '$beamscope_dear').
-define(DEAR_KEEP, 4096).
-define(DEAR_FORGET_MS, 60000).
-define(MSG_MIN_WORDS, 4).
%% a top look by memory this dear is remembered
-define(DEAR_NOTE_US, 50).
%% reading a pattern without making atoms (see there): the names a
%% variable may take, and a name the node has no atom for (this module's
%% atoms, so they exist while it is loaded); what erl_scan takes for a
%% name
-define(VARS, {'BsVar01', 'BsVar02', 'BsVar03', 'BsVar04', 'BsVar05',
               'BsVar06', 'BsVar07', 'BsVar08', 'BsVar09', 'BsVar10',
               'BsVar11', 'BsVar12', 'BsVar13', 'BsVar14', 'BsVar15',
               'BsVar16', 'BsVar17', 'BsVar18', 'BsVar19', 'BsVar20',
               'BsVar21', 'BsVar22', 'BsVar23', 'BsVar24', 'BsVar25',
               'BsVar26', 'BsVar27', 'BsVar28', 'BsVar29', 'BsVar30',
               'BsVar31', 'BsVar32'}).
-define(NO_ATOMS, {bs_no_atom_01, bs_no_atom_02, bs_no_atom_03, bs_no_atom_04,
                   bs_no_atom_05, bs_no_atom_06, bs_no_atom_07, bs_no_atom_08,
                   bs_no_atom_09, bs_no_atom_10, bs_no_atom_11, bs_no_atom_12,
                   bs_no_atom_13, bs_no_atom_14, bs_no_atom_15, bs_no_atom_16}).

-define(DIGIT(C), (C >= $0 andalso C =< $9)).
-define(UPPER(C), ((C >= $A andalso C =< $Z) orelse
                   (C >= 16#C0 andalso C =< 16#DE andalso C =/= 16#D7))).
-define(LOWER(C), ((C >= $a andalso C =< $z) orelse
                   (C >= 16#DF andalso C =< 16#FF andalso C =/= 16#F7))).
-define(NAMECHAR(C), (?DIGIT(C) orelse ?UPPER(C) orelse ?LOWER(C) orelse
                      C =:= $_ orelse C =:= $@)).

%% top-N: N at most, and the time a second the scan may take (its first
%% looks; the second looks of reductions take about as much again)
-define(TOP_MAX, 200).
-define(TOP_BUDGET_US, 10000).
%% node samples: how often, and the mark that this process raised the
%% scheduler_wall_time flag (its own count; see node_stats/2)
-define(NODE_MS, 1000).
-define(SWT, '$beamscope_swt').
%% modules listed for completion, at most
-define(MODULES_MAX, 20000).
%% describe: processes a request may name, the longest text said of one,
%% and the biggest heap whose whole dictionary is copied where the VM
%% cannot read one key of it (OTP 25), in words
-define(DESCRIBE_MAX, 500).
-define(LABEL_MAX, 120).
-define(DICT_WORDS, 32768).
%% relations of the processes in focus: how often, entries of each list
%% sent (the counts are whole), the most processes looked at a turn, the
%% mark that the next turn's timer runs, and how many turns ran (for tests)
-define(REL_MS, 1000).
-define(REL_FIRST, 5).
-define(REL_MAX, 32).
-define(REL_ARMED, '$beamscope_relations_armed').
-define(REL_TURNS, '$beamscope_relations_sampled').

-record(w, {agent :: pid(),
            agent_mon :: reference(),
            index :: non_neg_integer(),
            owner :: pid() | {atom(), node()},    % where the Owner receives
            dep_ms :: pos_integer(),
            session = none :: none | reference(),
            peers = [] :: [{non_neg_integer(), pid()}], % all the workers
            patterns = [] :: [mfa()],             % the agent's call patterns
            taken = [] :: [tuple()],              % and what it took over
            max :: pos_integer(),                 % events per batch
            ms :: non_neg_integer(),              % how long a batch gathers
            seq = 0 :: non_neg_integer(),         % batches shipped
            dropped = 0 :: non_neg_integer()}).   % said at the end

%%% start/4 -------------------------------------------------------------------

%% Runs in the rpc process.  The agent does the work in its own process so
%% that it outlives the rpc; a failed agent undoes everything itself.  The
%% bootstrap lock the Owner holds is ended here, before the answer, so that
%% nothing traced later sees it.
start(Owner, TracerBeam, NifBin, Opts) ->
    Result = start1(Owner, TracerBeam, NifBin, Opts),
    release_lock(Opts),
    Result.

release_lock(#{lock := Lock}) when is_pid(Lock) ->
    case whereis(?LOCK) of
        Lock ->
            Mon = monitor(process, Lock),
            exit(Lock, kill),
            receive {'DOWN', Mon, process, Lock, _} -> ok end;
        _ ->
            ok
    end;
release_lock(_) ->
    ok.

start1(Owner, TracerBeam, NifBin, Opts) ->
    case whereis(?NAME) of
        undefined ->
            {Pid, Mon} = spawn_monitor(?MODULE, agent,
                                       [self(), Owner, TracerBeam, NifBin, Opts]),
            receive
                {?NAME, Pid, Result} ->
                    erlang:demonitor(Mon, [flush]),
                    Result;
                {'DOWN', Mon, process, Pid, Why} ->
                    abandon(),
                    {error, {agent_died, Why}}
            after ?START_TIMEOUT ->
                    %% the agent cleans up once it sees this
                    Pid ! '$beamscope_abort',
                    erlang:demonitor(Mon, [flush]),
                    {error, timeout}
            end;
        Pid ->
            {error, {already_attached, Pid}}
    end.

%% The agent was killed before it could answer: nobody else will unload.
abandon() ->
    _ = (catch unload_tracer()),
    _ = code:purge(?MODULE),
    _ = code:delete(?MODULE),
    %% this process still runs the old code: purge once it has returned
    _ = (catch timer:apply_after(1000, code, purge, [?MODULE])),
    ok.

%%% The agent -----------------------------------------------------------------

agent(Caller, Owner, TracerBeam, NifBin, Opts) ->
    case catch register(?NAME, self()) of
        true ->
            try setup(Owner, TracerBeam, NifBin, Opts) of
                {ok, St, Info} ->
                    Caller ! {?NAME, self(), {ok, self(), Info}},
                    run(St);
                {error, Reason} ->
                    failed(Caller, Reason)
            catch
                Class:Reason:Stack ->
                    failed(Caller, {crash, Class, Reason, Stack})
            end;
        _ ->
            %% another agent owns the modules: touch nothing
            Caller ! {?NAME, self(), {error, {already_attached, whereis(?NAME)}}}
    end.

%% The name stays ours until the purge ends this process.
failed(Caller, Reason) ->
    _ = (catch unload_tracer()),
    Caller ! {?NAME, self(), {error, Reason}},
    unload_self(Caller).

setup(Owner, TracerBeam, NifBin, Opts) when is_pid(Owner),
                                             is_binary(TracerBeam),
                                             is_binary(NifBin),
                                             is_map(Opts) ->
    case options(Opts) of
        {ok, [N, DepMs, HighWater, BatchMax, BatchMs], Secret} ->
            case load_tracer(TracerBeam, NifBin) of
                ok ->
                    case fits(N, HighWater) of
                        ok ->
                            started(Owner, Secret, N, DepMs, HighWater,
                                    BatchMax, BatchMs);
                        {error, _} = E ->
                            unload_tracer(),
                            E
                    end;
                {error, _} = E ->
                    E
            end;
        {error, _} = E ->
            E
    end;
setup(_, _, _, _) ->
    {error, badarg}.

started(Owner, Secret, N, DepMs, HighWater, BatchMax, BatchMs) ->
    OwnerMon = watch_owner(Owner),
    Dest = dest(Owner),
    Workers = [spawn_worker(W, Dest, BatchMax, BatchMs, DepMs)
               || W <- lists:seq(0, N - 1)],
    Now = now_ms(),
    St = #st{owner = Owner, dest = Dest, key = erlang:md5(Secret),
             owner_mon = OwnerMon, workers = Workers, dep_ms = DepMs,
             heard = Now, awake = Now, high_water = HighWater},
    %% the secret comes back once, so that the Owner knows this answer
    %% is ours; it is kept nowhere
    Info = #{workers => N,
             worker_pids => [P || {_, P, _} <- Workers],
             schedulers => erlang:system_info(schedulers_online),
             names => names(),
             printer => printer(),
             structs => structs(),
             secret => Secret},
    {ok, St, Info}.

%%% What this node's printers do ------------------------------------------------
%%
%% The Owner renders terms itself, as io_lib:format("~0tp", [T]) and
%% Elixir's inspect/2 print them here.  What they print differs from
%% release to release; each printer is tried once, on a term whose text
%% tells, so that the Owner follows what this node does (bits as
%% src/term/term.h's TD_*).  Nothing here makes an atom.

-define(TD_BIN_UTF8_LEAD, 1).
-define(TD_ERL_MAP_AS_SENT, 2).
-define(TD_EX_MAP_BACK, 4).
-define(TD_EX_SIGIL_C, 8).
-define(TD_EX_STRUCTS, 16).
-define(TD_EX_ESC_INVISIBLE, 32).

printer() ->
    try
        printer1()
    catch
        _:_ -> 0
    end.

printer1() ->
    %% a binary that is UTF-8 at its start and not printable there, then
    %% not UTF-8: bytes where the UTF-8 reading decides, text where the
    %% Latin-1 one does
    Bin = case lists:flatten(io_lib:format("~0tp", [<<200, 160, 233>>])) of
              "<<200" ++ _ -> ?TD_BIN_UTF8_LEAD;
              _ -> 0
          end,
    %% a map of 33 pairs is a hash trie: the order it is encoded in
    %% against the order each printer walks it
    M = maps:from_list([{K, K} || K <- lists:seq(1, 33)]),
    <<131, 116, 33:32, Pairs/binary>> = term_to_binary(M),
    Sent = small_keys(binary_to_list(Pairs)),
    Erl = first_key(lists:flatten(io_lib:format("~0tp", [M])), "#{"),
    ErlMap = case Erl =:= hd(Sent) of
                 true -> ?TD_ERL_MAP_AS_SENT;
                 false -> 0
             end,
    Ex = case erlang:function_exported('Elixir.Kernel', inspect, 1) of
             true ->
                 ExM = first_key(binary_to_list('Elixir.Kernel':inspect(M)), "%{"),
                 Sigil = case 'Elixir.Kernel':inspect([$a]) of
                             <<"~c\"a\"">> -> ?TD_EX_SIGIL_C;
                             _ -> 0
                         end,
                 Blank = case 'Elixir.Kernel':inspect(<<16#A0/utf8>>) of
                             <<"\"\\u00A0\"">> -> ?TD_EX_ESC_INVISIBLE;
                             _ -> 0
                         end,
                 Sigil bor Blank bor ?TD_EX_STRUCTS bor
                     case ExM =:= hd(Sent) of
                         true -> 0;
                         false -> ?TD_EX_MAP_BACK
                     end;
             false ->
                 0
         end,
    Bin bor ErlMap bor Ex.

%% the keys of map pairs of small integers, as encoded (a list: OTP 29
%% does not load this match on a binary as OTP 25 compiles it)
small_keys([97, K, 97, _ | Rest]) -> [K | small_keys(Rest)];
small_keys(_) -> [].

%% the first key of a map of small integers, as a printer wrote it
first_key(Text, Open) ->
    Rest = lists:nthtail(length(Open), Text),
    {Digits, _} = lists:splitwith(fun(C) -> C >= $0 andalso C =< $9 end, Rest),
    list_to_integer(Digits).

%% Elixir prints a struct's fields in the order its module defines them
%% (Module.__info__(:struct)), and a map with __struct__ as a struct only
%% when its keys are those: the struct modules loaded, at most ?STRUCTS_MAX,
%% as [{Module, [Field]}].  A few microseconds a module, once.
-define(STRUCTS_MAX, 8192).

structs() ->
    case erlang:function_exported('Elixir.Kernel', inspect, 1) of
        true ->
            L = [{M, F} || {M, _} <- code:all_loaded(),
                           is_atom(M),
                           lists:prefix("Elixir.", atom_to_list(M)),
                           erlang:function_exported(M, '__struct__', 0),
                           is_list(F = struct_fields(M))],
            lists:sublist(L, ?STRUCTS_MAX);
        false ->
            []
    end.

%% the fields of M's struct in order, false when M has none (or there is
%% no such module: Elixir prints such a map as a map), unknown when that
%% cannot be said.  A module that is not loaded (Elixir loads a struct's
%% module only when something calls it) is not loaded to find out: its
%% fields are read from the debug information in its object file, which
%% Elixir keeps there, without making an atom (beam_struct/1).
struct_fields(M) ->
    case erlang:module_loaded(M) of
        false ->
            case code:which(M) of
                non_existing -> false;
                File when is_list(File) -> beam_struct(File);
                _ -> unknown
            end;
        true ->
            case erlang:function_exported(M, '__info__', 1) andalso
                erlang:function_exported(M, '__struct__', 0) of
                false ->
                    false;
                true ->
                    try M:'__info__'(struct) of
                        L when is_list(L) ->
                            Fs = [field(I) || I <- L],
                            case lists:all(fun is_atom/1, Fs) of
                                true -> Fs;
                                false -> false
                            end;
                        _ ->
                            false
                    catch
                        _:_ -> false
                    end
            end
    end.

%% An object file of at most ?BEAM_MAX bytes, its debug information
%% (Elixir's: {debug_info_v1, elixir_erl, {elixir_v1, #{struct => Fields}, _}})
%% decoded by ext/1: its atoms as binaries, so that none is made.  The
%% field names are sent as binaries then.
-define(BEAM_MAX, 8 * 1024 * 1024).

beam_struct(File) ->
    try
        %% file_info's size (filelib is not loaded on every node)
        {ok, Info} = file:read_file_info(File),
        true = element(2, Info) =< ?BEAM_MAX,
        {ok, {_, [{"Dbgi", Raw}]}} = beam_lib:chunks(File, ["Dbgi"]),
        {{tuple, [{atom, <<"debug_info_v1">>}, {atom, <<"elixir_erl">>},
                  {tuple, [{atom, <<"elixir_v1">>}, {map, Pairs} | _]}]}, _} =
            ext(external(Raw)),
        case lists:keyfind({atom, <<"struct">>}, 1, Pairs) of
            {_, {list, Infos}} ->
                [F || {map, KVs} <- Infos,
                      {{atom, <<"field">>}, {atom, F}} <- KVs];
            _ ->
                false
        end
    catch
        _:_ -> unknown
    end.

external(<<131, 80, _:32, Z/binary>>) -> zlib:uncompress(Z);
external(<<131, Bin/binary>>) -> Bin.

%% The external term format, as much of it as debug information holds:
%% {Decoded, Rest}, atoms {atom, Name}, tuples {tuple, L}, lists {list, L}
%% (a tail that is not [] left out), maps {map, [{K, V}]}; anything else
%% fails.
ext(<<97, I, R/binary>>) -> {I, R};
ext(<<98, I:32/signed, R/binary>>) -> {I, R};
ext(<<70, F:64/float, R/binary>>) -> {F, R};
ext(<<Tag, N:16, A:N/binary, R/binary>>) when Tag =:= 118; Tag =:= 100 -> {{atom, A}, R};
ext(<<Tag, N, A:N/binary, R/binary>>) when Tag =:= 119; Tag =:= 115 -> {{atom, A}, R};
ext(<<104, N, R/binary>>) -> ext_seq(N, R, tuple);
ext(<<105, N:32, R/binary>>) -> ext_seq(N, R, tuple);
ext(<<106, R/binary>>) -> {{list, []}, R};
ext(<<107, N:16, S:N/binary, R/binary>>) -> {{list, binary_to_list(S)}, R};
ext(<<108, N:32, R/binary>>) ->
    {{list, L}, R1} = ext_seq(N, R, list),
    {_, R2} = ext(R1),
    {{list, L}, R2};
ext(<<109, N:32, B:N/binary, R/binary>>) -> {B, R};
ext(<<77, N:32, _, B:N/binary, R/binary>>) -> {B, R};
ext(<<110, N, _, B:N/binary, R/binary>>) -> {{big, B}, R};
ext(<<111, N:32, _, B:N/binary, R/binary>>) -> {{big, B}, R};
ext(<<116, N:32, R/binary>>) ->
    {{tuple, KVs}, R1} = ext_seq(2 * N, R, tuple),
    {{map, pairs(KVs)}, R1}.

ext_seq(N, R, Kind) -> ext_seq(N, R, Kind, []).

ext_seq(0, R, Kind, Acc) -> {{Kind, lists:reverse(Acc)}, R};
ext_seq(N, R, Kind, Acc) ->
    {T, R1} = ext(R),
    ext_seq(N - 1, R1, Kind, [T | Acc]).

pairs([K, V | T]) -> [{K, V} | pairs(T)];
pairs([]) -> [].

field(#{field := F}) -> F;
field({F, _}) -> F;
field(F) -> F.

%% The smallest session these options make must fit under the cap; the
%% trace request checks the real one (it knows the payload budget).
fits(N, HighWater) ->
    case ?TRACER:session_memory(N, 0, 0, HighWater, false) of
        {Need, Cap, Mem} when Need > Cap -> {error, {memory_cap, Need, Cap, Mem}};
        _ -> ok
    end.

options(Opts) ->
    Get = fun(K, D) -> maps:get(K, Opts, D) end,
    N = case Get(workers, 0) of
            0 -> erlang:system_info(schedulers_online);
            N0 -> N0
        end,
    Checks = [{workers, N, 1, ?MAX_WORKERS},
              {dep_timeout_ms, Get(dep_timeout_ms, 30000), 1, infinity},
              {high_water, Get(high_water, 20000), 1, ?MAX_HIGH_WATER},
              {batch_max, Get(batch_max, 500), 1, infinity},
              {batch_ms, Get(batch_ms, 5), 0, infinity}],
    case [{bad_option, K, V} || {K, V, Min, Max} <- Checks,
                                not (is_integer(V) andalso V >= Min
                                     andalso (Max =:= infinity orelse V =< Max))] of
        [] ->
            case Get(secret, none) of
                Secret when is_binary(Secret), byte_size(Secret) >= ?SECRET_MIN,
                            byte_size(Secret) =< ?SECRET_MAX ->
                    {ok, [V || {_, V, _, _} <- Checks], Secret};
                _ ->
                    %% never repeated back: it may be nearly right
                    {error, {bad_option, secret, omitted}}
            end;
        [Bad | _] -> {error, Bad}
    end.

%% nodedown covers a C node; a local Owner (tests) can only be monitored.
watch_owner(Owner) when node(Owner) =:= node() ->
    monitor(process, Owner);
watch_owner(Owner) ->
    true = erlang:monitor_node(node(Owner), true),
    undefined.

%% A remote Owner receives at its registered name: the distribution then
%% tells it who sent each message (a plain send to a pid does not).
dest(Owner) when node(Owner) =:= node() ->
    Owner;
dest(Owner) ->
    {?OWNER_NAME, node(Owner)}.

names() ->
    [{P, N} || N <- registered(), N =/= ?NAME, P <- [whereis(N)], is_pid(P)].

load_tracer(Beam, Nif) ->
    %% a copy left behind by an agent that was killed would need an upgrade
    unload_tracer(),
    case code:load_binary(?TRACER, "beamscope_tracer.beam", Beam) of
        {module, ?TRACER} ->
            case load_nif(Nif) of
                ok ->
                    ok;
                {error, R} ->
                    unload_tracer(),
                    {error, {tracer_nif, R}}
            end;
        {error, R} ->
            {error, {tracer_beam, R}}
    end.

%% The library must be a file for dlopen: a fresh directory only we can
%% enter, removed again whatever happens (the mapping outlives the file).
load_nif(Bin) ->
    Dir = filename:join(tmp_dir(), "beamscope-" ++ unique()),
    File = filename:join(Dir, "beamscope_tracer.so"),
    case file:make_dir(Dir) of
        ok ->
            try
                place_and_load(Dir, File, Bin)
            after
                _ = file:delete(File),
                _ = file:del_dir(Dir)
            end;
        {error, R} ->
            {error, {make_dir, Dir, R}}
    end.

place_and_load(Dir, File, Bin) ->
    case file:change_mode(Dir, 8#700) of
        ok ->
            case file:write_file(File, Bin, [exclusive]) of
                ok ->
                    case file:change_mode(File, 8#600) of
                        ok ->
                            %% load_nif adds the extension itself
                            ?TRACER:load(filename:rootname(File));
                        {error, R} ->
                            {error, {chmod, File, R}}
                    end;
                {error, R} ->
                    {error, {write, File, R}}
            end;
        {error, R} ->
            {error, {chmod, Dir, R}}
    end.

tmp_dir() ->
    case os:getenv("TMPDIR") of
        "/" ++ _ = D -> D;
        _ -> "/tmp"
    end.

%% Unpredictable, so nobody can take the name first.
unique() ->
    lists:flatten(io_lib:format("~s-~b-~.36b",
                                [os:getpid(),
                                 erlang:unique_integer([positive]),
                                 rand:uniform(1 bsl 60)])).

spawn_worker(W, Dest, BatchMax, BatchMs, DepMs) ->
    {Pid, Mon} = spawn_opt(?MODULE, worker,
                           [self(), W, Dest, {BatchMax, BatchMs}, DepMs],
                           [{message_queue_data, off_heap}, monitor]),
    {W, Pid, Mon}.

%% The loop returns why it ended; a crash ends it too, with the last state
%% we stored, so cleanup always runs.
run(St0) ->
    put(?STATE, St0),
    {Why, StopRef, St} =
        try loop(St0)
        catch Class:Reason:Stack ->
                {{crash, Class, Reason, Stack}, none, get(?STATE)}
        end,
    cleanup(Why, StopRef, St).

loop(St0) ->
    #st{owner = Owner} = St = awake(St0),
    receive
        {beamscope, Key, Ref, Request} when is_binary(Key),
                                            byte_size(Key) =< ?SECRET_MAX ->
            case erlang:md5(Key) =:= St#st.key of
                true -> handle(Request, Ref, St#st{heard = now_ms()});
                %% not the Owner: nothing to say to whoever it is
                false -> loop(St)
            end;
        {beamscope, From, Ref, _} when is_pid(From) ->
            reply(From, Ref, {error, not_owner}),
            loop(St);
        {nodedown, Node} when Node =:= node(Owner) ->
            {nodedown, none, St};
        {'DOWN', Mon, process, _, _} when Mon =:= St#st.owner_mon ->
            {owner_down, none, St};
        {'DOWN', Mon, process, _, Why} ->
            case lists:keytake(Mon, 3, St#st.workers) of
                {value, {W, _, _}, Rest} ->
                    {{worker_down, W, Why}, none, St#st{workers = Rest}};
                false ->
                    loop(St)
            end;
        '$beamscope_abort' ->
            {aborted, none, St};
        '$beamscope_counts' when St#st.interval > 0 ->
            loop(harvest(St));
        '$beamscope_info' when St#st.interval > 0 ->
            loop(sample(St));
        '$beamscope_limits' ->
            erlang:send_after(?LIMITS_MS, self(), '$beamscope_limits'),
            loop(tell_limits(St, false));
        '$beamscope_check' ->
            loop(check(St));
        {timeout, TRef, '$beamscope_node'} when TRef =:= St#st.node ->
            loop(node_sample(St));
        '$beamscope_relations' ->
            erase(?REL_ARMED),
            loop(relations(St));
        _ ->
            loop(St)
    after min(?TICK_MS, max(0, St#st.heard + St#st.dep_ms - now_ms())) ->
            %% what came in while we could not run is read first
            St1 = awake(St),
            case now_ms() >= St1#st.heard + St1#st.dep_ms of
                true -> {owner_silent, none, St1};
                false -> loop(St1)
            end
    end.

%% Silence is judged on time the agent could run: after a pause of the VM
%% (SIGSTOP, a suspended host) the Owner's pings are still on their way in,
%% so its clock starts again from now.
awake(#st{awake = Last} = St) ->
    Now = now_ms(),
    case Now - Last > ?PAUSE_MS of
        true -> St#st{awake = Now, heard = max(St#st.heard, Now)};
        false -> St#st{awake = Now}
    end.

handle(ping, Ref, St) ->
    reply_owner(St, Ref, pong),
    loop(St);
handle(clock, Ref, St) ->
    %% the clock the tracer stamps events with
    reply_owner(St, Ref, {clock, erlang:system_time(microsecond)}),
    loop(St);
handle(nodes, Ref, St) ->
    reply_owner(St, Ref, {nodes, erlang:nodes(visible)}),
    loop(St);
handle(modules, Ref, St) ->
    %% the BIF, not code:all_loaded/0: no message to the code server that
    %% the user would see traced
    Ms = lists:sort(erlang:loaded()),
    reply_owner(St, Ref, {modules, lists:sublist(Ms, ?MODULES_MAX)}),
    loop(St);
handle({trace, Spec}, Ref, St0) ->
    {Reply, St} = trace(Spec, St0),
    put(?STATE, St),
    reply_owner(St, Ref, Reply),
    loop(St);
handle(stop, Ref, St) ->
    {stop, Ref, St};
handle({Op, Pid}, Ref, #st{session = S} = St)
  when (Op =:= focus orelse Op =:= unfocus), is_pid(Pid), node(Pid) =:= node(),
       S =/= none, St#st.interval > 0 ->
    On = Op =:= focus,
    Focus = case On of
                true -> [Pid | lists:delete(Pid, St#st.focus)];
                false -> lists:delete(Pid, St#st.focus)
            end,
    %% a timeout in between is dropped, never counted as a message: the
    %% pattern names a process only while the tracer ships its events
    St1 = case On of
              false -> timeouts_shipped(Focus, St);
              true -> St
          end,
    Reply = ?TRACER:focus(S, Pid, On),
    St2 = case On of
              true -> timeouts_shipped(Focus, St1);
              false -> St1
          end,
    reply_owner(St2, Ref, Reply),
    loop(case On of
             true -> relations(St2#st{focus = Focus});
             false -> St2#st{focus = Focus}
         end);
handle({node_stats, On}, Ref, St0) when is_boolean(On) ->
    St = node_stats(On, St0),
    put(?STATE, St),
    reply_owner(St, Ref, ok),
    loop(St);
handle(unfollow, Ref, #st{session = S} = St) when S =/= none ->
    %% only deactivate: every follower drops its flags at its next event,
    %% which is no clearing by someone else
    ?TRACER:session_stop(S),
    reply_owner(St, Ref, ok),
    loop(St#st{watch = none});
handle({sample, Pids}, _Ref, St) when is_list(Pids) ->
    %% the rows on the Owner's screen: no reply, the next samples say it
    Shown = [P || P <- lists:sublist(Pids, ?INFO_MAX),
                  is_pid(P), node(P) =:= node()],
    loop(St#st{shown = Shown});
handle({top, off}, Ref, St) ->
    erase('$beamscope_top'),
    reply_owner(St, Ref, ok),
    loop(St#st{top = none});
handle({top, Metric, N}, Ref, St)
  when (Metric =:= memory orelse Metric =:= reductions orelse
        Metric =:= message_queue_len), is_integer(N), N > 0 ->
    reply_owner(St, Ref, ok),
    loop(St#st{top = top_new(Metric, min(N, ?TOP_MAX))});
handle({Op, Pids}, _Ref, St)
  when (Op =:= describe orelse Op =:= describe_again), is_list(Pids) ->
    %% answered on the stream: the Owner asks as it meets processes and
    %% waits for nothing
    send(St#st.dest, {beamscope_labels, describe(Pids, Op =:= describe)}),
    loop(St);
handle({structs, Mods}, _Ref, St) when is_list(Mods) ->
    %% answered on the stream, as labels are
    send(St#st.dest, {beamscope_structs,
                      [{M, struct_fields(M)}
                       || M <- lists:sublist(Mods, 64), is_atom(M)]}),
    loop(St);
handle({Op, _}, Ref, St) when Op =:= focus; Op =:= unfocus ->
    %% the event tier ships everything already
    reply_owner(St, Ref, ok),
    loop(St);
handle(Other, Ref, St) ->
    reply_owner(St, Ref, {error, {bad_request, Other}}),
    loop(St).

reply_owner(#st{dest = Dest}, Ref, Reply) ->
    send(Dest, {beamscope_reply, Ref, Reply}).

%% To a process that is not the Owner.  noconnect: a sender that is gone is
%% not worth dialling back.
reply(To, Ref, Reply) ->
    _ = erlang:send(To, {beamscope_reply, Ref, Reply}, [noconnect]),
    ok.

%%% Limits --------------------------------------------------------------------

limit(Key, Spec) ->
    case maps:get(Key, Spec, 0) of
        N when is_integer(N), N >= 0 -> N;
        _ -> 0
    end.

%% Tell Owner when a limit trips, and how many events were shed (when that
%% changes, checked every LIMITS_MS, and always at the end).
tell_limits(#st{session = none} = St, _) ->
    St;
tell_limits(#st{session = S, dest = Owner, told = {Why0, Shed0}} = St, Final) ->
    case catch ?TRACER:limits(S) of
        {Why, Shed} when Why =/= Why0;
                         Final andalso (Shed =/= 0 orelse Why =/= none);
                         Shed =/= Shed0 ->
            send(Owner, {beamscope_limit, Why, Shed}),
            St#st{told = {Why, Shed}};
        _ ->
            St
    end.

%%% Count tier ----------------------------------------------------------------

%% Ship the deltas of the table retired one interval ago.
harvest(#st{session = S, dest = Owner, cseq = Seq, active = Active} = St) ->
    erlang:send_after(St#st.interval, self(), '$beamscope_counts'),
    {Overflow, Counts} = ?TRACER:counts_take(S),
    case Counts =/= [] orelse Overflow =/= St#st.overflow of
        true ->
            send(Owner, {beamscope_counts, Seq, Overflow, Counts}),
            Active1 = lists:foldl(fun({P, _, _}, A) -> A#{P => true} end,
                                  Active, Counts),
            St#st{cseq = Seq + 1, overflow = Overflow, active = Active1};
        false ->
            St
    end.

%% process_info of the processes counted lately, the ones in focus and
%% the ones the Owner shows; never `messages`, which would copy a mailbox.
%% What costs O(1) is asked of every one; memory and total_heap_size walk
%% the message queue (and memory the links and monitors), so they are
%% asked only as Dear processes below allows, and a process not asked
%% says {at_least, Bytes} instead: its heap block, and for memory the
%% smallest a queued message can take.  How many were asked is kept in
%% the dictionary, for tests to read.
sample(#st{dest = Owner, active = Active, focus = Focus,
           shown = Shown} = St0) ->
    erlang:send_after(?INFO_MS, self(), '$beamscope_info'),
    St = top_tick(St0),
    %% the rows on screen and the top candidates first: the bound cuts
    %% only among the processes counted lately
    First = lists:usort(Focus ++ Shown ++ top_candidates(St#st.top)),
    Firsts = lists:foldl(fun(P, M) -> M#{P => true} end, #{}, First),
    Pids = lists:sublist(First ++ [P || P <- maps:keys(Active),
                                        not is_map_key(P, Firsts)],
                         ?INFO_MAX),
    put('$beamscope_sampled', length(Pids)),
    case sample_rows(Pids) of
        [] -> ok;
        Info -> send(Owner, {beamscope_info, Info})
    end,
    St#st{active = #{}}.

%% The samples of Pids, as beamscope_info carries them (scripts/bench-ui
%% procinfo times this).
sample_rows(Pids) ->
    W = erlang:system_info(wordsize),
    Now = erlang:monotonic_time(millisecond),
    {Info, D, _} =
        lists:foldl(
          fun(P, {Acc, D0, Spent}) ->
                  %% items the VM reads without the process's help
                  case erlang:process_info(P, [registered_name,
                                               message_queue_len,
                                               reductions, heap_size]) of
                      [{registered_name, N}, {message_queue_len, Q},
                       {reductions, R}, {heap_size, H}] ->
                          {Row, D1, Spent1} =
                              sample_row(P, N, Q, R, H, W, Now, D0, Spent),
                          {Row ++ Acc, D1, Spent1};
                      _ ->
                          {Acc, D0, Spent}
                  end
          end, {[], dear_get(), 0}, rotate(Pids, Now div ?INFO_MS)),
    dear_put(D, Now),
    Info.

%% A list begun at its Kth element, so that when the budget runs short
%% it is not always the same processes that go without
rotate([], _) ->
    [];
rotate(L, K) ->
    N = length(L),
    {A, B} = lists:split((K rem N + N) rem N, L),
    B ++ A.

%% Then current_function, which the process answers itself (a signal it
%% handles, O(1)), with memory and total_heap_size where Dear process_info
%% items allows them, else what they are at least.  The cost of a call
%% that took ?DEAR_NOTE_US or more is remembered.  [] when P is gone.
sample_row(P, N, Q, R, H, W, Now, D, Spent) ->
    Key = {mem, P},
    Rec = maps:get(Key, D, none),
    Bound = {{at_least, at_least(Q, H, W)}, {at_least, H * W}},
    case dear_ask(Q, Rec, Now, ?DEAR_BUDGET_US - Spent, Spent =:= 0) of
        false ->
            case erlang:process_info(P, current_function) of
                {current_function, F} ->
                    {[row(P, N, F, Q, Bound, R)], D, Spent};
                undefined ->
                    {[], D, Spent}
            end;
        true ->
            case timed(P, [current_function, memory, total_heap_size]) of
                {[{current_function, F}, {memory, M}, {total_heap_size, T}],
                 Us} ->
                    {[row(P, N, F, Q, {M, T * W}, R)],
                     remember(Key, Rec, Us, Q, Now, D), Spent + Us};
                {_, Us} ->
                    {[], D, Spent + Us}
            end
    end.

row(P, N, F, Q, {M, Hb}, R) ->
    Fn = case F of {_, _, _} -> F; _ -> [] end,
    {P, N, Fn, Q, M, R, Hb}.

remember(Key, Rec, Us, Q, Now, D) when Us >= ?DEAR_NOTE_US; Rec =/= none ->
    D#{Key => {Us, Q, Now}};
remember(_, _, _, _, _, D) ->
    D.

%% What memory is at least, from what costs O(1): the heap block (heap
%% and stack) and the queue's messages, each at least ?MSG_MIN_WORDS.
at_least(Q, HeapWords, W) ->
    (HeapWords + Q * ?MSG_MIN_WORDS) * W.

%%% Dear process_info items ---------------------------------------------------
%%
%% A process_info item that walks a list of the process (memory and
%% total_heap_size walk its message queue, memory its links and monitors
%% too, links its links) is done by the VM in one go: on OTP 25 to 29 the
%% request is a signal the process handles itself, on its scheduler, and
%% nothing else runs there meanwhile (5 000 000 queued messages: 45 ms on
%% an idle node, over 0.1 s on a busy one).  A call cannot be cut short,
%% so its cost is predicted before it is made: the queue's length (which
%% costs O(1) to ask) times what a message costs at worst, and what the
%% last call on that process took (its links and monitors), kept in the
%% dictionary (?DEAR, bounded).  A call is made only
%%  * when the queue alone would take at most ?DEAR_MAX_US: never on a
%%    process with a queue of some 20 000 messages or more;
%%  * at most once per ?DEAR_SHARE times its cost: 1% of a scheduler on
%%    any process (a call of 20 ms every 2 s);
%%  * within a budget a turn, ?DEAR_BUDGET_US (the first call of a turn
%%    may go beyond it, so that a dear process is still asked, rarely).

dear_get() ->
    case get(?DEAR) of
        D when is_map(D) -> D;
        _ -> #{}
    end.

%% kept: what was asked in the last ?DEAR_FORGET_MS, ?DEAR_KEEP at most
dear_put(D, _Now) when map_size(D) =< ?DEAR_KEEP ->
    put(?DEAR, D);
dear_put(D, Now) ->
    Recent = maps:filter(fun(_, {_, _, At}) -> Now - At < ?DEAR_FORGET_MS end,
                         D),
    Kept = case map_size(Recent) =< ?DEAR_KEEP of
               true ->
                   Recent;
               false ->
                   Newest = lists:sublist(
                              lists:reverse(lists:keysort(2, [{K, At} || {K, {_, _, At}}
                                                                 <- maps:to_list(Recent)])),
                              ?DEAR_KEEP div 2),
                   maps:with([K || {K, _} <- Newest], Recent)
           end,
    put(?DEAR, Kept).

dear_at(D, Key) ->
    case D of
        #{Key := {_, _, At}} -> At;
        _ -> 0
    end.

%% Q: the queue's length now; Rec: {CostUs, QueueThen, AtMs} of the last
%% call, or none; Left: what is left of the turn's budget, in us; First:
%% no call was made this turn yet
dear_ask(Q, Rec, NowMs, Left, First) ->
    Walk = Q * ?MSG_NS div 1000,
    Pred = case Rec of
               none -> Walk;
               {Cost, Q0, _} -> max(Walk, Cost + max(0, Q - Q0) * ?MSG_NS div 1000)
           end,
    Walk =< ?DEAR_MAX_US andalso
        (First orelse Pred =< Left) andalso
        case Rec of
            none -> true;
            {_, _, At} -> NowMs - At >= Pred * ?DEAR_SHARE div 1000
        end.

%% process_info(P, Items) and the microseconds it took
timed(P, Items) ->
    T0 = erlang:monotonic_time(microsecond),
    R = erlang:process_info(P, Items),
    {R, erlang:monotonic_time(microsecond) - T0}.

%% Whether P's message queue is short enough to walk (total_heap_size),
%% where no cost was measured: at most ?DEAR_MAX_US at the worst rate.
walkable(P) ->
    case erlang:process_info(P, message_queue_len) of
        {message_queue_len, Q} -> Q * ?MSG_NS div 1000 =< ?DEAR_MAX_US;
        undefined -> false
    end.

%%% Top-N -----------------------------------------------------------------
%%
%% The view's top mode asks for the N processes of the whole node that
%% lead by memory, reductions a second or message queue length.  Walking
%% every process every second would cost the node what observer_cli costs
%% it (about 2 us a process); instead each second looks at as many
%% processes of the pass as fit in the budget, keeps the best N, and a
%% pass ends when every process alive at its start was looked at.  The
%% candidates (the best of this pass and of the last one) are sampled every
%% second, so what is shown is never older than a second; a process that
%% became big since its look waits for the next pass.  Our own processes
%% are never candidates.

top_new(Metric, N) ->
    top_new(Metric, N, case erlang:function_exported(erlang,
                                                     processes_iterator, 0) of
                           true -> iterator;
                           false -> list
                       end).

%% the walk chosen (the bench compares both on one node)
top_new(Metric, N, Walk) when Walk =:= iterator; Walk =:= list ->
    #top{metric = Metric, n = N, walk = Walk}.

top_tick(#st{top = none} = St) ->
    St;
top_tick(#st{top = T0, dest = Owner, workers = Ws} = St) ->
    Ours = [self() | [P || {_, P, _} <- Ws]],
    T = top_step(T0, ?TOP_BUDGET_US, Ours),
    put('$beamscope_top', {T#top.scanned, T#top.total, T#top.passes,
                           T#top.walk}),
    send(Owner, {beamscope_top, T#top.metric, T#top.scanned, T#top.total,
                 T#top.pass_ms}),
    St#st{top = T}.

%% One second's share of the pass: the second looks of the last slice,
%% then first looks until the budget is spent.
top_step(#top{} = T0, Budget, Ours) ->
    Now = erlang:monotonic_time(microsecond),
    T1 = top_second_looks(T0, Now),
    T2 = case T1#top.todo of
             [] -> top_pass(T1, Ours, Now);
             _ -> T1
         end,
    {Looked, Todo, N} = top_looks(T2#top.metric, T2#top.todo, T2#top.ours,
                                  Now + Budget, [], 0),
    Scanned = T2#top.scanned + N,
    %% the iterator's total is the count at the pass's start: processes
    %% spawned since may be met too
    T3 = T2#top{todo = Todo, scanned = Scanned,
                total = max(T2#top.total, Scanned)},
    case T3#top.metric of
        reductions -> T3#top{prev = Looked, prev_us = Now};
        _ -> top_keep(T3, Looked)
    end.

%% A new pass: the last one's best become the last pass's; the processes
%% alive now are this one's.  The iterator reads the process table a
%% chunk at a time, as the pass goes: the agent's heap never holds a list
%% of every process (8 MB at 500 000), and the pass does not begin with a
%% copy of the whole table.
top_pass(#top{started = S, walk = Walk} = T, Ours, NowUs) ->
    Ms = NowUs div 1000,
    {Todo, Total} =
        case Walk of
            iterator ->
                {erlang:processes_iterator(),
                 max(0, erlang:system_info(process_count) - length(Ours))};
            list ->
                L = erlang:processes() -- Ours,
                {L, length(L)}
        end,
    T#top{todo = Todo, ours = Ours, total = Total, scanned = 0, started = Ms,
          best = [], last = T#top.best,
          passes = T#top.passes + case S of none -> 0; _ -> 1 end,
          pass_ms = case S of none -> 0; _ -> Ms - S end}.

%% First looks until the deadline (checked every 32 looks, and every look
%% by memory, whose looks may be dear), or the pass's end ([] left).  The
%% iterator (opaque, never a list) is taken apart here, a process at a
%% time, so that a look allocates no more than one of the list does.
top_looks(Metric, Todo, Ours, Deadline, Acc, N)
  when N band 31 =:= 0, N > 0; Metric =:= memory, N > 0 ->
    case erlang:monotonic_time(microsecond) >= Deadline of
        true -> {Acc, Todo, N};
        false -> top_looks1(Metric, Todo, Ours, Deadline, Acc, N)
    end;
top_looks(Metric, Todo, Ours, Deadline, Acc, N) ->
    top_looks1(Metric, Todo, Ours, Deadline, Acc, N).

top_looks1(Metric, [P | Todo], Ours, Deadline, Acc, N) ->
    top_looks(Metric, Todo, Ours, Deadline,
              top_look(Metric, P, Deadline, N =:= 0, Acc), N + 1);
top_looks1(_, [], _, _, Acc, N) ->
    {Acc, [], N};
top_looks1(Metric, Iter, Ours, Deadline, Acc, N) ->
    case erlang:processes_next(Iter) of
        {P, Todo} ->
            case lists:member(P, Ours) of
                true ->
                    top_looks1(Metric, Todo, Ours, Deadline, Acc, N);
                false ->
                    top_looks(Metric, Todo, Ours, Deadline,
                              top_look(Metric, P, Deadline, N =:= 0, Acc),
                              N + 1)
            end;
        none ->
            {Acc, [], N}
    end.

top_look(Metric, P, Deadline, First, Acc) ->
    case top_value(Metric, P, Deadline, First) of
        undefined -> Acc;
        V -> [{V, P} | Acc]
    end.

top_value(memory, P, Deadline, First) ->
    top_memory(P, Deadline, First);
top_value(Metric, P, _, _) ->
    case erlang:process_info(P, Metric) of
        {_, V} -> V;
        undefined -> undefined
    end.

%% A look by memory: the queue's length first, then memory where Dear
%% process_info items allows it, else what memory is at least (so that a
%% process whose queue is too long to walk still ranks, by its queue).
%% A look that took ?DEAR_NOTE_US or more is remembered.
top_memory(P, Deadline, First) ->
    case erlang:process_info(P, [message_queue_len, heap_size]) of
        [{_, Q}, {_, H}] ->
            D = dear_get(),
            Key = {mem, P},
            Rec = maps:get(Key, D, none),
            Now = erlang:monotonic_time(),
            Left = Deadline - erlang:convert_time_unit(Now, native, microsecond),
            NowMs = erlang:convert_time_unit(Now, native, millisecond),
            case dear_ask(Q, Rec, NowMs, Left, First) of
                true ->
                    case timed(P, memory) of
                        {{memory, M}, Us} when Us >= ?DEAR_NOTE_US ->
                            dear_put(D#{Key => {Us, Q, NowMs}}, NowMs),
                            M;
                        {{memory, M}, _} ->
                            M;
                        {undefined, _} ->
                            undefined
                    end;
                false ->
                    at_least(Q, H, erlang:system_info(wordsize))
            end;
        undefined ->
            undefined
    end.

%% Reductions: the slice looked at a second ago, again; its rate a second.
top_second_looks(#top{metric = reductions, prev = Prev, prev_us = T0} = T,
                 Now) when Prev =/= [] ->
    Us = max(1, Now - T0),
    Rates = lists:foldl(
              fun({R0, P}, Acc) ->
                      case erlang:process_info(P, reductions) of
                          {reductions, R1} when R1 >= R0 ->
                              [{(R1 - R0) * 1000000 div Us, P} | Acc];
                          _ ->
                              Acc
                      end
              end, [], Prev),
    top_keep(T#top{prev = []}, Rates);
top_second_looks(T, _) ->
    T.

%% The best N of this pass, with the values just looked at.
top_keep(#top{n = N, best = Best} = T, Looked) ->
    Floor = case length(Best) >= N of
                true -> element(1, lists:last(Best));
                false -> -1
            end,
    New = [E || {V, _} = E <- Looked, V > Floor, V > 0],
    T#top{best = lists:sublist(lists:reverse(lists:sort(New ++ Best)), N)}.

%% Whole passes done, and the best of the last one (for the bench).
top_passed(#top{passes = N, last = Last}) ->
    {N, Last}.

top_candidates(none) ->
    [];
top_candidates(#top{best = Best, last = Last}) ->
    [P || {_, P} <- Best ++ Last].

%%% Node samples --------------------------------------------------------------
%%
%% What the view's header shows of the node, once a second while the Owner
%% asks for it: memory, process and port counts and limits, run queue
%% lengths and scheduler utilisation.  Only BIFs that cost O(1) or
%% O(schedulers): no process is ever looked at.
%%
%% Utilisation needs the scheduler_wall_time flag.  The flag is node-wide,
%% but the VM keeps a count per process: on while any process that raised
%% it (and did not lower it) lives.  The agent raises its own count while
%% samples are on and lowers it when they stop and at cleanup; if it is
%% killed, the VM drops its count with it.  So whoever else had it on keeps
%% it on, and a node that had it off has it off again, whichever way we go.

node_stats(true, #st{node = none} = St) ->
    _ = get(?SWT) =:= true orelse
        begin
            _ = erlang:system_flag(scheduler_wall_time, true),
            put(?SWT, true)
        end,
    node_sample(St#st{swt = []});
node_stats(true, St) ->
    St;
node_stats(false, #st{node = TRef} = St) ->
    _ = TRef =:= none orelse erlang:cancel_timer(TRef),
    swt_lower(),
    St#st{node = none, swt = []}.

swt_lower() ->
    case erase(?SWT) of
        true -> _ = erlang:system_flag(scheduler_wall_time, false), ok;
        _ -> ok
    end.

node_sample(#st{dest = Owner} = St) ->
    TRef = erlang:start_timer(?NODE_MS, self(), '$beamscope_node'),
    Online = erlang:system_info(schedulers_online),
    RunQs = erlang:statistics(run_queue_lengths),
    Swt = case erlang:statistics(scheduler_wall_time) of
              L when is_list(L) -> lists:sort([W || {Id, _, _} = W <- L,
                                                    Id =< Online]);
              _ -> []
          end,
    %% the normal schedulers' queues first, then the dirty CPU one
    {Normal, Dirty} = lists:split(min(erlang:system_info(schedulers),
                                      length(RunQs)), RunQs),
    Memory = try erlang:memory([total, processes, binary, ets, atom])
             catch error:_ -> []
             end,
    Sample = #{memory => [V || {_, V} <- Memory],
               processes => {erlang:system_info(process_count),
                             erlang:system_info(process_limit)},
               ports => {erlang:system_info(port_count),
                         erlang:system_info(port_limit)},
               run_queues => Normal,
               dirty_run_queue => lists:sum(Dirty),
               schedulers => utilisation(St#st.swt, Swt)},
    send(Owner, {beamscope_node, Sample}),
    St#st{node = TRef, swt = Swt}.

%% Per scheduler online, in permille of the time between two samples; []
%% until there are two.
utilisation(Old, New) when length(Old) =:= length(New) ->
    [case T1 - T0 of
         DT when DT > 0 -> min(1000, max(0, (A1 - A0) * 1000 div DT));
         _ -> 0
     end || {{Id, A0, T0}, {Id, A1, T1}} <- lists:zip(Old, New)];
utilisation(_, _) ->
    [].

%%% Describing processes ------------------------------------------------------

%% What a process is, beyond its pid, for processes the Owner met: what
%% observer_cli shows when there is no registered name (the Owner knows
%% those).  The label it gave itself with proc_lib:set_label/1 where the
%% VM has labels (OTP 27: what its developer chose to call it), else the
%% '$initial_call' a proc_lib process keeps in its dictionary (a
%% gen_server's is {Mod, init, 1}, a supervisor's {supervisor, Mod, 1}),
%% else [] and the Owner keeps the initial call it knows.  One look per
%% process (both keys in one process_info on OTP 27), and never a copy of
%% a big dictionary.  Where labels exist, the first answer of a process
%% without one yet says so ({P, Text, again}): a label is often set just
%% after the start (in init/1, after a handshake), after the first look,
%% and the Owner asks once more a little later (First false).
describe(Pids, First) ->
    Ctx = {dictionary_reach(), First},
    [label(P, Ctx) || P <- lists:sublist(Pids, ?DESCRIBE_MAX),
                      is_pid(P), node(P) =:= node()].

%% How much of another process's dictionary the VM reads: labels and one
%% key at a time (OTP 27: proc_lib:set_label/1), one key
%% (process_info(P, {dictionary, Key}) exists since OTP 26), or only the
%% whole dictionary, copied (OTP 25).
dictionary_reach() ->
    case erlang:function_exported(proc_lib, set_label, 1) of
        true -> labels;
        false -> case one_key_dictionary() of
                     true -> one_key;
                     false -> whole
                 end
    end.

one_key_dictionary() ->
    try erlang:process_info(self(), {dictionary, '$beamscope'}) of
        _ -> true
    catch
        error:badarg -> false
    end.

%% {P, Text | []} or {P, Text | [], again}
label(P, {labels, First}) ->
    case erlang:process_info(P, [{dictionary, '$process_label'},
                                 {dictionary, '$initial_call'}]) of
        [{_, undefined}, {_, Init}] when First -> {P, mfa_text(Init), again};
        [{_, undefined}, {_, Init}] -> {P, mfa_text(Init)};
        [{_, Label}, _] -> {P, label_text(Label)};
        _ -> {P, []}
    end;
label(P, {Reach, _}) ->
    {P, mfa_text(initial_call(P, Reach =:= one_key))}.

mfa_text({M, F, A}) when is_atom(M), is_atom(F), is_integer(A) ->
    text(io_lib:format("~ts:~ts/~b", [M, F, A]));
mfa_text(_) ->
    [].

%% a binary as the text it holds (proc_lib's own examples), anything else
%% (and a binary that is no UTF-8) as Erlang writes it, 8 levels deep
label_text(L) when is_binary(L) ->
    case text(L) of
        [] -> text(io_lib:format("~0tP", [L, 8]));
        T -> T
    end;
label_text(L) ->
    text(io_lib:format("~0tP", [L, 8])).

initial_call(P, true) ->
    case erlang:process_info(P, {dictionary, '$initial_call'}) of
        {{dictionary, '$initial_call'}, MFA} -> MFA;
        _ -> undefined
    end;
initial_call(P, false) ->
    %% only proc_lib keeps one: the others are not worth a copy
    case erlang:process_info(P, initial_call) of
        {initial_call, {proc_lib, init_p, _}} ->
            case dictionary_key(P, '$initial_call') of
                {ok, MFA} -> MFA;
                _ -> undefined
            end;
        _ ->
            undefined
    end.

%% OTP 25: the dictionary is copied whole to read one key, and only where
%% the heap is small (the dictionary is on it): total_heap_size walks the
%% message queue, so it is asked only of a short one.  {ok, Value},
%% missing, or unknown when it was not read.
dictionary_key(P, Key) ->
    case walkable(P) andalso erlang:process_info(P, total_heap_size) of
        {total_heap_size, W} when W =< ?DICT_WORDS ->
            case erlang:process_info(P, dictionary) of
                {dictionary, D} ->
                    case lists:keyfind(Key, 1, D) of
                        {_, V} -> {ok, V};
                        false -> missing
                    end;
                _ ->
                    unknown
            end;
        _ ->
            unknown
    end.

text(Chars) ->
    case unicode:characters_to_binary(Chars) of
        B when is_binary(B), byte_size(B) =< ?LABEL_MAX -> B;
        B when is_binary(B) -> cut(B, ?LABEL_MAX);
        _ -> []
    end.

%% at most N bytes, whole characters only
cut(B, N) ->
    case unicode:characters_to_binary(binary:part(B, 0, N)) of
        C when is_binary(C) -> C;
        _ -> cut(B, N - 1)
    end.

%%% Relations of the processes in focus ---------------------------------------
%%
%% What the log of a process in focus shows of its links, monitors and
%% '$ancestors', once a second while any process is in focus: the first
%% turn at the focus, then one a second from a timer of its own, which
%% stops at the first turn that finds no process in focus.  A list may be
%% long (a supervisor's links): its length is sent, and its first
%% ?REL_FIRST entries.

relations(#st{focus = []} = St) ->
    St;
relations(#st{dest = Owner, focus = Focus} = St) ->
    case get(?REL_ARMED) of
        true ->
            St;
        _ ->
            erlang:send_after(?REL_MS, self(), '$beamscope_relations'),
            put(?REL_ARMED, true),
            put(?REL_TURNS, case get(?REL_TURNS) of
                                N when is_integer(N) -> N + 1;
                                _ -> 1
                            end),
            Rel = relations_dear(lists:sublist(Focus, ?REL_MAX),
                                 one_key_dictionary()),
            _ = Rel =:= [] orelse send(Owner, {beamscope_relations, Rel}),
            St
    end.

%% The relations of the processes that Dear process_info items allows (a
%% supervisor's links are a walk), the ones asked least lately first; the
%% Owner keeps saying what it was told last of the others.
relations_dear(Pids, OneKey) ->
    Now = erlang:monotonic_time(millisecond),
    D0 = dear_get(),
    Order = lists:sort([{dear_at(D0, {rel, P}), P} || P <- Pids]),
    {Rel, D, _} =
        lists:foldl(
          fun({_, P}, {Acc, D1, Spent}) ->
                  Key = {rel, P},
                  case dear_ask(0, maps:get(Key, D1, none), Now,
                                ?DEAR_BUDGET_US - Spent, Spent =:= 0) of
                      false ->
                          {Acc, D1, Spent};
                      true ->
                          T0 = erlang:monotonic_time(microsecond),
                          R = relations_of(P, OneKey),
                          Us = erlang:monotonic_time(microsecond) - T0,
                          {[R || R =/= none] ++ Acc,
                           D1#{Key => {Us, 0, Now}}, Spent + Us}
                  end
          end, {[], D0, 0}, Order),
    dear_put(D, Now),
    Rel.

relations_of(P, OneKey) ->
    case erlang:process_info(P, [links, monitors, monitored_by]) of
        [{links, L}, {monitors, M}, {monitored_by, B}] ->
            {P, length(L), lists:sublist(L, ?REL_FIRST),
             length(M), lists:sublist(M, ?REL_FIRST),
             length(B), ancestors(P, OneKey)};
        _ ->
            none
    end.

%% The first entries of '$ancestors' (the parent first, a registered one
%% by its name), [] when the process has none, unknown when the VM cannot
%% read one key (OTP 25) and the dictionary is too big to copy.
ancestors(P, true) ->
    case erlang:process_info(P, {dictionary, '$ancestors'}) of
        {_, undefined} -> [];
        {_, V} -> ancestors_first(V, ?REL_FIRST);
        _ -> unknown
    end;
ancestors(P, false) ->
    case dictionary_key(P, '$ancestors') of
        {ok, V} -> ancestors_first(V, ?REL_FIRST);
        missing -> [];
        unknown -> unknown
    end.

%% proc_lib keeps pids and registered names there; anything else anyone
%% put there is not copied ('...'), and a list that is not one is unknown
ancestors_first(V, _) when not is_list(V) ->
    unknown;
ancestors_first([A | T], N) when N > 0 ->
    [case is_pid(A) orelse is_atom(A) of
         true -> A;
         false -> '...'
     end | case is_list(T) of
               true -> ancestors_first(T, N - 1);
               false -> []
           end];
ancestors_first(_, _) ->
    [].

%%% Tracing -------------------------------------------------------------------

trace(_Spec, #st{session = S} = St) when S =/= none ->
    {{error, already_tracing}, St};
trace(Spec, St) when is_map(Spec) ->
    Ours = [self() | [P || {_, P, _} <- St#st.workers]],
    Interval = case maps:get(tier, Spec, event) of
                   count -> max(20, min(60000, maps:get(interval_ms, Spec, 250)));
                   _ -> 0
               end,
    Follow = maps:get(follow, Spec, false) =:= true,
    Ctx = #{mode => tr_mode(Spec),
            take => maps:get(take_over, Spec, false) =:= true},
    case {parse_spec(Spec), calls(maps:get(calls, Spec, []),
                                  maps:get(elixir, Spec, none))} of
        {_, {error, _} = E} ->
            {E, St};
        {{ok, Mask0, Flags0, Pids, Payload}, {ok, Calls}} ->
            case match(maps:get(match, Spec, none), Mask0, Flags0,
                       Interval > 0, Ctx) of
                {ok, Match} ->
                    trace1(Spec, Mask0, Flags0, Pids, Payload, Calls, Follow,
                           Interval, Ours, Ctx, St#st{match = Match});
                {error, _} = E ->
                    {E, St}
            end;
        {{error, _} = E, _} ->
            {E, St}
    end;
trace(Spec, St) ->
    {{error, {bad_spec, Spec}}, St}.

trace1(Spec, Mask0, Flags0, Pids, Payload, Calls, Follow, Interval, Ours, Ctx,
       St) ->
    {Mask, Flags} = case Calls of
                        [] -> {Mask0, Flags0};
                        _ -> {Mask0 bor ?K_CALL, [call | Flags0]}
                    end,
    {ok, UserMask0} = kinds(maps:get(events, Spec, []), 0),
    UserMask = case Calls of [] -> UserMask0; _ -> UserMask0 bor ?K_CALL end,
    Limits = {UserMask, limit(max_events, Spec), limit(duration_ms, Spec),
              limit(rate, Spec), maps:get(on_limit, Spec, stop) =:= shed},
    Flags1 = case Follow of
                 true -> [set_on_spawn | Flags];
                 false -> Flags
             end,
    Recv = {Mask band ?K_RECEIVE =/= 0, Mask band ?K_TIMEOUT =/= 0},
    case plan(Pids, Ours, Ctx) of
        {ok, Plan, Notes} ->
            {Reply, St1} = commit(Plan, Notes, Mask, Flags1, Payload, Ours,
                                  Ctx, St#st{interval = Interval,
                                             limits = Limits, recv = Recv}),
            set_patterns(Calls, Reply, St1);
        {error, _} = E ->
            {E, St}
    end.

%%% Call patterns --------------------------------------------------------------
%%
%% A pattern is text, compiled here on the target so that what is accepted is
%% exactly Erlang:
%%   mod:fun  mod:fun/2  mod:_  mod:fun/_         every call
%%   mod:fun/2 -> return  mod:fun -> stack        every call, with actions
%%   mod:fun(A, _) when A > 3 -> return           a head with guard and actions
%%   mod:fun/2 [{['$1', '_'], [], [{return_trace}]}]   a raw match spec
%% Actions: return (return values and exceptions), stack (the caller).
%% All patterns are checked before anything is set; functions that already
%% have a pattern (someone else's) are left alone and reported.

%% ElixirBeam: beamscope_elixir's code when a head is in Elixir form
calls(Texts, ElixirBeam) when is_list(Texts) ->
    calls(Texts, ElixirBeam, []);
calls(Other, _) ->
    {error, {bad_calls, Other}}.

calls([], _, Acc) ->
    {ok, lists:reverse(Acc)};
calls([Call | Rest], ElixirBeam, Acc) ->
    Text = call_text(Call),
    case compile_call(Call, ElixirBeam) of
        {ok, M, F, A, MS} ->
            case functions(M, F, A) of
                {ok, MFAs} -> calls(Rest, ElixirBeam, [{Text, MFAs, MS} | Acc]);
                {error, Why} -> {error, {bad_call, Text, Why}}
            end;
        {error, {bad_call, Why}} ->
            {error, {bad_call, Text, Why}};
        {error, {Line, Col, Msg}} ->
            {error, {bad_pattern, Text, Line, Col, Msg}}
    end.

%% {elixir, Text}: a head in Elixir form, read by the target's Elixir
call_text({elixir, Text}) -> Text;
call_text(Text) -> Text.

compile_call({elixir, Text}, ElixirBeam) when is_list(Text) ->
    elixir_call(Text, ElixirBeam);
compile_call(Call, _) ->
    compile_call(Call).

%% (a head in Elixir form here: beamscope_elixir loaded already, as in the
%% tests that run the reader off any node)
compile_call({elixir, Text}) when is_list(Text) ->
    elixir_call(Text, none);
compile_call(Text) when is_list(Text) ->
    case scan(Text) of
        {ok, Tokens, End, Renamed} ->
            case head(Tokens, End, Renamed) of
                {ok, _, _, _, MS} = Ok ->
                    case no_atom(MS, Renamed, "call") of
                        ok -> Ok;
                        {error, _} = E -> E
                    end;
                {error, {L, C, Msg}} ->
                    {error, {L, C, typed_names(Msg, Renamed)}};
                {error, _} = E ->
                    E
            end;
        {error, _} = E ->
            E
    end;
compile_call(_) ->
    {error, {1, 1, "a pattern is text, like mod:fun/2"}}.

located({Line, Col}, Msg) -> {Line, Col, lists:flatten(Msg)};
located(Line, Msg) when is_integer(Line) -> {Line, 1, lists:flatten(Msg)}.

loc(Token) ->
    case erl_scan:location(Token) of
        {L, C} -> {L, C};
        L -> {L, 1}
    end.

%% mod : fun ...  (End: where the text ends; the tokens added to what
%% was typed sit there, so that an error there reads as an early end).
%% A name the node has no atom for is no module it has loaded, and no
%% function of one.
head([{atom, _, M}, {':', _}, {Kind, _, F} | Rest], End, Renamed)
  when Kind =:= atom; Kind =:= var, F =:= '_' ->
    case {typed_name(M, Renamed), typed_name(F, Renamed)} of
        {false, false} -> arity(M, F, Rest, End);
        {false, Fun} -> {error, {bad_call, {no_function, M, Fun, '_'}}};
        {Mod, _} -> {error, {bad_call, {not_loaded, Mod}}}
    end;
head(Tokens, _, _) ->
    head_error(Tokens).

head_error([{var, L, '_'} | _]) ->
    {error, located(L, "the module cannot be a wildcard; name it")};
head_error([T | _]) ->
    {error, located(loc(T), "expected mod:fun, mod:fun/arity or mod:fun(Args)")};
head_error([]) ->
    {error, {1, 1, "empty pattern"}}.

arity(M, F, [], _) ->
    {ok, M, F, '_', [{'_', [], []}]};
arity(M, F, [{'->', _} | _] = Rest, End) ->
    raw(M, F, '_', Rest, End);
arity(M, F, [{'/', _}, {integer, _, A} | Rest], End) when A >= 0, A =< 255 ->
    raw(M, F, A, Rest, End);
arity(M, F, [{'/', _}, {var, _, '_'} | Rest], End) ->
    raw(M, F, '_', Rest, End);
arity(_, _, [{'/', L} | _], _) ->
    {error, located(loc({'/', L}), "expected an arity (0..255 or _) after /")};
arity(M, F, [{'(', _} | _] = Rest, End) ->
    clause(M, F, Rest, End);
arity(_, _, [T | _], _) ->
    {error, located(loc(T), "expected /arity, (Args) or the end of the pattern")}.

%% mod:fun/arity followed by a match spec written out, or by -> Actions
%% (every call, with the actions), as the Elixir form has it
raw(M, F, A, [], _) ->
    {ok, M, F, A, [{'_', [], []}]};
raw(M, F, A, [{'->', L} | Acts], _) ->
    case arrow_actions(Acts, L, []) of
        {ok, Body} -> {ok, M, F, A, [{'_', [], Body}]};
        {error, _} = E -> E
    end;
raw(M, F, A, [T | _] = Tokens, End) ->
    case erl_parse:parse_term(Tokens ++ [{dot, End}]) of
        {ok, MS} when is_list(MS) ->
            case ms_check([], MS) of
                ok -> {ok, M, F, A, MS};
                {refused, Action} -> {error, located(loc(T), refusal(Action))};
                {error, Errors} -> {error, located(loc(T), ms_errors(Errors))}
            end;
        {ok, _} ->
            {error, located(loc(T), "a match spec is a list of {Head, Guards, Body}")};
        {error, {Loc, Mod, Desc}} ->
            parse_error(Loc, Mod, Desc, End)
    end.

%% return -> exception_trace, stack -> message(caller), comma separated;
%% Where: the location of the token before, for an action missing there
arrow_actions([{atom, _, Act} | Rest], _, Acc) when Act =:= return; Act =:= stack ->
    Body = case Act of
               return -> {exception_trace};
               stack -> {message, {caller}}
           end,
    case Rest of
        [] -> {ok, lists:reverse([Body | Acc])};
        [{',', L} | More] -> arrow_actions(More, L, [Body | Acc]);
        [T | _] -> {error, located(loc(T), "expected , or the end after an action")}
    end;
arrow_actions([], Where, _) ->
    {error, located(loc({x, Where}), "an action (return or stack) must "
                    "follow")};
arrow_actions([T | _], _, _) ->
    {error, located(loc(T), "an action is return or stack")}.

%% an error at a token that was added, not typed: the text ended too soon
parse_error(End, _, _, End) ->
    {error, located(End, "the pattern ends too soon")};
parse_error(Loc, Mod, Desc, _) ->
    {error, located(Loc, Mod:format_error(Desc))}.

ms_errors(Errors) ->
    string:join([S || {_, S} <- Errors], "; ").

%% The functions a raw match spec may call: the guard functions, which only
%% compute, and the actions whose effect ends with the session (a trace
%% message, the caller, a return or exception event) or that only read.
%% set_tcw, set_seq_token, trace, enable_trace, disable_trace, silent,
%% display and process_dump are refused: their effects outlive the session,
%% reach beyond the traced call, or are unbounded.  The man page keeps the
%% same list.
-define(MS_ACTIONS, [return_trace, exception_trace, message, caller,
                     caller_line, current_stacktrace, self, get_tcw,
                     get_seq_token, is_seq_trace]).

%% ok, {refused, Action} or {error, Errors}.  erlang:match_spec_test/3
%% runs the spec's actions, and on OTP 27-29 trace, enable_trace and
%% disable_trace crash the emulator there (a segmentation fault, seen on
%% 27.3 and 29.1): a spec is tested only once every function it calls is
%% allowed.
ms_check(Args, MS) ->
    case refused_action(MS) of
        none ->
            case erlang:match_spec_test(Args, MS, trace) of
                {ok, _, _, _} -> ok;
                {error, _} = E -> E
            end;
        Action ->
            {refused, Action}
    end.

%% The first function a match spec calls that is not allowed, or none.
%% Guards and bodies are expressions: {F, Args...} calls F, {{...}} builds
%% a tuple, {const, T} is T itself; lists and maps hold expressions.  A
%% clause whose guards or body is no list is left to match_spec_test/3,
%% which refuses it without running anything.
refused_action(MS) ->
    first_refused([E || {_Head, Guards, Body} <- improper_to_list(MS),
                        is_list(Guards), is_list(Body),
                        E <- improper_to_list(Guards) ++ improper_to_list(Body)]).

first_refused([]) ->
    none;
first_refused([E | Es]) ->
    case refused_in(E) of
        none -> first_refused(Es);
        F -> F
    end.

refused_in({const, _}) ->
    none;
refused_in({T}) when is_tuple(T) ->
    first_refused(tuple_to_list(T));
refused_in(T) when is_tuple(T), tuple_size(T) >= 1, is_atom(element(1, T)) ->
    [F | Args] = tuple_to_list(T),
    case lists:member(F, ?MS_ACTIONS) orelse lists:member(F, ?MS_GUARDS) of
        true -> first_refused(Args);
        false -> F
    end;
refused_in(L) when is_list(L) ->
    first_refused(improper_to_list(L));
refused_in(M) when is_map(M) ->
    first_refused(maps:keys(M) ++ maps:values(M));
refused_in(_) ->
    none.

improper_to_list([H | T]) -> [H | improper_to_list(T)];
improper_to_list([]) -> [];
improper_to_list(Tail) -> [Tail].

refusal(Action) ->
    io_lib:format("the action ~tw is refused: its effect could outlast the "
                  "session or reach beyond the call; allowed: return_trace, "
                  "exception_trace, message, caller and the guard functions",
                  [Action]).

%% mod:fun(Args) [when Guards] [-> Actions]: a fun for ms_transform
clause(M, F, [{'(', L} | _] = Tokens, End) ->
    Arrow = lists:keymember('->', 1, Tokens),
    Body = case Arrow of
               true -> [];
               false -> [{'->', End}, {atom, End, true}]
           end,
    Fun = [{'fun', L} | Tokens] ++ Body ++ [{'end', End}, {dot, End}],
    case erl_parse:parse_exprs(Fun) of
        {ok, [{'fun', _, {clauses, [{clause, CL, Args, Guards, Acts}]}}]} ->
            case actions(Acts) of
                {ok, Acts1} ->
                    %% a trace match spec's head is the argument list
                    Head = lists:foldr(fun(Arg, Acc) -> {cons, CL, Arg, Acc} end,
                                       {nil, CL}, Args),
                    C = {clause, CL, [Head], Guards, Acts1},
                    case clause_ms(C) of
                        {ok, MS} -> {ok, M, F, length(Args), MS};
                        {error, _} = E -> E
                    end;
                {error, Loc, Msg} ->
                    {error, located(Loc, Msg)}
            end;
        {ok, _} ->
            {error, located(L, "expected one head: mod:fun(Args) when Guard -> Actions")};
        {error, {Loc, Mod, Desc}} ->
            parse_error(Loc, Mod, Desc, End)
    end.

%% One fun clause, as a trace match spec.
clause_ms(C) ->
    case ms_transform:transform_from_shell(dbg, [C], []) of
        {error, [{_, [{Loc, Mod, Desc} | _]} | _], _} ->
            {error, located(Loc, Mod:format_error(Desc))};
        MS when is_list(MS) ->
            {ok, MS}
    end.

%% return -> exception_trace() (return values and exceptions);
%% stack -> message(caller()); true: nothing more
actions(Acts) ->
    actions(Acts, []).

actions([], Acc) ->
    {ok, lists:reverse(Acc)};
actions([{atom, L, return} | Rest], Acc) ->
    actions(Rest, [{call, L, {atom, L, exception_trace}, []} | Acc]);
actions([{atom, L, stack} | Rest], Acc) ->
    actions(Rest, [{call, L, {atom, L, message}, [{call, L, {atom, L, caller}, []}]} | Acc]);
actions([{atom, L, true} | Rest], Acc) ->
    actions(Rest, [{atom, L, true} | Acc]);
actions([Other | _], _) ->
    Loc = case element(2, Other) of {_, _} = LC -> LC; N when is_integer(N) -> {N, 1}; _ -> {1, 1} end,
    {error, Loc, "an action is return or stack"}.

%%% Reading a pattern without making atoms ----------------------------------
%%
%% erl_scan makes an atom of every name it reads, atoms and variables
%% alike, and the node never frees one: a pattern of unknown names would
%% leave them on the node for good.  So names and quoted atoms are read
%% here, and erl_scan reads only the text between them (numbers, strings,
%% characters, operators), which makes no atom:
%%  * a name the node has an atom for is that atom (a reserved word is
%%    its keyword, as erl_scan makes it);
%%  * a name it has none for cannot be in any term on the node, so no
%%    call or message can carry it: it stands in as one of ?NO_ATOMS
%%    while the pattern is read (so that what is wrong with its form is
%%    said first), and a pattern that still holds one once compiled is
%%    refused, naming it; in the module's place it is a module that is
%%    not loaded, in the function's a function that is not there;
%%  * a variable whose name is no atom of the node takes one of ?VARS
%%    instead.
%% Messages say the names as they were typed.
%% What is text and what is a name is told as erl_scan tells it (OTP 25
%% to 29); a sigil or a triple-quoted string, whose insides are not, is
%% refused.

%% {ok, Tokens, End, Renamed} as erl_scan:string(Text, {1, 1}) gives,
%% Renamed the names that stand in: [{Given, Typed, var | atom, Loc}]
%% (where the name was first typed); or {error, {L, C, Msg}}
scan(Text) ->
    try
        Spans = spans(Text, {1, 1}, []),
        Names = [{var, N, L} || {var, N, L} <- Spans, N =/= "_"] ++
            [{atom, N, L} || {name, N, L} <- Spans] ++
            [{atom, quoted_name(B, L), L} || {quoted, B, L} <- Spans],
        Typed = [N || {_, N, _} <- Names],
        Renamed = rename([{K, N, L} || {K, N, L} <- Names, not exists(N)],
                         [V || V <- tuple_to_list(?VARS),
                               not lists:member(atom_to_list(V), Typed)],
                         [A || A <- tuple_to_list(?NO_ATOMS),
                               not lists:member(atom_to_list(A), Typed)],
                         []),
        {Tokens, End} = tokens(Spans, Renamed, [], {1, 1}),
        {ok, Tokens, End, Renamed}
    catch
        throw:{scan, Loc, Msg} -> {error, located(Loc, Msg)}
    end.

exists(Name) ->
    try list_to_existing_atom(Name) of
        _ -> true
    catch
        error:badarg -> false
    end.

%% each distinct name the node has no atom for, a stand-in of its kind
rename([], _, _, Acc) ->
    lists:reverse(Acc);
rename([{K, N, L} | Rest], Vs, As, Acc) ->
    case lists:keymember(N, 2, [R || {_, _, K1, _} = R <- Acc, K1 =:= K]) of
        true ->
            rename(Rest, Vs, As, Acc);
        false ->
            case {K, Vs, As} of
                {var, [V | Vs1], _} -> rename(Rest, Vs1, As, [{V, N, K, L} | Acc]);
                {atom, _, [A | As1]} -> rename(Rest, Vs, As1, [{A, N, K, L} | Acc]);
                _ -> throw({scan, L, io_lib:format(
                                       "too many names the node has no atom "
                                       "for; a pattern takes ~b variables and ~b "
                                       "such names", [tuple_size(?VARS),
                                                      tuple_size(?NO_ATOMS)])})
            end
    end.

stand_in(K, Name, Renamed) ->
    case [G || {G, N, K1, _} <- Renamed, K1 =:= K, N =:= Name] of
        [G | _] -> G;
        [] -> list_to_existing_atom(Name)
    end.

%% The text cut into spans: {text, Chars, Loc} for erl_scan,
%% {var, Name, Loc}, {name, Name, Loc} and {quoted, Body, Loc}, in order
spans([], _, Acc) ->
    lists:reverse(Acc);
spans([C | _] = Cs, Loc, Acc) when ?LOWER(C); ?UPPER(C); C =:= $_ ->
    {Name, Rest} = lists:splitwith(fun(X) -> ?NAMECHAR(X) end, Cs),
    Kind = case ?LOWER(C) of true -> name; false -> var end,
    spans(Rest, advance(Name, Loc), [{Kind, Name, Loc} | Acc]);
spans([$' | Cs], Loc, Acc) ->
    {Body, Rest} = quoted(Cs, $', Loc),
    spans(Rest, advance([$' | Body] ++ "'", Loc), [{quoted, Body, Loc} | Acc]);
spans(Cs, Loc, Acc) ->
    {Text, Rest} = text(Cs, Loc, []),
    spans(Rest, advance(Text, Loc), [{text, Text, Loc} | Acc]).

%% text up to the next name or quoted atom: what erl_scan reads of it
%% (a number's letters, a character, a string, a comment) is kept whole
text([], _, Acc) ->
    {lists:reverse(Acc), []};
text([C | _] = Cs, _, Acc) when ?LOWER(C); ?UPPER(C); C =:= $_; C =:= $' ->
    {lists:reverse(Acc), Cs};
text([$", $", $" | _], Loc, Acc) ->
    throw({scan, advance(lists:reverse(Acc), Loc),
           "a triple-quoted string is not read in a pattern; write it "
           "plainly, \"...\""});
text([$" | Cs], Loc, Acc) ->
    {Body, Rest} = quoted(Cs, $", advance(lists:reverse(Acc), Loc)),
    text(Rest, Loc, lists:reverse([$" | Body] ++ "\"", Acc));
text([$~ | _], Loc, Acc) ->
    throw({scan, advance(lists:reverse(Acc), Loc),
           "a sigil is not read in a pattern; write the string plainly, "
           "\"...\""});
text([$% | Cs], Loc, Acc) ->
    {Comment, Rest} = lists:splitwith(fun(X) -> X =/= $\n end, Cs),
    text(Rest, Loc, lists:reverse([$% | Comment], Acc));
text([$#, $_ | Cs], Loc, Acc) ->
    %% OTP 29 reads #_ as one token (before it, # and a name)
    case erl_scan:string("#_") of
        {ok, [{'#_', _}], _} -> text(Cs, Loc, [$_, $# | Acc]);
        _ -> {lists:reverse(Acc) ++ "#", [$_ | Cs]}
    end;
text([$$, $\\ | Cs], Loc, Acc) ->
    {Esc, Rest} = escape(Cs),
    text(Rest, Loc, lists:reverse([$$, $\\ | Esc], Acc));
text([$$, C | Cs], Loc, Acc) ->
    text(Cs, Loc, [C, $$ | Acc]);
text([C | _] = Cs, Loc, Acc) when ?DIGIT(C) ->
    case number(Cs) of
        {Num, Rest} ->
            text(Rest, Loc, lists:reverse(Num, Acc));
        illegal_float ->
            throw({scan, advance(lists:reverse(Acc), Loc), "illegal float"})
    end;
text([C | Cs], Loc, Acc) ->
    text(Cs, Loc, [C | Acc]).

%% up to the closing quote Q, escapes skipped; {Body, after the quote}
quoted(Cs, Q, Loc) ->
    quoted(Cs, Q, Loc, []).

quoted([], Q, Loc, _) ->
    throw({scan, Loc, case Q of
                          $' -> "unterminated atom starting with '";
                          $" -> "unterminated string starting with \""
                      end});
quoted([Q | Cs], Q, _, Acc) ->
    {lists:reverse(Acc), Cs};
quoted([$\\, C | Cs], Q, Loc, Acc) ->
    quoted(Cs, Q, Loc, [C, $\\ | Acc]);
quoted([C | Cs], Q, Loc, Acc) ->
    quoted(Cs, Q, Loc, [C | Acc]).

%% after $\ of a character: octal digits (3 at most), x{...}, xHH, ^C or
%% one character
escape([$x, ${ | Cs]) ->
    {Hex, Rest} = lists:splitwith(fun(X) -> X =/= $} end, Cs),
    case Rest of
        [$} | Rest1] -> {[$x, ${ | Hex] ++ "}", Rest1};
        [] -> {[$x, ${ | Hex], []}
    end;
escape([$x | Cs]) ->
    {Hex, Rest} = take(fun is_hex/1, Cs, 2),
    {[$x | Hex], Rest};
escape([C | _] = Cs) when C >= $0, C =< $7 ->
    take(fun(X) -> X >= $0 andalso X =< $7 end, Cs, 3);
escape([$^, C | Cs]) ->
    {[$^, C], Cs};
escape([C | Cs]) ->
    {[C], Cs};
escape([]) ->
    {[], []}.

take(F, Cs, N) ->
    take(F, Cs, N, []).

take(F, [C | Cs], N, Acc) when N > 0 ->
    case F(C) of
        true -> take(F, Cs, N - 1, [C | Acc]);
        false -> {lists:reverse(Acc), [C | Cs]}
    end;
take(_, Cs, _, Acc) ->
    {lists:reverse(Acc), Cs}.

is_hex(C) -> digit_value(C) < 16.

digit_value(C) when ?DIGIT(C) -> C - $0;
digit_value(C) when C >= $a, C =< $z -> C - $a + 10;
digit_value(C) when C >= $A, C =< $Z -> C - $A + 10;
digit_value(_) -> 99.

%% A number, as much of it as erl_scan reads: digits (_ between two),
%% Base#digits of that base, or a float with its exponent; never a
%% letter that erl_scan would read as a name.  illegal_float where
%% erl_scan says so (an e after a fraction, without an exponent).
number(Cs) ->
    {Int, Rest} = digits(Cs, 10),
    case Rest of
        [$# | Rest1] ->
            case list_to_integer([D || D <- Int, D =/= $_]) of
                B when B >= 2, B =< 36 ->
                    {Based, Rest2} = digits(Rest1, B),
                    based_fraction(Int ++ [$# | Based], Rest2, B);
                _ ->
                    {Int, Rest}
            end;
        [$., D | _] when ?DIGIT(D) ->
            {Frac, Rest2} = digits(tl(Rest), 10),
            case exponent(Rest2) of
                {Exp, Rest3} -> {Int ++ [$. | Frac] ++ Exp, Rest3};
                illegal_float -> illegal_float
            end;
        _ ->
            {Int, Rest}
    end.

%% a based number's fraction and exponent, where this node reads them
%% (based_floats/0): .Digits of the base, then #e, a sign and decimal
%% digits
based_fraction(Num, [$., D | _] = Rest, B) ->
    case digit_value(D) < B andalso based_floats() of
        true ->
            {Frac, Rest2} = digits(tl(Rest), B),
            case Rest2 of
                [$#, $e, S, E | Rest3] when (S =:= $+ orelse S =:= $-), ?DIGIT(E) ->
                    {Exp, Rest4} = digits([E | Rest3], 10),
                    {Num ++ [$. | Frac] ++ [$#, $e, S | Exp], Rest4};
                [$#, $e, E | Rest3] when ?DIGIT(E) ->
                    {Exp, Rest4} = digits([E | Rest3], 10),
                    {Num ++ [$. | Frac] ++ [$#, $e | Exp], Rest4};
                _ ->
                    {Num ++ [$. | Frac], Rest2}
            end;
        false ->
            {Num, Rest}
    end;
based_fraction(Num, Rest, _) ->
    {Num, Rest}.

%% digits of base B, a _ only between two of them
digits(Cs, B) ->
    digits(Cs, B, []).

digits([C | Cs], B, Acc) ->
    case digit_value(C) < B of
        true -> digits(Cs, B, [C | Acc]);
        false -> digits_sep([C | Cs], B, Acc)
    end;
digits([], _, Acc) ->
    {lists:reverse(Acc), []}.

digits_sep([$_, C | Cs], B, Acc) when Acc =/= [] ->
    case digit_value(C) < B of
        true -> digits(Cs, B, [C, $_ | Acc]);
        false -> {lists:reverse(Acc), [$_, C | Cs]}
    end;
digits_sep(Cs, _, Acc) ->
    {lists:reverse(Acc), Cs}.

exponent([E, S, D | Cs]) when (E =:= $e orelse E =:= $E),
                              (S =:= $+ orelse S =:= $-), ?DIGIT(D) ->
    {Ds, Rest} = digits([D | Cs], 10),
    {[E, S | Ds], Rest};
exponent([E, D | Cs]) when (E =:= $e orelse E =:= $E), ?DIGIT(D) ->
    {Ds, Rest} = digits([D | Cs], 10),
    {[E | Ds], Rest};
exponent([E | _]) when E =:= $e; E =:= $E ->
    illegal_float;
exponent(Cs) ->
    {[], Cs}.

%% where the text after Chars starts, Chars starting at {L, C}
advance([], Loc) -> Loc;
advance([$\n | Cs], {L, _}) -> advance(Cs, {L + 1, 1});
advance([_ | Cs], {L, C}) -> advance(Cs, {L, C + 1}).

%% The spans as tokens
tokens([], _, Acc, End) ->
    {lists:reverse(Acc), End};
tokens([{text, Text, Loc} | Rest], Renamed, Acc, _) ->
    _ = name_after(Text, Loc, Rest),
    case scan_string(Text, Loc) of
        {ok, Toks, End} ->
            %% a dot at the end of the text, with a name right after it,
            %% is the '.' of a record field, as erl_scan reads it whole
            Toks1 = case {Rest, lists:last(Text), lists:reverse(Toks)} of
                        {[_ | _], $., [{dot, A} | T]} -> lists:reverse([{'.', A} | T]);
                        _ -> Toks
                    end,
            tokens(Rest, Renamed, lists:reverse(Toks1, Acc), End);
        {error, {ELoc, Mod, Desc}, _} ->
            throw({scan, ELoc, Mod:format_error(Desc)})
    end;
tokens([{var, "_", Loc} | Rest], Renamed, Acc, _) ->
    tokens(Rest, Renamed, [{var, Loc, '_'} | Acc], advance("_", Loc));
tokens([{var, Name, Loc} | Rest], Renamed, Acc, _) ->
    tokens(Rest, Renamed, [{var, Loc, stand_in(var, Name, Renamed)} | Acc],
           advance(Name, Loc));
tokens([{name, Name, Loc} | Rest], Renamed, Acc, _) ->
    A = stand_in(atom, Name, Renamed),
    Tok = case erl_scan:reserved_word(A) of
              true -> {A, Loc};
              false -> {atom, Loc, A}
          end,
    tokens(Rest, Renamed, [Tok | Acc], advance(Name, Loc));
tokens([{quoted, Body, Loc} | Rest], Renamed, Acc, _) ->
    A = stand_in(atom, quoted_name(Body, Loc), Renamed),
    tokens(Rest, Renamed, [{atom, Loc, A} | Acc],
           advance([$' | Body] ++ "'", Loc)).

%% erl_scan:string/2, its crash an error (OTP 29's crashes on "2#1.1#e")
scan_string(Text, Loc) ->
    try
        erl_scan:string(Text, Loc)
    catch
        _:_ -> {error, {Loc, erl_scan, {illegal, float}}, Loc}
    end.

%% From OTP 29 on, erl_scan refuses a number with a name right after it
%% ("1e10", "16#FFzz", "1.x"): where this node's erl_scan does so (it
%% refuses "1_"), the text before a name that starts with a letter or _
%% is read with a _ after it, which erl_scan reads as it reads the name.
name_after(Text, Loc, [{K, [C | _], _} | _]) when (K =:= name orelse K =:= var),
                                                  (C =:= $_ orelse
                                                   (C >= $a andalso C =< $z) orelse
                                                   (C >= $A andalso C =< $Z)) ->
    case strict_numbers() of
        true ->
            case scan_string(Text ++ "_", Loc) of
                {error, {ELoc, Mod, Desc}, _} ->
                    ELoc =:= advance(Text, Loc) orelse   %% the _ itself
                        throw({scan, ELoc, Mod:format_error(Desc)});
                _ ->
                    ok
            end;
        false ->
            ok
    end;
name_after(_, _, _) ->
    ok.

strict_numbers() ->
    case erl_scan:string("1_") of
        {error, _, _} -> true;
        _ -> false
    end.

%% Based floats ("2#0.1", "16#1.8#e2"): OTP 29 reads them, before it a
%% based integer ends at the dot
based_floats() ->
    case erl_scan:string("2#0.1") of
        {ok, [{float, _, _}], _} -> true;
        _ -> false
    end.

%% what a quoted atom names, read as erl_scan reads a string
quoted_name(Body, Loc) ->
    case erl_scan:string([$" | dq(Body)] ++ "\"", Loc) of
        {ok, [{string, _, S}], _} -> S;
        {error, {ELoc, Mod, Desc}, _} -> throw({scan, ELoc, Mod:format_error(Desc)})
    end.

%% a quoted atom's body as a string's: its escapes as they are, a bare "
%% escaped
dq([$\\, C | Cs]) -> [$\\, C | dq(Cs)];
dq([$" | Cs]) -> [$\\, $" | dq(Cs)];
dq([C | Cs]) -> [C | dq(Cs)];
dq([]) -> [].

%% A compiled pattern (any term) that holds a name the node has no atom
%% for, refused where that name was typed first: no What (a call, a
%% message) can carry it.
no_atom(Term, Renamed, What) ->
    case lists:keysort(4, [R || {G, _, atom, _} = R <- Renamed, holds(Term, G)]) of
        [] ->
            ok;
        [{_, Name, _, Loc} | _] ->
            {error, located(Loc, io_lib:format(
                                   "the atom ~ts does not exist on the node, "
                                   "so no ~s can carry it; check its spelling",
                                   [atom_text(Name), What]))}
    end.

holds(A, A) -> true;
holds(T, A) when is_tuple(T) -> holds(tuple_to_list(T), A);
holds([H | T], A) -> holds(H, A) orelse holds(T, A);
holds(M, A) when is_map(M) -> holds(maps:to_list(M), A);
holds(_, _) -> false.

%% the name a stand-in atom takes the place of, or false
typed_name(A, Renamed) ->
    case lists:keyfind(A, 1, Renamed) of
        {_, Name, atom, _} -> unicode:characters_to_binary(Name);
        _ -> false
    end.

%% a name as erl_scan would want it written: quoted where it must be
atom_text(Name) ->
    case Name of
        [C | _] when ?LOWER(C) ->
            case lists:all(fun(X) -> ?NAMECHAR(X) end, Name) of
                true -> Name;
                false -> io_lib:write_string(Name, $')
            end;
        _ ->
            io_lib:write_string(Name, $')
    end.

%% a message with the names as they were typed in place of the stand-ins
typed_names(Msg, Renamed) ->
    lists:foldl(fun({G, Name, K, _}, M) ->
                        Given = atom_to_list(G),
                        Typed = case K of
                                    var -> Name;
                                    atom -> lists:flatten(atom_text(Name))
                                end,
                        M1 = string:replace(M, [$' | Given] ++ "'", Typed, all),
                        lists:flatten(string:replace(M1, Given, Typed, all))
                end, lists:flatten(Msg), Renamed).

%%% Call patterns in Elixir form ---------------------------------------------
%%
%% Read by beamscope_elixir (nif/beamscope_elixir.erl), which the Owner
%% sends with a trace request that has such a head (elixir => Beam) and
%% which is loaded for it only, never from the node's code path, and
%% unloaded with the tracer.  A node without Elixir never loads it.

elixir_call(Text, Beam) ->
    case application:get_key(elixir, vsn) of
        {ok, _} ->
            case load_elixir(Beam) of
                ok ->
                    ?ELIXIR:head(Text, fun ms_verdict/1);
                {error, Why} ->
                    {error, {1, 1, lists:flatten(
                                     io_lib:format("beamscope could not load "
                                                   "its reader of Elixir heads "
                                                   "(~0tp)", [Why]))}}
            end;
        _ ->
            {error, {1, 1, "a head in Elixir form is read by the node's own "
                     "Elixir, and this node runs none; write it in Erlang "
                     "form, e.g. 'Elixir.Shop.Cache':get(K) when K > 3 "
                     "-> return, or name the function alone (Mod.fun/arity)"}}
    end.

%% loaded once per agent (load_tracer unloads any copy first)
load_elixir(Beam) ->
    case code:is_loaded(?ELIXIR) of
        {file, _} ->
            ok;
        false when is_binary(Beam) ->
            case code:load_binary(?ELIXIR, "beamscope_elixir.beam", Beam) of
                {module, ?ELIXIR} -> ok;
                {error, _} = E -> E
            end;
        false ->
            {error, not_sent}
    end.

%% The agent's word on a match spec made from an Elixir head: ok, or
%% {error, Message}.
ms_verdict(MS) ->
    case ms_check([], MS) of
        ok -> ok;
        {refused, Action} -> {error, refusal(Action)};
        {error, Errors} -> {error, ms_errors(Errors)}
    end.

%% The functions a pattern names, local ones included; never loads code.
functions(M, F, A) ->
    case code:is_loaded(M) of
        false ->
            {error, {not_loaded, M}};
        _ ->
            Fs = [{M, Fn, Ar} || {Fn, Ar} <- M:module_info(functions),
                                 F =:= '_' orelse F =:= Fn,
                                 A =:= '_' orelse A =:= Ar],
            case Fs of
                [] -> {error, {no_function, M, F, A}};
                _ -> {ok, Fs}
            end
    end.

%% Set every pattern on the functions that have none; report the others.
%% In a session of our own, every function is free; the VM removes the
%% patterns with the session, so the workers keep none to clear.
set_patterns([], Reply, St) ->
    {Reply, tell_workers(St)};
set_patterns(Calls, {ok, Info}, St) ->
    {Set, Skipped, Counts} =
        lists:foldl(
          fun({Text, MFAs, MS}, {SetAcc, SkAcc, CAcc}) ->
                  {Mine, Theirs} = lists:partition(
                                     fun(MFA) -> pattern_free(MFA, St) end,
                                     MFAs),
                  Mine1 = [MFA || MFA <- Mine, not lists:member(MFA, SetAcc)],
                  [t_function(St, MFA, MS) || MFA <- Mine1],
                  {Mine1 ++ SetAcc, Theirs ++ SkAcc, [{Text, length(Mine1)} | CAcc]}
          end, {[], [], []}, Calls),
    St1 = watch_functions(St#st{patterns = Set}),
    put(?STATE, St1),
    {{ok, Info#{patterns => lists:reverse(Counts),
                skipped_functions => lists:usort(Skipped)}}, tell_workers(St1)};
set_patterns(_, Reply, St) ->
    {Reply, St}.

%% What a worker must undo should it clean up for the agent (legacy only).
tell_workers(#st{tr = {session, _}} = St) ->
    St;
tell_workers(#st{patterns = MFAs, taken = Taken} = St) ->
    [P ! {'$beamscope_patterns', MFAs, Taken} || {_, P, _} <- St#st.workers],
    St.

pattern_free(_MFA, #st{tr = {session, _}}) ->
    true;
pattern_free(MFA, _St) ->
    case erlang:trace_info(MFA, match_spec) of
        {match_spec, false} -> true;
        _ -> false
    end.

clear_patterns(MFAs) ->
    [catch erlang:trace_pattern(MFA, false, [local]) || MFA <- MFAs],
    ok.

parse_spec(Spec) ->
    Events = maps:get(events, Spec, []),
    Pids = maps:get(pids, Spec, all),
    Payload = maps:get(payload_bytes, Spec, 256),
    case kinds(Events, 0) of
        {ok, 0} ->
            {error, no_events};
        {ok, Mask} when is_integer(Payload), Payload >= 0,
                        Payload =< ?MAX_PAYLOAD ->
            %% procs always: register/unregister keep the C node's names
            %% gen_call records are taken from sends
            Flags = [send || Mask band (1 bor 1024) =/= 0]
                ++ ['receive' || Mask band (?K_RECEIVE bor ?K_TIMEOUT) =/= 0]
                ++ [garbage_collection || Mask band 128 =/= 0]
                ++ [running || Mask band 256 =/= 0] ++ [procs],
            {ok, Mask bor ?K_REGISTER, Flags, Pids, Payload};
        {ok, _} ->
            {error, {bad_payload_bytes, Payload}};
        {error, _} = E ->
            E
    end.

kinds([], Mask) ->
    {ok, Mask};
kinds([E | Es], Mask) ->
    case lists:keyfind(E, 1, ?KINDS) of
        {E, Bit} -> kinds(Es, Mask bor Bit);
        false -> {error, {bad_event, E}}
    end;
kinds(Other, _) ->
    {error, {bad_events, Other}}.

%%% Two ways to trace -------------------------------------------------------
%%
%% Where the VM has trace sessions (OTP 27+), the flags, call patterns and
%% send and receive patterns go in a session of our own, named beamscope
%% (trace:session_info(all) lists it): nothing another tool set is seen or
%% touched, and nothing of ours reaches it.  Only the agent holds the
%% session's handle, so when the agent dies the VM destroys the session
%% and everything in it; cleanup destroys it too.
%%
%% Before that (OTP 25-26), or when the Owner asks for it, there is one
%% shared session, the legacy one (erlang:trace/3): a process has at most
%% one tracer, and the send and receive patterns are node-wide.  There the
%% agent looks at what other tracers hold before it sets anything, and
%% leaves it alone: processes traced by another tracer, new processes
%% traced by another, another's send or receive pattern, another's call
%% patterns.  The trace reply says what was left.  With take_over, it
%% takes processes, new processes and the send and receive patterns
%% instead, and gives them back at cleanup as they were (call patterns
%% are always left).  It never clears what it did not set.
%%
%% Either way, two sessions tracing garbage_collection on one process are
%% reported to crash OTP 27-29 (OTP issue 11624): where another session
%% traces it, we do not.

tr_mode(Spec) ->
    case maps:get(legacy, Spec, false) =/= true andalso sessions() of
        true -> session;
        false -> legacy
    end.

%% trace:session_create/3 exists (OTP 27+).  The kernel's trace module is
%% loaded for it only on such a release: a module of that name on an
%% older node is never loaded.
sessions() ->
    try list_to_integer(erlang:system_info(otp_release)) >= 27 andalso
            code:ensure_loaded(trace) =:= {module, trace} andalso
            erlang:function_exported(trace, session_create, 3)
    catch
        error:_ -> false
    end.

t_what(new_processes) -> new;
t_what(What) -> What.

%% Flags of What (a pid, new_processes) in our session.
t_process(#st{tr = {session, H}}, What, How, Flags) ->
    trace:process(H, t_what(What), How, Flags);
t_process(#st{session = S}, What, true, Flags) ->
    erlang:trace(What, true, [{tracer, ?TRACER, S} | Flags]);
t_process(_, What, false, Flags) ->
    erlang:trace(What, false, Flags).

t_function(#st{tr = {session, H}}, MFA, MS) ->
    trace:function(H, MFA, MS, [local]);
t_function(_, MFA, MS) ->
    erlang:trace_pattern(MFA, MS, [local]).

t_message(#st{tr = {session, H}}, send, MS) ->
    trace:send(H, MS, []);
t_message(#st{tr = {session, H}}, 'receive', MS) ->
    trace:recv(H, MS, []);
t_message(_, Kind, MS) ->
    erlang:trace_pattern(Kind, MS, []).

t_info(#st{tr = {session, H}}, What, Item) ->
    trace:info(H, t_what(What), Item);
t_info(_, What, Item) ->
    erlang:trace_info(What, Item).

%% Everything is checked before anything is traced: {ok, Plan, Notes},
%% Notes what is left to another tracer (legacy only).
plan(all, _Ours, Ctx) ->
    case {new_other(Ctx), Ctx} of
        {free, _} -> {ok, all, #{}};
        {{other, _}, #{take := true}} -> {ok, all, #{}};
        {{other, T}, _} -> {ok, existing, #{new_skipped => T}}
    end;
plan(new, _Ours, Ctx) ->
    case {new_other(Ctx), Ctx} of
        {{other, T}, #{take := false}} -> {error, {new_traced_by_other, T}};
        _ -> {ok, new, #{}}
    end;
plan(existing, _Ours, _Ctx) ->
    {ok, existing, #{}};
plan(List, Ours, Ctx) when is_list(List) ->
    try lists:usort([resolve(X) || X <- List]) -- Ours of
        Pids ->
            Theirs = [{P, T} || #{mode := legacy, take := false} <- [Ctx],
                                P <- Pids, {other, T} <- [tracer_of(P)]],
            case Pids -- [P || {P, _} <- Theirs] of
                [] when Theirs =/= [] ->
                    [{P, T} | _] = Theirs,
                    {error, {traced_by_other, P, T}};
                Free ->
                    {ok, {list, Free}, #{skipped => [P || {P, _} <- Theirs]}}
            end
    catch
        throw:{refused, Why} -> {error, Why};
        error:_ -> {error, {bad_pids, List}}
    end;
plan(Other, _Ours, _Ctx) ->
    {error, {bad_pids, Other}}.

new_other(#{mode := session}) ->
    free;
new_other(_) ->
    case tracer_of(new_processes) of
        {other, T} -> {other, T};
        _ -> free
    end.

resolve(Name) when is_atom(Name) ->
    case whereis(Name) of
        P when is_pid(P) -> alive(P);
        _ ->
            case elixir_alias(Name) of
                {ok, Alias} when Alias =/= Name -> resolve_alias(Name, Alias);
                _ -> throw({refused, {no_such_name, Name}})
            end
    end;
resolve(P) when is_pid(P), node(P) =:= node() ->
    alive(P);
resolve(X) ->
    throw({refused, {no_such_process, X}}).

%% Shop.Cache, as an Elixir user writes it, is registered as
%% 'Elixir.Shop.Cache'; only an atom that exists already is looked at.
elixir_alias(Name) ->
    case atom_to_list(Name) of
        [C | _] = L when C >= $A, C =< $Z ->
            try {ok, list_to_existing_atom("Elixir." ++ L)}
            catch error:badarg -> none
            end;
        _ -> none
    end.

resolve_alias(Name, Alias) ->
    case whereis(Alias) of
        P when is_pid(P) -> alive(P);
        _ -> throw({refused, {no_such_name, Name}})
    end.

alive(P) ->
    case is_process_alive(P) of
        true -> P;
        false -> throw({refused, {no_such_process, P}})
    end.

%% free | ours | {other, Tracer} | gone, in the legacy session
tracer_of(What) ->
    case erlang:trace_info(What, tracer) of
        {tracer, []} -> free;
        {tracer, {?TRACER, _}} -> ours;
        {tracer, ?TRACER, _} -> ours;
        {tracer, T} -> {other, T};
        {tracer, M, TS} -> {other, {M, TS}};
        undefined -> gone
    end.

%% The same in ours: a session's tracer is always ours, another tracer
%% is another session's business.
owner(P, #st{tr = {session, _}}) ->
    case is_process_alive(P) of
        true -> free;
        false -> gone
    end;
owner(P, _St) ->
    tracer_of(P).

commit(Plan, Notes, Mask, Flags, Payload, Ours, Ctx, St) ->
    Pids = [P || {_, P, _} <- St#st.workers],
    %% the memory is checked against the cap before it is taken
    case ?TRACER:session_new(list_to_tuple(Pids), Mask, Payload,
                             St#st.high_water, St#st.interval > 0) of
        {error, _} = E ->
            {E, St};
        S ->
            case open_session(maps:get(mode, Ctx), S) of
                {ok, Tr} ->
                    commit(S, Plan, Notes, Flags, Ours, Ctx,
                           St#st{session = S, tr = Tr});
                {error, _} = E ->
                    ?TRACER:session_stop(S),
                    {E, St}
            end
    end.

open_session(legacy, _S) ->
    {ok, legacy};
open_session(session, S) ->
    try trace:session_create(beamscope, {?TRACER, S}, []) of
        H -> {ok, {session, H}}
    catch
        Class:Reason -> {error, {session_create, Class, Reason}}
    end.

commit(S, Plan, Notes, Flags, Ours, Ctx, St) ->
    {LKinds, LMax, LMs, LRate, LShed} = St#st.limits,
    ok = ?TRACER:session_limits(S, LKinds, LMax, LMs, LRate, LShed),
    erlang:send_after(?LIMITS_MS, self(), '$beamscope_limits'),
    case St#st.interval > 0 of
        true ->
            erlang:send_after(St#st.interval, self(), '$beamscope_counts'),
            erlang:send_after(?INFO_MS, self(), '$beamscope_info');
        false ->
            ok
    end,
    %% workers hold the session before any event can reach them, and know
    %% each other, should one of them have to clean up for the agent
    Peers = [{W, P} || {W, P, _} <- St#st.workers],
    [P ! {'$beamscope_session', S, Peers} || {_, P} <- Peers],
    %% the patterns first: no message is traced before its pattern holds
    St1 = timeouts_begin(Plan, Flags, Ctx, St),
    put(?STATE, St1),
    try
        %% no flag before the receive pattern holds: set twice and still
        %% not read back, it is refused rather than shipping nothing
        _ = receive_holds(St1) orelse
            error({receive_pattern, catch t_info(St1, 'receive', match_spec)}),
        apply_plan(Plan, Flags, Ours, Ctx, St1)
    of
        {A, St2} ->
            put(?STATE, St2),
            erlang:send_after(?CHECK_MS, self(), '$beamscope_check'),
            {{ok, trace_info(A, Notes, Flags, St2)}, St2}
    catch
        Class:Reason ->
            untrace(St1),
            {{error, {trace_failed, Class, Reason}}, St1}
    end.

%% What the trace reply says besides the count (PROTOCOL.md).
trace_info(A, Notes, Flags, St) ->
    #{traced := Traced, skipped := Skipped, gc := Gc, gc_new := GcNew} = A,
    Info0 = #{traced => Traced,
              skipped => maps:get(skipped, Notes, []) ++ lists:reverse(Skipped),
              tracing => element(1, tr_name(St#st.tr)),
              taken => length([T || T <- St#st.taken, tuple_size(T) =:= 3])},
    Info1 = maps:merge(Info0, maps:with([new_skipped], Notes)),
    Info2 = case Gc > 0 orelse GcNew of
                true -> Info1#{gc_skipped => Gc, gc_new_skipped => GcNew};
                false -> Info1
            end,
    Info3 = case lists:member('receive', Flags) andalso
                St#st.timeouts =:= none of
                true -> Info2#{receive_pattern => msg_pattern_text('receive')};
                false -> Info2
            end,
    case lists:member(send, Flags) andalso St#st.tr =:= legacy andalso
        not msg_pattern_ours(send) of
        true -> Info3#{send_pattern => msg_pattern_text(send)};
        false -> Info3
    end.

tr_name(legacy) -> {legacy};
tr_name({session, _}) -> {session}.

%% Flags set on the plan's processes: {Acc, St}, Acc #{traced, skipped
%% (legacy: left to another tracer), gc (processes whose garbage
%% collections another session traces), gc_new, watch (a few of the
%% processes traced, for the check)}.
apply_plan(Plan, Flags, Ours, Ctx, St) ->
    A0 = #{traced => 0, skipped => [], gc => 0, gc_new => false, watch => []},
    {A, St1} = apply_plan(Plan, Flags, Ours, Ctx, St, A0),
    New = Plan =:= all orelse Plan =:= new,
    {A, St1#st{watch = {New, lists:reverse(maps:get(watch, A)),
                        [], watched_kinds(St1)}}}.

apply_plan({list, Pids}, Flags, _Ours, Ctx, St, A) ->
    lists:foldl(fun(P, {A1, St1}) -> trace_one(P, Flags, Ctx, St1, A1) end,
                {A, St}, Pids);
apply_plan(new, Flags, _Ours, Ctx, St, A) ->
    trace_new(Flags, Ctx, St, A);
apply_plan(all, Flags, Ours, Ctx, St, A) ->
    %% first, so that nothing spawned while we go through the list is missed
    {A1, St1} = trace_new(Flags, Ctx, St, A),
    apply_plan(existing, Flags, Ours, Ctx, St1, A1);
apply_plan(existing, Flags, Ours, Ctx, St, A) ->
    lists:foldl(fun(P, {A1, St1}) -> trace_one(P, Flags, Ctx, St1, A1) end,
                {A, St}, erlang:processes() -- Ours).

trace_new(Flags, Ctx, St, A) ->
    {Flags1, GcNew} = case gc_elsewhere(new_processes, Flags, St) of
                          true -> {Flags -- [garbage_collection], true};
                          false -> {Flags, false}
                      end,
    St1 = case {St#st.tr, new_other(Ctx)} of
              {legacy, {other, T}} -> take_over(new_processes, T, St);
              _ -> St
          end,
    _ = t_process(St1, new_processes, true, Flags1),
    {A#{gc_new := GcNew}, St1}.

%% A process may die (or be taken by another tracer) after we looked.
trace_one(P, Flags, Ctx, St, A) ->
    case owner(P, St) of
        gone ->
            {A, St};
        {other, _} when map_get(take, Ctx) =:= false ->
            {A#{skipped := [P | map_get(skipped, A)]}, St};
        Owner ->
            St1 = case Owner of
                      {other, T} -> take_over(P, T, St);
                      _ -> St
                  end,
            {Flags1, Gc} = case gc_elsewhere(P, Flags, St1) of
                               true -> {Flags -- [garbage_collection], 1};
                               false -> {Flags, 0}
                           end,
            try t_process(St1, P, true, Flags1) of
                N ->
                    W = map_get(watch, A),
                    {A#{traced := map_get(traced, A) + N,
                        gc := map_get(gc, A) + Gc,
                        watch := case length(W) < ?CHECK_MAX of
                                     true -> [P | W];
                                     false -> W
                                 end}, St1}
            catch
                error:badarg -> {A, St1}
            end
    end.

%% --take-over (legacy): another tracer's flags on What are remembered,
%% then cleared, so that ours can be set; give_back/1 sets them again.
take_over(What, Tracer, St) ->
    case erlang:trace_info(What, flags) of
        {flags, Flags} ->
            Opt = case Tracer of
                      {M, TS} when is_atom(M) -> {tracer, M, TS};
                      T -> {tracer, T}
                  end,
            _ = (catch erlang:trace(What, false, [all])),
            St#st{taken = [{What, Flags, Opt} | St#st.taken]};
        _ ->
            St
    end.

%% Another session traces What's garbage collections, and we would too
%% (OTP 27+; two sessions doing so are reported to crash the VM).
gc_elsewhere(What, Flags, St) ->
    lists:member(garbage_collection, Flags) andalso sessions() andalso
        lists:any(fun(W) -> gc_traced(W, What, St) end,
                  try trace:session_info(t_what(What)) of
                      L when is_list(L) -> L;
                      _ -> []
                  catch error:_ -> []
                  end).

%% The legacy session is asked the legacy way; in legacy mode it is ours
%% (or one --take-over replaces).
gc_traced({legacy, _}, _What, #st{tr = legacy}) ->
    false;
gc_traced({legacy, _}, What, _St) ->
    has_gc(erlang:trace_info(What, flags));
gc_traced(W, What, #st{session = S}) ->
    try trace:info(W, t_what(What), tracer) of
        {tracer, {?TRACER, S}} -> false;          % ours
        _ -> has_gc(trace:info(W, t_what(What), flags))
    catch error:_ -> false
    end.

has_gc({flags, Fs}) when is_list(Fs) -> lists:member(garbage_collection, Fs);
has_gc(_) -> false.

%%% Receive timeouts and --match ---------------------------------------------
%%
%% The send and receive trace patterns run before the tracer is asked:
%% what they reject is never traced, not even counted.  In a session of
%% our own they are ours alone.  In the legacy session they are
%% node-wide, and the agent is their one owner: it takes a pattern only
%% if it is the default (true) when tracing starts (or with --take-over,
%% remembering the other's), and sets it back at cleanup, whoever does
%% the cleanup.  Every pattern it sets starts with ?OURS, which is how
%% that cleanup knows it; another tool's is never touched (with --match,
%% the trace request is refused instead).
%%
%% A receive timeout reaches the tracer as a receive of the atom timeout,
%% from clock_service; a real message comes from a node and a process.
%% The receive pattern lets through only the timeouts of the processes
%% whose events are shipped, and only when the timeout kind is asked for,
%% marked, so that the tracer ships them as timeouts; every other timeout
%% is never traced, so the count tier counts messages only and a timeout
%% not asked for is no event.  The send pattern is set only with --match.
%%
%% The patterns are set before any flag (commit/7): a message traced
%% before its pattern held would be shipped or counted as the default
%% pattern says.
%%
%% --match: in the event tier, a message the pattern does not match is
%% rejected before the tracer; in the count tier every message still goes
%% to the tracer (enabled_* counts it for a process not in focus, at the
%% cost it always had), and the ones the pattern does not match are marked
%% ?OTHER_MARK, so that for a process in focus the tracer counts them
%% instead of shipping them: counts stay exact for every message.

timeouts_begin(Plan, Flags, Ctx, St0) ->
    Take = map_get(take, Ctx),
    St = case lists:member('receive', Flags) of
             true -> take_msg('receive', Take, St0);
             false -> St0
         end,
    St1 = case lists:member('receive', Flags) andalso may_set('receive', St) of
              true ->
                  Shipped = case {St#st.interval, Plan} of
                                {0, {list, Pids}} -> Pids;
                                {0, _} -> all;
                                _ -> St#st.focus
                            end,
                  St#st{timeouts = Shipped};
              false ->
                  St#st{timeouts = none}
          end,
    St2 = case lists:member(send, Flags) of
              true -> take_msg(send, Take, St1);
              false -> St1
          end,
    _ = case {St2#st.match, lists:member(send, Flags)} of
            {{SendMS, _}, true} -> t_message(St2, send, SendMS);
            _ -> ok
        end,
    timeouts_shipped(St2#st.timeouts,
                     St2#st{rflag = lists:member('receive', Flags)}).

%% Only when the pattern is ours; the count tier names the focus.  What
%% is set is read back, and set again once if it does not hold: a receive
%% pattern that is not ours would ship no message, or every timeout.
timeouts_shipped(_, #st{timeouts = none} = St) ->
    St;
timeouts_shipped(Shipped, St) ->
    MS = receive_ms(Shipped, St),
    _ = t_message(St, 'receive', MS),
    _ = receive_holds(St#st{rms = MS}) orelse t_message(St, 'receive', MS),
    St#st{rms = MS}.

receive_holds(#st{rms = none}) ->
    true;
receive_holds(#st{rms = MS} = St) ->
    (catch t_info(St, 'receive', match_spec)) =:= {match_spec, MS}.

%% Timeouts not asked for are all rejected, messages not asked for (the
%% receive flag is set for timeouts alone) too.
receive_ms(Shipped, #st{match = Match, recv = {Msgs, Tmos}}) ->
    Tail = case {Msgs, Match} of
               {false, _} -> [{'_', [], [{message, false}]}];
               {true, none} -> [{'_', [], []}];
               {true, {_, T}} -> T
           end,
    [?OURS | timeout_clauses(case Tmos of
                                 true -> Shipped;
                                 false -> []
                             end)] ++ Tail.

timeout_clauses(Shipped) ->
    Timeout = [clock_service, undefined, timeout],
    Mark = [{message, ?TIMEOUT_MARK}],
    case Shipped of
        all ->
            [{Timeout, [], Mark}];
        Pids ->
            %% past the cap, the others' timeouts are dropped like those
            %% of unshipped processes (the man page says so)
            Drop = {Timeout, [], [{message, false}]},
            case [{'==', {self}, P} || P <- lists:sublist(Pids, ?TIMEOUT_PIDS_MAX)] of
                [] -> [Drop];
                [G] -> [{Timeout, [G], Mark}, Drop];
                Gs -> [{Timeout, [list_to_tuple(['orelse' | Gs])], Mark}, Drop]
            end
    end.

%% Whether we may set Kind's pattern: always in our session; in the
%% legacy one, when it is the default, or ours left behind by a session
%% that could not clean up, or taken (take_msg/3).
may_set(_Kind, #st{tr = {session, _}}) ->
    true;
may_set(Kind, _St) ->
    msg_pattern_ours(Kind).

msg_pattern_ours(Kind) ->
    case erlang:trace_info(Kind, match_spec) of
        {match_spec, true} -> true;
        {match_spec, [?OURS | _]} -> true;
        _ -> false
    end.

%% --take-over (legacy): another's pattern is remembered and replaced by
%% the default, to be set again at cleanup.
take_msg(Kind, true, #st{tr = legacy} = St) ->
    case msg_pattern_ours(Kind) of
        true ->
            St;
        false ->
            {match_spec, MS} = erlang:trace_info(Kind, match_spec),
            _ = erlang:trace_pattern(Kind, true, []),
            St#st{taken = [{Kind, MS} | St#st.taken]}
    end;
take_msg(_Kind, _Take, St) ->
    St.

%% Ours start with ?OURS; nobody else's is spelt that way.
timeouts_end() ->
    [erlang:trace_pattern(K, true, []) || K <- [send, 'receive'], ours(K)],
    ok.

ours(Kind) ->
    case erlang:trace_info(Kind, match_spec) of
        {match_spec, [?OURS | _]} -> true;
        _ -> false
    end.

%% What another's legacy pattern is, in short: off (false) or other.
msg_pattern_text(Kind) ->
    case erlang:trace_info(Kind, match_spec) of
        {match_spec, false} -> off;
        _ -> other
    end.

%% --match Text: {ok, none | {SendMS, ReceiveTail}}, or the error the trace
%% request answers.  Checked before anything is traced.  In the legacy
%% session, another's pattern on a kind traced refuses it, unless it is
%% to be taken over.
match(none, _Mask, _Flags, _CountTier, _Ctx) ->
    {ok, none};
match(Text, Mask, Flags, CountTier, Ctx) ->
    case compile_match(Text) of
        {ok, Clauses} ->
            Kinds = [K || K <- [send, 'receive'], lists:member(K, Flags)],
            case [K || #{mode := legacy, take := false} <- [Ctx],
                       K <- Kinds, not msg_pattern_ours(K)] of
                [] ->
                    {ok, match_ms(Clauses, Mask band 1024 =/= 0, CountTier)};
                [K | _] ->
                    {match_spec, MS} = erlang:trace_info(K, match_spec),
                    {error, {match_busy, K, MS}}
            end;
        {error, {L, C, Msg}} ->
            {error, {bad_match, Text, L, C, Msg}}
    end.

%% A send pattern's head is [To, Msg], a receive pattern's [Node, From, Msg].
match_ms(Clauses, Gen, CountTier) ->
    Other = [{message, ?OTHER_MARK}],
    Send = [{['_', Head], Guards, []} || {Head, Guards} <- Clauses],
    Recv = [{['_', '_', Head], Guards, []} || {Head, Guards} <- Clauses],
    case CountTier of
        true ->
            {[?OURS | Send] ++ [{'_', [], Other}], Recv ++ [{'_', [], Other}]};
        false when Gen ->
            %% gen_call records come from every send: the shapes of calls
            %% and replies still reach the tracer, marked
            {[?OURS | Send] ++
                 [{['_', {'$gen_call', '_', '_'}], [], Other},
                  {['_', {'$1', '_'}], [{'orelse', {is_reference, '$1'},
                                         {is_list, '$1'}}], Other}],
             Recv};
        false ->
            {[?OURS | Send], Recv}
    end.

%% Pattern [when Guard], compiled as a call pattern's head is: as the one
%% argument of a fun, by ms_transform; guards only, no actions.
compile_match(Text) when is_list(Text) ->
    case scan(Text) of
        {ok, [], _, _} ->
            {error, {1, 1, "empty pattern; give one, like {get, _}"}};
        {ok, Tokens, End, Renamed} ->
            case match_clause(Tokens, End) of
                {ok, Clauses} = Ok ->
                    case no_atom(Clauses, Renamed, "message") of
                        ok -> Ok;
                        {error, _} = E -> E
                    end;
                {error, {L, C, Msg}} ->
                    {error, {L, C, typed_names(Msg, Renamed)}}
            end;
        {error, _} = E ->
            E
    end;
compile_match(_) ->
    {error, {1, 1, "a pattern is text, like {get, _}"}}.

match_clause([T0 | _] = Tokens, End) ->
    L = loc(T0),
    case lists:keyfind('->', 1, Tokens) of
        {'->', _} = Arrow ->
            {error, located(loc(Arrow), "a message pattern has no actions: "
                            "PATTERN or PATTERN when GUARD")};
        false ->
            {Pat, Guard} = lists:splitwith(fun(T) -> element(1, T) =/= 'when' end,
                                           Tokens),
            Close = case Guard of [W | _] -> element(2, W); [] -> End end,
            Fun = [{'fun', L}, {'(', L}] ++ Pat ++ [{')', Close} | Guard]
                ++ [{'->', End}, {atom, End, true}, {'end', End}, {dot, End}],
            case erl_parse:parse_exprs(Fun) of
                {ok, [{'fun', _, {clauses, [{clause, CL, [Arg], Guards, Body}]}}]} ->
                    C = {clause, CL, [{cons, CL, Arg, {nil, CL}}], Guards, Body},
                    match_checked(clause_ms(C), L);
                {ok, _} ->
                    {error, located(L, "expected one pattern, like {get, _} "
                                    "when is_atom(Key)")};
                {error, {Loc, Mod, Desc}} ->
                    parse_error(Loc, Mod, Desc, End)
            end
    end.

%% A guard sequence (G1; G2) is one clause per guard.
match_checked({ok, [_ | _] = MS0}, L) ->
    Clauses = [{Head, Guards} || {[Head], Guards, _} <- MS0],
    MS = [{['_', Head], Guards, []} || {Head, Guards} <- Clauses],
    case length(Clauses) =:= length(MS0) andalso ms_check(['_', '_'], MS) of
        ok ->
            {ok, Clauses};
        {refused, Action} ->
            {error, located(L, refusal(Action))};
        {error, Errors} ->
            {error, located(L, ms_errors(Errors))};
        false ->
            {error, located(L, "expected one pattern, like {get, _}")}
    end;
match_checked({ok, _}, L) ->
    {error, located(L, "expected one pattern, like {get, _}")};
match_checked({error, _} = E, _) ->
    E.

%%% Cleanup -------------------------------------------------------------------

cleanup(Why, StopRef, St) ->
    %% leaving unasked, the Owner may not be reading: what is left to say
    %% must not keep us here on a busy link
    _ = StopRef =:= none andalso put(?LEAVING, true),
    untrace(St),
    swt_lower(),
    Dead = case Why of
               {worker_down, W, _} -> [stand_in(W, St)];
               _ -> []
           end,
    Results = lists:keysort(1, Dead ++ stop_workers(St)),
    final_counts(St),
    _ = tell_limits(St#st{told = {none, -1}}, true),
    case StopRef of
        none -> tell_exit(Why, St);
        Ref -> reply_owner(St, Ref, {ok, #{workers => Results}})
    end,
    _ = (catch unload_tracer()),
    unload_self(undefined).

%% Leaving unasked: the Owner, if it is still there, learns why after the
%% workers' last batches (PROTOCOL.md, beamscope_exit).
tell_exit(Why, St) when Why =:= nodedown; Why =:= owner_down ->
    _ = St,
    ok;
tell_exit(Why, #st{dest = Owner, dep_ms = DepMs}) ->
    Tag = case Why of
              owner_silent -> owner_silent;
              aborted -> aborted;
              {worker_down, _, _} -> worker_down;
              {crash, _, _, _} -> crash;
              _ -> unknown
          end,
    send(Owner, {beamscope_exit, Tag, DepMs}).

%% Tracing is off and the workers have drained: no tracee is counting any
%% more, so all three tables can be read; three takes visit each once.
final_counts(#st{interval = 0}) ->
    ok;
final_counts(#st{session = none}) ->
    ok;
final_counts(#st{session = S, dest = Owner, cseq = Seq0}) ->
    lists:foldl(fun(_, Seq) ->
                        case catch ?TRACER:counts_take(S) of
                            {Overflow, [_ | _] = Counts} ->
                                send(Owner, {beamscope_counts, Seq, Overflow, Counts}),
                                Seq + 1;
                            _ ->
                                Seq
                        end
                end, Seq0, [1, 2, 3]),
    ok.

%% Protocol cleanup steps 1 to 3: in a session of our own, destroying it
%% removes everything; in the legacy session, only what is ours is
%% cleared, and what --take-over took is given back.
untrace(#st{session = S, tr = Tr, patterns = MFAs, taken = Taken}) ->
    _ = S =:= none orelse (catch ?TRACER:session_stop(S)),
    case Tr of
        {session, H} -> _ = (catch trace:session_destroy(H)), ok;
        legacy -> untrace_legacy(MFAs, Taken)
    end.

untrace_legacy(MFAs, Taken) ->
    _ = (catch timeouts_end()),
    _ = case (catch tracer_of(new_processes)) of
            ours -> catch erlang:trace(new_processes, false, [all]);
            _ -> ok
        end,
    _ = [catch erlang:trace(P, false, [all])
         || P <- erlang:processes(), (catch tracer_of(P)) =:= ours],
    clear_patterns(MFAs),
    give_back(Taken).

%% What was taken goes back where nobody took it since.
give_back(Taken) ->
    lists:foreach(
      fun({Kind, MS}) ->
              case erlang:trace_info(Kind, match_spec) of
                  {match_spec, true} -> catch erlang:trace_pattern(Kind, MS, []);
                  _ -> ok
              end;
         ({What, Flags, Opt}) ->
              case (catch tracer_of(What)) of
                  free -> catch erlang:trace(What, true, [Opt | Flags]);
                  _ -> ok
              end
      end, Taken).

%%% Cleared by someone else -------------------------------------------------
%%
%% In the legacy session anyone may clear our flags and patterns
%% (erlang:trace(all, false, [all]), recon_trace:clear()), and the
%% tracer is then simply no longer called: silence.  So every ?CHECK_MS
%% the agent looks at a few of the things it set: the new-process flags,
%% up to ?CHECK_MAX of the processes it traced that are still alive, up
%% to ?CHECK_MAX of its call patterns, its send and receive patterns; in
%% a session of our own, whether the session is still there.  What it
%% finds gone it tells the Owner once, {beamscope_cleared, [What]}; it
%% sets nothing again.  Our own session ending tracing (a limit, unfollow)
%% is no clearing: a check that finds the session deactivated stops.

watch_functions(#st{watch = {New, Pids, _, Kinds}, patterns = MFAs} = St) ->
    St#st{watch = {New, Pids, lists:sublist(MFAs, ?CHECK_MAX), Kinds}};
watch_functions(St) ->
    St.

watched_kinds(#st{tr = {session, _}}) ->
    [];
watched_kinds(_St) ->
    [send || ours(send)].

check(#st{watch = none} = St) ->
    St;
check(#st{watch = {New, Pids, MFAs, Kinds}, session = S} = St) ->
    Lost = [session || session_gone(St)] ++
        [new_processes || New, not new_ours(St)] ++
        [flags || lists:any(fun(P) -> flags_lost(P, St) end, Pids)] ++
        [call_patterns || lists:any(fun(M) -> not function_ours(M, St) end,
                                    MFAs)] ++
        [K || K <- Kinds, not ours(K)] ++
        ['receive' || not receive_holds(St)],
    %% looked at after the flags: a limit that tripped meanwhile took them
    case catch ?TRACER:limits(S) of
        {none, _} ->
            erlang:send_after(?CHECK_MS, self(), '$beamscope_check'),
            case Lost -- St#st.cleared of
                [] ->
                    St;
                New1 ->
                    send(St#st.dest, {beamscope_cleared, New1}),
                    St#st{cleared = St#st.cleared ++ New1}
            end;
        _ ->
            St#st{watch = none}
    end.

session_gone(#st{tr = {session, H}}) ->
    try trace:info(H, new, flags) of
        _ -> false
    catch
        error:badarg -> true
    end;
session_gone(_) ->
    false.

new_ours(#st{tr = {session, _}} = St) ->
    case catch t_info(St, new_processes, flags) of
        {flags, [_ | _]} -> true;
        _ -> false
    end;
new_ours(_) ->
    tracer_of(new_processes) =:= ours.

%% Flags gone from a process that is still alive; in the legacy session,
%% another tracer there is the same loss.
flags_lost(P, St) ->
    Lost = case catch t_info(St, P, flags) of
               {flags, [_ | _] = F} ->
                   (St#st.rflag andalso not lists:member('receive', F)) orelse
                       (St#st.tr =:= legacy andalso tracer_of(P) =/= ours);
               _ ->
                   true
           end,
    Lost andalso is_process_alive(P).

function_ours(MFA, St) ->
    case catch t_info(St, MFA, match_spec) of
        {match_spec, MS} when is_list(MS) -> true;
        _ -> false
    end.

stop_workers(#st{workers = Workers} = St) ->
    [P ! {'$beamscope_stop', self()} || {_, P, _} <- Workers],
    collect(Workers, St, now_ms() + ?WORKERS_MS, []).

%% Every worker's last word reaches the Owner: its own, or, for one that
%% died or did not finish in time, ours (stand_in/2).
collect([], _St, _Deadline, Acc) ->
    lists:keysort(1, Acc);
collect(Workers, St, Deadline, Acc) ->
    receive
        {'$beamscope_done', Pid, W, Batches, Dropped} ->
            case lists:keytake(Pid, 2, Workers) of
                {value, {_, _, Mon}, Rest} ->
                    erlang:demonitor(Mon, [flush]),
                    collect(Rest, St, Deadline, [{W, Batches, Dropped} | Acc]);
                false ->
                    collect(Workers, St, Deadline, Acc)
            end;
        {'DOWN', Mon, process, _, _} ->
            case lists:keytake(Mon, 3, Workers) of
                {value, {W, _, _}, Rest} ->
                    collect(Rest, St, Deadline, [stand_in(W, St) | Acc]);
                false ->
                    collect(Workers, St, Deadline, Acc)
            end
    after max(0, Deadline - now_ms()) ->
            [exit(P, kill) || {_, P, _} <- Workers],
            Late = [begin
                        receive {'DOWN', Mon, process, _, _} -> ok
                        after ?DRAIN_MS -> ok
                        end,
                        stand_in(W, St)
                    end || {W, _, Mon} <- Workers],
            lists:keysort(1, Late ++ Acc)
    end.

%% A worker that is gone without its last word: what its ring still holds
%% is dropped, and the counts are said for it, so that delivered + dropped
%% stays what was traced.  Only once it is dead: its ring has one reader.
stand_in(W, #st{session = none, dest = Owner}) ->
    send(Owner, {beamscope_eos, W, 0, 0, 0}),
    {W, 0, 0};
stand_in(W, #st{session = S, dest = Owner}) ->
    _ = (catch ?TRACER:discard(S, W)),
    case catch ?TRACER:worker_stats(S, W) of
        {Batches, Dropped, Taken} ->
            send(Owner, {beamscope_eos, W, Batches, Dropped, Taken}),
            {W, Batches, Dropped};
        _ ->
            {W, 0, 0}
    end.

unload_tracer() ->
    _ = code:purge(?TRACER),
    _ = code:delete(?TRACER),
    _ = code:purge(?TRACER),
    %% the Elixir reader goes with it (nothing but the agent ran it)
    _ = code:purge(?ELIXIR),
    _ = code:delete(?ELIXIR),
    _ = code:purge(?ELIXIR),
    ok.

%% The final purge kills whatever still runs our code, so it must come last
%% and from a process that does not: code:purge/1 itself.  A caller still
%% inside start/4 would be killed too, so wait for it to leave.  The name
%% stays ours until then: a new session waits for our code to be gone
%% before it loads its own (nothing is ever loaded over code that runs).
unload_self(Caller) ->
    %% old code here is a session's that died with all its processes (our
    %% load made it old): nothing of ours runs it, and it would keep the
    %% delete from happening
    _ = code:purge(?MODULE),
    _ = code:delete(?MODULE),
    wait_gone(Caller, now_ms() + ?CALLER_MS),
    _ = spawn(code, purge, [?MODULE]),
    ok.

wait_gone(undefined, _Deadline) ->
    ok;
wait_gone(Caller, Deadline) ->
    case (catch erlang:check_process_code(Caller, ?MODULE)) of
        true ->
            case now_ms() < Deadline of
                true ->
                    receive after 10 -> ok end,
                    wait_gone(Caller, Deadline);
                false ->
                    ok
            end;
        _ ->
            ok
    end.

now_ms() ->
    erlang:monotonic_time(millisecond).

%%% Workers -------------------------------------------------------------------

worker(Agent, W, Owner, {BatchMax, BatchMs}, DepMs) ->
    Mon = monitor(process, Agent),
    Ws = #w{agent = Agent, agent_mon = Mon, index = W, owner = Owner,
            dep_ms = DepMs, max = BatchMax, ms = BatchMs},
    receive
        {'$beamscope_session', S, Peers} ->
            pump(Ws#w{session = S, peers = Peers});
        {'$beamscope_stop', Agent} ->
            %% never got a session: nothing was traced for us
            send(Owner, {beamscope_eos, W, 0, 0, 0}),
            Agent ! {'$beamscope_done', self(), W, 0, 0};
        {'DOWN', Mon, process, _, Why} ->
            orphan(Ws, Why)
    end.

%% The tracees put events in the worker's ring in the NIF; the worker takes
%% them out, a batch at a time (take/3).  With the ring empty it waits with
%% no timeout, and the next event wakes it; it then lets a batch gather for
%% batch_ms, and takes again at once while whole batches are waiting.
wloop(#w{agent = Agent, agent_mon = Mon} = Ws, Wait) ->
    receive
        '$beamscope_wake' ->
            wloop(Ws, Ws#w.ms);
        {'$beamscope_stop', Agent} ->
            finish(drain(Ws, now_ms() + ?DRAIN_MS));
        {'$beamscope_patterns', MFAs, Taken} ->
            wloop(Ws#w{patterns = MFAs, taken = Taken}, Wait);
        {'DOWN', Mon, process, _, Why} ->
            orphan(Ws, Why);
        _ ->
            wloop(Ws, Wait)
    after Wait ->
            pump(Ws)
    end.

pump(#w{max = Max, session = S, index = W} = Ws) ->
    case ship(Ws) of
        {Max, Ws1} ->
            wloop(Ws1, 0);
        {0, Ws1} ->
            case ?TRACER:idle(S, W) of
                true -> wloop(Ws1, infinity);
                %% claimed, not yet written: look again very soon
                false -> wloop(Ws1, 1)
            end;
        {_, Ws1} ->
            wloop(Ws1, Ws1#w.ms)
    end.

ship(#w{index = W, session = S, seq = Seq, max = Max} = Ws) ->
    case ?TRACER:take(S, W, Max) of
        {0, _} ->
            {0, Ws};
        {N, Events} ->
            Dropped = ?TRACER:dropped(S, W),
            send(Ws#w.owner, {beamscope_batch, W, Seq, Dropped, Events}),
            {N, Ws#w{seq = Seq + 1}}
    end.

%% Take what has arrived and ship it until nothing is pending; what is
%% still there at the deadline is discarded and counted as dropped.  Then
%% the worker's last word: batches shipped, dropped, and events taken.
drain(#w{session = S, index = W} = Ws, Deadline) ->
    {N, Ws1} = ship(Ws),
    case N =:= 0 andalso not ?TRACER:pending(S, W) of
        true ->
            eos(Ws1);
        false ->
            case now_ms() >= Deadline of
                true -> _ = ?TRACER:discard(S, W), eos(Ws1);
                false when N > 0 -> drain(Ws1, Deadline);
                false -> receive after 1 -> drain(Ws1, Deadline) end
            end
    end.

eos(#w{index = W, session = S, seq = Seq} = Ws) ->
    {_, Dropped, Taken} = ?TRACER:worker_stats(S, W),
    send(Ws#w.owner, {beamscope_eos, W, Seq, Dropped, Taken}),
    Ws#w{dropped = Dropped}.

finish(#w{index = W, seq = Seq, dropped = Dropped, agent = Agent}) ->
    Agent ! {'$beamscope_done', self(), W, Seq, Dropped},
    ok.

%% The agent died without cleaning up (killed): its workers stop the
%% session, ship what their rings hold, and the first of them to take the
%% agent's name does the cleanup the agent would have done and tells the
%% Owner (PROTOCOL.md, agent_lost).  The others just end.
orphan(#w{session = S} = Ws, Why) ->
    put(?LEAVING, true),
    _ = S =:= none orelse (catch ?TRACER:session_stop(S)),
    _ = S =:= none orelse drain(Ws, now_ms() + ?DRAIN_MS),
    case catch register(?NAME, self()) of
        true -> orphan_cleanup(Ws, Why);
        _ -> ok
    end.

orphan_cleanup(#w{session = S, owner = Owner, peers = Peers} = Ws, Why) ->
    Others = [{W, P, monitor(process, P)} || {W, P} <- Peers, P =/= self()],
    wait_peers(Others, S, Owner, now_ms() + ?WORKERS_MS),
    %% a session of the agent's own went with it; the legacy one is
    %% cleared of what is ours
    untrace_legacy(Ws#w.patterns, Ws#w.taken),
    send(Owner, {beamscope_exit, agent_lost, Ws#w.dep_ms, reason_text(Why)}),
    _ = (catch unload_tracer()),
    unload_self(undefined).

%% The other workers end once they have said their last word; one that
%% does not in time is stopped, and its word is said for it.
wait_peers([], _S, _Owner, _Deadline) ->
    ok;
wait_peers(Peers, S, Owner, Deadline) ->
    receive
        {'DOWN', Mon, process, _, Why} ->
            case lists:keytake(Mon, 3, Peers) of
                {value, {W, _, _}, Rest} ->
                    _ = Why =:= normal orelse Why =:= noproc orelse
                        stand_in(W, #st{session = S, dest = Owner}),
                    wait_peers(Rest, S, Owner, Deadline);
                false ->
                    wait_peers(Peers, S, Owner, Deadline)
            end
    after max(0, Deadline - now_ms()) ->
            [exit(P, kill) || {_, P, _} <- Peers],
            [begin
                 receive {'DOWN', Mon, process, _, _} -> ok after ?DRAIN_MS -> ok end,
                 stand_in(W, #st{session = S, dest = Owner})
             end || {W, _, Mon} <- Peers],
            ok
    end.

%% Why the agent died, as bounded text (a reason can be any term).
reason_text(Why) ->
    Text = lists:flatten(io_lib:format("~0tP", [Why, 6])),
    unicode:characters_to_binary(string:slice(Text, 0, 120)).

send(Owner, Msg) ->
    Opts = case get(?LEAVING) of
               true -> [noconnect, nosuspend];
               _ -> [noconnect]
           end,
    _ = erlang:send(Owner, Msg, Opts),
    ok.
