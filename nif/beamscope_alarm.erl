%% beamscope_alarm: the VM's own alarms (its system monitor) as events of
%% their processes: long_gc, long_schedule, large_heap, long_message_queue
%% (OTP 27+), busy_port and busy_dist_port.  A helper of beamscope_agent,
%% run only in the agent's process, which receives the VM's messages.
%%
%% Where the monitor is set:
%%  * OTP 28+: in a trace session of our own (trace:system/3), whose
%%    tracer is the agent; the node's system_monitor (erlang:
%%    system_monitor/0, its "system" session) is not touched.  The session
%%    ends with stop/1, or with its handle when the agent is gone;
%%  * before 28: erlang:system_monitor/2, the node's only one, and only
%%    when nobody holds it: if someone does, nothing is set and the reply
%%    says who.  stop/1 gives it back as it was (unset), unless someone
%%    took it since (it is theirs then); the VM unsets it by itself when
%%    the agent dies (kill -9 of the Owner, or of the agent).
%%
%% Cost: nothing on the traced processes (the VM checks its thresholds
%% anyway); a message to the agent per alarm, the agent ships at most
%% ?PER_SEC of them a second in batches every ?FLUSH_MS, and counts the
%% rest.  Alarms of beamscope's own processes are not reported.
-module(beamscope_alarm).

-export([request/2, event/2, flush/1, stop/2]).

-include("beamscope_agent.hrl").

-define(FLUSH_MS, 200).
-define(PER_SEC, 100).
-define(KINDS, [long_gc, long_schedule, large_heap, long_message_queue,
                busy_port, busy_dist_port]).
%% a session's name, as the tracer's (the tests count them)
-define(SESSION, beamscope).

-record(al, {how :: session | system_monitor,
             handle = none :: term(),       % the session's (28+)
             ours = [] :: [pid()],          % never reported
             buf = [] :: list(),            % to ship, newest first
             second = 0 :: integer(),       % this second, s
             shipped = 0 :: non_neg_integer(),   % in it
             suppressed = 0 :: non_neg_integer(), % since the last batch
             timer = none :: none | reference()}).

%% The agent's state after a request of the Owner's ({alarms, off} or
%% {alarms, Settings}), answered on the stream, where the alarms come, so
%% that the Owner reads them in order.  The state is stored at once: a
%% crash's cleanup gives the monitor back too.
request(Req, St0) ->
    Ours = [self() | [W || {_, W, _} <- St0#st.workers]],
    {State, Al} = ask(Req, Ours, St0#st.alarm),
    St = St0#st{alarm = Al},
    put(?STATE, St),
    _ = erlang:send(St#st.dest, {beamscope_alarm_state, State}, [noconnect]),
    St.

%% The agent's state at its cleanup: alarms off; those not yet shipped go
%% only to an Owner that asked the agent to stop (StopRef).
stop(StopRef, #st{alarm = Al, dest = Dest}) ->
    none = stop_al(case StopRef of
                       none -> none;
                       _ -> Dest
                   end, Al),
    ok.

%% A request of the Owner's, {alarms, off} or {alarms, Settings}; Al the
%% agent's (none or an #al{}).  {State, Al}: State is what the Owner is
%% told (PROTOCOL.md, Alarms): off, {on, How, Unsupported}, {held, Pid,
%% Name} or {error, bad_request}.  Settings: [{long_gc, Ms},
%% {long_schedule, Ms}, {large_heap, Words}, {long_message_queue, {Off,
%% On}}, busy_port, busy_dist_port], each at most once.
ask({alarms, off}, _Ours, Al) ->
    {off, stop_al(none, Al)};
ask({alarms, Settings}, Ours, Al0) when is_list(Settings) ->
    none = stop_al(none, Al0),
    case valid(Settings) of
        true -> set(Settings, Ours);
        false -> {{error, bad_request}, none}
    end;
ask(_Req, _Ours, Al) ->
    {{error, bad_request}, Al}.

valid(Settings) ->
    Kinds = [kind(S) || S <- Settings],
    length(Settings) =< length(?KINDS) andalso
        lists:all(fun setting/1, Settings) andalso
        length(lists:usort(Kinds)) =:= length(Kinds).

kind({K, _}) -> K;
kind(K) -> K.

setting({K, Ms}) when K =:= long_gc; K =:= long_schedule ->
    is_integer(Ms) andalso Ms > 0 andalso Ms < 1 bsl 32;
setting({large_heap, Words}) ->
    is_integer(Words) andalso Words > 0 andalso Words < 1 bsl 59;
setting({long_message_queue, {Off, On}}) ->
    is_integer(Off) andalso is_integer(On) andalso Off >= 0 andalso On > Off
        andalso On < 1 bsl 59;
setting(K) ->
    K =:= busy_port orelse K =:= busy_dist_port.

release() ->
    list_to_integer(erlang:system_info(otp_release)).

%% large_heap comes in bytes, and the VM counts words
set(Settings0, Ours) ->
    W = erlang:system_info(wordsize),
    Settings = [case S of
                    {large_heap, Bytes} -> {large_heap, max(1, Bytes div W)};
                    _ -> S
                end || S <- Settings0],
    case release() >= 28 of
        true -> set_session(Settings, Ours);
        false -> set_legacy(Settings, Ours)
    end.

set_session(Settings, Ours) ->
    S = trace:session_create(?SESSION, self(), []),
    lists:foreach(fun({K, V}) -> ok = trace:system(S, K, V);
                     (K) -> ok = trace:system(S, K, true)
                  end, Settings),
    {{on, session, []},
     #al{how = session, handle = S, ours = Ours}}.

%% Before 28 the node has one system monitor: taken only when free, and
%% given back at once if someone took it between our look and our set
%% (system_monitor/2 answers what was there).
set_legacy(Settings0, Ours) ->
    {Settings, Unsupported} =
        case release() >= 27 of
            true -> {Settings0, []};
            false -> {[S || S <- Settings0, kind(S) =/= long_message_queue],
                      [long_message_queue || S <- Settings0,
                                             kind(S) =:= long_message_queue]}
        end,
    case erlang:system_monitor() of
        undefined ->
            case erlang:system_monitor(self(), Settings) of
                undefined ->
                    {{on, system_monitor, Unsupported},
                     #al{how = system_monitor, ours = Ours}};
                {Pid, _} = Theirs ->
                    _ = erlang:system_monitor(Theirs),
                    {held(Pid), none}
            end;
        {Pid, _} ->
            {held(Pid), none}
    end.

held(Pid) ->
    Name = case process_info(Pid, registered_name) of
               {registered_name, N} -> N;
               _ -> undefined
           end,
    {held, Pid, Name}.

%% Alarms off: those not yet shipped go first (to Dest; none: dropped,
%% the Owner asked for them off).  none.
stop_al(_Dest, none) ->
    none;
stop_al(Dest, #al{} = Al) ->
    _ = Dest =:= none orelse ship(Dest, Al),
    _ = Al#al.timer =:= none orelse erlang:cancel_timer(Al#al.timer),
    case Al of
        #al{how = session, handle = S} ->
            _ = (catch trace:session_destroy(S));
        #al{how = system_monitor} ->
            Self = self(),
            case erlang:system_monitor() of
                {Self, _} -> _ = erlang:system_monitor(undefined);
                _ -> ok   % someone took it since: theirs now
            end
    end,
    none.

%% One of the VM's messages, {monitor, PidOrPort, Kind, Info}.  Anyone
%% may send the agent one: only the shapes the VM sends, of processes and
%% ports of this node, are taken.
event({monitor, Who, Kind, Info}, #st{alarm = #al{} = Al} = St) ->
    case alarm(Who, Kind, Info, Al#al.ours) of
        none -> St;
        A -> St#st{alarm = add(A, Al)}
    end;
event(_, St) ->
    St.

add(A, #al{second = Sec} = Al0) ->
    Now = erlang:monotonic_time(second),
    Al = case Now =:= Sec of
             true -> Al0;
             false -> Al0#al{second = Now, shipped = 0}
         end,
    case Al#al.shipped < ?PER_SEC of
        true ->
            Timer = case Al#al.timer of
                        none -> erlang:start_timer(?FLUSH_MS, self(),
                                                   '$beamscope_alarm');
                        T -> T
                    end,
            Al#al{buf = [A | Al#al.buf], shipped = Al#al.shipped + 1,
                  timer = Timer};
        false ->
            Al#al{suppressed = Al#al.suppressed + 1}
    end.

%% The batch: {beamscope_alarms, Suppressed, [Alarm]}, oldest first
%% (PROTOCOL.md, Alarms).
flush(#st{alarm = none} = St) ->
    St;
flush(#st{alarm = Al, dest = Dest} = St) ->
    St#st{alarm = ship(Dest, Al)}.

ship(Dest, #al{buf = Buf, suppressed = Sup} = Al) ->
    _ = (Buf =:= [] andalso Sup =:= 0) orelse
        erlang:send(Dest, {beamscope_alarms, Sup, lists:reverse(Buf)},
                    [noconnect]),
    Al#al{buf = [], suppressed = 0, timer = none}.

%% {TsUs, Kind, Pid, Port | undefined, Ms, Bytes, QueueLen, Detail}: the
%% process an alarm is about (a port's is the process it is connected
%% to), how long (long_gc, long_schedule), its heap in bytes (long_gc,
%% large_heap), its queue (long_message_queue), and what else is known
%% (-1 and <<>>: nothing): long_schedule {In, Out} (functions as text),
%% busy_port the port's name, busy_dist_port the node it goes to,
%% long_message_queue long or short.
alarm(Who, Kind, Info, Ours) when is_pid(Who), node(Who) =:= node() ->
    case lists:member(Who, Ours) of
        true -> none;
        false -> alarm1(Who, undefined, Kind, Info)
    end;
alarm(Who, long_schedule, Info, Ours) when is_port(Who), node(Who) =:= node() ->
    case erlang:port_info(Who, connected) of
        {connected, Pid} ->
            case lists:member(Pid, Ours) of
                true -> none;
                false -> alarm1(Pid, Who, long_schedule, Info)
            end;
        _ ->
            none   % closed since: nobody to tell it of
    end;
alarm(_, _, _, _) ->
    none.

alarm1(Pid, Port0, Kind, Info) ->
    Ts = erlang:system_time(microsecond),
    case {Kind, Info} of
        {long_gc, [_ | _]} ->
            {Ts, Kind, Pid, undefined, num(timeout, Info), bytes(Info), -1, <<>>};
        {large_heap, [_ | _]} ->
            {Ts, Kind, Pid, undefined, -1, bytes(Info), -1, <<>>};
        {long_schedule, [_ | _]} ->
            Where = {mfa_text(prop(in, Info)), mfa_text(prop(out, Info))},
            {Ts, Kind, Pid, Port0, num(timeout, Info), -1, -1, Where};
        {long_message_queue, Long} when is_boolean(Long) ->
            Len = case process_info(Pid, message_queue_len) of
                      {message_queue_len, L} -> L;
                      _ -> -1
                  end,
            {Ts, Kind, Pid, undefined, -1, -1, Len,
             case Long of true -> <<"long">>; false -> <<"short">> end};
        {busy_port, Port} when is_port(Port) ->
            Name = case erlang:port_info(Port, name) of
                       {name, N} when is_list(N) -> text(N);
                       _ -> <<>>
                   end,
            {Ts, Kind, Pid, Port, -1, -1, -1, Name};
        {busy_dist_port, Port} when is_port(Port) ->
            Node = case lists:keyfind(Port, 2, erlang:system_info(dist_ctrl)) of
                       {N, _} -> atom_to_binary(N, utf8);
                       false -> <<>>
                   end,
            {Ts, Kind, Pid, Port, -1, -1, -1, Node};
        _ ->
            none
    end.

prop(K, Info) ->
    case lists:keyfind(K, 1, Info) of
        {K, V} -> V;
        false -> undefined
    end.

num(K, Info) ->
    case prop(K, Info) of
        N when is_integer(N), N >= 0 -> N;
        _ -> -1
    end.

%% what the process holds, in bytes: its heaps and its heap fragments
bytes(Info) ->
    erlang:system_info(wordsize) *
        lists:sum([N || K <- [heap_block_size, old_heap_block_size, mbuf_size],
                        N <- [prop(K, Info)], is_integer(N), N >= 0]).

mfa_text({M, F, A}) when is_atom(M), is_atom(F), is_integer(A) ->
    <<(atom_to_binary(M, utf8))/binary, ":", (atom_to_binary(F, utf8))/binary,
      "/", (integer_to_binary(A))/binary>>;
mfa_text(_) ->
    <<>>.

text(L) ->
    case unicode:characters_to_binary(L) of
        B when is_binary(B) -> binary:part(B, 0, min(byte_size(B), 64));
        _ -> <<>>
    end.
