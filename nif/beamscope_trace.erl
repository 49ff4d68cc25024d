%% beamscope_trace: a trace request carried out, and undone: the spec
%% read, the limits, the call patterns set, tracing in the node's legacy
%% session or in a session of our own, what another tracer held taken
%% over and given back, the checks for what someone else cleared, and the
%% tracer's NIF library put where the VM can load it.  A helper of
%% beamscope_agent, run only in the agent's process (and untrace_legacy/2
%% in a worker that cleans up for it).
-module(beamscope_trace).

-export([trace/2, tell_limits/2, check/1, untrace/1, untrace_legacy/2,
         load_nif/1, sessions/0]).
%% where beamscope_pattern sets and reads the send and receive patterns
-export([t_info/3, t_message/3]).

-include("beamscope_agent.hrl").

%% event kinds as in the NIF; register is always on (PROTOCOL.md)
-define(KINDS, [{send, 1}, {'receive', 2}, {spawn, 4}, {exit, 8},
                {link, 16}, {register, 32}, {gc, 128}, {running, 256},
                {timeout, 512}, {gen_call, 1024}]).
-define(K_RECEIVE, 2).
-define(K_TIMEOUT, 512).
-define(K_REGISTER, 32).
-define(K_CALL, 64).
%% the NIF's limit
-define(MAX_PAYLOAD, 16#4000000).
%% flags cleared by someone else are looked for this often, on at most
%% this many of the processes and functions traced
-define(CHECK_MS, 1000).
-define(CHECK_MAX, 32).

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
    case {parse_spec(Spec), beamscope_pattern:calls(maps:get(calls, Spec, []),
                                  maps:get(elixir, Spec, none))} of
        {_, {error, _} = E} ->
            {E, St};
        {{ok, Mask0, Flags0, Pids, Payload}, {ok, Calls}} ->
            case beamscope_pattern:match(maps:get(match, Spec, none), Mask0,
                                         Flags0, Interval > 0, Ctx) of
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

%%% Setting call patterns -----------------------------------------------------

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
    St1 = beamscope_pattern:timeouts_begin(Plan, Flags, Ctx, St),
    put(?STATE, St1),
    try
        %% no flag before the receive pattern holds: set twice and still
        %% not read back, it is refused rather than shipping nothing
        _ = beamscope_pattern:receive_holds(St1) orelse
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
                true ->
                    Info2#{receive_pattern =>
                               beamscope_pattern:msg_pattern_text('receive')};
                false -> Info2
            end,
    case lists:member(send, Flags) andalso St#st.tr =:= legacy andalso
        not beamscope_pattern:msg_pattern_ours(send) of
        true ->
            Info3#{send_pattern => beamscope_pattern:msg_pattern_text(send)};
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

%%% Untracing -----------------------------------------------------------------

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
    _ = (catch beamscope_pattern:timeouts_end()),
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
    [send || beamscope_pattern:ours(send)].

check(#st{watch = none} = St) ->
    St;
check(#st{watch = {New, Pids, MFAs, Kinds}, session = S} = St) ->
    Lost = [session || session_gone(St)] ++
        [new_processes || New, not new_ours(St)] ++
        [flags || lists:any(fun(P) -> flags_lost(P, St) end, Pids)] ++
        [call_patterns || lists:any(fun(M) -> not function_ours(M, St) end,
                                    MFAs)] ++
        [K || K <- Kinds, not beamscope_pattern:ours(K)] ++
        ['receive' || not beamscope_pattern:receive_holds(St)],
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

%%% Loading the NIF library ---------------------------------------------------

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

%% To the Owner, as beamscope_agent sends (noconnect, and nosuspend once
%% it is leaving).
send(Owner, Msg) ->
    Opts = case get(?LEAVING) of
               true -> [noconnect, nosuspend];
               _ -> [noconnect]
           end,
    _ = erlang:send(Owner, Msg, Opts),
    ok.
