%% A node in trouble: a process holding millions of messages it never
%% reads, a small one beside it, and probes that measure how late the
%% node's schedulers let a sleeping process wake.
-module(bs_bigmq).
-export([start/1, fill/1, small/0, probes/1, probe_reset/0, probe_p99/0]).

-define(PROBE_MS, 10).
%% samples each probe keeps, the newest
-define(KEEP, 4000).

%% bs_bigmq_hold sends itself N small tuples and never reads them;
%% bs_bigmq_small holds a few.  Returns when the queue is full.
start(N) ->
    Self = self(),
    register(bs_bigmq_hold, spawn(fun() -> fill(N), Self ! full,
                                           receive never_sent -> ok end
                                  end)),
    register(bs_bigmq_small, spawn(fun small/0)),
    receive full -> ok after 120000 -> error(not_full) end,
    [bs_bigmq_small ! {m, K} || K <- lists:seq(1, 3)],
    ok.

fill(0) -> ok;
fill(N) -> self() ! {m, N}, fill(N - 1).

small() ->
    receive never_sent -> ok end.

%% N probes, each sleeping ?PROBE_MS in a loop and keeping by how much
%% each sleep overshot, in microseconds
probes(N) ->
    [register(list_to_atom("bs_bigmq_probe" ++ integer_to_list(K)),
              spawn(fun() -> probe([], 0) end)) || K <- lists:seq(1, N)],
    ok.

probe(Acc, N) ->
    T0 = erlang:monotonic_time(microsecond),
    receive
        {reset, From} -> From ! {reset, self()}, probe([], 0);
        {get, From} -> From ! {samples, self(), Acc}, probe(Acc, N)
    after ?PROBE_MS ->
            Late = erlang:monotonic_time(microsecond) - T0 - ?PROBE_MS * 1000,
            case N >= ?KEEP of
                true -> probe([Late | lists:sublist(Acc, ?KEEP - 1)], N);
                false -> probe([Late | Acc], N + 1)
            end
    end.

probe_pids() ->
    [P || N <- registered(),
          lists:prefix("bs_bigmq_probe", atom_to_list(N)),
          P <- [whereis(N)], is_pid(P)].

probe_reset() ->
    Ps = probe_pids(),
    [P ! {reset, self()} || P <- Ps],
    [receive {reset, P} -> ok end || P <- Ps],
    ok.

%% {P99, Max, Samples}: the 99th percentile and the worst overshoot of
%% every probe's sleeps since the reset, in ms
probe_p99() ->
    Ps = probe_pids(),
    [P ! {get, self()} || P <- Ps],
    All = lists:sort(lists:append([receive {samples, P, S} -> S end
                                   || P <- Ps])),
    case All of
        [] -> {0, 0, 0};
        _ ->
            N = length(All),
            P99 = lists:nth(max(1, (N * 99 + 99) div 100), All),
            {P99 div 1000, lists:last(All) div 1000, N}
    end.
