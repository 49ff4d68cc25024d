%% What the table's process samples cost the target: the agent's own
%% sample of the rows on screen (and at most 2000) a second, side by side
%% with what sampling every process would cost, on a node with Procs idle
%% processes and one holding Queued messages it never reads (on screen
%% among the rows).  Each sample is timed as the first the agent takes of
%% those processes (nothing learned of their costs yet).  Run by
%% scripts/bench-ui procinfo.
-module(bench_procinfo).
-export([run/2]).

%% what the agent asked of every row before it told cheap items from dear
-define(OLD_ITEMS, [registered_name, current_function, message_queue_len,
                    memory, reductions, total_heap_size]).

run(Procs, Queued) ->
    Ps = [spawn(fun() -> receive stop -> ok end end)
          || _ <- lists:seq(1, Procs)],
    Self = self(),
    Huge = spawn(fun() -> fill(Queued), Self ! full,
                          receive stop -> ok end end),
    receive full -> ok end,
    All = erlang:processes(),
    Rows = [Huge | lists:sublist(Ps, 49)],
    Max = [Huge | lists:sublist(Ps, 1999)],
    T50 = median(fun() -> sample(Rows) end, 200),
    T2k = median(fun() -> sample(Max) end, 50),
    TAll = median(fun() -> sample(All) end, 5),
    THuge = median(fun() -> sample([Huge]) end, 20),
    TOld = median(fun() -> erlang:process_info(Huge, ?OLD_ITEMS) end, 5),
    [Info] = beamscope_info:sample_rows([Huge]),
    io:format("processes ~b, one of them holding ~b messages~n",
              [length(All), Queued]),
    io:format("one sample, 50 rows shown    ~10.1f us~n", [T50]),
    io:format("one sample, 2000 (the bound) ~10.1f us~n", [T2k]),
    io:format("every process, for contrast  ~10.1f us  (~.1fx the 50 rows, "
              "~.1fx the bound)~n", [TAll, TAll / T50, TAll / T2k]),
    io:format("per row                      ~10.3f us~n", [TAll / length(All)]),
    io:format("the row of ~b messages       ~10.1f us  (memory ~p)~n",
              [Queued, THuge, element(5, Info)]),
    io:format("  asked as before the fix    ~10.1f us  (~.1fx)~n",
              [TOld, TOld / max(1.0, THuge)]),
    [P ! stop || P <- [Huge | Ps]],
    ok.

fill(0) -> ok;
fill(N) -> self() ! {m, N}, fill(N - 1).

%% the agent's sample, as the first one it takes of these processes
sample(Pids) ->
    erase('$beamscope_dear'),
    beamscope_info:sample_rows(Pids).

median(F, N) ->
    Ts = lists:sort([element(1, timer:tc(F)) || _ <- lists:seq(1, N)]),
    lists:nth(N div 2 + 1, Ts) * 1.0.
