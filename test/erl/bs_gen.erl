%% bs_gen: gen calls with known latencies, for the gen call tests.
%%
%% A gen_server (bs_gen_srv) whose handle_call takes 1 ms for nine `get`s
%% in ten and 40 ms for the tenth, 5 ms for every `put`, and never answers
%% `block`; a gen_statem (bs_gen_fsm) that answers `ping` after 3 ms.  The
%% clients measure every call themselves: that is the truth the tests hold
%% beamscope's numbers to.
-module(bs_gen).
-behaviour(gen_server).

-export([start/0, run/2, run_send_request/1, block/0, statem/1, remote/2,
         quantiles/1, unnamed/1, long_kind/0]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).
-export([callback_mode/0, ready/3]).

start() ->
    case whereis(bs_gen_srv) of
        undefined ->
            {ok, P} = gen_server:start({local, bs_gen_srv}, ?MODULE, [], []),
            {ok, F} = gen_statem:start({local, bs_gen_fsm}, ?MODULE, statem, []),
            {P, F};
        P ->
            {P, whereis(bs_gen_fsm)}
    end.

init(statem) -> {ok, ready, 0};
init([]) -> {ok, 0}.

handle_call(get, _From, N) ->
    timer:sleep(case N rem 10 of 9 -> 40; _ -> 1 end),
    {reply, {ok, N}, N + 1};
handle_call({put, _K, _V}, _From, N) ->
    timer:sleep(5),
    {reply, ok, N};
handle_call({sr, _I}, _From, N) ->
    {reply, ok, N};
handle_call(block, _From, N) ->
    {noreply, N};
handle_call(new_client_state_machine_request, _From, N) ->
    {reply, ok, N}.

handle_cast(_, S) -> {noreply, S}.
handle_info(_, S) -> {noreply, S}.

callback_mode() -> state_functions.

ready({call, From}, ping, N) ->
    timer:sleep(3),
    {keep_state, N + 1, [{reply, From, pong}]};
ready(_, _, N) ->
    {keep_state, N}.

timed(F) ->
    T0 = erlang:monotonic_time(microsecond),
    F(),
    erlang:monotonic_time(microsecond) - T0.

%% Gets and Puts calls from one client, interleaved; each kind's latencies
%% (microseconds, as the client saw them) summed up by quantiles/1.
run(Gets, Puts) ->
    Srv = whereis(bs_gen_srv),
    {G, P} = lists:foldl(
               fun(I, {G0, P0}) ->
                       G1 = [timed(fun() -> gen_server:call(Srv, get) end) | G0],
                       P1 = case I =< Puts of
                                true -> [timed(fun() -> gen_server:call(Srv, {put, I, I}) end) | P0];
                                false -> P0
                            end,
                       {G1, P1}
               end, {[], []}, lists:seq(1, Gets)),
    {quantiles(G), quantiles(P)}.

%% send_request/2, the reply collected later.
run_send_request(N) ->
    Ids = [gen_server:send_request(bs_gen_srv, {sr, I}) || I <- lists:seq(1, N)],
    [{reply, ok} = gen_server:wait_response(Id, 5000) || Id <- Ids],
    N.

%% A caller that waits forever on `block`; its pid.
block() ->
    spawn(fun() -> gen_server:call(bs_gen_srv, block, infinity) end).

statem(N) ->
    quantiles([timed(fun() -> pong = gen_statem:call(bs_gen_fsm, ping) end)
               || _ <- lists:seq(1, N)]).

%% From this node to the server on Node, by name.
remote(Node, N) ->
    quantiles([timed(fun() -> gen_server:call({bs_gen_srv, Node}, {put, 1, 1}) end)
               || _ <- lists:seq(1, N)]).

%% A server of this module started without a name (start_link/3, linked
%% to a process kept for it), called N times for `get`; its pid as text.
unnamed(N) ->
    Me = self(),
    spawn(fun() ->
                  {ok, P} = gen_server:start_link(?MODULE, [], []),
                  Me ! {unnamed, P},
                  receive stop -> ok end
          end),
    P = receive {unnamed, Pid} -> Pid end,
    [gen_server:call(P, get) || _ <- lists:seq(1, N)],
    pid_to_list(P).

%% A call whose kind is a long atom (32 characters).
long_kind() ->
    gen_server:call(bs_gen_srv, new_client_state_machine_request).

%% {Count, P50, P99} of a list of microseconds.
quantiles([]) -> {0, 0, 0};
quantiles(L) ->
    S = list_to_tuple(lists:sort(L)),
    N = tuple_size(S),
    Q = fun(F) -> element(max(1, min(N, ceil(F * N))), S) end,
    {N, Q(0.5), Q(0.99)}.
