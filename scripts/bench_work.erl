%% bench_work: the benchmark's workload, with an exact ground truth.
%%
%% prepare(P, R) starts a root process that, on go, spawns P ping-pong
%% pairs and waits for them; each pinger sends R pings and receives R pongs,
%% each ponger receives R and sends R: 4 * P * R send and receive events.
%% One round in ?TAGGED is tagged: its ping is {deliver, Pinger, N} and its
%% pong {deliver, pong, N}, so that the pattern {deliver, _, _} matches
%% exactly 4 * P * (R div ?TAGGED) of those events, 1% (the --match runs).
%% go(RootText) runs it and returns {WallMicros, PeakMemoryBytes}, the peak
%% of erlang:memory(total) sampled every 5 ms while it ran.
-module(bench_work).
-export([prepare/2, go/1]).

-define(TAGGED, 100).

prepare(P, R) ->
    Root = spawn(fun() -> root(P, R) end),
    pid_to_list(Root).

go(RootText) ->
    Root = list_to_pid(RootText),
    Self = self(),
    Base = erlang:memory(total),
    Sampler = spawn(fun() -> sample(Base) end),
    T0 = erlang:monotonic_time(microsecond),
    Root ! {go, Self},
    receive {done, Root} -> ok end,
    T1 = erlang:monotonic_time(microsecond),
    Sampler ! {stop, Self},
    Peak = receive {peak, P} -> P end,
    {T1 - T0, Peak - Base}.

root(P, R) ->
    receive {go, From} -> ok end,
    Self = self(),
    Pingers = [spawn(fun() -> pinger(Self, R) end) || _ <- lists:seq(1, P)],
    [receive {pinger_done, Pid} -> ok end || Pid <- Pingers],
    From ! {done, self()}.

pinger(Root, R) ->
    Ponger = spawn(fun ponger/0),
    ping(Ponger, R),
    Ponger ! stop,
    Root ! {pinger_done, self()}.

ping(_, 0) -> ok;
ping(Ponger, N) when N rem ?TAGGED =:= 0 ->
    Ponger ! {deliver, self(), N},
    receive {deliver, pong, N} -> ping(Ponger, N - 1) end;
ping(Ponger, N) ->
    Ponger ! {ping, self()},
    receive pong -> ping(Ponger, N - 1) end.

ponger() ->
    receive
        {ping, From} -> From ! pong, ponger();
        {deliver, From, N} -> From ! {deliver, pong, N}, ponger();
        stop -> ok
    end.

sample(Peak) ->
    receive
        {stop, From} -> From ! {peak, max(Peak, erlang:memory(total))}
    after 5 ->
        sample(max(Peak, erlang:memory(total)))
    end.
