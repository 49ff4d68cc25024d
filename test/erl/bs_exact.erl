%% Calls whose number and allocation are known, for exact mode's tests:
%% run(NF, NG) has a process of its own call f/1 NF times (each builds a
%% list of ten cells: 20 words) and g/2 NG times (no allocation), and
%% returns when it is done.  idle/0 is never called.
-module(bs_exact).
-export([run/2, f/1, g/2, idle/0]).

run(NF, NG) ->
    Self = self(),
    Pid = spawn(fun() ->
                        loop_f(NF),
                        loop_g(NG, 0),
                        Self ! {done, self()}
                end),
    receive {done, Pid} -> ok end.

loop_f(0) -> ok;
loop_f(N) -> _ = f(N), loop_f(N - 1).

loop_g(0, Acc) -> Acc;
loop_g(N, Acc) -> loop_g(N - 1, g(N, Acc)).

f(X) -> [X, X, X, X, X, X, X, X, X, X].

g(X, Y) -> X + Y.

idle() -> ok.
