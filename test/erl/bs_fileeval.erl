%% node_eval for a node that erl_call cannot reach (one that listens on
%% IPv6 alone: erl_call speaks IPv4): the test writes an expression to
%% DIR/q, the node writes its value to DIR/a.  Started with the node
%% (-eval), so it is there before anything is traced.
-module(bs_fileeval).
-export([start/1]).

start(Dir) ->
    spawn(fun() -> loop(Dir) end),
    ok.

loop(Dir) ->
    Q = filename:join(Dir, "q"),
    case file:read_file(Q) of
        {ok, Src} ->
            ok = file:delete(Q),
            Out = filename:join(Dir, "a"),
            ok = file:write_file(Out ++ ".tmp",
                                 io_lib:format("~tp~n", [eval(Src)])),
            ok = file:rename(Out ++ ".tmp", Out);
        _ ->
            ok
    end,
    timer:sleep(20),
    loop(Dir).

eval(Src) ->
    try
        {ok, Toks, _} = erl_scan:string(unicode:characters_to_list(Src)),
        {ok, Exprs} = erl_parse:parse_exprs(Toks),
        {value, V, _} = erl_eval:exprs(Exprs, []),
        V
    catch C:R -> {error, C, R}
    end.
