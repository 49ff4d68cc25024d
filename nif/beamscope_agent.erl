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
%%  * the agent and its workers are never traced, and the agent spawns no
%%    process while new_processes may be traced (it would be traced);
%%  * only flags whose tracer is beamscope_tracer are ever cleared: another
%%    tracer's processes are left exactly as they were;
%%  * the one node-wide setting changed beyond tracing is scheduler_wall_time,
%%    and only through the agent's own count (node samples): lowered at
%%    cleanup, dropped by the VM if the agent dies;
%%  * every way out (stop, nodedown, owner silence, a worker's death, a crash
%%    of the agent itself) goes through the same cleanup, which ends with
%%    both modules unloaded; if the agent is killed, its workers clean up
%%    instead (one of them, the one that takes the name);
%%  * no fun of this module is ever handed to another process, so the final
%%    purge can only kill our own processes.
-module(beamscope_agent).

-export([start/4]).
%% entry points of the processes we spawn
-export([agent/5, worker/5]).

-define(NAME, beamscope_agent).
%% the bootstrap lock's name (PROTOCOL.md)
-define(LOCK, beamscope_bootstrap).
-define(TRACER, beamscope_tracer).
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
                {gen_call, 1024}]).
-define(K_REGISTER, 32).
-define(K_CALL, 64).
%% the receive pattern marks the receive timeouts of shipped processes with
%% this (PROTOCOL.md, receive timeouts), and names at most this many
-define(TIMEOUT_MARK, '$beamscope_timeout').
-define(TIMEOUT_PIDS_MAX, 64).

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
             %% call patterns we set, to remove them at cleanup
             patterns = [] :: [mfa()],
             %% {UserKinds, MaxEvents, DurationMs, Rate, Shed}, and the last
             %% {Tripped, Shed} told to Owner
             limits = {0, 0, 0, 0, false},
             told = {none, 0},
             %% node samples (the view's header): the timer while they
             %% are on, and the last scheduler_wall_time, for deltas
             node = none :: none | reference(),
             swt = [] :: [{pos_integer(), integer(), integer()}]}).

-define(LIMITS_MS, 100).

-define(INFO_MS, 1000).
-define(INFO_MAX, 2000).
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

-record(w, {agent :: pid(),
            agent_mon :: reference(),
            index :: non_neg_integer(),
            owner :: pid() | {atom(), node()},    % where the Owner receives
            dep_ms :: pos_integer(),
            session = none :: none | reference(),
            peers = [] :: [{non_neg_integer(), pid()}], % all the workers
            patterns = [] :: [mfa()],             % the agent's call patterns
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
             secret => Secret},
    {ok, St, Info}.

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
        {timeout, TRef, '$beamscope_node'} when TRef =:= St#st.node ->
            loop(node_sample(St));
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
    _ = On orelse timeouts_shipped(Focus, St),
    Reply = ?TRACER:focus(S, Pid, On),
    _ = On andalso timeouts_shipped(Focus, St),
    reply_owner(St, Ref, Reply),
    loop(St#st{focus = Focus});
handle({node_stats, On}, Ref, St0) when is_boolean(On) ->
    St = node_stats(On, St0),
    put(?STATE, St),
    reply_owner(St, Ref, ok),
    loop(St);
handle(unfollow, Ref, #st{session = S} = St) when S =/= none ->
    %% only deactivate: every follower drops its flags at its next event
    ?TRACER:session_stop(S),
    reply_owner(St, Ref, ok),
    loop(St);
handle({sample, Pids}, _Ref, St) when is_list(Pids) ->
    %% the rows on the Owner's screen: no reply, the next samples say it
    Shown = [P || P <- lists:sublist(Pids, ?INFO_MAX),
                  is_pid(P), node(P) =:= node()],
    loop(St#st{shown = Shown});
handle({describe, Pids}, _Ref, St) when is_list(Pids) ->
    %% answered on the stream: the Owner asks as it meets processes and
    %% waits for nothing
    send(St#st.dest, {beamscope_labels, describe(Pids)}),
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
%% How many were asked is kept in the dictionary, for tests to read.
sample(#st{dest = Owner, active = Active, focus = Focus,
           shown = Shown} = St) ->
    erlang:send_after(?INFO_MS, self(), '$beamscope_info'),
    Pids = lists:sublist(lists:usort(Focus ++ Shown ++ maps:keys(Active)),
                         ?INFO_MAX),
    put('$beamscope_sampled', length(Pids)),
    Items = [registered_name, current_function, message_queue_len,
             memory, reductions, total_heap_size],
    W = erlang:system_info(wordsize),
    Info = lists:foldl(
             fun(P, Acc) ->
                     case erlang:process_info(P, Items) of
                         [{registered_name, N}, {current_function, F},
                          {message_queue_len, Q}, {memory, M},
                          {reductions, R}, {total_heap_size, H}] ->
                             Fn = case F of {_, _, _} -> F; _ -> [] end,
                             [{P, N, Fn, Q, M, R, H * W} | Acc];
                         _ ->
                             Acc
                     end
             end, [], Pids),
    case Info of
        [] -> ok;
        _ -> send(Owner, {beamscope_info, Info})
    end,
    St#st{active = #{}}.

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
%% those).  The '$initial_call' a proc_lib process keeps in its dictionary
%% (a gen_server's is {Mod, init, 1}, a supervisor's {supervisor, Mod, 1}),
%% else the label of proc_lib:set_label/1 where the VM has it (OTP 27),
%% else [] and the Owner keeps the initial call it knows.  One look per
%% process, and never a copy of a big dictionary.
describe(Pids) ->
    Ctx = {one_key_dictionary(),
           erlang:function_exported(proc_lib, get_label, 1)},
    [{P, label(P, Ctx)} || P <- lists:sublist(Pids, ?DESCRIBE_MAX),
                           is_pid(P), node(P) =:= node()].

%% process_info(P, {dictionary, Key}) exists since OTP 26
one_key_dictionary() ->
    try erlang:process_info(self(), {dictionary, '$beamscope'}) of
        _ -> true
    catch
        error:badarg -> false
    end.

label(P, {OneKey, HasLabel}) ->
    case initial_call(P, OneKey) of
        {M, F, A} when is_atom(M), is_atom(F), is_integer(A) ->
            text(io_lib:format("~ts:~ts/~b", [M, F, A]));
        _ when HasLabel ->
            case catch proc_lib:get_label(P) of
                undefined -> [];
                {'EXIT', _} -> [];
                L when is_binary(L) -> text(L);
                L -> text(io_lib:format("~0tP", [L, 8]))
            end;
        _ ->
            []
    end.

initial_call(P, true) ->
    case erlang:process_info(P, {dictionary, '$initial_call'}) of
        {{dictionary, '$initial_call'}, MFA} -> MFA;
        _ -> undefined
    end;
initial_call(P, false) ->
    %% only proc_lib keeps one: the others are not worth a copy
    case erlang:process_info(P, [initial_call, total_heap_size]) of
        [{initial_call, {proc_lib, init_p, _}}, {total_heap_size, W}]
          when W =< ?DICT_WORDS ->
            case erlang:process_info(P, dictionary) of
                {dictionary, D} ->
                    case lists:keyfind('$initial_call', 1, D) of
                        {_, MFA} -> MFA;
                        false -> undefined
                    end;
                _ ->
                    undefined
            end;
        _ ->
            undefined
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
    case {parse_spec(Spec), calls(maps:get(calls, Spec, []))} of
        {_, {error, _} = E} ->
            {E, St};
        {{ok, Mask0, Flags0, Pids, Payload}, {ok, Calls}} ->
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
            case plan(Pids, Ours) of
                {ok, Plan} ->
                    {Reply, St1} = commit(Plan, Mask, Flags1, Payload, Ours,
                                          St#st{interval = Interval,
                                                limits = Limits}),
                    set_patterns(Calls, Reply, St1);
                {error, _} = E ->
                    {E, St}
            end;
        {{error, _} = E, _} ->
            {E, St}
    end;
trace(Spec, St) ->
    {{error, {bad_spec, Spec}}, St}.

%%% Call patterns --------------------------------------------------------------
%%
%% A pattern is text, compiled here on the target so that what is accepted is
%% exactly Erlang:
%%   mod:fun  mod:fun/2  mod:_  mod:fun/_         every call
%%   mod:fun(A, _) when A > 3 -> return           a head with guard and actions
%%   mod:fun/2 [{['$1', '_'], [], [{return_trace}]}]   a raw match spec
%% Actions: return (return values and exceptions), stack (the caller).
%% All patterns are checked before anything is set; functions that already
%% have a pattern (someone else's) are left alone and reported.

calls(Texts) when is_list(Texts) ->
    calls(Texts, []);
calls(Other) ->
    {error, {bad_calls, Other}}.

calls([], Acc) ->
    {ok, lists:reverse(Acc)};
calls([Text | Rest], Acc) ->
    case compile_call(Text) of
        {ok, M, F, A, MS} ->
            case functions(M, F, A) of
                {ok, MFAs} -> calls(Rest, [{Text, MFAs, MS} | Acc]);
                {error, Why} -> {error, {bad_call, Text, Why}}
            end;
        {error, {Line, Col, Msg}} ->
            {error, {bad_pattern, Text, Line, Col, Msg}}
    end.

compile_call(Text) when is_list(Text) ->
    case erl_scan:string(Text, {1, 1}) of
        {ok, Tokens, End} ->
            head(Tokens, End);
        {error, {Loc, Mod, Desc}, _} ->
            {error, located(Loc, Mod:format_error(Desc))}
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
%% was typed sit there, so that an error there reads as an early end)
head([{atom, _, M}, {':', _}, {Kind, _, F} | Rest], End)
  when Kind =:= atom; Kind =:= var, F =:= '_' ->
    arity(M, F, Rest, End);
head([{var, L, '_'} | _], _) ->
    {error, located(L, "the module cannot be a wildcard; name it")};
head([T | _], _) ->
    {error, located(loc(T), "expected mod:fun, mod:fun/arity or mod:fun(Args)")};
head([], _) ->
    {error, {1, 1, "empty pattern"}}.

arity(M, F, [], _) ->
    {ok, M, F, '_', [{'_', [], []}]};
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

%% mod:fun/arity followed by a match spec written out
raw(M, F, A, [], _) ->
    {ok, M, F, A, [{'_', [], []}]};
raw(M, F, A, [T | _] = Tokens, End) ->
    case erl_parse:parse_term(Tokens ++ [{dot, End}]) of
        {ok, MS} when is_list(MS) ->
            case erlang:match_spec_test([], MS, trace) of
                {ok, _, _, _} ->
                    case refused_action(MS) of
                        none -> {ok, M, F, A, MS};
                        Action -> {error, located(loc(T), refusal(Action))}
                    end;
                {error, Errors} ->
                    {error, located(loc(T), ms_errors(Errors))}
            end;
        {ok, _} ->
            {error, located(loc(T), "a match spec is a list of {Head, Guards, Body}")};
        {error, {Loc, Mod, Desc}} ->
            parse_error(Loc, Mod, Desc, End)
    end.

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
-define(MS_GUARDS, [is_atom, is_float, is_integer, is_list, is_number, is_pid,
                    is_port, is_reference, is_tuple, is_map, is_map_key,
                    is_binary, is_bitstring, is_boolean, is_function,
                    is_record, 'and', 'or', 'not', 'xor', 'andalso', 'orelse',
                    abs, element, hd, tl, length, map_get, map_size, max, min,
                    node, float, round, floor, ceil, trunc, size, bit_size,
                    byte_size, tuple_size, binary_part, '+', '-', '*', '/',
                    'div', 'rem', 'band', 'bor', 'bxor', 'bnot', 'bsl', 'bsr',
                    '>', '>=', '<', '=<', '=:=', '==', '=/=', '/=']).

%% The first function a match spec calls that is not allowed, or none.
%% Guards and bodies are expressions: {F, Args...} calls F, {{...}} builds
%% a tuple, {const, T} is T itself; lists and maps hold expressions.
refused_action(MS) ->
    first_refused([E || {_Head, Guards, Body} <- MS, E <- Guards ++ Body]).

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
                    case ms_transform:transform_from_shell(dbg, [C], []) of
                        {error, [{_, [{Loc, Mod, Desc} | _]} | _], _} ->
                            {error, located(Loc, Mod:format_error(Desc))};
                        MS when is_list(MS) ->
                            {ok, M, F, length(Args), MS}
                    end;
                {error, Loc, Msg} ->
                    {error, located(Loc, Msg)}
            end;
        {ok, _} ->
            {error, located(L, "expected one head: mod:fun(Args) when Guard -> Actions")};
        {error, {Loc, Mod, Desc}} ->
            parse_error(Loc, Mod, Desc, End)
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
set_patterns([], Reply, St) ->
    {Reply, St};
set_patterns(Calls, {ok, Info}, St) ->
    {Set, Skipped, Counts} =
        lists:foldl(
          fun({Text, MFAs, MS}, {SetAcc, SkAcc, CAcc}) ->
                  {Mine, Theirs} = lists:partition(fun pattern_free/1, MFAs),
                  Mine1 = [MFA || MFA <- Mine, not lists:member(MFA, SetAcc)],
                  [erlang:trace_pattern(MFA, MS, [local]) || MFA <- Mine1],
                  {Mine1 ++ SetAcc, Theirs ++ SkAcc, [{Text, length(Mine1)} | CAcc]}
          end, {[], [], []}, Calls),
    St1 = St#st{patterns = Set},
    put(?STATE, St1),
    [P ! {'$beamscope_patterns', Set} || {_, P, _} <- St#st.workers],
    {{ok, Info#{patterns => lists:reverse(Counts),
                skipped_functions => lists:usort(Skipped)}}, St1};
set_patterns(_, Reply, St) ->
    {Reply, St}.

pattern_free(MFA) ->
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
                ++ ['receive' || Mask band 2 =/= 0]
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

%% Everything is checked before anything is traced.
plan(all, _Ours) ->
    new_free(all);
plan(new, _Ours) ->
    new_free(new);
plan(existing, _Ours) ->
    {ok, existing};
plan(List, Ours) when is_list(List) ->
    try
        Pids = lists:usort([resolve(X) || X <- List]) -- Ours,
        {ok, {list, Pids}}
    catch
        throw:{refused, Why} -> {error, Why};
        error:_ -> {error, {bad_pids, List}}
    end;
plan(Other, _Ours) ->
    {error, {bad_pids, Other}}.

new_free(Plan) ->
    case tracer_of(new_processes) of
        {other, T} -> {error, {new_traced_by_other, T}};
        _ -> {ok, Plan}
    end.

resolve(Name) when is_atom(Name) ->
    case whereis(Name) of
        P when is_pid(P) -> check_free(P);
        _ ->
            case elixir_alias(Name) of
                {ok, Alias} when Alias =/= Name -> resolve_alias(Name, Alias);
                _ -> throw({refused, {no_such_name, Name}})
            end
    end;
resolve(P) when is_pid(P), node(P) =:= node() ->
    check_free(P);
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
        P when is_pid(P) -> check_free(P);
        _ -> throw({refused, {no_such_name, Name}})
    end.


check_free(P) ->
    case tracer_of(P) of
        gone -> throw({refused, {no_such_process, P}});
        {other, T} -> throw({refused, {traced_by_other, P, T}});
        _ -> P
    end.

%% free | ours | {other, Tracer} | gone
tracer_of(What) ->
    case erlang:trace_info(What, tracer) of
        {tracer, []} -> free;
        {tracer, {?TRACER, _}} -> ours;
        {tracer, T} -> {other, T};
        undefined -> gone
    end.

commit(Plan, Mask, Flags, Payload, Ours, St) ->
    Pids = [P || {_, P, _} <- St#st.workers],
    %% the memory is checked against the cap before it is taken
    case ?TRACER:session_new(list_to_tuple(Pids), Mask, Payload,
                             St#st.high_water, St#st.interval > 0) of
        {error, _} = E -> {E, St};
        S -> commit(S, Plan, Flags, Ours, St)
    end.

commit(S, Plan, Flags, Ours, St) ->
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
    St1 = timeouts_begin(Plan, Flags, St#st{session = S}),
    put(?STATE, St1),
    TFlags = [{tracer, ?TRACER, S} | Flags],
    try apply_plan(Plan, TFlags, Ours) of
        {Traced, Skipped} ->
            Info = #{traced => Traced, skipped => Skipped},
            {{ok, case lists:member('receive', Flags) andalso
                      St1#st.timeouts =:= none of
                      true -> Info#{receive_pattern => receive_pattern()};
                      false -> Info
                  end}, St1}
    catch
        Class:Reason ->
            untrace(S),
            {{error, {trace_failed, Class, Reason}}, St1}
    end.

apply_plan({list, Pids}, TFlags, _Ours) ->
    {lists:sum([trace_one(P, TFlags) || P <- Pids]), []};
apply_plan(new, TFlags, _Ours) ->
    _ = erlang:trace(new_processes, true, TFlags),
    {0, []};
apply_plan(all, TFlags, Ours) ->
    %% first, so that nothing spawned while we go through the list is missed
    _ = erlang:trace(new_processes, true, TFlags),
    apply_plan(existing, TFlags, Ours);
apply_plan(existing, TFlags, Ours) ->
    lists:foldl(fun(P, {N, Skipped}) ->
                        case tracer_of(P) of
                            {other, _} -> {N, [P | Skipped]};
                            gone -> {N, Skipped};
                            _ -> {N + trace_one(P, TFlags), Skipped}
                        end
                end, {0, []}, erlang:processes() -- Ours).

%% A process may die (or be taken by another tracer) after we looked.
trace_one(P, TFlags) ->
    try erlang:trace(P, true, TFlags)
    catch error:badarg -> 0
    end.

%%% Receive timeouts -----------------------------------------------------------
%%
%% A receive timeout reaches the tracer as a receive of the atom timeout,
%% from clock_service; a real message comes from a node and a process.
%% The receive pattern (node-wide) runs before the tracer is asked: its
%% first clause lets every real message through, its second lets through
%% only the timeouts of the processes whose events are shipped, marked,
%% so that the tracer ships them as timeouts; every other timeout is never
%% traced, so the count tier counts messages only.  The pattern is ours
%% only if it was the default (true) at attach; another tool's is left
%% alone.  Ours carries the mark, which is how cleanup knows it, whoever
%% does the cleanup: it is then set back to the default.

timeouts_begin(Plan, Flags, St) ->
    case lists:member('receive', Flags) andalso
        erlang:trace_info('receive', match_spec) =:= {match_spec, true} of
        true ->
            Shipped = case {St#st.interval, Plan} of
                          {0, {list, Pids}} -> Pids;
                          {0, _} -> all;
                          _ -> St#st.focus
                      end,
            St1 = St#st{timeouts = Shipped},
            timeouts_shipped(Shipped, St1),
            St1;
        false ->
            St#st{timeouts = none}
    end.

%% Only when the pattern is ours; the count tier names the focus.
timeouts_shipped(_, #st{timeouts = none}) ->
    ok;
timeouts_shipped(Shipped, _St) ->
    _ = erlang:trace_pattern('receive', timeouts_ms(Shipped), []),
    ok.

%% every real message: not from clock_service, or not the atom timeout
real_clause() ->
    {['$1', '_', '$3'],
     [{'orelse', {'=/=', '$1', clock_service}, {'=/=', '$3', timeout}}],
     []}.

timeouts_ms(Shipped) ->
    Real = real_clause(),
    Timeout = [clock_service, undefined, timeout],
    Mark = [{message, ?TIMEOUT_MARK}],
    case Shipped of
        all ->
            [Real, {Timeout, [], Mark}];
        Pids ->
            %% past the cap, the others' timeouts are dropped like those
            %% of unshipped processes (the man page says so)
            case [{'==', {self}, P} || P <- lists:sublist(Pids, ?TIMEOUT_PIDS_MAX)] of
                [] -> [Real];
                [G] -> [Real, {Timeout, [G], Mark}];
                Gs -> [Real, {Timeout, [list_to_tuple(['orelse' | Gs])], Mark}]
            end
    end.

%% Our pattern starts with our clause; nobody else's is spelt that way.
timeouts_end() ->
    Real = real_clause(),
    case erlang:trace_info('receive', match_spec) of
        {match_spec, [Real | _]} ->
            _ = erlang:trace_pattern('receive', true, []),
            ok;
        _ ->
            ok
    end.

%% What the receive pattern is, when it is not ours to set, in short.
receive_pattern() ->
    case erlang:trace_info('receive', match_spec) of
        {match_spec, false} -> off;
        _ -> other
    end.

%%% Cleanup -------------------------------------------------------------------

cleanup(Why, StopRef, St) ->
    %% leaving unasked, the Owner may not be reading: what is left to say
    %% must not keep us here on a busy link
    _ = StopRef =:= none andalso put(?LEAVING, true),
    untrace(St#st.session),
    clear_patterns(St#st.patterns),
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

%% Protocol cleanup steps 1 to 3.
untrace(S) ->
    _ = S =:= none orelse (catch ?TRACER:session_stop(S)),
    _ = (catch timeouts_end()),
    _ = case (catch tracer_of(new_processes)) of
            ours -> catch erlang:trace(new_processes, false, [all]);
            _ -> ok
        end,
    _ = [catch erlang:trace(P, false, [all])
         || P <- erlang:processes(), (catch tracer_of(P)) =:= ours],
    ok.

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
        {'$beamscope_patterns', MFAs} ->
            wloop(Ws#w{patterns = MFAs}, Wait);
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
    untrace(S),
    clear_patterns(Ws#w.patterns),
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
