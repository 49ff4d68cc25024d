%% beamscope_prof: the sampling profiler.  The stacks of a few processes,
%% one process a tick, taken in turn, within a time budget a second; what a
%% second took is sent to the Owner at its end.  A helper of
%% beamscope_agent, run only in the agent's process.
%%
%% A stack is whole: process_info(P, current_stacktrace) is cut at the
%% node's backtrace_depth (8 by default), a flag of the whole node that is
%% not ours to change, so the stack is read from process_info(P,
%% backtrace), the VM's dump of it: a "Program counter" line for where the
%% process is, a "Return addr" line a frame below it, and the stack's
%% slots between them.  The dump prints the terms the slots hold, which
%% costs with their size (the VM stops a term's print after about 600 KB):
%% a process whose heap is over ?HEAP_MAX words is read the cut way from
%% the start, and one whose dump came to more than ?DUMP_MAX bytes, or took
%% more than ?DEAR_US ?STRIKES times in a row, is read the cut way from
%% then on (time alone is noisy: the agent waits for a running process to
%% reach its next yield, and the machine may be busy).  The cut way,
%% process_info(P, current_stacktrace), has at most backtrace_depth
%% frames and folds recursion: a cut stack's root frame is "...".  Stacks are at most ?FRAMES_MAX frames: the leaf's
%% half and the root's half, "..." between.
%%
%% Cost: a sample is one process_info of the process's status and its dump
%% (or its cut stack), and once a second one of its heap size.  What that
%% costs the node, the looks, the dump's printing (by its size) and our
%% reading of it (measured), is counted against the budget (budget_us a
%% second); a second whose budget is spent takes no more samples (counted
%% as skipped).  A process that is running is sampled when it next handles
%% signals, one that is runnable when it is next scheduled: where it is
%% then, which is where it spends its reductions.  The agent waits for
%% that, which costs the node nothing, but is bounded too: at most
%% ?WAIT_MAX_US a second.
-module(beamscope_prof).

-export([ask/4, tick/2, stop/2, frames/1]).

-define(HEAP_MAX, 1000000).
-define(DEAR_US, 5000).
%% a look (a process_info signal and its answer), the dump's printing a
%% byte (about 10 ns for lists and tuples, up to 80 for maps, on the
%% machine the bench runs on: 20 is what is counted), and the most the
%% agent may wait for the processes it samples, a second
-define(LOOK_US, 10).
-define(PRINT_NS, 20).
-define(WAIT_MAX_US, 500000).
-define(STRIKES, 3).
-define(DUMP_MAX, 131072).
-define(FRAMES_MAX, 200).
-define(HZ_MAX, 1000).
%% processes profiled at once, at most
-define(PROCS_MAX, 1000).

%% exact mode: its session, the functions timed with their names, when it
%% began (ms), those still to read in this turn, and what each read found
-record(exact, {session :: term(),
                named = [] :: [{mfa(), binary()}],
                n = 0 :: non_neg_integer(),
                since :: integer(),
                todo = [] :: [{mfa(), binary()}],
                known = #{} :: map()}).

-record(prof, {pids = [] :: [pid()],      % sampled, in turn
               todo = [] :: [pid()],      % the rest of this turn
               ms :: pos_integer(),       % between two ticks
               budget_us :: non_neg_integer(),
               cut = #{} :: map(),        % read the cut way from now on
               small = #{} :: map(),      % heap seen small, when (ms)
               strikes = #{} :: map(),    % dear looks in a row
               since :: integer(),        % this second began, ms
               used = 0 :: non_neg_integer(),   % us it cost the node
               waited = 0 :: non_neg_integer(), % us the agent waited
               skipped = 0 :: non_neg_integer(),
               gone = 0 :: non_neg_integer(),
               samples = [] :: list(),
               %% {top, N}: the N processes leading by reductions a second,
               %% found by top mode's scan (beamscope_info), picked again
               %% every second; none: Who as asked
               top = none :: none | {pos_integer(), tuple(), [pid()]},
               %% exact mode: none, or its state
               exact = none :: none | #exact{},
               sampling = true :: boolean()}).
%% the scan's time a second, as top mode's
-define(TOP_US, 10000).

%% A request of the Owner's: {profile, off} or {profile, {Who, Hz,
%% BudgetUs}} for the sampling profiler, {profile, {calls, off | Texts}}
%% for exact mode; the two are apart: each keeps the other as it is.  Prof
%% the agent's (none, or {TimerRef, State}).  {Reply, Prof} with the timer
%% armed.
ask({profile, {calls, Req}}, Ours, Dest, Prof) ->
    exact_ask(Req, Ours, Dest, Prof);
ask(Req, Ours, _Dest, Prof) ->
    Exact = case Prof of
                none -> none;
                {_, #prof{exact = E}} -> E
            end,
    _ = Prof =:= none orelse erlang:cancel_timer(element(1, Prof)),
    {Reply, P} = sampling(Req, Ours),
    {Reply, keep_exact(P, Exact)}.

sampling(Req, Ours) ->
    case Req of
        {profile, {Who, Hz, BudgetUs}}
          when is_list(Who), is_integer(Hz), Hz > 0, is_integer(BudgetUs),
               BudgetUs >= 0 ->
            {Reply, P} = new(Who, Ours, Hz, BudgetUs),
            {Reply, {erlang:start_timer(0, self(), '$beamscope_prof'), P}};
        {profile, {{top, N}, Hz, BudgetUs}}
          when is_integer(N), N > 0, is_integer(Hz), Hz > 0,
               is_integer(BudgetUs), BudgetUs >= 0 ->
            {_, P} = new([], Ours, Hz, BudgetUs),
            Top = beamscope_info:top_new(reductions, min(N, ?PROCS_MAX)),
            {{ok, #{procs => 0, missing => []}},
             {erlang:start_timer(0, self(), '$beamscope_prof'),
              P#prof{top = {N, Top, Ours}}}};
        {profile, off} ->
            {ok, none};
        _ ->
            {{error, {bad_request, Req}}, none}
    end.

%% exact mode alone ticks once a second, with nothing to sample
keep_exact(Prof, none) ->
    Prof;
keep_exact(none, Exact) ->
    {_, P} = new([], [], 1, 0),
    {erlang:start_timer(1000, self(), '$beamscope_prof'),
     P#prof{exact = Exact, sampling = false, ms = 1000}};
keep_exact({T, P}, Exact) ->
    {T, P#prof{exact = Exact}}.

%% Everything of the profiler's that the node holds is let go: exact
%% mode's session (sampling holds nothing), its last totals first sent to
%% Dest (none: not sent).
stop(Dest, {_, #prof{exact = #exact{session = S} = Exact}}) ->
    _ = Dest =:= none orelse exact_read(Dest, Exact, [noconnect, nosuspend]),
    _ = (catch trace:session_destroy(S)),
    ok;
stop(_, _) ->
    ok.

%% A profiler of Who (pids of this node and registered names; never one of
%% Ours) at Hz samples a second in all, spending at most BudgetUs a second:
%% {Reply, State}.  The first tick is the caller's to arm: tick/2 returns
%% the time to the next.
new(Who, Ours, Hz, BudgetUs) ->
    Found = [{X, profiled(X)} || X <- lists:sublist(Who, ?PROCS_MAX)],
    Pids = lists:usort([P || {_, P} <- Found, is_pid(P)]) -- Ours,
    Missing = [X || {X, none} <- Found],
    {{ok, #{procs => length(Pids), missing => Missing}},
     #prof{pids = Pids, todo = Pids,
           ms = max(1, 1000 div max(1, min(Hz, ?HZ_MAX))),
           budget_us = BudgetUs, since = now_ms()}}.

%% a process to profile: a live pid of this node, or a registered name
profiled(P) when is_pid(P), node(P) =:= node() ->
    case erlang:is_process_alive(P) of
        true -> P;
        false -> none
    end;
profiled(Name) when is_atom(Name) ->
    case whereis(Name) of
        P when is_pid(P) -> P;
        _ -> none
    end;
profiled(_) ->
    none.

%% One tick: a sample of the next process, unless this second's budget is
%% spent; at the end of a second, what it took goes to Dest.  The agent's
%% {TimerRef, State}, the next tick armed.
tick(Dest, {_, P0}) ->
    {Ms, P} = tick1(Dest, P0),
    {erlang:start_timer(Ms, self(), '$beamscope_prof'), P}.

tick1(Dest, #prof{} = P0) ->
    Now = now_ms(),
    P1 = case Now - P0#prof.since >= 1000 of
             true -> flush(Dest, P0, Now);
             false -> P0
         end,
    P2 = case P1#prof.used >= P1#prof.budget_us orelse
             P1#prof.waited >= ?WAIT_MAX_US of
             true -> P1#prof{skipped = P1#prof.skipped + 1};
             false -> sample_next(P1)
         end,
    {P2#prof.ms, P2}.

%% {top, N}: a second of the scan, and the leaders of its last whole pass
%% sampled from now on
top_pick(#prof{top = none} = P) ->
    P;
top_pick(#prof{top = {N, T0, Ours}} = P) ->
    T = beamscope_info:top_step(T0, ?TOP_US, Ours),
    P1 = P#prof{top = {N, T, Ours}},
    case beamscope_info:top_passed(T) of
        {0, _} ->
            P1;
        {_, Last} ->
            Pids = lists:sublist([Pid || {_, Pid} <- Last], N),
            case Pids =:= P1#prof.pids of
                true -> P1;
                false -> P1#prof{pids = Pids, todo = Pids}
            end
    end.

flush(Dest, #prof{} = P00, Now) ->
    P0 = case P00#prof.exact of
             none -> P00;
             E -> P00#prof{exact = exact_read(Dest, E, [noconnect])}
         end,
    P = top_pick(P0),
    Stats = #{samples => length(P#prof.samples), used_us => P#prof.used,
              waited_us => P#prof.waited,
              skipped => P#prof.skipped, gone => P#prof.gone,
              procs => length(P#prof.pids), cut => map_size(P#prof.cut),
              ms => Now - P#prof.since},
    _ = P#prof.sampling andalso
        erlang:send(Dest, {beamscope_profile,
                           {Stats, lists:reverse(P#prof.samples)}},
                    [noconnect]),
    P#prof{since = Now, used = 0, waited = 0, skipped = 0, gone = 0,
           samples = []}.

sample_next(#prof{pids = []} = P) ->
    P;
sample_next(#prof{todo = []} = P) ->
    sample_next(P#prof{todo = P#prof.pids});
sample_next(#prof{todo = [Pid | Todo]} = P) ->
    T0 = erlang:monotonic_time(microsecond),
    Way = case maps:is_key(Pid, P#prof.cut) of
              true -> cut;
              false -> case maps:get(Pid, P#prof.small, none) of
                           Ms when is_integer(Ms), T0 div 1000 - Ms < 1000 ->
                               whole;
                           _ -> check
                       end
          end,
    Got = sample(Pid, Way),
    Waited = erlang:monotonic_time(microsecond) - T0,
    Us = cost(Got),
    P1 = P#prof{todo = Todo, used = P#prof.used + Us,
                waited = P#prof.waited + Waited},
    case Got of
        gone ->
            P1#prof{pids = lists:delete(Pid, P1#prof.pids),
                    gone = P1#prof.gone + 1,
                    small = maps:remove(Pid, P1#prof.small),
                    strikes = maps:remove(Pid, P1#prof.strikes)};
        {Status, Frames, Whole, Bytes, _, _} ->
            Strikes = case Whole andalso Us > ?DEAR_US of
                          true -> maps:get(Pid, P1#prof.strikes, 0) + 1;
                          false -> 0
                      end,
            Dear = Whole andalso (Strikes >= ?STRIKES orelse
                                  Bytes > ?DUMP_MAX),
            S = {erlang:system_time(microsecond), Pid, Status, Frames,
                 Whole},
            P2 = P1#prof{samples = [S | P1#prof.samples],
                         strikes = maps:put(Pid, Strikes, P1#prof.strikes)},
            if
                Dear -> P2#prof{cut = maps:put(Pid, true, P2#prof.cut)};
                Way =:= check, Whole ->
                    P2#prof{small = maps:put(Pid, T0 div 1000, P2#prof.small)};
                true -> P2
            end
    end.

%% What a sample cost the node, in us: the looks, the dump's printing (by
%% its size) and our reading of it.  The time the agent waited for a
%% running process to reach its next yield, or a runnable one to be
%% scheduled, is not the node's work: it is bounded apart (?WAIT_MAX_US).
cost(gone) ->
    ?LOOK_US;
cost({_, _, _, Bytes, Looks, ReadUs}) ->
    Looks * ?LOOK_US + Bytes * ?PRINT_NS div 1000 + ReadUs.

%% {Status, Frames leaf first, Whole, DumpBytes, Looks, ReadUs}, or gone.
%% Way: whole (the heap was seen small within the second: one look),
%% check (look at the heap first), cut.
sample(Pid, whole) ->
    case erlang:process_info(Pid, [status, backtrace]) of
        [{status, Status}, {backtrace, Dump}] ->
            T0 = erlang:monotonic_time(microsecond),
            Frames = frames(Dump),
            {Status, Frames, true, byte_size(Dump), 1,
             erlang:monotonic_time(microsecond) - T0};
        undefined ->
            gone
    end;
sample(Pid, check) ->
    case erlang:process_info(Pid, total_heap_size) of
        {total_heap_size, Heap} when Heap =< ?HEAP_MAX ->
            more_looks(sample(Pid, whole));
        {total_heap_size, _} ->
            more_looks(sample(Pid, cut));
        undefined ->
            gone
    end;
sample(Pid, cut) ->
    case erlang:process_info(Pid, [status, current_stacktrace]) of
        [{status, Status}, {current_stacktrace, Stack}] ->
            T0 = erlang:monotonic_time(microsecond),
            Frames = cut_frames(Stack),
            {Status, Frames, false, 0, 1,
             erlang:monotonic_time(microsecond) - T0};
        undefined ->
            gone
    end.

more_looks(gone) -> gone;
more_looks({S, F, W, B, Looks, R}) -> {S, F, W, B, Looks + 1, R}.

%% The functions of a dump, leaf first, as the VM prints them (m:f/N),
%% each a binary of its own.  The leaf is the "Program counter" line's; a
%% frame is a line that begins with an address and " Return addr ": a
%% slot's printed term never begins a line (the VM escapes the line ends
%% a string holds).  What is not a function ("<terminate process
%% normally>") is left out.
frames(Dump) ->
    Leaf = case binary:match(Dump, <<"Program counter: ">>) of
               {Pos, Len} -> name_at(Dump, Pos + Len);
               nomatch -> none
           end,
    Rets = [name_at(Dump, Pos + Len)
            || {Pos, Len} <- binary:matches(Dump, <<" Return addr 0x">>),
               line_start(Dump, Pos)],
    bound([F || F <- [Leaf | Rets], F =/= none]).

line_start(Dump, Pos) ->
    %% "0x" and 16 hex digits begin the line
    Pos >= 19 andalso binary:at(Dump, Pos - 19) =:= $\n andalso
        binary:part(Dump, Pos - 18, 2) =:= <<"0x">>.

%% the function in "0x... (m:f/N + 76)" after Pos, or none
name_at(Dump, Pos) ->
    Size = byte_size(Dump),
    case binary:match(Dump, <<"(">>, [{scope, {Pos, min(40, Size - Pos)}}]) of
        {Open, 1} ->
            From = Open + 1,
            Scope = {From, min(1100, Size - From)},
            case binary:match(Dump, [<<" + ">>, <<")\n">>],
                              [{scope, Scope}]) of
                {End, _} when End > From ->
                    case binary:at(Dump, From) of
                        $< -> none;
                        _ -> binary:copy(binary:part(Dump, From, End - From))
                    end;
                _ ->
                    none
            end;
        _ ->
            none
    end.

%% current_stacktrace's, leaf first, and "..." for what it lacks or folded
cut_frames(Stack) ->
    bound([iolist_to_binary(io_lib:format("~tw:~tw/~b",
                                          [M, F, arity(A)]))
           || {M, F, A, _} <- Stack] ++ [<<"...">>]).

arity(A) when is_list(A) -> length(A);
arity(A) -> A.

bound(Frames) when length(Frames) =< ?FRAMES_MAX ->
    Frames;
bound(Frames) ->
    Half = ?FRAMES_MAX div 2,
    lists:sublist(Frames, Half) ++ [<<"...">>] ++
        lists:nthtail(length(Frames) - Half + 1, Frames).

now_ms() ->
    erlang:monotonic_time(millisecond).

%%% Exact mode ----------------------------------------------------------------
%%
%% call_time and call_memory on the functions named, in a trace session of
%% our own (OTP 27+) whose tracer is the agent: every process of the node
%% but ours has the call flag there, silent (the session sets no call
%% pattern: nothing is ever sent to the tracer), and each call of one of
%% those functions is counted, timed and its allocation summed by the VM.
%% Nothing another tool set is seen or touched.  Read once a second, one
%% trace:info a function (both items at once), in turn, within ?READ_US a
%% second: each look waits for every scheduler (measured: a few us a
%% function on an idle OTP 27 or 29 node, about 1 ms on a busy OTP 29
%% one), so on a busy node a turn over the functions takes seconds and
%% each total is as of its last read.  The totals since exact mode began
%% go to the Owner with what was read and what it took.  The session ends
%% with {calls, off}, stop/2 (the agent's cleanup), or its handle when the
%% agent dies.  Before OTP 27 the call flag and call_time
%% patterns are the legacy session's: one tracer a process, patterns
%% shared node-wide with eprof and its like; exact mode is refused there.

%% functions timed at once, at most; the reads' time a second, at most
%% (the last one may pass it by one look)
-define(EXACT_MAX, 200).
-define(READ_US, 10000).

exact_ask(Req, Ours, Dest, Prof0) ->
    Prof = case Prof0 of
               {T, #prof{exact = E} = P0} when E =/= none ->
                   stop(none, Prof0),
                   drop_exact({T, P0#prof{exact = none}});
               _ -> Prof0
           end,
    case exact_new(Req, Ours) of
        off ->
            state(Dest, off),
            {ok, Prof};
        {ok, Exact, N} ->
            state(Dest, {on, N}),
            {ok, keep_exact(Prof, Exact)};
        {error, Text} ->
            state(Dest, {error, Text}),
            {{error, Text}, Prof}
    end.

%% a profiler left with neither sampling nor exact mode is none
drop_exact({T, #prof{sampling = false}}) ->
    _ = erlang:cancel_timer(T),
    none;
drop_exact(Prof) ->
    Prof.

state(Dest, State) ->
    _ = erlang:send(Dest, {beamscope_calls_state, State}, [noconnect]),
    ok.

exact_new(off, _) ->
    off;
exact_new(Texts, Ours) when is_list(Texts), Texts =/= [] ->
    case beamscope_trace:sessions() of
        false ->
            {error, <<"exact mode needs OTP 27 or later (a trace session "
                      "of its own); this node runs OTP ",
                      (list_to_binary(erlang:system_info(otp_release)))/binary>>};
        true ->
            case beamscope_pattern:calls(Texts, none) of
                {ok, Calls} ->
                    MFAs = lists:usort([MFA || {_, Fs, _} <- Calls,
                                               MFA <- Fs]),
                    exact_set(MFAs, wholes(Calls), Ours);
                {error, Why} ->
                    {error, why(Why)}
            end
    end;
exact_new(_, _) ->
    {error, <<"name a module or function: mod or mod:fun/N">>}.

%% the modules named whole (mod:_): set in one call each, not a call a
%% function (each waits for every scheduler)
wholes(Calls) ->
    lists:usort([M || {_, [{M, _, _} | _] = Fs, _} <- Calls,
                      length(Fs) =:= length(M:module_info(functions))]).

exact_set(MFAs, _Wholes, _Ours) when length(MFAs) > ?EXACT_MAX ->
    {error, iolist_to_binary(
              io_lib:format("~b functions: exact mode times at most ~b at "
                            "once (each is read once a second); name "
                            "fewer (mod:fun or mod:fun/N)",
                            [length(MFAs), ?EXACT_MAX]))};
exact_set(MFAs, Wholes, Ours) ->
    S = trace:session_create(beamscope, self(), []),
    _ = trace:process(S, all, true, [call, silent]),
    _ = [catch trace:process(S, P, false, [call, silent]) || P <- Ours],
    _ = [trace:function(S, {M, '_', '_'}, true, [call_time, call_memory])
         || M <- Wholes],
    _ = [trace:function(S, MFA, true, [call_time, call_memory])
         || {M, _, _} = MFA <- MFAs, not lists:member(M, Wholes)],
    Named = [{MFA, iolist_to_binary(io_lib:format("~tw:~tw/~b", [M, F, A]))}
             || {M, F, A} = MFA <- MFAs],
    {ok, #exact{session = S, named = Named, n = length(Named),
                since = now_ms()}, length(MFAs)}.

why({bad_call, Text, {not_loaded, M}}) ->
    fmt("~ts: module ~ts is not loaded on the node", [Text, name(M)]);
why({bad_call, Text, {no_function, M, F, A}}) ->
    fmt("~ts: ~ts has no function ~ts/~ts",
        [Text, name(M), name(F), name(A)]);
why({bad_pattern, Text, _, Col, Msg}) ->
    fmt("~ts: column ~b: ~ts", [Text, Col, Msg]);
why(Other) ->
    fmt("~0tp", [Other]).

%% a name the node has no atom for comes as text
name(X) when is_binary(X) -> X;
name(X) when is_list(X) -> X;
name(X) -> io_lib:format("~tw", [X]).

fmt(F, A) ->
    iolist_to_binary(io_lib:format(F, A)).

%% {beamscope_calls, Stats, [{Name, Calls, Us, Words}]}: the functions
%% called since exact mode began, their totals over every process as of
%% their last read; those read now within ?READ_US, in turn.  The state
%% with the turn moved on.
exact_read(Dest, #exact{} = E0, Opts) ->
    T0 = erlang:monotonic_time(microsecond),
    {Read, E} = exact_look(E0, T0 + ?READ_US, 0),
    ReadUs = erlang:monotonic_time(microsecond) - T0,
    Known = E#exact.known,
    Rows = [maps:get(Name, Known) || {_, Name} <- E#exact.named,
                                      maps:is_key(Name, Known)],
    Stats = #{functions => E#exact.n, read => Read, read_us => ReadUs,
              ms => now_ms() - E#exact.since},
    _ = erlang:send(Dest, {beamscope_calls, Stats, Rows}, Opts),
    E.

%% the next functions of the turn, until the time is up or each was read
%% once: {how many, the state}
exact_look(#exact{n = N} = E, _, Read) when Read >= N ->
    {Read, E};
exact_look(#exact{todo = []} = E, Until, Read) ->
    exact_look(E#exact{todo = E#exact.named}, Until, Read);
exact_look(#exact{session = S, todo = [{MFA, Name} | Todo]} = E, Until,
           Read) ->
    Known = case exact_row(S, MFA, Name) of
                [Row] -> maps:put(Name, Row, E#exact.known);
                [] -> E#exact.known
            end,
    E1 = E#exact{todo = Todo, known = Known},
    case erlang:monotonic_time(microsecond) >= Until of
        true -> {Read + 1, E1};
        false -> exact_look(E1, Until, Read + 1)
    end.

exact_row(S, MFA, Name) ->
    %% one look for both items: each look waits for the schedulers
    case trace:info(S, MFA, all) of
        {all, Items} when is_list(Items) ->
            case lists:keyfind(call_time, 1, Items) of
                {call_time, [_ | _] = Ts} ->
                    Calls = lists:sum([C || {_, C, _, _} <- Ts]),
                    Us = lists:sum([Sec * 1000000 + U || {_, _, Sec, U} <- Ts]),
                    Words = case lists:keyfind(call_memory, 1, Items) of
                                {call_memory, Ms} when is_list(Ms) ->
                                    lists:sum([W || {_, _, W} <- Ms]);
                                _ -> -1
                            end,
                    [{Name, Calls, Us, Words} || Calls > 0];
                _ ->
                    []
            end;
        _ ->
            []
    end.
