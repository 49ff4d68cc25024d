%% The profiler's bench workload (scripts/bench-profile): N registered
%% workers (bench_p1 ... bench_pN), each doing W rounds of a fixed loop,
%% started together; go/2 returns the wall time until the last is done, in
%% microseconds.  The same work whatever is sampled.
-module(bench_prof).
-export([prepare/1, go/2, work/2]).

prepare(N) ->
    [begin
         P = spawn(fun() -> receive {go, W, From} -> work(W, 0), From ! {done, self()} end end),
         register(list_to_atom("bench_p" ++ integer_to_list(I)), P),
         P
     end || I <- lists:seq(1, N)],
    ok.

go(N, W) ->
    Ps = [whereis(list_to_atom("bench_p" ++ integer_to_list(I))) || I <- lists:seq(1, N)],
    T0 = erlang:monotonic_time(microsecond),
    [P ! {go, W, self()} || P <- Ps],
    [receive {done, P} -> ok end || P <- Ps],
    erlang:monotonic_time(microsecond) - T0.

work(0, Acc) -> Acc;
work(W, Acc) -> work(W - 1, f(200, Acc) + g(50, Acc)).

f(0, A) -> A;
f(N, A) -> f(N - 1, A + 1).

g(0, A) -> A;
g(N, A) -> g(N - 1, A + 2).
