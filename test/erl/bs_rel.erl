%% Processes with known links, monitors and ancestors, for the log
%% header's relations.
-module(bs_rel).
-behaviour(supervisor).
-export([start/0, init/1, start_worker/0, worker/1, link_more/0,
         big/1, big/2, fat/1, idle/0, stop/0]).

%% bs_rel_sup, a supervisor kept by bs_rel_holder, starts bs_rel_worker
%% with proc_lib: its '$ancestors' are [bs_rel_sup, the holder].  The
%% worker is linked to its supervisor, bs_rel_a and bs_rel_b (3 links),
%% monitors bs_rel_c by pid and bs_rel_d by name (2 monitors), and
%% bs_rel_e monitors it (monitored by 1).
start() ->
    Self = self(),
    spawn(fun() ->
                  register(bs_rel_holder, self()),
                  [register(N, spawn(fun idle/0)) ||
                      N <- [bs_rel_a, bs_rel_b, bs_rel_c, bs_rel_d, bs_rel_e]],
                  {ok, _} = supervisor:start_link({local, bs_rel_sup},
                                                  ?MODULE, sup),
                  Self ! started,
                  holder()
          end),
    receive started -> ok after 5000 -> error(not_started) end,
    bs_rel_e ! {monitor, whereis(bs_rel_worker)},
    %% the table has a row for each once they have received something
    [whereis(N) ! hi || N <- [bs_rel_worker, bs_rel_sup, bs_rel_a]],
    ok.

init(sup) ->
    {ok, {#{strategy => one_for_one, intensity => 0, period => 1},
          [#{id => worker, start => {?MODULE, start_worker, []}}]}}.

start_worker() ->
    proc_lib:start_link(?MODULE, worker, [self()]).

worker(Parent) ->
    register(bs_rel_worker, self()),
    link(whereis(bs_rel_a)),
    link(whereis(bs_rel_b)),
    _ = monitor(process, whereis(bs_rel_c)),
    _ = monitor(process, {bs_rel_d, node()}),
    proc_lib:init_ack(Parent, {ok, self()}),
    worker_loop().

worker_loop() ->
    receive
        {link, P} -> link(P), worker_loop();
        _ -> worker_loop()
    end.

%% one more link: bs_rel_c
link_more() ->
    bs_rel_worker ! {link, whereis(bs_rel_c)},
    ok.

holder() ->
    receive
        {fat, Words, From} ->
            proc_lib:spawn(fun() -> fat_loop(From, lists:seq(1, Words)) end),
            holder();
        stop ->
            ok
    end.

%% bs_rel_fat, started by bs_rel_holder with proc_lib (its '$ancestors'
%% are [bs_rel_holder]), holding a list of Words integers: a heap too big
%% for its dictionary to be copied to read one key
fat(Words) ->
    bs_rel_holder ! {fat, Words, self()},
    receive fat -> ok after 5000 -> error(not_started) end,
    bs_rel_fat ! hi,
    ok.

fat_loop(From, L) when is_pid(From) ->
    register(bs_rel_fat, self()),
    From ! fat,
    fat_loop(none, L);
fat_loop(none, L) ->
    receive
        stop -> length(L);
        _ -> fat_loop(none, L)
    end.

%% bs_rel_big, linked to N idle processes
big(N) ->
    big(bs_rel_big, N).

%% Name, linked to N idle processes
big(Name, N) ->
    Self = self(),
    spawn(fun() ->
                  register(Name, self()),
                  [spawn_link(fun idle/0) || _ <- lists:seq(1, N)],
                  Self ! big,
                  receive stop -> ok end
          end),
    receive big -> ok after 30000 -> error(not_started) end,
    Name ! hi,
    ok.

idle() ->
    receive
        {monitor, P} -> _ = monitor(process, P), idle();
        stop -> ok;
        _ -> idle()
    end.

stop() ->
    [exit(whereis(N), kill) || N <- [bs_rel_holder, bs_rel_sup, bs_rel_big, bs_rel_huge,
                                     bs_rel_fat],
                               whereis(N) =/= undefined],
    ok.
