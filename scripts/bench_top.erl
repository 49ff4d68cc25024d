%% What top mode costs the target: the agent's own scan
%% (beamscope_agent:top_step/3, one step a second within its budget) on a
%% node with Procs idle processes and a few that lead, side by side with
%% walking every process once, as a tool that ranks them all each refresh
%% does.  Run by scripts/bench-ui top.
-module(bench_top).
-export([run/1]).

%% as the agent's TOP_BUDGET_US
-define(BUDGET_US, 10000).
-define(N, 20).

run(Procs) ->
    Idle = [spawn(fun idle/0) || _ <- lists:seq(1, Procs)],
    %% leaders among them, spawned last (the end of the pass)
    Big = [spawn(fun() -> big(I * 20000) end) || I <- lists:seq(1, ?N)],
    Queued = [spawn(fun idle/0) || _ <- lists:seq(1, ?N)],
    _ = [[Q ! {m, K} || K <- lists:seq(1, 100 * I)]
         || {I, Q} <- lists:zip(lists:seq(1, ?N), Queued)],
    timer:sleep(500),
    io:format("processes ~b~n", [erlang:system_info(process_count)]),
    Walk = median(fun() -> walk(memory) end, 5),
    io:format("walking every process once, top ~b by memory  ~10.1f ms~n",
              [?N, Walk / 1000]),
    io:format("the list a pass walks: ~.1f MB on the agent's heap, "
              "freed as the pass goes~n",
              [erts_debug:flat_size(erlang:processes()) * 8 / 1.0e6]),
    scan(memory, walk(memory), "a full walk finds", Walk, 0),
    scan(message_queue_len, walk(message_queue_len), "a full walk finds",
         Walk, 0),
    _ = Big,
    _ = Queued,
    %% two busy loops: the schedulers are shared with the scan, as on a
    %% busy node
    Busy = [spawn(fun spin/0) || _ <- lists:seq(1, 2)],
    scan(reductions, Busy, "busy loops", Walk, 100),
    [exit(P, kill) || P <- Idle ++ Big ++ Queued ++ Busy],
    ok.

%% Want: the pids a full walk ranks first (or the busy loops); steps
%% Sleep ms apart (a second in the agent; reductions a second need some)
scan(Metric, Want0, What, Walk, Sleep) ->
    Want = [case E of {_, P} -> P; P -> P end || E <- Want0],
    T0 = beamscope_agent:top_new(Metric, ?N),
    {Steps, T} = steps(T0, [], Sleep),
    Ts = lists:sort(Steps),
    Med = lists:nth(length(Ts) div 2 + 1, Ts),
    {_, Last} = beamscope_agent:top_passed(T),
    Found = [P || {_, P} <- Last],
    Hit = length([P || P <- Want, lists:member(P, Found)]),
    io:format("~-17s a pass: ~b steps (one a second: ~b s); a step "
              "median ~.1f ms, max ~.1f ms (~bx less than one walk); "
              "found ~b of the ~b ~s~n",
              [Metric, length(Steps), length(Steps), Med / 1000,
               lists:last(Ts) / 1000, round(Walk / Med), Hit, length(Want), What]).

%% steps until one whole pass is done; the step that starts the next
%% pass (it lists the processes) is counted too
steps(T, Acc, Sleep) ->
    timer:sleep(Sleep),
    {Us, T1} = timer:tc(fun() -> beamscope_agent:top_step(T, ?BUDGET_US, [])
                        end),
    case beamscope_agent:top_passed(T1) of
        {0, _} -> steps(T1, [Us | Acc], Sleep);
        _ -> {[Us | Acc], T1}
    end.

walk(Metric) ->
    L = [{V, P} || P <- erlang:processes(),
                   {_, V} <- [erlang:process_info(P, Metric)]],
    lists:sublist(lists:reverse(lists:sort(L)), ?N).

idle() -> receive stop -> ok end.

big(Words) ->
    L = lists:seq(1, Words),
    receive stop -> length(L) end.

spin() -> spin(0).
spin(N) -> spin(N + 1).

median(F, N) ->
    Ts = lists:sort([element(1, timer:tc(F)) || _ <- lists:seq(1, N)]),
    lists:nth(N div 2 + 1, Ts) * 1.0.
