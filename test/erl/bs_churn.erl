%% bs_churn: a node as busy servers make them, for the view's tests and
%% scripts/bench-ui: many processes, most of them short-lived.
%%
%% start(Long, Rate, LifeMs): Long long-lived processes, a few of which get
%% a message every 100 ms, and Rate short-lived processes a second, each of
%% which sends one message and exits after LifeMs.  Returns at once; the
%% processes are under bs_churn, which stop/0 ends; quiet/0 stops the
%% spawning and the messages and keeps the long-lived processes.
%% burst(N): N processes, started as bs_churn:bye/1, that each send one
%% message and exit normally; returns their pids as text once all have
%% exited.
%% plburst(N): N processes started by proc_lib:spawn as bs_churn:bye/1
%% and N gen_servers of this module whose init/1 says ignore, all of which
%% exit at once; returns when all have.
%% wrap(N): spawns N processes that exit at once, so that the pids made
%% after it have large numbers.
%% named(Prefix, N): N idle processes registered as Prefix_1 .. Prefix_N,
%% each of which received one message.
-module(bs_churn).
-export([start/3, stop/0, quiet/0, burst/1, bye/1, plburst/1, init/1, wrap/1,
         named/2]).

start(Long, Rate, LifeMs) ->
    Parent = self(),
    Pid = spawn(fun() ->
                        register(bs_churn, self()),
                        Olds = list_to_tuple([spawn_link(fun old/0)
                                              || _ <- lists:seq(1, Long)]),
                        Poke = spawn_link(fun() -> poke(Olds) end),
                        Parent ! {started, self()},
                        spawner(Olds, Rate, LifeMs),
                        unlink(Poke),
                        exit(Poke, kill),
                        old()
                end),
    receive {started, Pid} -> ok end,
    ok.

stop() ->
    case whereis(bs_churn) of
        undefined -> ok;
        Pid ->
            Ref = monitor(process, Pid),
            exit(Pid, kill),
            receive {'DOWN', Ref, _, _, _} -> ok end
    end.

quiet() ->
    bs_churn ! quiet,
    ok.

old() ->
    receive _ -> old() end.

%% 1 in 100 of the long-lived processes hears from the next one, every 100 ms
poke(Olds) ->
    N = tuple_size(Olds),
    [element(rand:uniform(N), Olds) ! poke || _ <- lists:seq(1, max(1, N div 100))],
    timer:sleep(100),
    poke(Olds).

%% Rate a second, spawned every 10 ms in batches
spawner(Olds, Rate, LifeMs) ->
    N = tuple_size(Olds),
    Batch = max(1, Rate div 100),
    [spawn(fun() ->
                   element(rand:uniform(N), Olds) ! hello,
                   timer:sleep(LifeMs)
           end) || _ <- lists:seq(1, Batch)],
    receive quiet -> ok after 10 -> spawner(Olds, Rate, LifeMs) end.

burst(N) ->
    Self = self(),
    Ps = [spawn(?MODULE, bye, [Self]) || _ <- lists:seq(1, N)],
    [receive {bye, P} -> ok end || P <- Ps],
    [begin Ref = monitor(process, P), receive {'DOWN', Ref, _, _, _} -> ok end end
     || P <- Ps],
    [pid_to_list(P) || P <- Ps].

bye(To) ->
    To ! {bye, self()}.

plburst(N) ->
    Self = self(),
    Ps = [proc_lib:spawn(?MODULE, bye, [Self]) || _ <- lists:seq(1, N)],
    [receive {bye, P} -> ok end || P <- Ps],
    [ignore = gen_server:start(?MODULE, [], []) || _ <- lists:seq(1, N)],
    [begin Ref = monitor(process, P), receive {'DOWN', Ref, _, _, _} -> ok end end
     || P <- Ps],
    ok.

%% a gen_server that never starts
init([]) -> ignore.

wrap(N) ->
    [spawn(fun() -> ok end) || _ <- lists:seq(1, N)],
    ok.

named(Prefix, N) ->
    [begin
         P = spawn(fun old/0),
         register(list_to_atom(Prefix ++ "_" ++ integer_to_list(I)), P),
         P ! hello
     end || I <- lists:seq(1, N)],
    ok.
