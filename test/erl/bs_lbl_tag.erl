%% bs_lbl_tag: processes that label themselves with proc_lib:set_label/1
%% (OTP 27), for test/t0575-labels.sh; on an older node the same
%% processes, without labels.
%%
%% start(Ms): a plain spawn labelled {bs_lbl, plain}, a proc_lib spawn
%% labelled {bs_lbl, 7}, a gen_server labelled <<"bs_lbl shop">> in its
%% init/1, a proc_lib spawn that labels itself {bs_lbl, late} only a second
%% after its start (after beamscope's first look), and a registered one
%% labelled {bs_lbl, reg} (its name wins); a plain process sends each a
%% message every Ms milliseconds, and calls the gen_server, until stop/0.
%% Returns the pids as text in that order.
-module(bs_lbl_tag).
-behaviour(gen_server).
-export([start/1, stop/0]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).

start(Ms) ->
    Plain = spawn(fun() -> label({bs_lbl, plain}), idle() end),
    Lib = proc_lib:spawn(fun() -> label({bs_lbl, 7}), idle() end),
    {ok, Srv} = gen_server:start(?MODULE, <<"bs_lbl shop">>, []),
    Late = proc_lib:spawn(fun() ->
                                  receive after 1000 -> ok end,
                                  label({bs_lbl, late}),
                                  idle()
                          end),
    Reg = spawn(fun() -> label({bs_lbl, reg}), idle() end),
    register(bs_lbl_reg, Reg),
    All = [Plain, Lib, Srv, Late, Reg],
    register(bs_lbl_tagger, spawn(fun() -> poke(All, Srv, Ms) end)),
    [pid_to_list(P) || P <- All].

stop() ->
    bs_lbl_tagger ! stop,
    ok.

%% proc_lib:set_label/1 where the node has it (OTP 27)
label(L) ->
    case erlang:function_exported(proc_lib, set_label, 1) of
        true -> proc_lib:set_label(L);
        false -> ok
    end.

idle() ->
    receive
        stop -> ok;
        _ -> idle()
    end.

poke(All, Srv, Ms) ->
    [P ! poke || P <- All],
    ok = gen_server:call(Srv, ping),
    receive
        stop -> [P ! stop || P <- All], ok
    after Ms ->
        poke(All, Srv, Ms)
    end.

init(Label) ->
    label(Label),
    {ok, nostate}.
handle_call(_, _, S) -> {reply, ok, S}.
handle_cast(_, S) -> {noreply, S}.
handle_info(stop, S) -> {stop, normal, S};
handle_info(_, S) -> {noreply, S}.
