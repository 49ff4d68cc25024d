%% A node whose leaders are quiet: big, queued and busy processes that
%% send and receive nothing once started, among many idle ones, and one
%% chatty process.  Only top mode's look through every process finds the
%% quiet ones.
-module(bs_top).
-export([start/1, hold/1, spin/1, chat/1]).

%% bs_top_big holds a list of 300 000 small integers (hibernated: its
%% heap is that), bs_top_mq has 5000 messages it never reads, bs_top_busy
%% spins, bs_top_chat sends 200 messages a second; Idle idle processes.
%% Returns what bs_top_big holds, in bytes.
start(Idle) ->
    register(bs_top_big, spawn(fun() -> hold(lists:seq(1, 300000)) end)),
    Mq = spawn(fun() -> receive never_sent -> ok end end),
    register(bs_top_mq, Mq),
    [Mq ! {m, K} || K <- lists:seq(1, 5000)],
    register(bs_top_busy, spawn(fun() -> spin(0) end)),
    register(bs_top_chat, spawn(fun() -> chat(0) end)),
    _ = [spawn(fun bs_work:idle/0) || _ <- lists:seq(1, Idle)],
    300000 * 2 * erlang:system_info(wordsize).

hold(L) ->
    erlang:hibernate(?MODULE, hold, [L]).

spin(N) ->
    spin(N + 1).

%% to itself: a send and a receive, 200 a second
chat(N) ->
    self() ! {n, N},
    receive {n, _} -> ok end,
    timer:sleep(5),
    chat(N + 1).
