%% bs_cluster: cross-node workloads with exactly known counts.
%%
%% ponger(Name): a registered process that answers {ping, From, I} with
%% {pong, I} to From.  pinger(Name, Node, PongName): a registered process
%% that looks up PongName on Node once, then waits for {go, N} and plays
%% N rounds: N sends to the ponger, N receives of its answers (plus the one
%% receive of go).  Another {go, M} plays M rounds more.
-module(bs_cluster).
-export([start_ponger/1, start_pinger/3, go/2, wait_done/2]).

start_ponger(Name) ->
    Pid = spawn(fun() -> pong_loop() end),
    register(Name, Pid),
    ok.

pong_loop() ->
    receive
        {ping, From, I} ->
            From ! {pong, I},
            pong_loop();
        stop ->
            ok
    end.

start_pinger(Name, Node, PongName) ->
    Pong = rpc:call(Node, erlang, whereis, [PongName]),
    true = is_pid(Pong),
    Pid = spawn(fun() -> ping_wait(Pong) end),
    register(Name, Pid),
    ok.

ping_wait(Pong) ->
    receive
        {go, N} -> ping_loop(Pong, 1, N)
    end.

ping_loop(Pong, I, N) when I > N ->
    %% stay alive, so the run can be checked at leisure, or played again
    put(bs_done, true),
    receive
        {go, M} -> erase(bs_done), ping_loop(Pong, 1, M);
        stop -> ok
    end;
ping_loop(Pong, I, N) ->
    Pong ! {ping, self(), I},
    receive
        {pong, I} -> ping_loop(Pong, I + 1, N)
    end.

go(Name, N) ->
    whereis(Name) ! {go, N},
    ok.

%% Wait until the pinger has played its rounds.
wait_done(Name, TimeoutMs) when TimeoutMs =< 0 ->
    {timeout, Name};
wait_done(Name, TimeoutMs) ->
    %% done, nothing left in its queue, and blocked in its receive (not
    %% between taking a new go and starting on it)
    [{dictionary, D}, {message_queue_len, Q}, {status, S}] =
        process_info(whereis(Name), [dictionary, message_queue_len, status]),
    case {proplists:get_value(bs_done, D), Q, S} of
        {true, 0, waiting} -> done;
        _ -> timer:sleep(20), wait_done(Name, TimeoutMs - 20)
    end.
