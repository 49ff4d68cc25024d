%% A ping-pong pair (a rally) for the sequence chart: bs_ping sends the atom ping to
%% bs_pong every Ms milliseconds, bs_pong answers with the atom pong.  The
%% texts never change, so a chart that pairs a receive with the wrong send
%% shows it.  start/1 starts them (and returns when both are registered),
%% stop/0 ends the pings and returns how many rounds were played.
-module(bs_rally).
-export([start/1, stop/0]).

start(Ms) ->
    Pong = spawn(fun() -> register(bs_pong, self()), pong() end),
    Ping = spawn(fun() -> register(bs_ping, self()), ping(Pong, Ms, 0) end),
    wait([bs_ping, bs_pong]),
    {Ping, Pong}.

stop() ->
    bs_ping ! {stop, self()},
    receive {stopped, N} -> N after 5000 -> timeout end.

wait(Names) ->
    case lists:all(fun(N) -> whereis(N) =/= undefined end, Names) of
        true -> ok;
        false -> timer:sleep(5), wait(Names)
    end.

ping(Pong, Ms, N) ->
    receive
        {stop, From} ->
            From ! {stopped, N},
            receive never -> ok end
    after Ms ->
            Pong ! ping,
            receive pong -> ok end,
            ping(Pong, Ms, N + 1)
    end.

pong() ->
    receive
        ping -> bs_ping ! pong, pong()
    end.
