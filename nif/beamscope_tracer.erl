%% beamscope_tracer: the Erlang face of the tracer NIF (beamscope_tracer.c
%% and the C files tracer.h lists).
%%
%% Owns nothing but stubs.  Invariants: every function but load/1 is
%% replaced by the NIF, so no body below may do real work; the module is
%% loaded from a binary by beamscope_agent and lives for one session only,
%% hence no on_load and no upgrade.
-module(beamscope_tracer).

-export([load/1]).
-export([session_new/4, session_stop/1, take/3, idle/2, pending/2, dropped/2]).
-export([session_new/5, counts_take/1, focus/3, session_limits/6, limits/1]).
-export([session_memory/5, discard/2, worker_stats/2]).
%% erl_tracer callbacks
-export([enabled/3, enabled_send/3, enabled_receive/3, enabled_procs/3,
         enabled_call/3, enabled_garbage_collection/3,
         enabled_running_procs/3, enabled_ports/3, enabled_running_ports/3,
         trace/5, trace_send/5, trace_receive/5, trace_procs/5,
         trace_call/5, trace_garbage_collection/5, trace_running_procs/5,
         trace_ports/5, trace_running_ports/5]).

-nifs([session_new/4, session_stop/1, take/3, idle/2, pending/2, dropped/2,
       session_new/5, counts_take/1, focus/3, session_limits/6, limits/1,
       session_memory/5, discard/2, worker_stats/2,
       enabled/3, enabled_send/3, enabled_receive/3, enabled_procs/3,
       enabled_call/3, enabled_garbage_collection/3,
       enabled_running_procs/3, enabled_ports/3, enabled_running_ports/3,
       trace/5, trace_send/5, trace_receive/5, trace_procs/5,
       trace_call/5, trace_garbage_collection/5, trace_running_procs/5,
       trace_ports/5, trace_running_ports/5]).

%% Here and not in the agent: erlang:load_nif/2 binds the library to the
%% module that calls it.
-spec load(file:filename()) -> ok | {error, {atom(), string()}}.
load(Path) ->
    erlang:load_nif(Path, 0).

session_new(_Workers, _Kinds, _PayloadBytes, _HighWater) ->
    erlang:nif_error(not_loaded).
session_stop(_S) ->
    erlang:nif_error(not_loaded).
take(_S, _W, _Max) ->
    erlang:nif_error(not_loaded).
idle(_S, _W) ->
    erlang:nif_error(not_loaded).
pending(_S, _W) ->
    erlang:nif_error(not_loaded).
dropped(_S, _W) ->
    erlang:nif_error(not_loaded).
session_new(_Workers, _Kinds, _PayloadBytes, _HighWater, _CountTier) ->
    erlang:nif_error(not_loaded).
counts_take(_S) ->
    erlang:nif_error(not_loaded).
focus(_S, _Pid, _On) ->
    erlang:nif_error(not_loaded).
session_limits(_S, _Kinds, _MaxEvents, _DurationMs, _Rate, _Shed) ->
    erlang:nif_error(not_loaded).
limits(_S) ->
    erlang:nif_error(not_loaded).
session_memory(_Workers, _Kinds, _PayloadBytes, _HighWater, _CountTier) ->
    erlang:nif_error(not_loaded).
discard(_S, _W) ->
    erlang:nif_error(not_loaded).
worker_stats(_S, _W) ->
    erlang:nif_error(not_loaded).

enabled(_Tag, _S, _Tracee) ->
    erlang:nif_error(not_loaded).
enabled_send(_Tag, _S, _Tracee) ->
    erlang:nif_error(not_loaded).
enabled_receive(_Tag, _S, _Tracee) ->
    erlang:nif_error(not_loaded).
enabled_procs(_Tag, _S, _Tracee) ->
    erlang:nif_error(not_loaded).
enabled_call(_Tag, _S, _Tracee) ->
    erlang:nif_error(not_loaded).
enabled_garbage_collection(_Tag, _S, _Tracee) ->
    erlang:nif_error(not_loaded).
enabled_running_procs(_Tag, _S, _Tracee) ->
    erlang:nif_error(not_loaded).
enabled_ports(_Tag, _S, _Tracee) ->
    erlang:nif_error(not_loaded).
enabled_running_ports(_Tag, _S, _Tracee) ->
    erlang:nif_error(not_loaded).

trace(_Tag, _S, _Tracee, _Term, _Opts) ->
    erlang:nif_error(not_loaded).
trace_send(_Tag, _S, _Tracee, _Term, _Opts) ->
    erlang:nif_error(not_loaded).
trace_receive(_Tag, _S, _Tracee, _Term, _Opts) ->
    erlang:nif_error(not_loaded).
trace_procs(_Tag, _S, _Tracee, _Term, _Opts) ->
    erlang:nif_error(not_loaded).
trace_call(_Tag, _S, _Tracee, _Term, _Opts) ->
    erlang:nif_error(not_loaded).
trace_garbage_collection(_Tag, _S, _Tracee, _Term, _Opts) ->
    erlang:nif_error(not_loaded).
trace_running_procs(_Tag, _S, _Tracee, _Term, _Opts) ->
    erlang:nif_error(not_loaded).
trace_ports(_Tag, _S, _Tracee, _Term, _Opts) ->
    erlang:nif_error(not_loaded).
trace_running_ports(_Tag, _S, _Tracee, _Term, _Opts) ->
    erlang:nif_error(not_loaded).
