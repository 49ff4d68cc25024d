%% Processes whose sends and receives over time are known, for the
%% table's sparklines: a steady one, one that bursts when told, and a
%% quiet one that only received once.
-module(bs_spark).
-export([start/0, steady/0, burst/0, quiet/0]).

start() ->
    register(bs_spk_steady, spawn(fun steady/0)),
    register(bs_spk_burst, spawn(fun burst/0)),
    register(bs_spk_quiet, spawn(fun quiet/0)),
    ok.

%% about 20 sends and receives a second, to itself
steady() ->
    self() ! tick,
    receive tick -> ok end,
    timer:sleep(50),
    steady().

%% told `go`: 200 sends a second for 4 seconds (800 in all), then quiet
burst() ->
    receive go -> ok end,
    Me = self(),
    _ = [begin Me ! b, receive b -> ok end,
               case K rem 20 of 0 -> timer:sleep(100); _ -> ok end
         end || K <- lists:seq(1, 800)],
    receive never -> ok end.

quiet() ->
    receive never -> ok end.
