%% bs_agent_check: drives beamscope_agent on a real target node the way the
%% C node does (rpc bootstrap, requests, the stream), with this node's
%% process as Owner, and prints TAP.  Run by agent_check.sh, which starts the
%% nodes; the same module is loaded on the target for the workloads and on a
%% second driver node that is killed mid-trace.
-module(bs_agent_check).

-export([main/1]).
%% on the target
-export([workload/3, child/1, flood_setup/0, flood_run/2, pingpong/1,
         other_tracer/0, target_state/1, idle/0]).
%% on the node that gets killed
-export([hold/3]).

-define(PLAN, 40).
%% the agent's helper modules, which it loads from start/4's options
-define(HELPERS, [beamscope_printer, beamscope_info, beamscope_pattern,
                  beamscope_prof, beamscope_alarm, beamscope_scan,
                  beamscope_trace]).
-define(N, 1000).
-define(KIDS, 10).
-define(FLOOD, 200000).
%% the session's secret: requests carry it
-define(SECRET, <<"bs_agent_check:0">>).

main([Target, Victim, Build]) ->
    io:format("1..~b~n", [?PLAN]),
    put(count, 0),
    put(failed, 0),
    T = list_to_atom(Target),
    V = list_to_atom(Victim),
    Ok = try
             run(T, V, Build)
         catch
             C:R:S -> comment("driver crashed: ~p", [{C, R, S}])
         end,
    _ = Ok,
    halt(case get(failed) of 0 -> 0; _ -> 1 end).

run(T, V, Build) ->
    %% the agent sends a remote Owner everything at this name
    true = register(beamscope, self()),
    up(T),
    up(V),
    Beams = beams(Build),
    {module, _} = rpc:call(T, code, load_binary,
                           [?MODULE, "bs_agent_check.beam", object_code()]),
    tap("target is clean before anything happened", clean(T, [], 0)),
    {Other, OtherTracer} = rpc:call(T, ?MODULE, other_tracer, []),

    %% ---- session 1: shape of the stream -----------------------------------
    Opts = #{workers => 2, dep_timeout_ms => 30000, high_water => 20000,
             batch_max => 500, batch_ms => 5, secret => ?SECRET},
    R1 = attach(T, Beams, Opts),
    tap("start/4 returns the agent, worker count and names",
        case R1 of
            {ok, A, #{workers := 2, schedulers := S, names := Names}}
              when is_pid(A), is_integer(S) ->
                lists:keymember(code_server, 2, Names);
            _ -> {R1}
        end),
    {ok, Agent, _} = R1,
    Workers = workers(T, Agent),
    tap("a second start is refused while the first is attached",
        match({error, {already_attached, Agent}},
              rpc:call(T, beamscope_agent, start,
                       [self(), <<>>, <<>>, Opts]))),
    tap("a request from another process gets not_owner",
        match({error, not_owner},
              (fun() ->
                       Me = self(),
                       P = spawn(fun() ->
                                         R = make_ref(),
                                         Agent ! {beamscope, self(), R, ping},
                                         Me ! {stranger,
                                               receive {beamscope_reply, R, Rp} -> Rp
                                               after 5000 -> timeout end}
                                 end),
                       receive {stranger, Rp} -> _ = P, Rp after 5000 -> timeout end
               end)())),
    tap("ping gets pong", match(pong, request(Agent, ping))),
    Dead = rpc:call(T, erlang, spawn, [erlang, is_atom, [x]]),
    timer:sleep(50),
    %% the legacy session on every release: what is checked here (other
    %% tracers, flags read back) is the legacy one's; t0257 checks sessions
    Spec = #{events => [send, 'receive', spawn, exit, link],
             payload_bytes => 64, legacy => true},
    E1 = request(Agent, {trace, Spec#{pids => [bs_no_such_name]}}),
    E2 = request(Agent, {trace, Spec#{pids => [Dead]}}),
    E3 = request(Agent, {trace, Spec#{pids => [Other]}}),
    tap("unknown name, dead pid, other tracer: refused, nothing traced",
        case {E1, E2, E3} of
            {{error, {no_such_name, bs_no_such_name}},
             {error, {no_such_process, Dead}},
             {error, {traced_by_other, Other, OtherTracer}}} ->
                nothing_ours(T);
            _ -> {E1, E2, E3}
        end),
    TR = request(Agent, {trace, Spec#{pids => all}}),
    tap("trace all: counted, the other tracer's process skipped",
        case TR of
            {ok, #{traced := Nt, skipped := [Other]}} when Nt > 10 -> true;
            _ -> {TR}
        end),
    tap("agent and workers are not traced",
        [{flags, []}] =:= lists:usort([rpc:call(T, erlang, trace_info, [P, flags])
                                       || P <- [Agent | Workers]])),
    {Sink, Sender, Kids, Big, Lost, {Linker, Peer}} =
        rpc:call(T, ?MODULE, workload, [?N, ?KIDS, self()]),
    timer:sleep(100),
    {Reply1, Stream1} = stop(Agent, 2),
    StopTime = now_ms(),
    Evs = events(Stream1),
    tap("exact count of receive events of the registered process",
        match(?N, length([x || {'receive', P, _, [], {bs_msg, _}, false} <- Evs,
                               P =:= Sink]))),
    tap("the registered process received in order, and nothing else",
        match(lists:seq(1, ?N),
              [I || {'receive', P, _, _, B, _} <- Evs, P =:= Sink,
                    {bs_msg, I} <- [B]])),
    tap("send events name the right receiver, payload whole",
        match(lists:duplicate(?N, {Sink, false}),
              [{To, Cut} || {send, P, _, To, {bs_msg, _}, Cut} <- Evs,
                            P =:= Sender])),
    tap("10 spawn events with child pid and exact arity",
        match(lists:sort(Kids),
              lists:sort([C || {spawn, P, _, C, {?MODULE, child, 1, [_]}, false}
                                   <- Evs, P =:= Sender]))),
    tap("10 spawned events with the parent pid",
        match(?KIDS, length([x || {spawned, C, _, P, {?MODULE, child, 1, _}, _}
                                      <- Evs, P =:= Sender,
                                  lists:member(C, Kids)]))),
    BigEv = [{B, Cut} || {send, P, _, To, B, Cut} <- Evs, P =:= Sender,
                         To =:= Big],
    tap("a big message is cut on the target, and says so",
        case BigEv of
            [{{bs_big, Bin, _}, true}] when is_binary(Bin) ->
                byte_size(term_to_binary(element(1, hd(BigEv)))) < 200;
            _ -> {BigEv}
        end),
    tap("send to a dead pid: send_to_non_existing_process names it",
        match([{Lost, {bs_lost, 1}}],
              [{To, B} || {send_to_non_existing_process, P, _, To, B, false}
                              <- Evs, P =:= Sender])),
    tap("exit events carry the reason",
        match(lists:sort([{Peer, killed} | [{K, normal} || K <- Kids]]),
              lists:sort([{P, R} || {exit, P, _, [], R, false} <- Evs,
                                    lists:member(P, [Peer | Kids])]))),
    tap("link and unlink events name the peer, on both sides",
        match([{getting_linked, Peer, Linker}, {getting_unlinked, Peer, Linker},
               {link, Linker, Peer}, {unlink, Linker, Peer}],
              lists:sort([{Tag, P, A} || {Tag, P, _, A, [], false} <- Evs,
                                         lists:member(Tag, [link, unlink,
                                                            getting_linked,
                                                            getting_unlinked]),
                                         lists:member(P, [Linker, Peer])]))),
    tap("register and unregister events come without being asked for",
        match([{register, bs_check_sink}, {unregister, bs_check_sink}],
              [{Tag, A} || {Tag, P, _, A, [], false} <- Evs, P =:= Sink,
                           Tag =:= register orelse Tag =:= unregister])),
    tap("no events from the agent or its workers",
        match([], [E || E <- Evs, lists:member(element(2, E), [Agent | Workers])])),
    Now = os:system_time(microsecond),
    tap("timestamps are microseconds since the epoch",
        lists:all(fun(E) -> abs(Now - element(3, E)) < 60000000 end, Evs)),
    tap("every event is encoded byte for byte as term_to_binary would",
        match([], [R || R <- records(Stream1),
                        R =/= term_to_binary(binary_to_term(R))])),
    tap("stop reply and eos agree with the batches, nothing dropped",
        stream_ok(Reply1, Stream1, 2, 0)),
    tap("target is clean within 2 s of the stop reply",
        clean(T, [Other], 2000 - (now_ms() - StopTime))),
    tap("another tracer's process is left exactly as it was",
        match({{flags, [send]}, {tracer, OtherTracer}},
              {rpc:call(T, erlang, trace_info, [Other, flags]),
               rpc:call(T, erlang, trace_info, [Other, tracer])})),
    _ = rpc:call(T, erlang, trace, [Other, false, [all]]),
    [rpc:call(T, erlang, exit, [P, kill]) || P <- [Other, OtherTracer]],

    %% ---- start/4 failing undoes everything -----------------------------------
    {AB, HB, TB, _} = Beams,
    Bad1 = attach(T, {AB, HB, TB, <<"not a shared object">>}, Opts),
    Tb1 = now_ms(),
    tap("a NIF that does not load: an error, and the target is clean",
        case Bad1 of
            {error, {tracer_nif, _}} -> clean(T, [], 2000 - (now_ms() - Tb1));
            _ -> {Bad1}
        end),
    Bad3 = attach(T, {AB, lists:keyreplace(beamscope_scan, 1, HB,
                                           {beamscope_scan, <<"no beam">>}),
                      TB, element(4, Beams)}, Opts),
    Tb3 = now_ms(),
    tap("a helper module that does not load: an error, and the target is clean",
        case Bad3 of
            {error, {helper_beam, beamscope_scan, _}} ->
                clean(T, [], 2000 - (now_ms() - Tb3));
            _ -> {Bad3}
        end),
    Bad4 = attach(T, {AB, tl(HB), TB, element(4, Beams)}, Opts),
    Tb4 = now_ms(),
    tap("a helper module missing: an error, and the target is clean",
        case Bad4 of
            {error, {bad_option, modules, _}} ->
                clean(T, [], 2000 - (now_ms() - Tb4));
            _ -> {Bad4}
        end),
    Bad2 = attach(T, Beams, Opts#{high_water => 0}),
    Tb2 = now_ms(),
    tap("a bad option: an error, and the target is clean",
        case Bad2 of
            {error, {bad_option, high_water, 0}} ->
                clean(T, [], 2000 - (now_ms() - Tb2));
            _ -> {Bad2}
        end),

    %% ---- session 2: a full ring under a flood ------------------------------
    R2 = attach(T, Beams, Opts#{workers => 1, high_water => 100}),
    tap("the node can be attached again", match(ok, element(1, R2))),
    {ok, Agent2, _} = R2,
    {Flooder, FSink} = rpc:call(T, ?MODULE, flood_setup, []),
    TR2 = request(Agent2, {trace, #{events => [send], pids => [Flooder],
                                    legacy => true,
                                    payload_bytes => 0}}),
    tap("trace one pid", match({ok, #{traced => 1, skipped => [],
                                      tracing => legacy}}, counted(TR2))),
    done = rpc:call(T, ?MODULE, flood_run, [Flooder, ?FLOOD]),
    {Reply2, Stream2} = stop(Agent2, 1),
    Stop2 = now_ms(),
    Evs2 = events(Stream2),
    Dropped = lists:sum([D || {eos, _, _, D} <- Stream2]),
    tap("drops + delivered == produced under a flood (high_water 100)",
        case {length(Evs2), Dropped} of
            {Del, Dr} when Del + Dr =:= ?FLOOD + 1, Dr > 0, Del > 0 -> true;
            Other2 -> {delivered_dropped, Other2}
        end),
    tap("payload_bytes 0: no payload, nothing cut",
        match([{send, []}], lists:usort([{Tag, B} || {Tag, _, _, _, B, false} <- Evs2])
              ++ [x || {_, _, _, _, _, true} <- Evs2])),
    tap("stop reply and eos agree under a flood",
        stream_ok(Reply2, Stream2, 1, Dropped)),
    tap("target is clean within 2 s after the flood",
        clean(T, [], 2000 - (now_ms() - Stop2))),
    [rpc:call(T, erlang, exit, [P, kill]) || P <- [Flooder, FSink]],

    %% ---- ways out without a stop --------------------------------------------
    {ok, Agent3, _} = attach(T, Beams, Opts#{dep_timeout_ms => 1000}),
    {ok, #{traced := N3}} =
        request(Agent3, {trace, #{events => [send, 'receive'], legacy => true,
                                  pids => existing, payload_bytes => 32}}),
    T3 = now_ms(),
    tap("pids existing: existing processes traced, new_processes not",
        match({true, {flags, []}, true},
              {N3 > 10, rpc:call(T, erlang, trace_info, [new_processes, flags]),
               is_ours(rpc:call(T, erlang, trace_info,
                                [whereis_on(T, code_server), tracer]))})),
    tap("owner silent for dep_timeout_ms: clean within 2 s after it",
        clean(T, [], 1000 + 2000 - (now_ms() - T3))),
    flush(),

    {ok, Agent4, _} = attach(T, Beams, Opts),
    TR4 = request(Agent4, {trace, #{events => [send, spawn], legacy => true,
                                    pids => new, payload_bytes => 32}}),
    Fresh = rpc:call(T, erlang, spawn, [?MODULE, idle, []]),
    tap("pids new: new processes traced, existing ones not",
        match({{ok, #{traced => 0, skipped => [], tracing => legacy}}, false,
               true},
              {counted(TR4), is_ours(rpc:call(T, erlang, trace_info,
                                     [whereis_on(T, code_server), tracer])),
               is_ours(rpc:call(T, erlang, trace_info, [Fresh, tracer]))})),
    _ = rpc:call(T, erlang, exit, [Fresh, kill]),
    [W0 | _] = workers(T, Agent4),
    true = rpc:call(T, erlang, exit, [W0, kill]),
    T4 = now_ms(),
    tap("a worker dies: clean within 2 s", clean(T, [], 2000 - (now_ms() - T4))),
    flush(),

    %% the Owner's node is killed with SIGKILL mid-trace
    Me = self(),
    _ = rpc:call(V, erlang, spawn, [?MODULE, hold, [Me, T, Build]]),
    Held = receive {held, H} -> H after 15000 -> timeout end,
    tap("a second driver node attaches and receives events", match(ok, Held)),
    OsPid = rpc:call(V, os, getpid, []),
    _ = os:cmd("kill -KILL " ++ OsPid),
    T5 = now_ms(),
    tap("driver node killed: target clean within 2 s",
        clean(T, [], 2000 - (now_ms() - T5))),
    ok.

%%% The second driver --------------------------------------------------------

hold(Reporter, T, Build) ->
    true = register(beamscope, self()),
    {ok, Agent, _} = attach(T, beams(Build), #{workers => 0,
                                               dep_timeout_ms => 60000,
                                               high_water => 20000,
                                               batch_max => 500,
                                               batch_ms => 5,
                                               secret => ?SECRET}),
    {ok, _} = request(Agent, {trace, #{events => [send, 'receive', spawn],
                                       legacy => true,
                                       pids => all, payload_bytes => 64}}),
    _ = rpc:call(T, erlang, spawn, [?MODULE, pingpong, [20]]),
    receive {beamscope_batch, _, _, _, <<_, _/binary>>} -> Reporter ! {held, ok} end,
    sink().

sink() ->
    receive _ -> sink() end.

%%% Talking to the agent ------------------------------------------------------

beams(Build) ->
    Read = fun(F) -> {ok, B} = file:read_file(filename:join(Build, F)), B end,
    {Read("beamscope_agent.beam"),
     [{M, Read(atom_to_list(M) ++ ".beam")} || M <- ?HELPERS],
     Read("beamscope_tracer.beam"), Read("beamscope_tracer.so")}.

object_code() ->
    {?MODULE, Bin, _} = code:get_object_code(?MODULE),
    Bin.

%% The C node's bootstrap, step by step: the agent is loaded, and it
%% loads its helper modules from start/4's options.
attach(T, {AgentBeam, Helpers, TracerBeam, Nif}, Opts) ->
    undefined = rpc:call(T, erlang, whereis, [beamscope_agent]),
    {module, beamscope_agent} =
        rpc:call(T, code, load_binary,
                 [beamscope_agent, "beamscope_agent.beam", AgentBeam]),
    rpc:call(T, beamscope_agent, start,
             [self(), TracerBeam, Nif, Opts#{modules => Helpers}]).

request(Agent, Req) ->
    Ref = make_ref(),
    Agent ! {beamscope, ?SECRET, Ref, Req},
    receive {beamscope_reply, Ref, R} -> R after 10000 -> timeout end.

workers(T, Agent) ->
    {monitors, Ms} = rpc:call(T, erlang, process_info, [Agent, monitors]),
    [P || {process, P} <- Ms].

%% Stop, and take the stream until the reply and every eos are in.
stop(Agent, NWorkers) ->
    Ref = make_ref(),
    Agent ! {beamscope, ?SECRET, Ref, stop},
    take(Ref, NWorkers, none, [], now_ms() + 10000).

take(_Ref, 0, Reply, Acc, _Deadline) when Reply =/= none ->
    {Reply, lists:reverse(Acc)};
take(Ref, Left, Reply, Acc, Deadline) ->
    receive
        {beamscope_batch, W, Seq, D, Evs} ->
            take(Ref, Left, Reply, [{batch, W, Seq, D, Evs} | Acc], Deadline);
        {beamscope_eos, W, B, D, _Taken} ->
            take(Ref, Left - 1, Reply, [{eos, W, B, D} | Acc], Deadline);
        {beamscope_reply, Ref, R} ->
            take(Ref, Left, R, Acc, Deadline)
    after max(0, Deadline - now_ms()) ->
            {{timeout, Reply, Left}, lists:reverse(Acc)}
    end.

events(Stream) ->
    [binary_to_term(R) || R <- records(Stream)].

%% The events of a batch are whole external terms back to back.
records(Stream) ->
    lists:append([split(Bin) || {batch, _, _, _, Bin} <- Stream]).

split(<<>>) ->
    [];
split(Bin) ->
    {_, Used} = binary_to_term(Bin, [used]),
    <<R:Used/binary, Rest/binary>> = Bin,
    [R | split(Rest)].

%% Seq runs 0.. per worker, eos counts the batches, the stop reply agrees,
%% and the Dropped of the batches never goes down.
stream_ok({ok, #{workers := Ws}} = Reply, Stream, N, Dropped) ->
    Eos = lists:sort([{W, B, D} || {eos, W, B, D} <- Stream]),
    PerW = [begin
                Bs = [{S, D} || {batch, W1, S, D, _} <- Stream, W1 =:= W],
                Seqs = [S || {S, _} <- Bs],
                Ds = [D || {_, D} <- Bs],
                Seqs =:= lists:seq(0, length(Bs) - 1) andalso Ds =:= lists:sort(Ds)
                    andalso {W, length(Bs)} =:= {W, B}
            end || {W, B, _} <- Eos],
    case length(Eos) =:= N andalso lists:sort(Ws) =:= Eos andalso
        lists:all(fun(X) -> X end, PerW) andalso
        lists:sum([D || {_, _, D} <- Eos]) =:= Dropped of
        true -> true;
        false -> {Reply, Eos}
    end;
stream_ok(Reply, _, _, _) ->
    {Reply}.

%% Poll until the target looks as if we had never been there.
clean(T, Except, WithinMs) ->
    Start = now_ms(),
    case clean_poll(T, Except, Start + max(0, WithinMs)) of
        true when WithinMs > 0 ->
            io:format("# clean ~b ms before the deadline~n",
                      [WithinMs - (now_ms() - Start)]),
            true;
        R ->
            R
    end.

clean_poll(T, Except, Deadline) ->
    State = rpc:call(T, ?MODULE, target_state, [Except]),
    Want = clean_state(),
    case State of
        Want -> true;
        _ ->
            case now_ms() < Deadline of
                true -> timer:sleep(10), clean_poll(T, Except, Deadline);
                false -> {not_clean, State}
            end
    end.

clean_state() ->
    #{flagged => [], new => [], agent => undefined, modules => {false, false, []},
      procs => []}.

nothing_ours(T) ->
    match([], [P || P <- rpc:call(T, erlang, processes, []),
                    {tracer, {beamscope_tracer, _}} <-
                        [rpc:call(T, erlang, trace_info, [P, tracer])]]).

is_ours({tracer, {beamscope_tracer, _}}) -> true;
is_ours(_) -> false.

whereis_on(T, Name) ->
    rpc:call(T, erlang, whereis, [Name]).

flush() ->
    receive _ -> flush() after 0 -> ok end.

%%% On the target -------------------------------------------------------------

%% A registered process receives exactly N messages from one sender, which
%% also spawns K children and sends one big message elsewhere.
workload(N, K, Remote) ->
    Self = self(),
    Mixed = spawn(fun mixed_loop/0),
    Sink = spawn(fun() ->
                         register(bs_check_sink, self()),
                         Self ! {ready, self()},
                         sink_loop(1, N),
                         Self ! {sunk, self()}
                 end),
    receive {ready, Sink} -> ok end,
    Big = spawn(fun() -> receive _ -> ok end end),
    Lost = spawn(fun() -> ok end),
    LostRef = monitor(process, Lost),
    receive {'DOWN', LostRef, _, _, _} -> ok end,
    Sender = spawn(fun() ->
                           receive go -> ok end,
                           [Sink ! {bs_msg, I} || I <- lists:seq(1, N)],
                           Lost ! {bs_lost, 1},
                           Kids = [spawn(?MODULE, child, [I])
                                   || I <- lists:seq(1, K)],
                           Big ! {bs_big, binary:copy(<<"x">>, 10000),
                                  lists:seq(1, 1000)},
                           [Mixed ! M || M <- mixed(Remote)],
                           Mixed ! stop,
                           Self ! {sent, self(), Kids}
                   end),
    Sender ! go,
    Kids = receive {sent, Sender, Ks} -> Ks end,
    receive {sunk, Sink} -> ok end,
    Linker = spawn(fun() ->
                           Peer = spawn(fun idle/0),
                           link(Peer),
                           unlink(Peer),
                           PeerRef = monitor(process, Peer),
                           exit(Peer, kill),
                           receive {'DOWN', PeerRef, _, _, _} -> ok end,
                           Self ! {linked, self(), Peer}
                   end),
    Peer = receive {linked, Linker, P} -> P end,
    %% the children's exit events
    timer:sleep(50),
    {Sink, Sender, Kids, Big, Lost, {Linker, Peer}}.

%% Every kind of term, whole and cut, for the encoding check.
mixed(Remote) ->
    [1.5, -3, 255, 256, 1 bsl 31, -(1 bsl 31) - 1, 1 bsl 40, -(1 bsl 62),
     1 bsl 70, -(1 bsl 100), "hello", [1, 2 | 3], [300, 1], [$a, 255, 0], "",
     [], {}, {a, {b, [c]}}, #{}, #{k => v, 1 => [2]},
     maps:from_list([{I, I} || I <- lists:seq(1, 40)]), <<"bin">>, <<>>,
     <<1:3>>, binary:copy(<<"y">>, 100), make_ref(), self(), Remote,
     hd(erlang:ports()), '\x{fc}n\x{ef}code', '\x{65e5}\x{672c}', fun() -> ok end,
     fun lists:map/2, lists:seq(1, 40), {x, 1.0e300, -0.0}, [[[[[[[[[[[[x]]]]]]]]]]]],
     list_to_tuple(lists:seq(1, 300)), {self(), [self(), Remote]}].

mixed_loop() ->
    receive
        stop -> ok;
        _ -> mixed_loop()
    end.

sink_loop(I, N) when I > N -> ok;
sink_loop(I, N) -> receive {bs_msg, I} -> sink_loop(I + 1, N) end.

child(_) -> ok.

flood_setup() ->
    Sink = spawn(fun idle/0),
    Flooder = spawn(fun() ->
                            receive {go, From, N} -> ok end,
                            flood(Sink, N),
                            From ! {flooded, self()}
                    end),
    {Flooder, Sink}.

flood(_, 0) -> ok;
flood(Sink, N) -> Sink ! x, flood(Sink, N - 1).

flood_run(Flooder, N) ->
    Flooder ! {go, self(), N},
    receive {flooded, Flooder} -> done after 60000 -> timeout end.

%% Two processes that keep each other busy for Seconds.
pingpong(Seconds) ->
    Stop = erlang:monotonic_time(millisecond) + Seconds * 1000,
    Pong = spawn(fun pong/0),
    ping(Pong, Stop).

ping(Pong, Stop) ->
    case erlang:monotonic_time(millisecond) < Stop of
        true -> Pong ! {ping, self()}, receive pong -> ping(Pong, Stop) end;
        false -> exit(Pong, kill)
    end.

pong() ->
    receive {ping, P} -> P ! pong, pong() end.

other_tracer() ->
    Tracer = spawn(fun idle/0),
    P = spawn(fun idle/0),
    1 = erlang:trace(P, true, [send, {tracer, Tracer}]),
    {P, Tracer}.

idle() ->
    receive _ -> idle() end.

target_state(Except) ->
    Procs = erlang:processes(),
    Mods = [beamscope_agent, beamscope_tracer | ?HELPERS],
    #{flagged => [P || P <- Procs -- Except,
                       {flags, F} <- [erlang:trace_info(P, flags)], F =/= []],
      new => element(2, erlang:trace_info(new_processes, flags)),
      agent => whereis(beamscope_agent),
      modules => {code:is_loaded(beamscope_agent) =/= false,
                  code:is_loaded(beamscope_tracer) =/= false,
                  [M || M <- ?HELPERS, code:is_loaded(M) =/= false]},
      procs => [P || P <- Procs,
                     {_, {M, _, _}} <- [process_info(P, current_function),
                                        process_info(P, initial_call)],
                     lists:member(M, Mods)]}.

%%% TAP -----------------------------------------------------------------------

tap(Desc, Result) ->
    N = get(count) + 1,
    put(count, N),
    case Result of
        true ->
            io:format("ok ~b - ~s~n", [N, Desc]);
        _ ->
            put(failed, get(failed) + 1),
            io:format("not ok ~b - ~s~n", [N, Desc]),
            comment("  ~P", [Result, 40])
    end.

comment(Fmt, Args) ->
    Text = lists:flatten(io_lib:format(Fmt, Args)),
    [io:format("# ~s~n", [L]) || L <- string:split(Text, "\n", all)],
    ok.

%% A trace reply's counts and how it traced, the rest left out.
counted({ok, Info}) -> {ok, maps:with([traced, skipped, tracing], Info)};
counted(Other) -> Other.

match(Want, Got) ->
    case Want =:= Got of
        true -> true;
        false -> {want, Want, got, Got}
    end.

up(Node) ->
    up(Node, 100).

up(Node, 0) ->
    error({node_down, Node});
up(Node, N) ->
    case net_adm:ping(Node) of
        pong -> ok;
        pang -> timer:sleep(100), up(Node, N - 1)
    end.

now_ms() ->
    erlang:monotonic_time(millisecond).
