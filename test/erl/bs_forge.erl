%% bs_forge: forged gen calls, never answered, for the hostile tests.
%%
%% start(Servers): Servers plain processes that take every message and
%% answer none.  forge(Procs, Calls, Kinds): Procs processes each send
%% Calls messages shaped as gen_server calls, {'$gen_call', {self(),
%% make_ref()}, Kind}, to the servers in turn, Kind an atom of Kinds
%% distinct ones (k1, k2, ...: distinct for each process while Kinds is
%% Procs * Calls); they stay alive until stop/0, so that no call is ever
%% abandoned.  Returns how many were sent once all are.
-module(bs_forge).
-export([start/1, forge/3, stop/0]).

start(Servers) ->
    Pids = [spawn(fun sink/0) || _ <- lists:seq(1, Servers)],
    persistent_term:put(bs_forge_servers, list_to_tuple(Pids)),
    length(Pids).

sink() ->
    receive stop -> ok; _ -> sink() end.

forge(Procs, Calls, Kinds) ->
    Srv = persistent_term:get(bs_forge_servers),
    Me = self(),
    Ps = [spawn(fun() -> caller(Me, Srv, P, Calls, Kinds) end)
          || P <- lists:seq(0, Procs - 1)],
    persistent_term:put(bs_forge_callers, Ps),
    [receive {sent, P} -> ok end || P <- Ps],
    Procs * Calls.

caller(Parent, Srv, P, Calls, Kinds) ->
    N = tuple_size(Srv),
    [begin
         K = list_to_atom("k" ++ integer_to_list((P * Calls + I) rem Kinds)),
         element(1 + (P + I) rem N, Srv) ! {'$gen_call', {self(), make_ref()}, K}
     end || I <- lists:seq(1, Calls)],
    Parent ! {sent, self()},
    receive stop -> ok end.

stop() ->
    [P ! stop || P <- persistent_term:get(bs_forge_callers, [])],
    [P ! stop || P <- tuple_to_list(persistent_term:get(bs_forge_servers, {}))],
    ok.
