%% beamscope_tracer: the module that owns the tracer NIF (erl_tracer
%% behaviour).  Every function below is replaced by the NIF at load; the
%% bodies only run if the library is missing.  load/1 lives here because
%% erlang:load_nif/2 must be called from the module it belongs to.
-module(beamscope_tracer).
-export([load/1]).
-export([session_new/4, session_stop/1, credit/3, dropped/2, inflight/2]).
-export([enabled/3, enabled_send/3, enabled_receive/3, enabled_procs/3,
         enabled_call/3, enabled_garbage_collection/3, enabled_ports/3,
         enabled_running_ports/3, enabled_running_procs/3,
         trace/5, trace_send/5, trace_receive/5, trace_procs/5,
         trace_call/5, trace_garbage_collection/5, trace_ports/5,
         trace_running_ports/5, trace_running_procs/5]).

load(Path) -> erlang:load_nif(Path, 0).

session_new(_Workers, _Mask, _PayloadBytes, _HighWater) -> nif().
session_stop(_Session) -> nif().
credit(_Session, _Worker, _N) -> nif().
dropped(_Session, _Worker) -> nif().
inflight(_Session, _Worker) -> nif().

enabled(_, _, _) -> nif().
enabled_send(_, _, _) -> nif().
enabled_receive(_, _, _) -> nif().
enabled_procs(_, _, _) -> nif().
enabled_call(_, _, _) -> nif().
enabled_garbage_collection(_, _, _) -> nif().
enabled_ports(_, _, _) -> nif().
enabled_running_ports(_, _, _) -> nif().
enabled_running_procs(_, _, _) -> nif().
trace(_, _, _, _, _) -> nif().
trace_send(_, _, _, _, _) -> nif().
trace_receive(_, _, _, _, _) -> nif().
trace_procs(_, _, _, _, _) -> nif().
trace_call(_, _, _, _, _) -> nif().
trace_garbage_collection(_, _, _, _, _) -> nif().
trace_ports(_, _, _, _, _) -> nif().
trace_running_ports(_, _, _, _, _) -> nif().
trace_running_procs(_, _, _, _, _) -> nif().

nif() -> erlang:nif_error(not_loaded).
