%% Processes whose stacks are known, for the sampling profiler's tests:
%% busy/0 spends 4 reductions in f/1 for each 1 in g/1 (80% and 20%),
%% never waiting; deep/1 waits at the bottom of a recursion N deep.
-module(bs_prof).
-export([start/0, busy/0, deep/1]).

start() ->
    Busy = spawn(?MODULE, busy, []),
    Deep = spawn(?MODULE, deep, [30]),
    register(bs_busy, Busy),
    register(bs_deep, Deep),
    ok.

busy() ->
    f(4000),
    g(1000),
    busy().

f(0) -> ok;
f(N) -> f(N - 1).

g(0) -> ok;
g(N) -> g(N - 1).

deep(N) ->
    rec(N) + 1.

rec(0) ->
    receive stop -> 0 end;
rec(N) ->
    1 + rec(N - 1).
