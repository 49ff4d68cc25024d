%% Processes of known size and work, for the table's process samples.
-module(bs_sizes).
-export([start/1, hold/1, spin/1, stop/0]).

%% bs_sz_big holding a list of N small integers on its heap (2 words a
%% cell), hibernated so that its heap is just that; bs_sz_busy spinning;
%% Idle idle processes beside them.  Every one is sent a message so
%% that the table has a row for it.
start(Idle) ->
    Big = spawn(fun() -> hold(lists:seq(1, 400000)) end),
    register(bs_sz_big, Big),
    Busy = spawn(fun() -> spin(0) end),
    register(bs_sz_busy, Busy),
    Ps = [spawn(fun bs_work:idle/0) || _ <- lists:seq(1, Idle)],
    [P ! hi || P <- [Big, Busy | Ps]],
    400000 * 2 * erlang:system_info(wordsize).

%% what came is read first: a process hibernating with a message waiting
%% wakes at once
hold(L) ->
    receive _ -> hold(L) after 0 -> erlang:hibernate(?MODULE, hold, [L]) end.

%% reductions and nothing else: no receive, so that nothing is traced
spin(N) ->
    spin(N + 1).

stop() ->
    [exit(whereis(R), kill) || R <- [bs_sz_big, bs_sz_busy],
                               whereis(R) =/= undefined],
    ok.
