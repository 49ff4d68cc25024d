%% What the table's process samples cost the target: the agent's
%% process_info of the rows on screen (and at most 2000) a second, side by
%% side with what walking every process would cost, on a node with Procs
%% idle processes.  Run by scripts/bench-ui procinfo.
-module(bench_procinfo).
-export([run/1]).

-define(ITEMS, [registered_name, current_function, message_queue_len,
                memory, reductions, total_heap_size]).

run(Procs) ->
    Ps = [spawn(fun() -> receive stop -> ok end end)
          || _ <- lists:seq(1, Procs)],
    All = erlang:processes(),
    Rows = lists:sublist(Ps, 50),
    Max = lists:sublist(Ps, 2000),
    T50 = median(fun() -> sample(Rows) end, 200),
    T2k = median(fun() -> sample(Max) end, 50),
    TAll = median(fun() -> sample(All) end, 5),
    io:format("processes ~b~n", [length(All)]),
    io:format("one sample, 50 rows shown    ~10.1f us~n", [T50]),
    io:format("one sample, 2000 (the bound) ~10.1f us~n", [T2k]),
    io:format("every process, for contrast  ~10.1f us  (~.1fx the 50 rows, "
              "~.1fx the bound)~n", [TAll, TAll / T50, TAll / T2k]),
    io:format("per process                  ~10.3f us~n", [TAll / length(All)]),
    [P ! stop || P <- Ps],
    ok.

sample(Pids) ->
    lists:foreach(fun(P) -> erlang:process_info(P, ?ITEMS) end, Pids).

median(F, N) ->
    Ts = lists:sort([element(1, timer:tc(F)) || _ <- lists:seq(1, N)]),
    lists:nth(N div 2 + 1, Ts) * 1.0.
