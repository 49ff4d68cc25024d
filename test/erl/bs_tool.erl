%% bs_tool: another tool tracing beside beamscope, as an operator runs
%% one (recon_trace, redbug, dbg, a hand-made erlang:trace/3): a registered
%% counter, bs_tool, that receives trace messages and counts them by tag,
%% fed by the legacy session (erlang:trace/3), by a trace session of its
%% own (OTP 27+) or by dbg; and bs_echo-like processes that live across
%% runs, so that what the tool set on them can be compared before and
%% after beamscope came and went.
-module(bs_tool).

-export([start/0, counts/0, echo/1, run/2, legacy/2, state/1, clear/1,
         session/2, session_stop/0, dbg/1, dbg_stop/0, our_flags/1]).

%% The counter, started once.
start() ->
    case whereis(bs_tool) of
        undefined ->
            Self = self(),
            P = spawn(fun() -> register(bs_tool, self()), Self ! up, count(#{}) end),
            receive up -> ok after 5000 -> error({not_up, P}) end;
        _ ->
            ok
    end.

count(C) ->
    receive
        {bs_tool_counts, From} ->
            From ! {bs_tool_counts, C},
            count(#{});
        M when is_tuple(M), tuple_size(M) >= 3,
               (element(1, M) =:= trace orelse element(1, M) =:= trace_ts) ->
            count(maps:update_with(element(3, M), fun(N) -> N + 1 end, 1, C));
        _ ->
            count(C)
    end.

%% {Sends, Receives} the tool got since it was last asked.
counts() ->
    bs_tool ! {bs_tool_counts, self()},
    receive
        {bs_tool_counts, C} -> {maps:get(send, C, 0), maps:get('receive', C, 0)}
    after 5000 -> timeout
    end.

%% A registered process that answers {ping, From, I} with {pong, I}: N
%% pings make it receive N and send N.  Its pid, as text.
echo(Name) ->
    Self = self(),
    P = spawn(fun() -> register(Name, self()), Self ! up, echo_loop() end),
    receive up -> ok end,
    pid_to_list(P).

echo_loop() ->
    receive
        {ping, From, I} -> From ! {pong, I}, echo_loop();
        stop -> ok
    end.

%% N round trips with Name from a new process; ok once all came back.
run(Name, N) ->
    Self = self(),
    C = spawn(fun() ->
                      [begin Name ! {ping, self(), I},
                             receive {pong, I} -> ok end
                       end || I <- lists:seq(1, N)],
                      Self ! {done, self()}
              end),
    receive {done, C} -> ok after 30000 -> timeout end.

%% The tool in the legacy session: Name's sends and receives, and a send
%% pattern of its own (MS).
legacy(Name, MS) ->
    start(),
    _ = erlang:trace(whereis(Name), true, [send, 'receive', {tracer, whereis(bs_tool)}]),
    _ = erlang:trace_pattern(send, MS, []),
    ok.

%% What the legacy session holds of the tool's: Name's flags, whether its
%% tracer is the tool, and the send pattern.
state(Name) ->
    {flags, F} = erlang:trace_info(whereis(Name), flags),
    {lists:sort(F),
     erlang:trace_info(whereis(Name), tracer) =:= {tracer, whereis(bs_tool)},
     erlang:trace_info(send, match_spec)}.

%% The tool gone from the legacy session.
clear(Name) ->
    _ = erlang:trace(whereis(Name), false, [all]),
    _ = erlang:trace_pattern(send, true, []),
    ok.

%% The tool in a trace session of its own (OTP 27+): Flags on Name, held
%% by a process of its own (the handle keeps the session).
session(Name, Flags) ->
    start(),
    Self = self(),
    spawn(fun() ->
                  register(bs_tool_session, self()),
                  S = trace:session_create(bs_tool, whereis(bs_tool), []),
                  N = trace:process(S, whereis(Name), true, Flags),
                  Self ! {up, N},
                  receive stop -> trace:session_destroy(S) end
          end),
    receive {up, N} -> N after 5000 -> timeout end.

session_stop() ->
    Ref = monitor(process, whereis(bs_tool_session)),
    bs_tool_session ! stop,
    receive {'DOWN', Ref, _, _, _} -> ok end.

%% dbg tracing Name's sends and receives, its messages counted by the
%% tool (dbg has a session of its own where the release gives it one).
dbg(Name) ->
    start(),
    {ok, _} = dbg:tracer(process, {fun(M, N) -> bs_tool ! M, N end, 0}),
    {ok, _} = dbg:p(whereis(Name), [s, r]),
    ok.

dbg_stop() ->
    dbg:stop().

%% beamscope's own flags on Name, in its session (OTP 27+): [] when it has
%% none or there is no such session.
our_flags(Name) ->
    case [W || {beamscope, _} = W <- trace:session_info(all)] of
        [W | _] ->
            {flags, F} = trace:info(W, whereis(Name), flags),
            lists:sort(F);
        [] ->
            []
    end.
