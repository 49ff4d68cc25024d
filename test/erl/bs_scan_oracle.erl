%% The agent's reading of patterns (beamscope_scan:scan/1, compiled with
%% export_all) against erl_scan, on random sequences of tokens of every
%% kind: where every name exists, the same tokens at the same places (or
%% both refuse; a sigil and a triple-quoted string are refused by the
%% agent on purpose); and texts of names that exist nowhere make no atom.
-module(bs_scan_oracle).
-export([run/2]).

pieces() ->
    ["abc", "X", "_", "_Foo", "Key1", "a@b", "'a b'", "'x\\'y'", "'q\"r'",
     "'\\n'", "1", "1_000", "1_", "16#ff", "16#FFzz", "2#1012", "99#1", "1.5",
     "1.0e10", "1.5e-3", "1e10", "1.e", "1.5e", "1.5_5", "3.14E+2x", "$a",
     "$\\n", "$\\x{41}", "$\\101c", "$\\^a", "$ ", "$\\x41b", "$'", "$\"",
     "\"a\\\"b\"", "\"x\"", "\"\"", "\"it's\"", "~s", "~", "\"\"\"\nab\n\"\"\"",
     "{", "}", "[", "]", "(", ")", ",", "|", "||", "->", "=>", ":=", "::", ".",
     "..", "...", "#", "?", "!", "=", "=:=", "=/=", "==", "/=", "<", "=<", ">",
     ">=", "+", "-", "*", "/", "++", "--", "<<", ">>", ":", ";", "% c\n", " ",
     "\t", "\n", "when", "andalso", "orelse", "not", "band", "fun", "end",
     "case", "of", "div", [16#e9, $t, 16#e9], [16#c9, $a], "caf" ++ [16#e9],
     "#r.f", "X#{a=>1}", "2#0.1", "16#1.8#e2", "2#1.1#e-1", "36#z.z", "1.x",
     "1X", "16#ffg", "1.5e3_x", "1" ++ [16#e9]].

%% "Checked Differ Atoms": texts checked, those read otherwise, and the
%% atoms that reading fresh names made
run(N, Seed) ->
    rand:seed(exsss, {Seed, Seed, Seed}),
    P = list_to_tuple(pieces()),
    Differ = [T || _ <- lists:seq(1, N),
                   T <- [lists:append([piece(P) || _ <- lists:seq(1, rand:uniform(6))])],
                   not same(T)],
    [io:format("differs: ~tp~n", [T]) || T <- lists:sublist(Differ, 5)],
    Fresh = [fresh() || _ <- lists:seq(1, 2000)],
    %% the compiler's modules load once, with their atoms
    _ = [beamscope_pattern:compile_call("lists:map(" ++ T ++ ")") || T <- Fresh],
    Fresh2 = [fresh() || _ <- lists:seq(1, 2000)],
    A0 = erlang:system_info(atom_count),
    _ = [beamscope_pattern:compile_call("lists:map(" ++ T ++ ")") || T <- Fresh2],
    _ = [beamscope_pattern:compile_match(T) || T <- Fresh2],
    A1 = erlang:system_info(atom_count),
    io:format("~b ~b ~b~n", [N, length(Differ), A1 - A0]).

piece(P) ->
    S = element(rand:uniform(tuple_size(P)), P),
    case rand:uniform(3) of 1 -> S ++ " "; _ -> S end.

%% erl_scan of OTP 29 crashes on some texts ("2#1.1#e"): an error too
scan(T) ->
    try
        erl_scan:string(T, {1, 1})
    catch
        _:_ -> {error, crashed, T}
    end.

same(T) ->
    case {scan(T), beamscope_scan:scan(T)} of
        {{ok, Toks, End}, {ok, Toks, End, []}} -> true;
        {{error, _, _}, {error, _}} -> true;
        {_, {error, {_, _, "a triple-quoted" ++ _}}} -> true;
        {_, {error, {_, _, "a sigil" ++ _}}} -> true;
        _ -> false
    end.

fresh() ->
    string:join([fresh_piece() || _ <- lists:seq(1, rand:uniform(4))], ", ").

fresh_piece() ->
    U = integer_to_list(erlang:unique_integer([positive])),
    case rand:uniform(5) of
        1 -> "bs_fresh_a" ++ U;
        2 -> "BsFreshV" ++ U;
        3 -> "'bs fresh q" ++ U ++ "'";
        4 -> "{bs_fresh_t" ++ U ++ ", _BsX" ++ U ++ "} when _BsX" ++ U ++ " > 1";
        5 -> "[1, \"s\" | BsT" ++ U ++ "]"
    end.
