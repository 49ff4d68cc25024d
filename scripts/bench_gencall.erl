%% bench_gencall: a gen_server call workload for scripts/bench-gencalls.
%% Clients call Servers round robin, Calls each; run/3 returns the wall
%% time in microseconds.
-module(bench_gencall).
-behaviour(gen_server).
-export([run/3]).
-export([init/1, handle_call/3, handle_cast/2]).

run(Servers, Clients, Calls) ->
    Ss = list_to_tuple([begin {ok, P} = gen_server:start(?MODULE, [], []), P end
                        || _ <- lists:seq(1, Servers)]),
    Self = self(),
    T0 = erlang:monotonic_time(microsecond),
    Ps = [spawn(fun() -> loop(Ss, I, Calls), Self ! {done, self()} end)
          || I <- lists:seq(1, Clients)],
    [receive {done, P} -> ok end || P <- Ps],
    T = erlang:monotonic_time(microsecond) - T0,
    [gen_server:stop(S) || S <- tuple_to_list(Ss)],
    T.

loop(_, _, 0) -> ok;
loop(Ss, I, N) ->
    S = element(1 + (I + N) rem tuple_size(Ss), Ss),
    {ok, N} = gen_server:call(S, {get, N}),
    loop(Ss, I, N - 1).

init([]) -> {ok, 0}.
handle_call({get, N}, _From, S) -> {reply, {ok, N}, S + 1}.
handle_cast(_, S) -> {noreply, S}.
