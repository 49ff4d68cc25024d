%% beamscope_pattern: the patterns of a trace request, compiled on the
%% target: call patterns (in Erlang form, and in Elixir form with
%% beamscope_elixir), the send and receive patterns that let receive
%% timeouts through, and --match.  A helper of beamscope_agent, run only
%% in the agent's process.
-module(beamscope_pattern).

-export([calls/2, timeouts_begin/4, timeouts_shipped/2, timeouts_end/0,
         receive_holds/1, ours/1, msg_pattern_ours/1, msg_pattern_text/1,
         match/5]).
%% for the tests (test/erl)
-export([compile_call/1, compile_match/1]).

-include("beamscope_ms.hrl").
-include("beamscope_agent.hrl").

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
    case beamscope_scan:scan(Text) of
        {ok, Tokens, End, Renamed} ->
            case head(Tokens, End, Renamed) of
                {ok, _, _, _, MS} = Ok ->
                    case beamscope_scan:no_atom(MS, Renamed, "call") of
                        ok -> Ok;
                        {error, _} = E -> E
                    end;
                {error, {L, C, Msg}} ->
                    {error, {L, C, beamscope_scan:typed_names(Msg, Renamed)}};
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
    case {beamscope_scan:typed_name(M, Renamed),
          beamscope_scan:typed_name(F, Renamed)} of
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
            {{SendMS, _}, true} -> beamscope_trace:t_message(St2, send, SendMS);
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
    _ = beamscope_trace:t_message(St, 'receive', MS),
    _ = receive_holds(St#st{rms = MS}) orelse
        beamscope_trace:t_message(St, 'receive', MS),
    St#st{rms = MS}.

receive_holds(#st{rms = none}) ->
    true;
receive_holds(#st{rms = MS} = St) ->
    (catch beamscope_trace:t_info(St, 'receive', match_spec)) =:=
        {match_spec, MS}.

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
    case beamscope_scan:scan(Text) of
        {ok, [], _, _} ->
            {error, {1, 1, "empty pattern; give one, like {get, _}"}};
        {ok, Tokens, End, Renamed} ->
            case match_clause(Tokens, End) of
                {ok, Clauses} = Ok ->
                    case beamscope_scan:no_atom(Clauses, Renamed, "message") of
                        ok -> Ok;
                        {error, _} = E -> E
                    end;
                {error, {L, C, Msg}} ->
                    {error, {L, C, beamscope_scan:typed_names(Msg, Renamed)}}
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
