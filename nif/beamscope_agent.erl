%% beamscope_agent: everything beamscope runs on the target besides the NIF.
%%
%% start/4 is called over rpc: it spawns the agent, which loads the tracer,
%% starts the workers, and then obeys only the C node that started it
%% (Owner).  Workers batch the NIF's events and ship them to Owner.
%%
%% Invariants:
%%  - the agent and its workers are never traced;
%%  - whatever ends the session (stop, Owner's node going down, Owner silent
%%    for dep_timeout_ms, a worker dying), cleanup/2 runs and leaves no
%%    trace flag of ours, no process of ours and no module of ours behind;
%%  - flags set by other tracers are never touched.
%% The wire protocol is in nif/PROTOCOL.md.
-module(beamscope_agent).
-export([start/4]).

-record(st, {owner, node, workers = {}, session, dep_timeout,
             opts, new_set = false, refs = #{}}).

-define(TRACER, beamscope_tracer).
-define(START_TIMEOUT, 10000).
-define(DRAIN_TIMEOUT, 1000).

%% ---- start (runs in the rpc process) ----

start(Owner, TracerBeam, NifBin, Opts) when is_pid(Owner), is_map(Opts) ->
    case whereis(beamscope_agent) of
        undefined ->
            Self = self(),
            Tag = make_ref(),
            {Pid, Mref} = spawn_monitor(fun() ->
                                                init(Self, Tag, Owner, TracerBeam,
                                                     NifBin, Opts)
                                        end),
            receive
                {Tag, {ok, _, _} = Reply} ->
                    demonitor(Mref, [flush]),
                    Reply;
                {Tag, Reply} ->
                    demonitor(Mref, [flush]),
                    unload_all(),
                    Reply;
                {'DOWN', Mref, process, Pid, Why} ->
                    unload_all(),
                    {error, {agent_died, Why}}
            after ?START_TIMEOUT ->
                    exit(Pid, kill),
                    unload_all(),
                    {error, start_timeout}
            end
;
        Pid ->
            {error, {already_attached, Pid}}
    end.

init(Caller, Tag, Owner, TracerBeam, NifBin, Opts) ->
    try register(beamscope_agent, self()) of
        true ->
            erlang:monitor_node(node(Owner), true),
            case load_tracer(TracerBeam, NifBin) of
                ok ->
                    N = workers_wanted(Opts),
                    Workers = [spawn_worker(I, Owner, Opts) || I <- lists:seq(0, N - 1)],
                    Refs = maps:from_list([{monitor(process, W), W} || W <- Workers]),
                    Names = [{P, Name} || Name <- registered(),
                                          P <- [whereis(Name)], is_pid(P)],
                    Caller ! {Tag, {ok, self(), #{workers => N,
                                                  schedulers => erlang:system_info(schedulers_online),
                                                  names => Names}}},
                    loop(#st{owner = Owner, node = node(Owner),
                             workers = list_to_tuple(Workers),
                             dep_timeout = maps:get(dep_timeout_ms, Opts, 30000),
                             opts = Opts, refs = Refs});
                {error, _} = Error ->
                    %% start/4 unloads the modules once it has returned
                    Caller ! {Tag, Error}
            end
    catch
        error:badarg ->
            Caller ! {Tag, {error, {already_attached, whereis(beamscope_agent)}}}
    end.

workers_wanted(Opts) ->
    case maps:get(workers, Opts, 0) of
        N when is_integer(N), N > 0 -> N;
        _ -> erlang:system_info(schedulers_online)
    end.

%% The NIF goes to a fresh private directory, is loaded, and is deleted
%% whatever happened.
load_tracer(TracerBeam, NifBin) ->
    case code:load_binary(?TRACER, "beamscope_tracer.beam", TracerBeam) of
        {module, ?TRACER} ->
            Base = case os:getenv("TMPDIR") of
                       false -> "/tmp";
                       "" -> "/tmp";
                       T -> T
                   end,
            Dir = filename:join(Base, "beamscope-" ++ os:getpid() ++ "-" ++
                                    integer_to_list(erlang:unique_integer([positive]))),
            Lib = filename:join(Dir, "beamscope_tracer"),
            File = Lib ++ ".so",
            Result =
                case file:make_dir(Dir) of
                    ok ->
                        try
                            ok = file:change_mode(Dir, 8#700),
                            ok = file:write_file(File, <<>>),
                            ok = file:change_mode(File, 8#600),
                            ok = file:write_file(File, NifBin),
                            case ?TRACER:load(Lib) of
                                ok -> ok;
                                {error, {_, Text}} -> {error, {nif_load, Text}}
                            end
                        catch
                            error:{badmatch, {error, Why}} -> {error, {nif_write, Dir, Why}}
                        after
                            _ = file:delete(File),
                            _ = file:del_dir(Dir)
                        end;
                    {error, Why} ->
                        {error, {nif_dir, Dir, Why}}
                end,
            case Result of
                ok -> ok;
                _ -> unload_tracer(), Result
            end;
        {error, Why} ->
            {error, {load_tracer, Why}}
    end.

spawn_worker(I, Owner, Opts) ->
    Max = maps:get(batch_max, Opts, 500),
    Ms = maps:get(batch_ms, Opts, 5),
    spawn_opt(fun() -> worker_wait(I, Owner, Max, Ms) end,
              [{message_queue_data, off_heap}]).

%% ---- agent loop ----

loop(#st{owner = Owner, node = Node, dep_timeout = Dep} = St) ->
    receive
        {beamscope, Owner, Ref, Req} ->
            case handle(Req, Ref, St) of
                {reply, Reply, St1} ->
                    Owner ! {beamscope_reply, Ref, Reply},
                    loop(St1);
                stop ->
                    cleanup(St, {stop, Ref})
            end;
        {beamscope, Other, Ref, _} when is_pid(Other) ->
            Other ! {beamscope_reply, Ref, {error, not_owner}},
            loop(St);
        {nodedown, Node} ->
            cleanup(St, owner_lost);
        {'DOWN', Mref, process, _, _} when is_map_key(Mref, St#st.refs) ->
            cleanup(St, worker_lost);
        _ ->
            loop(St)
    after Dep ->
            cleanup(St, owner_silent)
    end.

handle(ping, _Ref, St) ->
    {reply, pong, St};
handle({trace, Spec}, _Ref, #st{session = undefined} = St) when is_map(Spec) ->
    try trace_on(Spec, St) of
        {ok, Info, St1} -> {reply, {ok, Info}, St1};
        {error, _} = E -> {reply, E, St}
    catch
        Class:Why -> {reply, {error, {Class, Why}}, St}
    end;
handle({trace, _}, _Ref, St) ->
    {reply, {error, already_tracing}, St};
handle(stop, _Ref, _St) ->
    stop;
handle(Other, _Ref, St) ->
    {reply, {error, {unknown_request, Other}}, St}.

kind_bit(send) -> 1;
kind_bit('receive') -> 2;
kind_bit(spawn) -> 4;
kind_bit(exit) -> 8;
kind_bit(link) -> 16;
kind_bit(register) -> 32.

trace_on(Spec, #st{workers = Workers, opts = Opts} = St) ->
    Events = maps:get(events, Spec, [send, 'receive', spawn, exit]),
    Mask = lists:foldl(fun(K, A) -> A bor kind_bit(K) end, 32, Events),
    Flags = [send || lists:member(send, Events)] ++
        ['receive' || lists:member('receive', Events)] ++ [procs],
    Payload = maps:get(payload_bytes, Spec, 256),
    Ours = [self() | tuple_to_list(Workers)],
    case check(maps:get(pids, Spec, all)) of
        {ok, Mode, Pids} ->
            S = ?TRACER:session_new(Workers, Mask, Payload,
                                    maps:get(high_water, Opts, 20000)),
            [W ! {'$beamscope_session', S} || W <- tuple_to_list(Workers)],
            Tracer = {tracer, ?TRACER, S},
            NewSet = case Mode of
                         M when M =:= all; M =:= new ->
                             erlang:trace(new_processes, true, [Tracer | Flags]),
                             true;
                         _ -> false
                     end,
            Targets = case Mode of
                          new -> [];
                          list -> Pids;
                          _ -> [P || P <- processes(), not lists:member(P, Ours)]
                      end,
            {Traced, Skipped} = lists:foldl(
                                  fun(P, {N, Sk}) ->
                                          case tracer_of(P) of
                                              none -> {N + set(P, Tracer, Flags), Sk};
                                              ours -> {N, Sk};
                                              gone -> {N, Sk};
                                              _Other -> {N, [P | Sk]}
                                          end
                                  end, {0, []}, Targets),
            {ok, #{traced => Traced, skipped => lists:reverse(Skipped)},
             St#st{session = S, new_set = NewSet}};
        {error, _} = E ->
            E
    end.

set(P, Tracer, Flags) ->
    try erlang:trace(P, true, [Tracer | Flags]) of
        1 -> 1;
        _ -> 0
    catch
        error:badarg -> 0             % it died meanwhile
    end.

tracer_of(P) ->
    case erlang:trace_info(P, tracer) of
        undefined -> gone;
        {tracer, []} -> none;
        {tracer, {?TRACER, _}} -> ours;
        {tracer, Other} -> {other, Other}
    end.

%% all/new/existing, or a list checked in full before anything is traced.
check(all) -> new_ok(all);
check(new) -> new_ok(new);
check(existing) -> {ok, existing, []};
check(List) when is_list(List) ->
    check_list(List, []).

new_ok(Mode) ->
    case erlang:trace_info(new_processes, tracer) of
        {tracer, []} -> {ok, Mode, []};
        {tracer, {?TRACER, _}} -> {ok, Mode, []};
        {tracer, Other} -> {error, {new_traced_by_other, Other}}
    end.

check_list([], Acc) ->
    {ok, list, lists:reverse(Acc)};
check_list([Name | Rest], Acc) when is_atom(Name) ->
    case whereis(Name) of
        Pid when is_pid(Pid) -> check_list([Pid | Rest], Acc);
        _ -> {error, {no_such_name, Name}}
    end;
check_list([Pid | Rest], Acc) when is_pid(Pid) ->
    case tracer_of(Pid) of
        gone -> {error, {no_such_process, Pid}};
        {other, T} -> {error, {traced_by_other, Pid, T}};
        _ -> check_list(Rest, [Pid | Acc])
    end.

%% ---- cleanup ----

cleanup(#st{owner = Owner, session = S, workers = Workers, new_set = NewSet}, Why) ->
    case S of
        undefined -> ok;
        _ -> ?TRACER:session_stop(S)
    end,
    case NewSet andalso tracer_of_new() of
        ours -> erlang:trace(new_processes, false, [all]);
        _ -> ok
    end,
    [catch erlang:trace(P, false, [all]) || P <- processes(), tracer_of(P) =:= ours],
    Stats = stop_workers(tuple_to_list(Workers)),
    case Why of
        {stop, Ref} -> Owner ! {beamscope_reply, Ref, {ok, #{workers => Stats}}};
        _ -> ok
    end,
    unload_self().

tracer_of_new() ->
    case erlang:trace_info(new_processes, tracer) of
        {tracer, {?TRACER, _}} -> ours;
        _ -> other
    end.

stop_workers(Workers) ->
    Self = self(),
    Mrefs = [{W, monitor(process, W)} || W <- Workers],
    [W ! {'$beamscope_stop', Self} || W <- Workers],
    Deadline = erlang:monotonic_time(millisecond) + ?DRAIN_TIMEOUT + 1000,
    [collect_worker(W, M, Deadline) || {W, M} <- Mrefs].

collect_worker(W, M, Deadline) ->
    Left = max(0, Deadline - erlang:monotonic_time(millisecond)),
    receive
        {'$beamscope_done', W, Id, Batches, Dropped} ->
            demonitor(M, [flush]),
            {Id, Batches, Dropped};
        {'DOWN', M, process, W, _} ->
            {W, lost}
    after Left ->
            exit(W, kill),
            demonitor(M, [flush]),
            {W, timeout}
    end.

%% Called from start/4, which itself runs this module: the final purge
%% waits until the rpc reply is on its way.
unload_all() ->
    unload_tracer(),
    _ = code:purge(?MODULE),
    _ = code:delete(?MODULE),
    _ = timer:apply_after(200, code, purge, [?MODULE]),
    ok.

unload_tracer() ->
    _ = code:purge(?TRACER),
    _ = code:delete(?TRACER),
    _ = code:purge(?TRACER),
    ok.

%% This process runs the module it unloads: mark it old, let a process that
%% runs only code:purge/1 remove it, and leave.
unload_self() ->
    unload_tracer(),
    _ = code:purge(?MODULE),
    _ = code:delete(?MODULE),
    spawn(code, purge, [?MODULE]),
    exit(normal).

%% ---- workers ----

worker_wait(I, Owner, Max, Ms) ->
    receive
        {'$beamscope_session', S} ->
            worker(#{id => I, owner => Owner, max => Max, ms => Ms, s => S,
                     seq => 0, acc => [], n => 0, timer => undefined});
        {'$beamscope_stop', Agent} ->
            Owner ! {beamscope_eos, I, 0, 0},
            Agent ! {'$beamscope_done', self(), I, 0, 0}
    end.

worker(#{max := Max} = W) ->
    receive
        {'$beamscope_flush', T} when T =:= map_get(timer, W) ->
            worker(ship(W));
        {'$beamscope_flush', _} ->
            worker(W);
        {'$beamscope_stop', Agent} ->
            drain(W, Agent, erlang:monotonic_time(millisecond) + ?DRAIN_TIMEOUT);
        Ev ->
            W1 = add(Ev, W),
            case map_get(n, W1) >= Max of
                true -> worker(ship(W1));
                false -> worker(W1)
            end
    end.

add(Ev, #{acc := Acc, n := 0, ms := Ms} = W) ->
    T = make_ref(),
    erlang:send_after(Ms, self(), {'$beamscope_flush', T}),
    W#{acc := [Ev | Acc], n := 1, timer := T};
add(Ev, #{acc := Acc, n := N} = W) ->
    W#{acc := [Ev | Acc], n := N + 1}.

ship(#{n := 0} = W) ->
    W#{timer := undefined};
ship(#{id := I, owner := Owner, s := S, seq := Seq, acc := Acc, n := N} = W) ->
    Dropped = ?TRACER:dropped(S, I),
    Owner ! {beamscope_batch, I, Seq, Dropped, lists:reverse(Acc)},
    ?TRACER:credit(S, I, N),
    W#{seq := Seq + 1, acc := [], n := 0, timer := undefined}.

%% Tracing is off: take what is still in flight, ship it, say goodbye.
drain(#{id := I, owner := Owner, s := S} = W, Agent, Deadline) ->
    W1 = take_all(W),
    W2 = ship(W1),
    case ?TRACER:inflight(S, I) > 0 andalso
        erlang:monotonic_time(millisecond) < Deadline of
        true ->
            receive after 1 -> ok end,
            drain(W2, Agent, Deadline);
        false ->
            #{seq := Seq} = W2,
            Dropped = ?TRACER:dropped(S, I),
            Owner ! {beamscope_eos, I, Seq, Dropped},
            Agent ! {'$beamscope_done', self(), I, Seq, Dropped}
    end.

take_all(#{max := Max} = W) ->
    receive
        {'$beamscope_flush', _} -> take_all(W);
        {'$beamscope_stop', _} -> take_all(W);
        Ev ->
            W1 = add(Ev, W),
            case map_get(n, W1) >= Max of
                true -> take_all(ship(W1));
                false -> take_all(W1)
            end
    after 0 ->
            W
    end.
