%% bs_epmd: register a name with epmd as a node would (ALIVE2_REQ), at a
%% port of our choosing, and stay registered until halted.  For tests: a
%% name whose port nobody listens on, or a name no node could have.
-module(bs_epmd).
-export([main/1]).

main([Name, Port]) ->
    {ok, S} = gen_tcp:connect("localhost", epmd_port(), [binary, {active, false}]),
    N = unicode:characters_to_binary(Name),
    Req = <<120, (list_to_integer(Port)):16, 77, 0, 6:16, 5:16,
            (byte_size(N)):16, N/binary, 0:16>>,
    ok = gen_tcp:send(S, <<(byte_size(Req)):16, Req/binary>>),
    {ok, <<_, 0, _/binary>>} = gen_tcp:recv(S, 0, 5000),
    io:format("registered~n"),
    receive after infinity -> ok end.

epmd_port() ->
    case os:getenv("ERL_EPMD_PORT") of
        false -> 4369;
        P -> list_to_integer(P)
    end.
