%% soak_work: a steady load for scripts/soak.
%%
%% start(Rate) starts a sender and a sink: every 10 ms the sender sends
%% Rate/200 messages to the sink, so the pair makes Rate send and receive
%% events a second between them, for as long as the node runs.
-module(soak_work).
-export([start/1]).

start(Rate) ->
    Sink = spawn(fun sink/0),
    PerTick = max(1, Rate div 200),
    Sender = spawn(fun() -> tick(Sink, PerTick, erlang:monotonic_time(millisecond)) end),
    register(soak_sender, Sender),
    ok.

sink() ->
    receive _ -> sink() end.

tick(Sink, N, Next) ->
    send_n(Sink, N),
    Next1 = Next + 10,
    Wait = Next1 - erlang:monotonic_time(millisecond),
    receive after max(0, Wait) -> ok end,
    tick(Sink, N, Next1).

send_n(_, 0) -> ok;
send_n(Sink, N) -> Sink ! {soak, N}, send_n(Sink, N - 1).
