%% beamscope_agent: everything beamscope runs on the target, as plain
%% processes; the wire protocol is nif/PROTOCOL.md.
%%
%% Owns the bootstrap of the tracer (its module and its NIF library) and
%% of the helper modules, the agent process that answers the Owner (the C
%% node), the workers that batch events to the Owner, and the cleanup that
%% leaves the node as it was.  What the agent does for a request is in its
%% helper modules (?HELPERS): beamscope_printer (this node's printers),
%% beamscope_info (counts, samples, top-N, node samples, describing,
%% relations), beamscope_pattern (call, receive and --match patterns),
%% beamscope_prof (the profiler), beamscope_alarm (the VM's alarms),
%% beamscope_scan (reading a pattern without making atoms) and
%% beamscope_trace (setting and clearing the trace, limits, checks).
%%
%% Invariants:
%%  * one agent per node, registered as beamscope_agent; the name is held
%%    until the session's last process is gone (the final purge kills it),
%%    so a new bootstrap never loads this module while one of ours runs it;
%%  * the helper modules are loaded by the agent alone, from the binaries
%%    the Owner sent with start/4, once it holds the name and before any of
%%    them is called; never from the node's code path.  They are unloaded
%%    before the name is let go, so a new bootstrap never loads one while
%%    one of ours runs it either;
%%  * only the Owner's requests are obeyed: they carry the session's secret,
%%    of which the agent keeps only a digest; everything the agent and its
%%    workers send the Owner goes to its registered name, so that the Owner
%%    can tell them from anyone else by the sender;
%%  * a session never takes more memory than the cap the tracer enforces;
%%  * call patterns carry only actions that end with the session;
%%  * a head in Elixir form is parsed by the node's Elixir, never evaluated,
%%    and makes no atom and no output on the node; a pattern in Erlang
%%    form makes no atom either (beamscope_scan);
%%  * no process_info item that walks a list of a process (its message
%%    queue, its links) is asked where its predicted cost is high (Dear
%%    process_info items, beamscope_info);
%%  * the agent and its workers are never traced, and the agent spawns no
%%    process while new_processes may be traced (it would be traced);
%%  * only flags whose tracer is beamscope_tracer are ever cleared: another
%%    tracer's processes are left exactly as they were;
%%  * the one node-wide setting changed beyond tracing is scheduler_wall_time,
%%    and only through the agent's own count (node samples): lowered at
%%    cleanup, dropped by the VM if the agent dies;
%%  * every way out (stop, nodedown, owner silence, a worker's death, a crash
%%    of the agent) goes through one cleanup, which ends with our modules
%%    unloaded (the helpers, and beamscope_elixir, loaded only for heads in
%%    Elixir form, with the tracer; this module last); if the agent is
%%    killed, its workers clean up instead (the one that takes the name);
%%  * only the agent runs helper code (and a worker that cleans up for it),
%%    never while it unloads them: every process enters by this module, and
%%    no fun of ours is ever handed to another process, so a purge can only
%%    kill our own processes.
-module(beamscope_agent).

-export([start/4]).
%% entry points of the processes we spawn
-export([agent/5, worker/5]).

-include("beamscope_agent.hrl").

-define(NAME, beamscope_agent).
%% the helper modules, which the Owner sends in start/4's options
-define(HELPERS, [beamscope_printer, beamscope_info, beamscope_pattern,
                  beamscope_prof, beamscope_alarm, beamscope_scan,
                  beamscope_trace]).
%% the bootstrap lock's name (PROTOCOL.md)
-define(LOCK, beamscope_bootstrap).
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
%% the NIF's limit
-define(MAX_HIGH_WATER, 16#40000000).
%% top-N: N at most
-define(TOP_MAX, 200).
%% modules listed for completion, at most
-define(MODULES_MAX, 20000).

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
            case load_tracer(maps:get(modules, Opts, none), TracerBeam,
                             NifBin) of
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
             names => beamscope_info:names(),
             printer => beamscope_printer:printer(),
             structs => beamscope_printer:structs(),
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

%% The helper modules first: nothing may call one before they are all
%% loaded (it would be looked for on the node's code path).
load_tracer(Mods, Beam, Nif) ->
    %% a copy left behind by an agent that was killed would need an upgrade
    unload_tracer(),
    case load_helpers(Mods) of
        ok ->
            case code:load_binary(?TRACER, "beamscope_tracer.beam", Beam) of
                {module, ?TRACER} ->
                    case beamscope_trace:load_nif(Nif) of
                        ok ->
                            ok;
                        {error, R} ->
                            unload_tracer(),
                            {error, {tracer_nif, R}}
                    end;
                {error, R} ->
                    {error, {tracer_beam, R}}
            end;
        {error, _} = E ->
            E
    end.

%% Every one of ?HELPERS and no other module, from the binaries the Owner
%% sent ([{Module, Beam}]); a failed load leaves the rest to failed/2.
load_helpers(Mods) when is_list(Mods) ->
    Names = [M || {M, Beam} <- Mods, is_atom(M), is_binary(Beam)],
    case length(Names) =:= length(Mods) andalso
        lists:sort(Names) =:= lists:sort(?HELPERS) of
        true -> load_each(Mods);
        false -> {error, {bad_option, modules, Names}}
    end;
load_helpers(_) ->
    {error, {bad_option, modules, missing}}.

load_each([]) ->
    ok;
load_each([{M, Beam} | Mods]) ->
    case code:load_binary(M, atom_to_list(M) ++ ".beam", Beam) of
        {module, M} -> load_each(Mods);
        {error, R} -> {error, {helper_beam, M, R}}
    end.

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
            loop(beamscope_info:harvest(St));
        '$beamscope_info' when St#st.interval > 0 ->
            loop(beamscope_info:sample(St));
        '$beamscope_limits' ->
            erlang:send_after(?LIMITS_MS, self(), '$beamscope_limits'),
            loop(beamscope_trace:tell_limits(St, false));
        '$beamscope_check' ->
            loop(beamscope_trace:check(St));
        {timeout, TRef, '$beamscope_node'} when TRef =:= St#st.node ->
            loop(beamscope_info:node_sample(St));
        {timeout, TRef, '$beamscope_prof'} when element(1, St#st.prof) =:= TRef ->
            loop(St#st{prof = beamscope_prof:tick(St#st.dest, St#st.prof)});
        {monitor, _, _, _} = Alarm when St#st.alarm =/= none ->
            loop(beamscope_alarm:event(Alarm, St));
        {timeout, _, '$beamscope_alarm'} ->
            loop(beamscope_alarm:flush(St));
        '$beamscope_relations' ->
            erase(?REL_ARMED),
            loop(beamscope_info:relations(St));
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
    {Reply, St} = beamscope_trace:trace(Spec, St0),
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
              false -> beamscope_pattern:timeouts_shipped(Focus, St);
              true -> St
          end,
    Reply = ?TRACER:focus(S, Pid, On),
    St2 = case On of
              true -> beamscope_pattern:timeouts_shipped(Focus, St1);
              false -> St1
          end,
    reply_owner(St2, Ref, Reply),
    loop(case On of
             true -> beamscope_info:relations(St2#st{focus = Focus});
             false -> St2#st{focus = Focus}
         end);
handle({node_stats, On}, Ref, St0) when is_boolean(On) ->
    St = beamscope_info:node_stats(On, St0),
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
    loop(St#st{top = beamscope_info:top_new(Metric, min(N, ?TOP_MAX))});
handle({profile, _} = Req, Ref, St) ->
    %% off, {Who, Hz, BudgetUs}, or {calls, off | Texts}
    Ours = [self() | [W || {_, W, _} <- St#st.workers]],
    {Reply, Prof} = beamscope_prof:ask(Req, Ours, St#st.dest, St#st.prof),
    reply_owner(St, Ref, Reply),
    loop(St#st{prof = Prof});
handle({alarms, _} = Req, _Ref, St) ->
    loop(beamscope_alarm:request(Req, St));
handle({Op, Pids}, _Ref, St)
  when (Op =:= describe orelse Op =:= describe_again), is_list(Pids) ->
    %% answered on the stream: the Owner asks as it meets processes and
    %% waits for nothing
    send(St#st.dest, {beamscope_labels,
                      beamscope_info:describe(Pids, Op =:= describe)}),
    loop(St);
handle({structs, Mods}, _Ref, St) when is_list(Mods) ->
    %% answered on the stream, as labels are
    send(St#st.dest, {beamscope_structs,
                      [{M, beamscope_printer:struct_fields(M)}
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

%%% Cleanup -------------------------------------------------------------------

cleanup(Why, StopRef, St) ->
    %% leaving unasked, the Owner may not be reading: what is left to say
    %% must not keep us here on a busy link
    _ = StopRef =:= none andalso put(?LEAVING, true),
    beamscope_trace:untrace(St),
    beamscope_alarm:stop(StopRef, St),
    beamscope_prof:stop(St#st.dest, St#st.prof),
    beamscope_info:swt_lower(),
    Dead = case Why of
               {worker_down, W, _} -> [stand_in(W, St)];
               _ -> []
           end,
    Results = lists:keysort(1, Dead ++ stop_workers(St)),
    beamscope_info:final_counts(St),
    _ = beamscope_trace:tell_limits(St#st{told = {none, -1}}, true),
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

%% The Elixir reader and the helper modules go with the tracer: nothing
%% but the agent ran them (or the worker that cleans up for it), and it
%% is in none of them when it gets here.
unload_tracer() ->
    lists:foreach(fun unload/1, [?TRACER, ?ELIXIR | ?HELPERS]).

unload(M) ->
    _ = code:purge(M),
    _ = code:delete(M),
    _ = code:purge(M),
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
    %% cleared of what is ours.  The helpers are gone only if a start/4
    %% that failed unloaded them (abandon/0): nothing was traced then, and
    %% none may be looked for on the code path.
    _ = lists:all(fun erlang:module_loaded/1, ?HELPERS) andalso
        beamscope_trace:untrace_legacy(Ws#w.patterns, Ws#w.taken),
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
