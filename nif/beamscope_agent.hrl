%% beamscope_agent.hrl: what the agent (beamscope_agent) and its helper
%% modules share: the names of the modules they call, the keys of the
%% agent's dictionary, and the agent's state.  The sections its comments
%% name are beamscope_trace's (Two ways to trace, Cleared by someone else)
%% and beamscope_pattern's (Receive timeouts and --match).

-define(TRACER, beamscope_tracer).
%% the reader of call patterns in Elixir form, loaded only for them
-define(ELIXIR, beamscope_elixir).
-define(STATE, '$beamscope_state').
-define(LEAVING, '$beamscope_leaving').
-define(LIMITS_MS, 100).
-define(INFO_MS, 1000).
-define(INFO_MAX, 2000).
%% the mark that the next turn of relations' timer runs (beamscope_info)
-define(REL_ARMED, '$beamscope_relations_armed').

-record(st, {owner :: pid(),
             dest :: pid() | {atom(), node()},    % where the Owner receives
             key :: binary(),                     % md5 of the session's secret
             owner_mon :: reference() | undefined, % a local Owner only
             workers :: [{non_neg_integer(), pid(), reference()}],
             session = none :: none | reference(),
             dep_ms :: pos_integer(),
             heard :: integer(),                   % Owner last heard, ms
             awake :: integer(),                   % the loop last ran, ms
             high_water :: pos_integer(),
             %% count tier
             interval = 0 :: non_neg_integer(),   % 0: event tier
             cseq = 0 :: non_neg_integer(),       % counts messages sent
             overflow = 0 :: integer(),
             active = #{} :: map(),               % pids counted lately
             focus = [] :: [pid()],
             %% what the Owner shows: sampled each second as well
             shown = [] :: [pid()],
             %% whose receive timeouts are shipped: all, the listed roots,
             %% or none when the receive pattern is another tool's
             timeouts = none :: none | all | [pid()],
             %% the receive kinds asked for: messages, timeouts (the
             %% receive pattern rejects what is not asked for)
             recv = {true, true} :: {boolean(), boolean()},
             %% --match, compiled: the send pattern, and the receive
             %% pattern's clauses after the timeouts; none: no --match
             match = none :: none | {list(), list()},
             %% call patterns we set, to remove them at cleanup
             patterns = [] :: [mfa()],
             %% where flags and patterns are set (Two ways to trace): the
             %% node's one shared session (legacy), or a trace session of
             %% our own, {session, Handle}; only the agent holds the handle
             tr = legacy :: legacy | {session, term()},
             %% legacy, --take-over: what another tracer held, given back
             %% at cleanup: {Pid | new_processes, Flags, TracerOpt} and
             %% {send | 'receive', MatchSpec}
             taken = [] :: [tuple()],
             %% what the check looks at every ?CHECK_MS (Cleared by someone
             %% else), and what it found cleared
             watch = none :: none | {boolean(), [pid()], [mfa()],
                                     [send | 'receive']},
             cleared = [] :: [atom()],
             %% the receive pattern last set, read back to know it holds
             %% (Receive timeouts and --match), and whether the receive
             %% flag was set
             rms = none :: none | list(),
             rflag = false :: boolean(),
             %% {UserKinds, MaxEvents, DurationMs, Rate, Shed}, and the last
             %% {Tripped, Shed} told to Owner
             limits = {0, 0, 0, 0, false},
             told = {none, 0},
             %% node samples (the view's header): the timer while they
             %% are on, and the last scheduler_wall_time, for deltas
             node = none :: none | reference(),
             swt = [] :: [{pos_integer(), integer(), integer()}],
             %% top-N (the view's top mode): the scan for candidates, a
             %% #top{} of beamscope_info
             top = none :: none | tuple(),
             %% the sampling profiler (beamscope_prof): its timer and
             %% state while it runs
             prof = none :: none | {reference(), tuple()},
             %% the VM's alarms (beamscope_alarm) while they are on
             alarm = none :: none | tuple()}).
