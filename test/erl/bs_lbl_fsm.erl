%% bs_lbl_fsm: a gen_statem that answers calls (see bs_lbl_srv).
-module(bs_lbl_fsm).
-behaviour(gen_statem).
-export([init/1, callback_mode/0, handle_event/4]).

init([]) -> {ok, idle, nodata}.
callback_mode() -> handle_event_function.
handle_event({call, From}, _, _, _) -> {keep_state_and_data, [{reply, From, pong}]};
handle_event(_, _, _, _) -> keep_state_and_data.
