%% beamscope_demo: a small, endless workload for trying beamscope.
%%
%% demo_cache is a registered server; three clients ask it for keys every
%% few hundred milliseconds; demo_jobs spawns a short-lived job now and then,
%% and every fifth job crashes.
-module(beamscope_demo).
-export([start/0]).

start() ->
    register(demo_cache, spawn(fun() -> cache(#{}) end)),
    [spawn(fun() -> client(N) end) || N <- lists:seq(1, 3)],
    register(demo_jobs, spawn(fun() -> jobs(1) end)),
    ok.

cache(Map) ->
    receive
        {get, Key, From} ->
            From ! {value, Key, maps:get(Key, Map, undefined)},
            cache(Map);
        {put, Key, Value} ->
            cache(Map#{Key => Value})
    end.

client(N) ->
    Key = rand:uniform(5),
    demo_cache ! {put, Key, {client, N, erlang:system_time(millisecond)}},
    demo_cache ! {get, Key, self()},
    receive {value, Key, _} -> ok end,
    timer:sleep(200 + rand:uniform(300)),
    client(N).

jobs(I) ->
    spawn(fun() -> job(I) end),
    timer:sleep(700),
    jobs(I + 1).

job(I) when I rem 5 =:= 0 -> exit({job_failed, I});
job(I) -> demo_cache ! {put, job, I}.
