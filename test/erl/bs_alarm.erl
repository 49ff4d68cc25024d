%% Processes that set off the VM's alarms, for the alarms' tests:
%% gc/0 builds a large heap and collects it (long_gc, large_heap),
%% sched/0 makes one long BIF call (long_schedule), queue/1 lets its
%% mailbox grow (long_message_queue), busy/1 writes to a port that does
%% not read (busy_port), flood/1 sends to a process on
%% another node faster than that node reads (busy_dist_port), and
%% hold/0 holds the node's system monitor, as another tool would.
-module(bs_alarm).
-export([gc/0, sched/0, queue/1, flood/1, hold/0, hold_loop/0]).
-export([gc_loop/0, busy/1]).

%% registered, so the test knows the pid; each runs when told (gc/0
%% each time, the others once)
gc() ->
    spawn_named(bs_gc, fun ?MODULE:gc_loop/0).

gc_loop() ->
    receive
        go -> big_gc(), gc_loop();
        stop -> ok
    end.

big_gc() ->
    L = lists:seq(1, 4000000),
    erlang:garbage_collect(),
    _ = length(L),
    erlang:garbage_collect(),
    ok.

sched() ->
    spawn_named(bs_sched, fun() ->
        receive go ->
            B = term_to_binary(lists:seq(1, 3000000), [{compressed, 9}]),
            _ = byte_size(B)
        end,
        idle()
    end).

queue(N) ->
    spawn_named(bs_queue, fun() ->
        receive go -> [self() ! {filler, I} || I <- lists:seq(1, N)] end,
        idle()
    end).

%% to a process on Node that reads nothing; a MB a message
flood(Node) ->
    spawn_named(bs_flood, fun() ->
        To = spawn(Node, fun() -> receive never -> ok end end),
        Bin = binary:copy(<<"x">>, 1 bsl 20),
        receive go -> ok end,
        [To ! Bin || _ <- lists:seq(1, 400)],
        idle()
    end).

%% writes to a port that reads nothing, whose command line ends with
%% Secret (as a node started through a port may have its cookie there)
busy(Secret) ->
    spawn_named(bs_busy_port, fun() ->
        receive go -> ok end,
        Port = open_port({spawn, "sleep 20; true " ++ Secret}, [binary]),
        B = binary:copy(<<"x">>, 65536),
        [port_command(Port, B) || _ <- lists:seq(1, 100)],
        idle()
    end).

hold() ->
    P = spawn_named(bs_holder, fun hold_loop/0),
    erlang:system_monitor(P, [{long_gc, 5000}]),
    P.

hold_loop() ->
    receive _ -> hold_loop() end.

idle() ->
    receive stop -> ok end.

spawn_named(Name, F) ->
    P = spawn(F),
    register(Name, P),
    P.
