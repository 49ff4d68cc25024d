%% bs_lbl_srv: unregistered proc_lib processes of known callback modules,
%% kept busy, so that a tool can say what they are (test/t0575-labels.sh).
%%
%% start(N, Ms): N gen_servers of this module, a gen_statem (bs_lbl_fsm)
%% and a supervisor (bs_lbl_sup), none registered, none linked to the
%% caller; a plain process calls each of them every Ms milliseconds until
%% stop/0.  Returns the pids as text, servers first.
-module(bs_lbl_srv).
-behaviour(gen_server).
-export([start/2, stop/0, label_calls/0]).
-export([init/1, handle_call/3, handle_cast/2]).

start(N, Ms) ->
    Srvs = [begin {ok, P} = gen_server:start(?MODULE, [], []), P end
            || _ <- lists:seq(1, N)],
    {ok, Fsm} = gen_statem:start(bs_lbl_fsm, [], []),
    {ok, Sup} = supervisor:start_link(bs_lbl_sup, []),
    unlink(Sup),
    All = Srvs ++ [Fsm, Sup],
    Calls = [{P, ping} || P <- Srvs ++ [Fsm]] ++ [{Sup, which_children}],
    Pinger = spawn(fun() -> ping(Calls, Ms) end),
    register(bs_lbl_pinger, Pinger),
    [pid_to_list(P) || P <- All].

stop() ->
    bs_lbl_pinger ! stop,
    ok.

ping(Calls, Ms) ->
    [gen:call(P, '$gen_call', Req, 1000) || {P, Req} <- Calls],
    receive
        stop -> [exit(P, kill) || {P, _} <- Calls], ok
    after Ms ->
        ping(Calls, Ms)
    end.

%% How often the agent looked a process up, once counting is on: the
%% first call turns call counting on and answers 0.
label_calls() ->
    MFA = {beamscope_info, label, 2},
    case erlang:trace_info(MFA, call_count) of
        {call_count, N} when is_integer(N) -> N;
        _ -> erlang:trace_pattern(MFA, true, [call_count]), 0
    end.

init([]) -> {ok, nostate}.
handle_call(_, _, S) -> {reply, pong, S}.
handle_cast(_, S) -> {noreply, S}.
