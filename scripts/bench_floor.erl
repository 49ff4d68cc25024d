%% bench_floor: the erl_tracer module of scripts/bench_floor.c, a tracer
%% that answers discard to every event (the cost of the tracepoints alone).
-module(bench_floor).
-behaviour(erl_tracer).
-export([load/1, enabled/3, trace/5]).

%% erlang:load_nif/2 has to run inside this module
load(SoPath) ->
    erlang:load_nif(SoPath, 0).

enabled(_, _, _) -> erlang:nif_error(not_loaded).
trace(_, _, _, _, _) -> erlang:nif_error(not_loaded).
