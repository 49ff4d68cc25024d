%% bs_work: workloads of known shape for beamscope's tests.
%%
%% sink(N, K): a process registered as bs_sink receives exactly N messages
%% {msg, I} (I = 1..N, in order) from one sender, then spawns K children that
%% exit normally.  Returns {SinkPid, SenderPid} once all of it has happened.
-module(bs_work).
-export([sink/2, sink_ready/0, sink_run/2, flood/2, spinner/0, idle/0,
         mem_watch/0, mem_peak/0, victim/0, hostile/0,
         gc_proc/0, hold_tree/0, tmo_ready/1, tmo_run/3,
         tmo_parent/1, tmo_follow/3, tmo_spin/1, tmo_chat/1]).

%% tmo_ready(Name) starts a process registered as Name that waits; it
%% returns its pid as text.  tmo_run(Name, T, M) makes it receive {go, ...},
%% then loop T times on a receive that times out at once (as gen_server2
%% does), then receive M real messages that are the atom timeout from
%% another process, then send {done, ...} and receive stop.  It ends with
%% exactly M + 2 received messages, T receive timeouts and 1 send.
tmo_ready(Name) ->
    Pid = spawn(fun() ->
                        register(Name, self()),
                        receive {go, From, T, M} -> ok end,
                        tmo_expire(T),
                        tmo_atoms(M),
                        From ! {done, self()},
                        receive stop -> ok end
                end),
    wait_registered(Name, Pid, 1000),
    pid_to_list(Pid).

tmo_run(Name, T, M) ->
    Pid = whereis(Name),
    Pid ! {go, self(), T, M},
    spawn(fun() -> [Pid ! timeout || _ <- lists:seq(1, M)], ok end),
    receive {done, Pid} -> ok end,
    Pid ! stop,
    ok.

%% tmo_parent(Name) starts a registered process that, at tmo_follow(Name,
%% T, M), spawns a child that receives go, times out T times and receives
%% M atoms timeout from its parent; tmo_follow returns the child's pid as
%% text.  The child ends with M + 1 received messages and T timeouts.
tmo_parent(Name) ->
    Pid = spawn(fun() ->
                        register(Name, self()),
                        receive {go, From, T, M} -> ok end,
                        Self = self(),
                        Kid = spawn(fun() ->
                                            receive go -> ok end,
                                            tmo_expire(T),
                                            tmo_atoms(M),
                                            Self ! {kid_done, self()}
                                    end),
                        Kid ! go,
                        [Kid ! timeout || _ <- lists:seq(1, M)],
                        receive {kid_done, Kid} -> ok end,
                        From ! {done, pid_to_list(Kid)},
                        receive stop -> ok end
                end),
    wait_registered(Name, Pid, 1000),
    pid_to_list(Pid).

tmo_follow(Name, T, M) ->
    Pid = whereis(Name),
    Pid ! {go, self(), T, M},
    receive {done, Kid} -> Pid ! stop, Kid end.

%% tmo_spin(Name) starts a registered process that times out in a loop
%% (a hundred `receive ... after 0` a millisecond, as gen_server2's queues
%% do) until it receives stop; tmo_chat(Name) a registered pair that
%% exchanges real messages, {chat, I} and {ack, I}, ten a millisecond at
%% most, until Name receives stop.  Both return the pid as text.
tmo_spin(Name) ->
    Pid = spawn(fun() -> register(Name, self()), spin() end),
    wait_registered(Name, Pid, 1000),
    pid_to_list(Pid).

spin() ->
    case tmo_burst(100) of
        stop -> ok;
        go -> timer:sleep(1), spin()
    end.

tmo_burst(0) -> go;
tmo_burst(N) ->
    receive stop -> stop after 0 -> tmo_burst(N - 1) end.

tmo_chat(Name) ->
    Echo = spawn(fun Echo() -> receive {chat, From, I} -> From ! {ack, I}, Echo() end end),
    Pid = spawn(fun() -> register(Name, self()), chat(Echo, 0) end),
    wait_registered(Name, Pid, 1000),
    pid_to_list(Pid).

%% it waits with a message of its own (no after: no timeout of its own)
chat(Echo, I) ->
    Echo ! {chat, self(), I},
    receive
        stop -> exit(Echo, kill);
        {ack, I} when I rem 10 =:= 9 ->
            erlang:send_after(1, self(), tick),
            receive tick -> chat(Echo, I + 1) end;
        {ack, I} -> chat(Echo, I + 1)
    end.

tmo_expire(0) -> ok;
tmo_expire(T) ->
    receive {never, _} -> ok after 0 -> ok end,
    tmo_expire(T - 1).

tmo_atoms(0) -> ok;
tmo_atoms(M) ->
    receive timeout -> tmo_atoms(M - 1) end.

sink(N, K) ->
    Parent = self(),
    Sink = spawn(fun() ->
                         register(bs_sink, self()),
                         Parent ! {ready, self()},
                         sink_loop(1, N),
                         Kids = [spawn(fun() -> ok end) || _ <- lists:seq(1, K)],
                         Parent ! {done, self(), Kids},
                         receive stop -> ok end
                 end),
    receive {ready, Sink} -> ok end,
    Sender = spawn(fun() -> [bs_sink ! {msg, I} || I <- lists:seq(1, N)], ok end),
    receive {done, Sink, _} -> ok end,
    timer:sleep(50),
    Sink ! stop,
    {Sink, Sender}.

%% The same in two steps, so a tool can look at bs_sink before it works:
%% sink_ready() starts and registers it (it does nothing else) and returns
%% its pid as text; sink_run(N, K) makes it receive {go, ...}, then N
%% messages {msg, I}, spawn K children, send {done, ...}, receive stop, exit.
%% The sink ends with exactly 1 send, N + 2 receives and K spawns.
sink_ready() ->
    Pid = spawn(fun() ->
                        register(bs_sink, self()),
                        receive {go, From, N, K} -> ok end,
                        sink_loop(1, N),
                        Kids = [spawn(fun() -> ok end) || _ <- lists:seq(1, K)],
                        From ! {done, self(), Kids},
                        receive stop -> ok end
                end),
    wait_registered(bs_sink, Pid, 5000),
    pid_to_list(Pid).

sink_run(N, K) ->
    Sink = whereis(bs_sink),
    Sink ! {go, self(), N, K},
    spawn(fun() -> [bs_sink ! {msg, I} || I <- lists:seq(1, N)], ok end),
    receive {done, Sink, _} -> ok end,
    timer:sleep(50),
    Sink ! stop,
    ok.

%% a sink left registered by a test that failed makes this one fail, not hang
wait_registered(Name, Pid, Ms) ->
    case whereis(Name) of
        Pid -> ok;
        _ when Ms =< 0 -> erlang:error({not_registered, Name});
        _ -> timer:sleep(1), wait_registered(Name, Pid, Ms - 1)
    end.

sink_loop(I, N) when I > N -> ok;
sink_loop(I, N) ->
    receive {msg, I} -> sink_loop(I + 1, N) end.

%% flood(Pairs, Seconds): Pairs ping-pong pairs exchanging as fast as they can.
flood(Pairs, Seconds) ->
    Stop = erlang:monotonic_time(millisecond) + Seconds * 1000,
    Ps = [spawn(fun() -> pinger(Stop) end) || _ <- lists:seq(1, Pairs)],
    [begin Ref = monitor(process, P), receive {'DOWN', Ref, _, _, _} -> ok end end
     || P <- Ps],
    ok.

pinger(Stop) ->
    Ponger = spawn(fun ponger/0),
    ping(Ponger, Stop).

ping(Ponger, Stop) ->
    case erlang:monotonic_time(millisecond) < Stop of
        true ->
            Ponger ! {ping, self()},
            receive pong -> ping(Ponger, Stop) end;
        false ->
            exit(Ponger, kill)
    end.

ponger() ->
    receive {ping, From} -> From ! pong, ponger() end.

%% A registered process that is always busy, for tracer-conflict tests.
spinner() ->
    register(bs_spinner, spawn(fun idle/0)),
    ok.

idle() ->
    receive _ -> idle() end.

%% A registered process that collects its garbage N times on {gc, N}.
gc_proc() ->
    register(bs_gc, spawn(fun gc_loop/0)),
    ok.

gc_loop() ->
    receive
        {gc, N} -> [erlang:garbage_collect() || _ <- lists:seq(1, N)], gc_loop()
    end.

%% hold_tree(): a root that, on go, spawns 3 children that spawn 2 each;
%% all 10 stay alive, answering nothing, until they get stop.  Returns the
%% root's pid as text.
hold_tree() ->
    Root = spawn(fun() ->
                         receive go -> ok end,
                         [spawn(fun() -> [spawn(fun hold/0) || _ <- [1, 2]], hold() end)
                          || _ <- [1, 2, 3]],
                         hold()
                 end),
    pid_to_list(Root).

hold() ->
    receive
        stop -> ok;
        _ -> hold()
    end.

%% mem_watch() samples erlang:memory(total) every 50 ms from now on;
%% mem_peak() returns the largest growth over the first sample, in MB.
mem_watch() ->
    Base = erlang:memory(total),
    register(bs_memwatch, spawn(fun() -> mem_loop(Base, 0) end)),
    ok.

mem_loop(Base, Peak) ->
    receive
        {peak, From} -> From ! {peak, Peak}
    after 50 ->
        mem_loop(Base, max(Peak, erlang:memory(total) - Base))
    end.

mem_peak() ->
    bs_memwatch ! {peak, self()},
    receive {peak, P} -> P div 1048576 end.

%% victim() starts bs_victim, which receives anything and lives on;
%% hostile() sends it terms that are hard to show and to cut, one of each,
%% and returns how many.
victim() ->
    Pid = spawn(fun idle/0),
    register(bs_victim, Pid),
    ok.

hostile() ->
    Deep = lists:foldl(fun(_, A) -> [A] end, [], lists:seq(1, 100000)),
    DeepT = lists:foldl(fun(_, A) -> {A} end, {}, lists:seq(1, 100000)),
    Terms = [<<255, 254, 0, 1, 27, "[2J">>,
             "\e]2;PWNED\a",
             [27, $[, $2, $J, $\r, $\n, 0, 127, 16#9b, $x],
             list_to_atom([$a, 27, $[, $3, $1, $m, $b]),
             'ünïcødé',
             binary:copy(<<"x">>, 10 * 1024 * 1024),
             lists:seq(1, 1000000),
             maps:from_list([{I, I} || I <- lists:seq(1, 100000)]),
             Deep, DeepT,
             [1, 2 | 3],
             fun idle/0, make_ref(), hd(erlang:ports()),
             1 bsl 200, 3.14, <<1:3>>],
    [bs_victim ! T || T <- Terms],
    length(Terms).
