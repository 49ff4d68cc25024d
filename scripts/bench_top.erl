%% What top mode costs the target: the agent's own scan
%% (beamscope_info:top_step/3, one step a second within its budget) on a
%% node with Procs idle processes and a few that lead, side by side with
%% walking every process once, as a tool that ranks them all each refresh
%% does.  Each pass is run both ways the agent walks the node where the VM
%% has both (OTP 28: erlang:processes_iterator/0, and the list of
%% erlang:processes() of older releases): the steps, what the scan holds
%% on the agent's heap between them, and whether both find the same top
%% N.  Run by scripts/bench-ui top.
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
    Walks = case erlang:function_exported(erlang, processes_iterator, 0) of
                true -> [list, iterator];
                false -> [list]
            end,
    io:format("OTP ~s; the walks: ~p~n",
              [erlang:system_info(otp_release), Walks]),
    scans(memory, walk(memory), "a full walk finds", Walk, 0, Walks),
    scans(message_queue_len, walk(message_queue_len), "a full walk finds",
          Walk, 0, Walks),
    _ = Big,
    _ = Queued,
    %% two busy loops: the schedulers are shared with the scan, as on a
    %% busy node
    Busy = [spawn(fun spin/0) || _ <- lists:seq(1, 2)],
    scans(reductions, Busy, "busy loops", Walk, 100, Walks),
    [exit(P, kill) || P <- Idle ++ Big ++ Queued ++ Busy],
    ok.

%% One pass by Metric each way the VM can walk, and whether they found
%% the same top N.
scans(Metric, Want, What, Walk, Sleep, Walks) ->
    Found = [scan(Metric, Want, What, Walk, Sleep, W) || W <- Walks],
    case Found of
        [A, B] ->
            io:format("~-17s list and iterator find the same top ~b: ~s~n",
                      [Metric, ?N, case lists:sort(A) =:= lists:sort(B) of
                                       true -> "yes";
                                       false -> "NO"
                                   end]);
        _ ->
            ok
    end.

%% Want: the pids a full walk ranks first (or the busy loops); steps
%% Sleep ms apart (a second in the agent; reductions a second need some).
%% The pids found.
scan(Metric, Want0, What, Walk, Sleep, How) ->
    Want = [case E of {_, P} -> P; P -> P end || E <- Want0],
    T0 = beamscope_info:top_new(Metric, ?N, How),
    {Steps, Words, T} = steps(T0, [], 0, Sleep),
    [First | _] = lists:reverse(Steps),
    Ts = lists:sort(Steps),
    Med = lists:nth(length(Ts) div 2 + 1, Ts),
    {_, Last} = beamscope_info:top_passed(T),
    Found = [P || {_, P} <- Last],
    Hit = length([P || P <- Want, lists:member(P, Found)]),
    io:format("~-17s ~-8s a pass: ~b steps (one a second: ~b s), its "
              "first ~.1f ms; a step median ~.1f ms, max ~.1f ms (~bx less "
              "than one walk); held between steps at most ~s; found ~b of "
              "the ~b ~s~n",
              [Metric, How, length(Steps), length(Steps), First / 1000,
               Med / 1000, lists:last(Ts) / 1000, round(Walk / Med),
               size_text(Words * erlang:system_info(wordsize)), Hit,
               length(Want), What]),
    Found.

%% steps until one whole pass is done (the step that starts the next pass
%% is counted too), and the most words the scan's state held after one
steps(T, Acc, Words, Sleep) ->
    timer:sleep(Sleep),
    {Us, T1} = timer:tc(fun() -> beamscope_info:top_step(T, ?BUDGET_US, [])
                        end),
    W = max(Words, erts_debug:flat_size(T1)),
    case beamscope_info:top_passed(T1) of
        {0, _} -> steps(T1, [Us | Acc], W, Sleep);
        _ -> {[Us | Acc], W, T1}
    end.

size_text(B) when B >= 1000000 -> io_lib:format("~.1f MB", [B / 1.0e6]);
size_text(B) -> io_lib:format("~.1f kB", [B / 1.0e3]).

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
