%% A known conversation between three registered processes, for the
%% sequence chart: after go, bs_chat_a and bs_chat_b play ping-pong twice,
%% bs_chat_a sends a relay through bs_chat_c to bs_chat_b, and bs_chat_b
%% exits with {shutdown,bye}.  Messages: go, ping 1, pong 1, ping 2,
%% pong 2, relay, relayed (7).  say/1 makes bs_chat_a send a term of the
%% caller's choice to bs_chat_c, which drops it, say_to/2 to any pid;
%% wake/0 sends each one a message it drops.
-module(bs_chat).
-export([start/0, wake/0, go/0, say/1, say_to/2]).

start() ->
    B = spawn(fun() -> register(bs_chat_b, self()), b() end),
    C = spawn(fun() -> register(bs_chat_c, self()), c() end),
    A = spawn(fun() -> register(bs_chat_a, self()), a() end),
    wait([bs_chat_a, bs_chat_b, bs_chat_c]),
    {A, B, C}.

wait(Names) ->
    case lists:all(fun(N) -> whereis(N) =/= undefined end, Names) of
        true -> ok;
        false -> timer:sleep(5), wait(Names)
    end.

%% a message each, dropped: makes them show in the process table
wake() -> [N ! wake || N <- [bs_chat_a, bs_chat_b, bs_chat_c]], ok.

go() -> bs_chat_a ! go, ok.

say(Term) -> bs_chat_a ! {say, Term}, ok.

say_to(To, Term) -> bs_chat_a ! {say_to, To, Term}, ok.

a() ->
    receive
        go ->
            bs_chat_b ! {ping, 1},
            receive {pong, 1} -> ok end,
            bs_chat_b ! {ping, 2},
            receive {pong, 2} -> ok end,
            whereis(bs_chat_c) ! {relay, hello},
            a();
        {say, T} ->
            whereis(bs_chat_c) ! T,
            a();
        {say_to, To, T} ->
            To ! T,
            a();
        wake ->
            a()
    end.

b() ->
    receive
        {ping, N} -> bs_chat_a ! {pong, N}, b();
        {relayed, _} -> exit({shutdown, bye});
        wake -> b()
    end.

c() ->
    receive
        {relay, M} -> bs_chat_b ! {relayed, M}, c();
        _ -> c()
    end.
