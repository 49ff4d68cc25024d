%% beamscope_info: what the agent tells the Owner of the node's processes
%% and of the node itself: the count tier's deltas and samples, the dear
%% process_info items and what they may cost, the top-N scan, the node
%% samples, what a process is (describing) and the relations of the ones
%% in focus.  A helper of beamscope_agent, run only in the agent's
%% process: what it keeps is in the agent's state and dictionary.
-module(beamscope_info).

%% for the agent
-export([harvest/1, final_counts/1, sample/1, node_stats/2, swt_lower/0,
         node_sample/1, describe/2, relations/1]).
%% the top-N scan, a step at a time (scripts/bench-ui top runs it), and
%% the table's samples (scripts/bench-ui procinfo)
-export([top_new/2, top_new/3, top_step/3, top_passed/1, sample_rows/1]).
-export([names/0]).

-include("beamscope_agent.hrl").

%% dear process_info items (see Dear process_info items): what a queued
%% message costs a walk at worst, in ns (measured 9 on an idle node, some
%% 100 on a busy one), the longest walk of a queue ever asked for, the
%% budget of a turn, in us, the share of a scheduler a process may take
%% (one call per 100 times its cost), the calls remembered and for how
%% long, and what a queued message takes at least, in words
-define(MSG_NS, 100).
-define(DEAR_MAX_US, 2000).
-define(DEAR_BUDGET_US, 10000).
-define(DEAR_SHARE, 100).
-define(DEAR, '$beamscope_dear').
-define(DEAR_KEEP, 4096).
-define(DEAR_FORGET_MS, 60000).
-define(MSG_MIN_WORDS, 4).
%% a top look by memory this dear is remembered
-define(DEAR_NOTE_US, 50).
%% top-N: the time a second the scan may take (its first looks; the second
%% looks of reductions take about as much again)
-define(TOP_BUDGET_US, 10000).
%% node samples: how often, and the mark that this process raised the
%% scheduler_wall_time flag (its own count; see node_stats/2)
-define(NODE_MS, 1000).
-define(SWT, '$beamscope_swt').
%% describe: processes a request may name, the longest text said of one,
%% and the biggest heap whose whole dictionary is copied where the VM
%% cannot read one key of it (OTP 25), in words
-define(DESCRIBE_MAX, 500).
-define(LABEL_MAX, 120).
-define(DICT_WORDS, 32768).
%% relations of the processes in focus: how often, entries of each list
%% sent (the counts are whole), the most processes looked at a turn, and
%% how many turns ran (for tests)
-define(REL_MS, 1000).
-define(REL_FIRST, 5).
-define(REL_MAX, 32).
-define(REL_TURNS, '$beamscope_relations_sampled').

%% The top-N scan: every process is looked at once a pass, a slice a
%% second within a time budget; the best N of the pass so far and of the
%% last whole pass are the candidates, sampled every second with the rows
%% on screen.  Reductions a second take two looks a second apart: a
%% slice's first looks are kept (prev) for its second ones.  A pass walks
%% the node with erlang:processes_iterator/0 where the VM has it (OTP 28),
%% else a list of erlang:processes() taken at its start.
-record(top, {metric :: memory | reductions | message_queue_len,
              n :: pos_integer(),
              walk = list :: iterator | list,
              todo = [] :: [pid()] | tuple(),       % this pass, not yet seen:
                                                    % a list or an iterator
              ours = [] :: [pid()],                 % skipped by the iterator
              prev = [] :: [{pid(), integer()}],    % first looks, reductions
              prev_us = 0 :: integer(),
              best = [] :: [{number(), pid()}],     % this pass, best first
              last = [] :: [{number(), pid()}],     % the last whole pass
              started = none :: none | integer(),   % this pass began, ms
              pass_ms = 0 :: non_neg_integer(),     % the last whole pass took
              scanned = 0 :: non_neg_integer(),     % of this pass
              total = 0 :: non_neg_integer(),       % processes this pass
              passes = 0 :: non_neg_integer()}).

%%% Count tier ----------------------------------------------------------------

%% Ship the deltas of the table retired one interval ago.
harvest(#st{session = S, dest = Owner, cseq = Seq, active = Active} = St) ->
    erlang:send_after(St#st.interval, self(), '$beamscope_counts'),
    {Overflow, Counts} = ?TRACER:counts_take(S),
    case Counts =/= [] orelse Overflow =/= St#st.overflow of
        true ->
            send(Owner, {beamscope_counts, Seq, Overflow, Counts}),
            Active1 = lists:foldl(fun({P, _, _}, A) -> A#{P => true} end,
                                  Active, Counts),
            St#st{cseq = Seq + 1, overflow = Overflow, active = Active1};
        false ->
            St
    end.

%% Tracing is off and the workers have drained: no tracee is counting any
%% more, so all three tables can be read; three takes visit each once.
final_counts(#st{interval = 0}) ->
    ok;
final_counts(#st{session = none}) ->
    ok;
final_counts(#st{session = S, dest = Owner, cseq = Seq0}) ->
    lists:foldl(fun(_, Seq) ->
                        case catch ?TRACER:counts_take(S) of
                            {Overflow, [_ | _] = Counts} ->
                                send(Owner, {beamscope_counts, Seq, Overflow, Counts}),
                                Seq + 1;
                            _ ->
                                Seq
                        end
                end, Seq0, [1, 2, 3]),
    ok.

%% process_info of the processes counted lately, the ones in focus and
%% the ones the Owner shows; never `messages`, which would copy a mailbox.
%% What costs O(1) is asked of every one; memory and total_heap_size walk
%% the message queue (and memory the links and monitors), so they are
%% asked only as Dear processes below allows, and a process not asked
%% says {at_least, Bytes} instead: its heap block, and for memory the
%% smallest a queued message can take.  How many were asked is kept in
%% the dictionary, for tests to read.
sample(#st{dest = Owner, active = Active, focus = Focus,
           shown = Shown} = St0) ->
    erlang:send_after(?INFO_MS, self(), '$beamscope_info'),
    St = top_tick(St0),
    %% the rows on screen and the top candidates first: the bound cuts
    %% only among the processes counted lately
    First = lists:usort(Focus ++ Shown ++ top_candidates(St#st.top)),
    Firsts = lists:foldl(fun(P, M) -> M#{P => true} end, #{}, First),
    Pids = lists:sublist(First ++ [P || P <- maps:keys(Active),
                                        not is_map_key(P, Firsts)],
                         ?INFO_MAX),
    put('$beamscope_sampled', length(Pids)),
    case sample_rows(Pids) of
        [] -> ok;
        Info -> send(Owner, {beamscope_info, Info})
    end,
    St#st{active = #{}}.

%% The samples of Pids, as beamscope_info carries them (scripts/bench-ui
%% procinfo times this).
sample_rows(Pids) ->
    W = erlang:system_info(wordsize),
    Now = erlang:monotonic_time(millisecond),
    {Info, D, _} =
        lists:foldl(
          fun(P, {Acc, D0, Spent}) ->
                  %% items the VM reads without the process's help
                  case erlang:process_info(P, [registered_name,
                                               message_queue_len,
                                               reductions, heap_size]) of
                      [{registered_name, N}, {message_queue_len, Q},
                       {reductions, R}, {heap_size, H}] ->
                          {Row, D1, Spent1} =
                              sample_row(P, N, Q, R, H, W, Now, D0, Spent),
                          {Row ++ Acc, D1, Spent1};
                      _ ->
                          {Acc, D0, Spent}
                  end
          end, {[], dear_get(), 0}, rotate(Pids, Now div ?INFO_MS)),
    dear_put(D, Now),
    Info.

%% A list begun at its Kth element, so that when the budget runs short
%% it is not always the same processes that go without
rotate([], _) ->
    [];
rotate(L, K) ->
    N = length(L),
    {A, B} = lists:split((K rem N + N) rem N, L),
    B ++ A.

%% Then current_function, which the process answers itself (a signal it
%% handles, O(1)), with memory and total_heap_size where Dear process_info
%% items allows them, else what they are at least.  The cost of a call
%% that took ?DEAR_NOTE_US or more is remembered.  [] when P is gone.
sample_row(P, N, Q, R, H, W, Now, D, Spent) ->
    Key = {mem, P},
    Rec = maps:get(Key, D, none),
    Bound = {{at_least, at_least(Q, H, W)}, {at_least, H * W}},
    case dear_ask(Q, Rec, Now, ?DEAR_BUDGET_US - Spent, Spent =:= 0) of
        false ->
            case erlang:process_info(P, current_function) of
                {current_function, F} ->
                    {[row(P, N, F, Q, Bound, R)], D, Spent};
                undefined ->
                    {[], D, Spent}
            end;
        true ->
            case timed(P, [current_function, memory, total_heap_size]) of
                {[{current_function, F}, {memory, M}, {total_heap_size, T}],
                 Us} ->
                    {[row(P, N, F, Q, {M, T * W}, R)],
                     remember(Key, Rec, Us, Q, Now, D), Spent + Us};
                {_, Us} ->
                    {[], D, Spent + Us}
            end
    end.

row(P, N, F, Q, {M, Hb}, R) ->
    Fn = case F of {_, _, _} -> F; _ -> [] end,
    {P, N, Fn, Q, M, R, Hb}.

remember(Key, Rec, Us, Q, Now, D) when Us >= ?DEAR_NOTE_US; Rec =/= none ->
    D#{Key => {Us, Q, Now}};
remember(_, _, _, _, _, D) ->
    D.

%% What memory is at least, from what costs O(1): the heap block (heap
%% and stack) and the queue's messages, each at least ?MSG_MIN_WORDS.
at_least(Q, HeapWords, W) ->
    (HeapWords + Q * ?MSG_MIN_WORDS) * W.

%%% Dear process_info items ---------------------------------------------------
%%
%% A process_info item that walks a list of the process (memory and
%% total_heap_size walk its message queue, memory its links and monitors
%% too, links its links) is done by the VM in one go: on OTP 25 to 29 the
%% request is a signal the process handles itself, on its scheduler, and
%% nothing else runs there meanwhile (5 000 000 queued messages: 45 ms on
%% an idle node, over 0.1 s on a busy one).  A call cannot be cut short,
%% so its cost is predicted before it is made: the queue's length (which
%% costs O(1) to ask) times what a message costs at worst, and what the
%% last call on that process took (its links and monitors), kept in the
%% dictionary (?DEAR, bounded).  A call is made only
%%  * when the queue alone would take at most ?DEAR_MAX_US: never on a
%%    process with a queue of some 20 000 messages or more;
%%  * at most once per ?DEAR_SHARE times its cost: 1% of a scheduler on
%%    any process (a call of 20 ms every 2 s);
%%  * within a budget a turn, ?DEAR_BUDGET_US (the first call of a turn
%%    may go beyond it, so that a dear process is still asked, rarely).

dear_get() ->
    case get(?DEAR) of
        D when is_map(D) -> D;
        _ -> #{}
    end.

%% kept: what was asked in the last ?DEAR_FORGET_MS, ?DEAR_KEEP at most
dear_put(D, _Now) when map_size(D) =< ?DEAR_KEEP ->
    put(?DEAR, D);
dear_put(D, Now) ->
    Recent = maps:filter(fun(_, {_, _, At}) -> Now - At < ?DEAR_FORGET_MS end,
                         D),
    Kept = case map_size(Recent) =< ?DEAR_KEEP of
               true ->
                   Recent;
               false ->
                   Newest = lists:sublist(
                              lists:reverse(lists:keysort(2, [{K, At} || {K, {_, _, At}}
                                                                 <- maps:to_list(Recent)])),
                              ?DEAR_KEEP div 2),
                   maps:with([K || {K, _} <- Newest], Recent)
           end,
    put(?DEAR, Kept).

dear_at(D, Key) ->
    case D of
        #{Key := {_, _, At}} -> At;
        _ -> 0
    end.

%% Q: the queue's length now; Rec: {CostUs, QueueThen, AtMs} of the last
%% call, or none; Left: what is left of the turn's budget, in us; First:
%% no call was made this turn yet
dear_ask(Q, Rec, NowMs, Left, First) ->
    Walk = Q * ?MSG_NS div 1000,
    Pred = case Rec of
               none -> Walk;
               {Cost, Q0, _} -> max(Walk, Cost + max(0, Q - Q0) * ?MSG_NS div 1000)
           end,
    Walk =< ?DEAR_MAX_US andalso
        (First orelse Pred =< Left) andalso
        case Rec of
            none -> true;
            {_, _, At} -> NowMs - At >= Pred * ?DEAR_SHARE div 1000
        end.

%% process_info(P, Items) and the microseconds it took
timed(P, Items) ->
    T0 = erlang:monotonic_time(microsecond),
    R = erlang:process_info(P, Items),
    {R, erlang:monotonic_time(microsecond) - T0}.

%% Whether P's message queue is short enough to walk (total_heap_size),
%% where no cost was measured: at most ?DEAR_MAX_US at the worst rate.
walkable(P) ->
    case erlang:process_info(P, message_queue_len) of
        {message_queue_len, Q} -> Q * ?MSG_NS div 1000 =< ?DEAR_MAX_US;
        undefined -> false
    end.

%%% Top-N -----------------------------------------------------------------
%%
%% The view's top mode asks for the N processes of the whole node that
%% lead by memory, reductions a second or message queue length.  Walking
%% every process every second would cost the node what observer_cli costs
%% it (about 2 us a process); instead each second looks at as many
%% processes of the pass as fit in the budget, keeps the best N, and a
%% pass ends when every process alive at its start was looked at.  The
%% candidates (the best of this pass and of the last one) are sampled every
%% second, so what is shown is never older than a second; a process that
%% became big since its look waits for the next pass.  Our own processes
%% are never candidates.

top_new(Metric, N) ->
    top_new(Metric, N, case erlang:function_exported(erlang,
                                                     processes_iterator, 0) of
                           true -> iterator;
                           false -> list
                       end).

%% the walk chosen (the bench compares both on one node)
top_new(Metric, N, Walk) when Walk =:= iterator; Walk =:= list ->
    #top{metric = Metric, n = N, walk = Walk}.

top_tick(#st{top = none} = St) ->
    St;
top_tick(#st{top = T0, dest = Owner, workers = Ws} = St) ->
    Ours = [self() | [P || {_, P, _} <- Ws]],
    T = top_step(T0, ?TOP_BUDGET_US, Ours),
    put('$beamscope_top', {T#top.scanned, T#top.total, T#top.passes,
                           T#top.walk}),
    send(Owner, {beamscope_top, T#top.metric, T#top.scanned, T#top.total,
                 T#top.pass_ms}),
    St#st{top = T}.

%% One second's share of the pass: the second looks of the last slice,
%% then first looks until the budget is spent.
top_step(#top{} = T0, Budget, Ours) ->
    Now = erlang:monotonic_time(microsecond),
    T1 = top_second_looks(T0, Now),
    T2 = case T1#top.todo of
             [] -> top_pass(T1, Ours, Now);
             _ -> T1
         end,
    {Looked, Todo, N} = top_looks(T2#top.metric, T2#top.todo, T2#top.ours,
                                  Now + Budget, [], 0),
    Scanned = T2#top.scanned + N,
    %% the iterator's total is the count at the pass's start: processes
    %% spawned since may be met too
    T3 = T2#top{todo = Todo, scanned = Scanned,
                total = max(T2#top.total, Scanned)},
    case T3#top.metric of
        reductions -> T3#top{prev = Looked, prev_us = Now};
        _ -> top_keep(T3, Looked)
    end.

%% A new pass: the last one's best become the last pass's; the processes
%% alive now are this one's.  The iterator reads the process table a
%% chunk at a time, as the pass goes: the agent's heap never holds a list
%% of every process (8 MB at 500 000), and the pass does not begin with a
%% copy of the whole table.
top_pass(#top{started = S, walk = Walk} = T, Ours, NowUs) ->
    Ms = NowUs div 1000,
    {Todo, Total} =
        case Walk of
            iterator ->
                {erlang:processes_iterator(),
                 max(0, erlang:system_info(process_count) - length(Ours))};
            list ->
                L = erlang:processes() -- Ours,
                {L, length(L)}
        end,
    T#top{todo = Todo, ours = Ours, total = Total, scanned = 0, started = Ms,
          best = [], last = T#top.best,
          passes = T#top.passes + case S of none -> 0; _ -> 1 end,
          pass_ms = case S of none -> 0; _ -> Ms - S end}.

%% First looks until the deadline (checked every 32 looks, and every look
%% by memory, whose looks may be dear), or the pass's end ([] left).  The
%% iterator (opaque, never a list) is taken apart here, a process at a
%% time, so that a look allocates no more than one of the list does.
top_looks(Metric, Todo, Ours, Deadline, Acc, N)
  when N band 31 =:= 0, N > 0; Metric =:= memory, N > 0 ->
    case erlang:monotonic_time(microsecond) >= Deadline of
        true -> {Acc, Todo, N};
        false -> top_looks1(Metric, Todo, Ours, Deadline, Acc, N)
    end;
top_looks(Metric, Todo, Ours, Deadline, Acc, N) ->
    top_looks1(Metric, Todo, Ours, Deadline, Acc, N).

top_looks1(Metric, [P | Todo], Ours, Deadline, Acc, N) ->
    top_looks(Metric, Todo, Ours, Deadline,
              top_look(Metric, P, Deadline, N =:= 0, Acc), N + 1);
top_looks1(_, [], _, _, Acc, N) ->
    {Acc, [], N};
top_looks1(Metric, Iter, Ours, Deadline, Acc, N) ->
    case erlang:processes_next(Iter) of
        {P, Todo} ->
            case lists:member(P, Ours) of
                true ->
                    top_looks1(Metric, Todo, Ours, Deadline, Acc, N);
                false ->
                    top_looks(Metric, Todo, Ours, Deadline,
                              top_look(Metric, P, Deadline, N =:= 0, Acc),
                              N + 1)
            end;
        none ->
            {Acc, [], N}
    end.

top_look(Metric, P, Deadline, First, Acc) ->
    case top_value(Metric, P, Deadline, First) of
        undefined -> Acc;
        V -> [{V, P} | Acc]
    end.

top_value(memory, P, Deadline, First) ->
    top_memory(P, Deadline, First);
top_value(Metric, P, _, _) ->
    case erlang:process_info(P, Metric) of
        {_, V} -> V;
        undefined -> undefined
    end.

%% A look by memory: the queue's length first, then memory where Dear
%% process_info items allows it, else what memory is at least (so that a
%% process whose queue is too long to walk still ranks, by its queue).
%% A look that took ?DEAR_NOTE_US or more is remembered.
top_memory(P, Deadline, First) ->
    case erlang:process_info(P, [message_queue_len, heap_size]) of
        [{_, Q}, {_, H}] ->
            D = dear_get(),
            Key = {mem, P},
            Rec = maps:get(Key, D, none),
            Now = erlang:monotonic_time(),
            Left = Deadline - erlang:convert_time_unit(Now, native, microsecond),
            NowMs = erlang:convert_time_unit(Now, native, millisecond),
            case dear_ask(Q, Rec, NowMs, Left, First) of
                true ->
                    case timed(P, memory) of
                        {{memory, M}, Us} when Us >= ?DEAR_NOTE_US ->
                            dear_put(D#{Key => {Us, Q, NowMs}}, NowMs),
                            M;
                        {{memory, M}, _} ->
                            M;
                        {undefined, _} ->
                            undefined
                    end;
                false ->
                    at_least(Q, H, erlang:system_info(wordsize))
            end;
        undefined ->
            undefined
    end.

%% Reductions: the slice looked at a second ago, again; its rate a second.
top_second_looks(#top{metric = reductions, prev = Prev, prev_us = T0} = T,
                 Now) when Prev =/= [] ->
    Us = max(1, Now - T0),
    Rates = lists:foldl(
              fun({R0, P}, Acc) ->
                      case erlang:process_info(P, reductions) of
                          {reductions, R1} when R1 >= R0 ->
                              [{(R1 - R0) * 1000000 div Us, P} | Acc];
                          _ ->
                              Acc
                      end
              end, [], Prev),
    top_keep(T#top{prev = []}, Rates);
top_second_looks(T, _) ->
    T.

%% The best N of this pass, with the values just looked at.
top_keep(#top{n = N, best = Best} = T, Looked) ->
    Floor = case length(Best) >= N of
                true -> element(1, lists:last(Best));
                false -> -1
            end,
    New = [E || {V, _} = E <- Looked, V > Floor, V > 0],
    T#top{best = lists:sublist(lists:reverse(lists:sort(New ++ Best)), N)}.

%% Whole passes done, and the best of the last one (for the bench).
top_passed(#top{passes = N, last = Last}) ->
    {N, Last}.

top_candidates(none) ->
    [];
top_candidates(#top{best = Best, last = Last}) ->
    [P || {_, P} <- Best ++ Last].

%%% Node samples --------------------------------------------------------------
%%
%% What the view's header shows of the node, once a second while the Owner
%% asks for it: memory, process and port counts and limits, run queue
%% lengths and scheduler utilisation.  Only BIFs that cost O(1) or
%% O(schedulers): no process is ever looked at.
%%
%% Utilisation needs the scheduler_wall_time flag.  The flag is node-wide,
%% but the VM keeps a count per process: on while any process that raised
%% it (and did not lower it) lives.  The agent raises its own count while
%% samples are on and lowers it when they stop and at cleanup; if it is
%% killed, the VM drops its count with it.  So whoever else had it on keeps
%% it on, and a node that had it off has it off again, whichever way we go.

node_stats(true, #st{node = none} = St) ->
    _ = get(?SWT) =:= true orelse
        begin
            _ = erlang:system_flag(scheduler_wall_time, true),
            put(?SWT, true)
        end,
    node_sample(St#st{swt = []});
node_stats(true, St) ->
    St;
node_stats(false, #st{node = TRef} = St) ->
    _ = TRef =:= none orelse erlang:cancel_timer(TRef),
    swt_lower(),
    St#st{node = none, swt = []}.

swt_lower() ->
    case erase(?SWT) of
        true -> _ = erlang:system_flag(scheduler_wall_time, false), ok;
        _ -> ok
    end.

node_sample(#st{dest = Owner} = St) ->
    TRef = erlang:start_timer(?NODE_MS, self(), '$beamscope_node'),
    Online = erlang:system_info(schedulers_online),
    RunQs = erlang:statistics(run_queue_lengths),
    Swt = case erlang:statistics(scheduler_wall_time) of
              L when is_list(L) -> lists:sort([W || {Id, _, _} = W <- L,
                                                    Id =< Online]);
              _ -> []
          end,
    %% the normal schedulers' queues first, then the dirty CPU one
    {Normal, Dirty} = lists:split(min(erlang:system_info(schedulers),
                                      length(RunQs)), RunQs),
    Memory = try erlang:memory([total, processes, binary, ets, atom])
             catch error:_ -> []
             end,
    Sample = #{memory => [V || {_, V} <- Memory],
               processes => {erlang:system_info(process_count),
                             erlang:system_info(process_limit)},
               ports => {erlang:system_info(port_count),
                         erlang:system_info(port_limit)},
               run_queues => Normal,
               dirty_run_queue => lists:sum(Dirty),
               schedulers => utilisation(St#st.swt, Swt)},
    send(Owner, {beamscope_node, Sample}),
    St#st{node = TRef, swt = Swt}.

%% Per scheduler online, in permille of the time between two samples; []
%% until there are two.
utilisation(Old, New) when length(Old) =:= length(New) ->
    [case T1 - T0 of
         DT when DT > 0 -> min(1000, max(0, (A1 - A0) * 1000 div DT));
         _ -> 0
     end || {{Id, A0, T0}, {Id, A1, T1}} <- lists:zip(Old, New)];
utilisation(_, _) ->
    [].

%%% Describing processes ------------------------------------------------------

%% What a process is, beyond its pid, for processes the Owner met: what
%% observer_cli shows when there is no registered name (the Owner knows
%% those).  The label it gave itself with proc_lib:set_label/1 where the
%% VM has labels (OTP 27: what its developer chose to call it), else the
%% '$initial_call' a proc_lib process keeps in its dictionary (a
%% gen_server's is {Mod, init, 1}, a supervisor's {supervisor, Mod, 1}),
%% else [] and the Owner keeps the initial call it knows.  One look per
%% process (both keys in one process_info on OTP 27), and never a copy of
%% a big dictionary.  Where labels exist, the first answer of a process
%% without one yet says so ({P, Text, again}): a label is often set just
%% after the start (in init/1, after a handshake), after the first look,
%% and the Owner asks once more a little later (First false).
describe(Pids, First) ->
    Ctx = {dictionary_reach(), First},
    [label(P, Ctx) || P <- lists:sublist(Pids, ?DESCRIBE_MAX),
                      is_pid(P), node(P) =:= node()].

%% How much of another process's dictionary the VM reads: labels and one
%% key at a time (OTP 27: proc_lib:set_label/1), one key
%% (process_info(P, {dictionary, Key}) exists since OTP 26), or only the
%% whole dictionary, copied (OTP 25).
dictionary_reach() ->
    case erlang:function_exported(proc_lib, set_label, 1) of
        true -> labels;
        false -> case one_key_dictionary() of
                     true -> one_key;
                     false -> whole
                 end
    end.

one_key_dictionary() ->
    try erlang:process_info(self(), {dictionary, '$beamscope'}) of
        _ -> true
    catch
        error:badarg -> false
    end.

%% {P, Text | []} or {P, Text | [], again}
label(P, {labels, First}) ->
    case erlang:process_info(P, [{dictionary, '$process_label'},
                                 {dictionary, '$initial_call'}]) of
        [{_, undefined}, {_, Init}] when First -> {P, mfa_text(Init), again};
        [{_, undefined}, {_, Init}] -> {P, mfa_text(Init)};
        [{_, Label}, _] -> {P, label_text(Label)};
        _ -> {P, []}
    end;
label(P, {Reach, _}) ->
    {P, mfa_text(initial_call(P, Reach =:= one_key))}.

mfa_text({M, F, A}) when is_atom(M), is_atom(F), is_integer(A) ->
    text(io_lib:format("~ts:~ts/~b", [M, F, A]));
mfa_text(_) ->
    [].

%% a binary as the text it holds (proc_lib's own examples), anything else
%% (and a binary that is no UTF-8) as Erlang writes it, 8 levels deep
label_text(L) when is_binary(L) ->
    case text(L) of
        [] -> text(io_lib:format("~0tP", [L, 8]));
        T -> T
    end;
label_text(L) ->
    text(io_lib:format("~0tP", [L, 8])).

initial_call(P, true) ->
    case erlang:process_info(P, {dictionary, '$initial_call'}) of
        {{dictionary, '$initial_call'}, MFA} -> MFA;
        _ -> undefined
    end;
initial_call(P, false) ->
    %% only proc_lib keeps one: the others are not worth a copy
    case erlang:process_info(P, initial_call) of
        {initial_call, {proc_lib, init_p, _}} ->
            case dictionary_key(P, '$initial_call') of
                {ok, MFA} -> MFA;
                _ -> undefined
            end;
        _ ->
            undefined
    end.

%% OTP 25: the dictionary is copied whole to read one key, and only where
%% the heap is small (the dictionary is on it): total_heap_size walks the
%% message queue, so it is asked only of a short one.  {ok, Value},
%% missing, or unknown when it was not read.
dictionary_key(P, Key) ->
    case walkable(P) andalso erlang:process_info(P, total_heap_size) of
        {total_heap_size, W} when W =< ?DICT_WORDS ->
            case erlang:process_info(P, dictionary) of
                {dictionary, D} ->
                    case lists:keyfind(Key, 1, D) of
                        {_, V} -> {ok, V};
                        false -> missing
                    end;
                _ ->
                    unknown
            end;
        _ ->
            unknown
    end.

text(Chars) ->
    case unicode:characters_to_binary(Chars) of
        B when is_binary(B), byte_size(B) =< ?LABEL_MAX -> B;
        B when is_binary(B) -> cut(B, ?LABEL_MAX);
        _ -> []
    end.

%% at most N bytes, whole characters only
cut(B, N) ->
    case unicode:characters_to_binary(binary:part(B, 0, N)) of
        C when is_binary(C) -> C;
        _ -> cut(B, N - 1)
    end.

%%% Relations of the processes in focus ---------------------------------------
%%
%% What the log of a process in focus shows of its links, monitors and
%% '$ancestors', once a second while any process is in focus: the first
%% turn at the focus, then one a second from a timer of its own, which
%% stops at the first turn that finds no process in focus.  A list may be
%% long (a supervisor's links): its length is sent, and its first
%% ?REL_FIRST entries.

relations(#st{focus = []} = St) ->
    St;
relations(#st{dest = Owner, focus = Focus} = St) ->
    case get(?REL_ARMED) of
        true ->
            St;
        _ ->
            erlang:send_after(?REL_MS, self(), '$beamscope_relations'),
            put(?REL_ARMED, true),
            put(?REL_TURNS, case get(?REL_TURNS) of
                                N when is_integer(N) -> N + 1;
                                _ -> 1
                            end),
            Rel = relations_dear(lists:sublist(Focus, ?REL_MAX),
                                 one_key_dictionary()),
            _ = Rel =:= [] orelse send(Owner, {beamscope_relations, Rel}),
            St
    end.

%% The relations of the processes that Dear process_info items allows (a
%% supervisor's links are a walk), the ones asked least lately first; the
%% Owner keeps saying what it was told last of the others.
relations_dear(Pids, OneKey) ->
    Now = erlang:monotonic_time(millisecond),
    D0 = dear_get(),
    Order = lists:sort([{dear_at(D0, {rel, P}), P} || P <- Pids]),
    {Rel, D, _} =
        lists:foldl(
          fun({_, P}, {Acc, D1, Spent}) ->
                  Key = {rel, P},
                  case dear_ask(0, maps:get(Key, D1, none), Now,
                                ?DEAR_BUDGET_US - Spent, Spent =:= 0) of
                      false ->
                          {Acc, D1, Spent};
                      true ->
                          T0 = erlang:monotonic_time(microsecond),
                          R = relations_of(P, OneKey),
                          Us = erlang:monotonic_time(microsecond) - T0,
                          {[R || R =/= none] ++ Acc,
                           D1#{Key => {Us, 0, Now}}, Spent + Us}
                  end
          end, {[], D0, 0}, Order),
    dear_put(D, Now),
    Rel.

relations_of(P, OneKey) ->
    case erlang:process_info(P, [links, monitors, monitored_by]) of
        [{links, L}, {monitors, M}, {monitored_by, B}] ->
            {P, length(L), lists:sublist(L, ?REL_FIRST),
             length(M), lists:sublist(M, ?REL_FIRST),
             length(B), ancestors(P, OneKey)};
        _ ->
            none
    end.

%% The first entries of '$ancestors' (the parent first, a registered one
%% by its name), [] when the process has none, unknown when the VM cannot
%% read one key (OTP 25) and the dictionary is too big to copy.
ancestors(P, true) ->
    case erlang:process_info(P, {dictionary, '$ancestors'}) of
        {_, undefined} -> [];
        {_, V} -> ancestors_first(V, ?REL_FIRST);
        _ -> unknown
    end;
ancestors(P, false) ->
    case dictionary_key(P, '$ancestors') of
        {ok, V} -> ancestors_first(V, ?REL_FIRST);
        missing -> [];
        unknown -> unknown
    end.

%% proc_lib keeps pids and registered names there; anything else anyone
%% put there is not copied ('...'), and a list that is not one is unknown
ancestors_first(V, _) when not is_list(V) ->
    unknown;
ancestors_first([A | T], N) when N > 0 ->
    [case is_pid(A) orelse is_atom(A) of
         true -> A;
         false -> '...'
     end | case is_list(T) of
               true -> ancestors_first(T, N - 1);
               false -> []
           end];
ancestors_first(_, _) ->
    [].

%% To the Owner, as beamscope_agent sends (noconnect, and nosuspend once
%% it is leaving).
send(Owner, Msg) ->
    Opts = case get(?LEAVING) of
               true -> [noconnect, nosuspend];
               _ -> [noconnect]
           end,
    _ = erlang:send(Owner, Msg, Opts),
    ok.

%% The registered processes, for the start's answer: all but the agent.
names() ->
    [{P, N} || N <- registered(), N =/= beamscope_agent, P <- [whereis(N)],
               is_pid(P)].
