%% A workload for --match with a known answer: a source sends a sink N
%% messages, one in every K a {deliver, I, Tag}, the others {noise, I};
%% then one sync round trip, so that the caller knows all of them are in.
-module(bs_match).
-export([ready/0, run/2, sink/0, source/0]).

%% Both processes registered (bs_msrc, bs_msink); the sink's pid as text.
ready() ->
    [exit(P, kill) || P <- [whereis(N) || N <- [bs_msrc, bs_msink]], is_pid(P)],
    timer:sleep(20),
    Sink = spawn(?MODULE, sink, []),
    register(bs_msink, Sink),
    register(bs_msrc, spawn(?MODULE, source, [])),
    pid_to_list(Sink).

%% The sink receives N + 1 messages and sends 1 (synced); the source
%% sends N + 2 (the last to the caller) and receives 2 (run, synced).
run(N, K) ->
    bs_msrc ! {run, self(), N, K},
    receive {bs_match_done, Src} -> Src end,
    ok.

source() ->
    receive
        {run, From, N, K} ->
            [bs_msink ! case I rem K of
                            0 -> {deliver, I, x};
                            _ -> {noise, I}
                        end || I <- lists:seq(1, N)],
            bs_msink ! {sync, self()},
            receive synced -> ok end,
            From ! {bs_match_done, self()},
            source()
    end.

sink() ->
    receive
        {sync, From} -> From ! synced, sink();
        _ -> sink()
    end.
