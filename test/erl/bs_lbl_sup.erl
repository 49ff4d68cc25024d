%% bs_lbl_sup: a supervisor with no children (see bs_lbl_srv).
-module(bs_lbl_sup).
-behaviour(supervisor).
-export([init/1]).

init([]) -> {ok, {#{}, []}}.
