%% bs_calls: functions with known call counts, for call-tracing tests.
-module(bs_calls).
-export([run/1, add/2, crash/1, tree/0]).

%% run(N): add(I, 1) for I in 1..N, each through the local double/1.
run(N) ->
    lists:foldl(fun(I, Acc) -> Acc + double(add(I, 1)) end, 0, lists:seq(1, N)).

add(A, B) -> A + B.

double(X) -> 2 * X.

crash(X) -> erlang:error({bad_input, X}).

%% tree(): a root that spawns 3 children that spawn 2 each (10 processes),
%% each of which calls add/2 once; returns the root's pid as text when all
%% are done.
tree() ->
    Parent = self(),
    Root = spawn(fun() ->
                         receive go -> ok end,
                         Kids = [spawn(fun() -> branch(2) end) || _ <- [1, 2, 3]],
                         add(0, 0),
                         wait(Kids),
                         Parent ! {tree_done, self()}
                 end),
    {Root, pid_to_list(Root)}.

branch(N) ->
    add(1, 1),
    Kids = [spawn(fun() -> add(2, 2), receive after 10 -> ok end end)
            || _ <- lists:seq(1, N)],
    wait(Kids).

wait(Pids) ->
    [begin M = monitor(process, P), receive {'DOWN', M, _, _, _} -> ok end end
     || P <- Pids],
    ok.
