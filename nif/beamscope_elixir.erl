%% beamscope_elixir: call patterns in Elixir form, on the target.
%%
%%   Shop.Cache.put(%Shop.Order{id: id}, _) when id in 1..9 -> return
%%
%% A head written as an Elixir user writes one, read by the target's own
%% Elixir parser (Code.string_to_quoted/2: parsed, never compiled nor run)
%% and turned into a match spec here, so that what is accepted is exactly
%% Elixir syntax.  The parser makes no atom from the text: it hands every
%% name to an encoder that wraps it, and a name becomes an atom only if the
%% node has it already (a call cannot carry an atom the node has never
%% seen).  Sigils other than ~w ~s ~c are refused before parsing, as the
%% parser would make an atom of their names.
%%
%% A head is matched in the match spec's head where it can be; a value
%% that is both named and taken apart (order = %Shop.Order{}) is bound to
%% one '$N' and checked in the guard instead, reaching into it with
%% element/hd/tl/map_get.  Each `when` is one clause of the match spec.
%%
%% The agent (beamscope_agent) loads this module only for a trace request
%% that has such a head, from the binary the Owner sends with it, and
%% unloads it with the tracer: a node traced with Erlang-form patterns, or
%% none, never has it.  It runs only inside the agent's own process (head/2
%% returns before anything else happens), so unloading it kills nothing.
-module(beamscope_elixir).

-export([head/2]).

-include("beamscope_ms.hrl").

%% where head/2 keeps the agent's check while it compiles
-define(CHECK, '$beamscope_elixir_check').

%% a name as the parser's encoder hands it over, where it was written:
%% {?EX_ATOM, Name, Line, Column} (a 4-tuple: nothing else in Elixir's
%% AST is one)
-define(EX_ATOM, '$beamscope_atom').
-define(EXA(N), {?EX_ATOM, N, _, _}).
-define(EX_SUPPORTED,
        "; an Elixir head takes variables, _, numbers, atoms, strings, "
        "charlists, ~w ~s ~c, aliases, tuples, lists and [h | t], maps, "
        "structs and v = pattern; a guard takes == != === !== < > <= >= "
        "and or not + - * / div rem, in with a literal list or range, elem, "
        "map.key, is_* tests, is_nil, is_struct, is_map_key, abs, hd, tl, "
        "length, map_size, tuple_size, byte_size, bit_size, round, trunc, "
        "node, self and :erlang guard functions, and several "
        "when; anything else takes the Erlang form, e.g. "
        "'Elixir.Shop.Cache':get(K) when K > 3 -> return").
%% guard functions called alike in both languages: {Name, Arities}
-define(EX_GUARD_BIFS,
        [{is_atom, [1]}, {is_binary, [1]}, {is_float, [1]}, {is_function, [1]},
         {is_integer, [1]}, {is_list, [1]}, {is_map, [1]}, {is_number, [1]},
         {is_pid, [1]}, {is_port, [1]}, {is_reference, [1]}, {is_tuple, [1]},
         {abs, [1]}, {length, [1]}, {hd, [1]}, {tl, [1]}, {map_size, [1]},
         {byte_size, [1]}, {bit_size, [1]}, {round, [1]},
         {trunc, [1]}, {'div', [2]}, {'rem', [2]},
         {node, [0, 1]}, {self, [0]}, {binary_part, [3]}]).
-define(EX_OPS, [{'==', '=='}, {'!=', '/='}, {'===', '=:='}, {'!==', '=/='},
                 {'<', '<'}, {'>', '>'}, {'<=', '=<'}, {'>=', '>='},
                 {'+', '+'}, {'-', '-'}, {'*', '*'}, {'/', '/'},
                 {'and', 'andalso'}, {'or', 'orelse'}]).

%% The head's match spec, checked by the agent's Check (the allowed
%% actions, the VM's own test): {ok, M, F, Arity, MS} or {error, {Line,
%% Col, Message}}.  The caller knows the node runs Elixir.
head(Text, Check) when is_list(Text), is_function(Check, 1) ->
    try
        {Head, Acts} = ex_split(Text),
        ex_sigils(Head, 1, 1),
        put(?CHECK, Check),
        ex_compile(ex_parse(Head), Acts)
    catch
        throw:{ex, Meta, Msg} ->
            {error, ex_located(Meta, Msg)};
        %% a form of Elixir's AST met nowhere above: refused, and the
        %% agent goes on
        Class:Why ->
            {error, ex_located([], io_lib:format(
                                     "beamscope cannot read this head "
                                     "(~0tP)", [{Class, Why}, 6])
                               ++ ?EX_SUPPORTED)}
    after
        erase(?CHECK)
    end.

%% {Line, Col, Message}, the message in UTF-8 bytes like the text it
%% speaks of (the Owner reads a string of bytes)
ex_located(Meta, Msg) when is_list(Meta) ->
    {ex_int(proplists:get_value(line, Meta, 1)),
     ex_int(proplists:get_value(column, Meta, 1)), ex_utf8(Msg)};
ex_located(Line, Msg) when is_integer(Line) ->
    {Line, 1, ex_utf8(Msg)};
ex_located(_, Msg) ->
    {1, 1, ex_utf8(Msg)}.

%% at most 1000 bytes, cut between characters: the Owner reads 1023
ex_utf8(Msg) ->
    case unicode:characters_to_binary(Msg) of
        B when byte_size(B) =< 1000 -> binary_to_list(B);
        B when is_binary(B) ->
            Cut = case unicode:characters_to_binary(binary:part(B, 0, 996)) of
                      P when is_binary(P) -> P;
                      {_, P, _} -> P
                  end,
            binary_to_list(Cut) ++ "...";
        _ -> "the pattern is not UTF-8 text"
    end.

ex_int(N) when is_integer(N) -> N;
ex_int(_) -> 1.

%% Head -> return, stack: the actions are ours, not Elixir's; the last
%% arrow followed by nothing but words ends the head.
ex_split(Text) ->
    case re:run(Text, "^(.*)->\\s*([a-z_]+(?:\\s*,\\s*[a-z_]+)*)\\s*$",
                [dotall, {capture, [1, 2], index}]) of
        {match, [{0, HL}, {AS, AL}]} ->
            Words = re:split(lists:sublist(Text, AS + 1, AL), "\\s*,\\s*",
                             [{return, list}]),
            {lists:sublist(Text, HL), ex_actions(Text, Words, AS)};
        nomatch ->
            {Text, []}
    end.

ex_actions(_, [], _) ->
    [];
ex_actions(Text, [W | Ws], At) ->
    Act = case W of
              "return" -> {exception_trace};
              "stack" -> {message, {caller}};
              _ -> throw({ex, ex_position(Text, At), "an action is return or stack"})
          end,
    %% the next word starts after this one and its comma
    {match, [{Off, Len}]} = re:run(lists:nthtail(At + length(W), Text),
                                   "^\\s*,\\s*|^\\s*$"),
    [Act | ex_actions(Text, Ws, At + length(W) + Off + Len)].

ex_position(Text, At) ->
    Before = lists:sublist(Text, At),
    Line = 1 + length([C || C <- Before, C =:= $\n]),
    Col = 1 + length(lists:takewhile(fun(C) -> C =/= $\n end,
                                     lists:reverse(Before))),
    [{line, Line}, {column, Col}].

%% The parser makes sigil_X of ~X: only sigils whose atoms every Elixir
%% node has pass, wherever they are (in a string too: a sigil inside an
%% interpolation would be parsed).
ex_sigils([$~, C | Rest], L, Col) when C >= $a, C =< $z ->
    ex_sigil_ok([C], L, Col),
    ex_sigils(Rest, L, Col + 2);
ex_sigils([$~, C | _] = Rest, L, Col) when C >= $A, C =< $Z ->
    Name = lists:takewhile(fun(X) -> X >= $A andalso X =< $Z end, tl(Rest)),
    ex_sigil_ok(Name, L, Col),
    ex_sigils(lists:nthtail(1 + length(Name), Rest), L, Col + 1 + length(Name));
ex_sigils([$\n | Rest], L, _) ->
    ex_sigils(Rest, L + 1, 1);
ex_sigils([_ | Rest], L, Col) ->
    ex_sigils(Rest, L, Col + 1);
ex_sigils([], _, _) ->
    ok.

ex_sigil_ok(Name, L, Col) ->
    case lists:member(Name, ["w", "s", "c", "W", "S", "C"]) of
        true -> ok;
        false -> throw({ex, [{line, L}, {column, Col}],
                        "the sigil ~" ++ Name ++ " is not read here (only ~w, "
                        "~s and ~c, and ~W ~S ~C, whose names the node has)"})
    end.

ex_parse(Head) ->
    Enc = fun(Name, M) ->
                  {ok, {?EX_ATOM, Name, proplists:get_value(line, M, 1),
                        proplists:get_value(column, M, 1)}}
          end,
    %% and nothing on the node's console: the tokenizer's warnings
    %% (quotes not needed, an outdented heredoc) would go to standard_error
    Opts = [{existing_atoms_only, true}, {static_atoms_encoder, Enc},
            {columns, true}, {emit_warnings, false},
            {warn_on_unnecessary_quotes, false}],
    Bin = try iolist_to_binary(Head)
          catch error:_ -> throw({ex, [], "the pattern is not UTF-8 text"})
          end,
    try 'Elixir.Code':string_to_quoted(Bin, Opts) of
        {ok, Ast} ->
            Ast;
        {error, {Loc, Msg, Token}} ->
            throw({ex, Loc, ex_parse_error(Msg, Token)})
    catch
        Class:Why ->
            throw({ex, [], io_lib:format("Elixir could not read it: ~0tP",
                                          [{Class, Why}, 6])})
    end.

%% The parser's message on one line: a syntax error before -> is an
%% action that is not one.
ex_parse_error(Msg, Token) ->
    Full = case Msg of
               {Pre, Post} -> [Pre, Token, Post];
               _ -> [Msg, Token]
           end,
    Text = case unicode:characters_to_list(Full) of
               Chars when is_list(Chars) -> Chars;
               _ -> "Elixir could not read it"
           end,
    case unicode:characters_to_list(Token) of
        "'->'" ->
            "after -> come the actions: return, stack or both";
        _ ->
            Lines = [string:trim(L) || L <- string:split(Text, "\n", all),
                                      string:trim(L) =/= ""],
            case Lines of
                [] -> "Elixir could not read it";
                [One] -> One;
                [First | _] -> First ++ " ... " ++ lists:last(Lines)
            end
    end.

%% Mod.fun(Args) [when Guard [when Guard ...]]
ex_compile({'when', _, [Call, Guard]}, Acts) ->
    ex_clauses(Call, ex_whens(Guard), Acts);
ex_compile(Call, Acts) ->
    ex_clauses(Call, [], Acts).

ex_whens({'when', _, [A, B]}) -> [A | ex_whens(B)];
ex_whens(G) -> [G].

ex_clauses({{'.', Meta, [ModAst, FunAst]}, _, Args}, Guards, Acts)
  when is_list(Args) ->
    M = ex_module(ModAst, Meta),
    F = case FunAst of
            ?EXA(Name) -> ex_existing(Name);
            A when is_atom(A) -> {ok, A};
            _ -> error
        end,
    case F of
        {ok, Fun} ->
            {Head, St} = ex_pats(Args, #{vars => #{}, n => 1, conds => []}),
            Conds = lists:reverse(maps:get(conds, St)),
            MS = case Guards of
                     [] -> [{Head, Conds, Acts}];
                     _ -> [{Head, Conds ++ [ex_guard(G, St)], Acts}
                           || G <- Guards]
                 end,
            Check = get(?CHECK),
            case Check(MS) of
                ok -> {ok, M, Fun, length(Args), MS};
                {error, Msg} -> throw({ex, Meta, Msg})
            end;
        error ->
            throw({ex, Meta, io_lib:format("~ts has no such function; "
                                           "nothing was traced",
                                           [ex_mod_name(M)])})
    end;
ex_clauses(Other, _, _) ->
    throw({ex, ex_meta(Other), "expected Mod.fun(Args), then when Guard "
           "and -> return|stack if wanted" ?EX_SUPPORTED}).

ex_module({'__aliases__', Meta, Segs}, _) ->
    case ex_alias(Segs) of
        {ok, M} -> M;
        {error, Name} ->
            throw({ex, Meta, "module " ++ Name ++ " is not loaded; beamscope "
                   "never loads code, so nothing was traced"})
    end;
ex_module(?EXA(Name), Meta) ->
    case ex_existing(Name) of
        {ok, M} -> M;
        error -> throw({ex, Meta, "module :" ++ unicode:characters_to_list(Name)
                        ++ " is not loaded; beamscope never loads code, so "
                        "nothing was traced"})
    end;
ex_module(A, _) when is_atom(A) ->
    A;
ex_module(Other, Meta) ->
    throw({ex, ex_meta(Other, Meta), "the module is an alias (Shop.Cache) or "
           "an atom (:ets)"}).

ex_mod_name(M) ->
    case atom_to_list(M) of
        "Elixir." ++ Alias -> Alias;
        L -> [$: | L]
    end.

%% Shop.Order -> 'Elixir.Shop.Order', if the node has that atom
ex_alias(Segs) ->
    Names = [case S of
                 ?EXA(N) -> unicode:characters_to_list(N);
                 A when is_atom(A) -> atom_to_list(A);
                 _ -> throw({ex, ex_meta(S), ex_unsupported(S)})
             end || S <- Segs],
    Alias = string:join(Names, "."),
    Full = case Names of
               ["Elixir" | _] -> Alias;
               _ -> "Elixir." ++ Alias
           end,
    case ex_existing(unicode:characters_to_binary(Full)) of
        {ok, A} -> {ok, A};
        error -> {error, Alias}
    end.

ex_existing(Name) when is_binary(Name) ->
    try {ok, binary_to_existing_atom(Name, utf8)}
    catch error:badarg -> error
    end.

ex_name(?EXA(N)) -> N;
ex_name(A) when is_atom(A) -> atom_to_binary(A, utf8).

ex_atom(Name, Meta) ->
    case ex_existing(Name) of
        {ok, A} -> A;
        error -> throw({ex, Meta, "the atom :" ++ unicode:characters_to_list(Name)
                        ++ " does not exist on the node, so no call can carry "
                        "it; check its spelling"})
    end.

%% where Ast was written: a remote call where its module is
ex_meta(Ast) -> ex_meta(Ast, []).
ex_meta({{'.', Meta, [M, _]}, _, Args}, _) when is_list(Args) -> ex_meta(M, Meta);
ex_meta({?EX_ATOM, _, L, C}, _) -> [{line, L}, {column, C}];
ex_meta({_, Meta, _}, _) when is_list(Meta) -> Meta;
ex_meta(_, Default) -> Default.

%% a variable: {Name, Meta, Context}
-define(EX_VAR(N, Meta, Ctx), {?EXA(N), Meta, Ctx}).

%% -- the head -----------------------------------------------------------------

ex_pats(Asts, St) ->
    lists:mapfoldl(fun ex_pat/2, St, Asts).

ex_pat(Ast, St) ->
    case ex_literal(Ast) of
        {ok, T} ->
            case ex_plain(T) of
                true -> {T, St};
                %% '_' or '$1' would be a wildcard in a match spec's head
                false -> ex_bound_pat(Ast, St)
            end;
        error ->
            ex_pat1(Ast, St)
    end.

ex_pat1(?EX_VAR(<<"_">>, _, Ctx), St) when is_atom(Ctx) ->
    {'_', St};
ex_pat1(?EX_VAR(N, _, Ctx), St) when is_atom(Ctx) ->
    case maps:find(N, maps:get(vars, St)) of
        {ok, {head, V}} -> {V, St};
        {ok, {expr, E}} ->
            {V, St1} = ex_fresh(St),
            {V, ex_cond({'=:=', V, E}, St1)};
        error ->
            {V, St1} = ex_fresh(St),
            {V, ex_bind(N, V, St1)}
    end;
ex_pat1({'=', _, [_, _]} = Ast, St) ->
    ex_bound_pat(Ast, St);
ex_pat1({'{}', _, Es}, St) when is_list(Es) ->
    {Ts, St1} = ex_pats(Es, St),
    {list_to_tuple(Ts), St1};
ex_pat1({A, B}, St) ->
    {[TA, TB], St1} = ex_pats([A, B], St),
    {{TA, TB}, St1};
ex_pat1([{'|', _, [H, T]}], St) ->
    {[TH, TT], St1} = ex_pats([H, T], St),
    {[TH | TT], St1};
ex_pat1([X | Rest], St) ->
    {TX, St1} = ex_pat(X, St),
    {TR, St2} = ex_pat1(Rest, St1),
    {[TX | TR], St2};
ex_pat1([], St) ->
    {[], St};
ex_pat1({'%{}', Meta, Pairs} = Ast, St) when is_list(Pairs) ->
    ex_pat_map(Ast, Pairs, Meta, #{}, St);
ex_pat1({'%', Meta, [Name, {'%{}', _, Pairs}]} = Ast, St) when is_list(Pairs) ->
    case Name of
        ?EX_VAR(_, _, Ctx) when is_atom(Ctx) ->
            %% %name{} and %_{}: the struct's name is an atom
            {S, St1} = case ex_pat(Name, St) of
                           {'_', S0} -> ex_fresh(S0);
                           Bound -> Bound
                       end,
            ex_pat_map(Ast, Pairs, Meta, #{'__struct__' => S},
                       ex_cond({is_atom, S}, St1));
        _ ->
            ex_pat_map(Ast, Pairs, Meta,
                       #{'__struct__' => ex_struct_name(Name, Meta)}, St)
    end;
ex_pat1(Ast, _) ->
    throw({ex, ex_meta(Ast), ex_unsupported(Ast)}).

%% %{k: v}: literal keys; a key a match spec would read as a variable
%% ('_', '$1') is checked in the guard instead
ex_pat_map(Ast, [{'|', _, _} | _] = Pairs, Meta, _, _) ->
    throw({ex, ex_meta(hd(Pairs), Meta), ex_unsupported(Ast)});
ex_pat_map(Ast, Pairs, Meta, Map0, St) ->
    Keys = [ex_key(K, Meta) || {K, _} <- Pairs],
    case lists:all(fun ex_plain/1, Keys) of
        true ->
            {Vs, St1} = ex_pats([V || {_, V} <- Pairs], St),
            {maps:merge(maps:from_list(lists:zip(Keys, Vs)), Map0), St1};
        false ->
            ex_bound_pat(Ast, St)
    end.

ex_key(K, Meta) ->
    case ex_literal(K) of
        {ok, T} -> T;
        error -> throw({ex, ex_meta(K, Meta), "a map key in a pattern is a "
                        "literal (an atom, a string, a number...)"
                        ?EX_SUPPORTED})
    end.

ex_struct_name({'__aliases__', Meta, Segs}, _) ->
    case ex_alias(Segs) of
        {ok, M} -> M;
        {error, Name} -> throw({ex, Meta, "no struct " ++ Name ++ " on the "
                                "node (no such module); check its spelling"})
    end;
ex_struct_name(Other, Meta) ->
    throw({ex, ex_meta(Other, Meta), "a struct is named by an alias "
           "(%Shop.Order{}) or a variable" ?EX_SUPPORTED}).

%% A value matched in the guard: one new '$N' in the head
ex_bound_pat(Ast, St) ->
    {V, St1} = ex_fresh(St),
    {V, ex_test(Ast, V, St1)}.

ex_fresh(#{n := N} = St) ->
    {list_to_atom("$" ++ integer_to_list(N)), St#{n := N + 1}}.

ex_bind(Name, Expr, #{vars := Vs} = St) ->
    Kind = case is_atom(Expr) of
               true -> head;          % a '$N' of the head
               false -> expr          % element(2, '$1') and the like
           end,
    St#{vars := Vs#{Name => {Kind, Expr}}}.

ex_cond(C, #{conds := Cs} = St) ->
    St#{conds := [C | Cs]}.

%% Ast matches the value of expression E: conditions for the guard
ex_test(Ast, E, St) ->
    case ex_literal(Ast) of
        {ok, T} -> ex_cond({'=:=', E, ex_const(T)}, St);
        error -> ex_test1(Ast, E, St)
    end.

ex_test1(?EX_VAR(<<"_">>, _, Ctx), _, St) when is_atom(Ctx) ->
    St;
ex_test1(?EX_VAR(N, _, Ctx), E, St) when is_atom(Ctx) ->
    case maps:find(N, maps:get(vars, St)) of
        {ok, {_, X}} -> ex_cond({'=:=', E, X}, St);
        error -> ex_bind(N, E, St)
    end;
ex_test1({'=', _, [L, R]}, E, St) ->
    ex_test(R, E, ex_test(L, E, St));
ex_test1({'{}', _, Es}, E, St) when is_list(Es) ->
    ex_test_tuple(Es, E, St);
ex_test1({A, B}, E, St) ->
    ex_test_tuple([A, B], E, St);
ex_test1(L, E, St) when is_list(L) ->
    ex_test_list(L, E, St);
ex_test1({'%{}', Meta, Pairs} = Ast, E, St) when is_list(Pairs) ->
    ex_test_map(Ast, Pairs, Meta, E, ex_cond({is_map, E}, St));
ex_test1({'%', Meta, [Name, {'%{}', _, Pairs}]} = Ast, E, St) when is_list(Pairs) ->
    Field = {map_get, '__struct__', E},
    St1 = ex_cond({is_map_key, '__struct__', E}, ex_cond({is_map, E}, St)),
    St2 = case Name of
              ?EX_VAR(_, _, Ctx) when is_atom(Ctx) ->
                  ex_test(Name, Field, ex_cond({is_atom, Field}, St1));
              _ -> ex_cond({'=:=', Field, ex_const(ex_struct_name(Name, Meta))}, St1)
          end,
    ex_test_map(Ast, Pairs, Meta, E, St2);
ex_test1(Ast, _, _) ->
    throw({ex, ex_meta(Ast), ex_unsupported(Ast)}).

ex_test_tuple(Es, E, St) ->
    %% size/1, as a match spec has no tuple_size/1; is_tuple/1 comes first
    St1 = ex_cond({'=:=', {size, E}, length(Es)}, ex_cond({is_tuple, E}, St)),
    {_, St2} = lists:foldl(fun(X, {I, S}) -> {I + 1, ex_test(X, {element, I, E}, S)} end,
                           {1, St1}, Es),
    St2.

ex_test_list([], E, St) ->
    ex_cond({'=:=', E, []}, St);
ex_test_list([{'|', _, [H, T]}], E, St) ->
    St1 = ex_cond({'=/=', E, []}, ex_cond({is_list, E}, St)),
    ex_test(T, {tl, E}, ex_test(H, {hd, E}, St1));
ex_test_list([X | Rest], E, St) ->
    St1 = ex_cond({'=/=', E, []}, ex_cond({is_list, E}, St)),
    ex_test_list(Rest, {tl, E}, ex_test(X, {hd, E}, St1)).

ex_test_map(Ast, [{'|', _, _} | _], Meta, _, _) ->
    throw({ex, Meta, ex_unsupported(Ast)});
ex_test_map(_, Pairs, Meta, E, St) ->
    lists:foldl(fun({K, V}, S) ->
                        Key = ex_const(ex_key(K, Meta)),
                        ex_test(V, {map_get, Key, E},
                                ex_cond({is_map_key, Key, E}, S))
                end, St, Pairs).

%% a term a match spec's head can hold as it is: no '_', no '$...'
ex_plain(A) when is_atom(A) ->
    case atom_to_list(A) of
        "_" -> false;
        "$" ++ _ -> false;
        _ -> true
    end;
ex_plain(T) when is_tuple(T) -> ex_plain(tuple_to_list(T));
ex_plain([H | T]) -> ex_plain(H) andalso ex_plain(T);
ex_plain(M) when is_map(M) -> ex_plain(maps:to_list(M));
ex_plain(_) -> true.

ex_const(T) when is_number(T) -> T;
ex_const(T) -> {const, T}.

%% -- literals -----------------------------------------------------------------

%% {ok, Term} for an Ast that is a constant, else error
ex_literal(X) when is_number(X); is_binary(X) -> {ok, X};
ex_literal(A) when is_atom(A) -> {ok, A};
ex_literal({?EX_ATOM, Name, L, C}) -> {ok, ex_atom(Name, [{line, L}, {column, C}])};
ex_literal({'__aliases__', Meta, Segs}) when is_list(Segs) ->
    case ex_alias(Segs) of
        {ok, A} -> {ok, A};
        {error, Name} -> throw({ex, Meta, "the alias " ++ Name ++ " is no "
                                "module or atom on the node; check its spelling"})
    end;
ex_literal({Op, _, [N]}) when Op =:= '-', is_number(N) -> {ok, -N};
ex_literal({Op, _, [N]}) when Op =:= '+', is_number(N) -> {ok, N};
ex_literal({'{}', _, Es}) when is_list(Es) ->
    ex_literals(Es, fun list_to_tuple/1);
ex_literal({A, B}) ->
    ex_literals([A, B], fun list_to_tuple/1);
ex_literal([{'|', _, [H, T]}]) ->
    ex_literals([H, T], fun([X, Y]) -> [X | Y] end);
ex_literal([X | Rest]) ->
    case {ex_literal(X), ex_literal(Rest)} of
        {{ok, TX}, {ok, TR}} -> {ok, [TX | TR]};
        _ -> error
    end;
ex_literal([]) -> {ok, []};
ex_literal({'%{}', _, [{_, _} | _] = Pairs}) ->
    ex_map_literal(Pairs, #{});
ex_literal({'%{}', _, []}) -> {ok, #{}};
ex_literal({'%', Meta, [Name, {'%{}', _, Pairs}]}) when is_list(Pairs) ->
    case Name of
        {'__aliases__', _, _} ->
            ex_map_literal(Pairs, #{'__struct__' => ex_struct_name(Name, Meta)});
        _ -> error
    end;
ex_literal({'<<>>', _, Segs}) when is_list(Segs) ->
    case lists:all(fun(S) -> is_binary(S) orelse
                                 (is_integer(S) andalso S >= 0 andalso S =< 255)
                   end, Segs) of
        true -> {ok, << <<(ex_segment(S))/binary>> || S <- Segs >>};
        false -> error
    end;
ex_literal({Sigil, Meta, [{'<<>>', _, [Bin]}, Mods]})
  when is_binary(Bin), is_list(Mods),
       (Sigil =:= sigil_w orelse Sigil =:= sigil_W orelse Sigil =:= sigil_s orelse
        Sigil =:= sigil_S orelse Sigil =:= sigil_c orelse Sigil =:= sigil_C) ->
    {ok, ex_sigil(Sigil, ex_unescape(Sigil, Bin), Mods, Meta)};
ex_literal(_) -> error.

ex_literals(Asts, Make) ->
    Ts = [ex_literal(A) || A <- Asts],
    case lists:all(fun(R) -> R =/= error end, Ts) of
        true -> {ok, Make([T || {ok, T} <- Ts])};
        false -> error
    end.

ex_map_literal(Pairs, Map0) ->
    case ex_literals([[K, V] || {K, V} <- Pairs], fun(L) -> L end) of
        {ok, KVs} -> {ok, maps:merge(maps:from_list([{K, V} || [K, V] <- KVs]), Map0)};
        error -> error
    end.

ex_segment(B) when is_binary(B) -> B;
ex_segment(I) -> <<I>>.

%% lower-case sigils take escapes, as Elixir's own sigil_w/sigil_s do
ex_unescape(Sigil, Bin) when Sigil =:= sigil_w; Sigil =:= sigil_s; Sigil =:= sigil_c ->
    'Elixir.Macro':unescape_string(Bin);
ex_unescape(_, Bin) ->
    Bin.

ex_sigil(S, Bin, Mods, Meta) when S =:= sigil_w; S =:= sigil_W ->
    Words = string:lexemes(Bin, [$\s, $\t, $\n, $\r]),
    case Mods of
        [] -> Words;
        "s" -> Words;
        "a" -> [ex_atom(W, Meta) || W <- Words];
        "c" -> [unicode:characters_to_list(W) || W <- Words];
        _ -> throw({ex, Meta, "~w takes the modifiers a, c or s"})
    end;
ex_sigil(S, Bin, [], _) when S =:= sigil_s; S =:= sigil_S ->
    Bin;
ex_sigil(S, Bin, [], _) when S =:= sigil_c; S =:= sigil_C ->
    unicode:characters_to_list(Bin);
ex_sigil(_, _, _, Meta) ->
    throw({ex, Meta, "~s and ~c take no modifiers here"}).

%% -- guards -------------------------------------------------------------------

ex_guard(Ast, St) ->
    ex_no_struct(Ast),
    case ex_literal(Ast) of
        {ok, T} -> ex_const(T);
        error -> ex_guard1(Ast, St)
    end.

%% A struct in an expression is the whole struct, its defaults filled in
%% by its module's __struct__/0, which is never run here; in a head it is
%% only the keys written.
ex_no_struct({'%', Meta, [_, _]}) ->
    throw({ex, Meta, "a struct in a guard is the whole struct, with its "
           "defaults, which beamscope does not ask its module for; match "
           "it in the head instead (%Shop.Order{id: 1} = order)"});
ex_no_struct(T) when is_tuple(T) ->
    ex_no_struct(tuple_to_list(T));
ex_no_struct([H | T]) ->
    ex_no_struct(H),
    ex_no_struct(T);
ex_no_struct(_) ->
    ok.

ex_guard1(?EX_VAR(N, Meta, Ctx), St) when is_atom(Ctx) ->
    case maps:find(N, maps:get(vars, St)) of
        {ok, {_, E}} -> E;
        error -> throw({ex, Meta, "the variable " ++ unicode:characters_to_list(N)
                        ++ " is not in the head; a guard reads what the head "
                        "binds"})
    end;
ex_guard1({'not', _, [A]}, St) ->
    {'not', ex_guard(A, St)};
ex_guard1({'in', Meta, [X, R]}, St) ->
    ex_in(ex_guard(X, St), R, Meta);
ex_guard1({Op, _, [A]}, St) when Op =:= '-'; Op =:= '+' ->
    {Op, ex_guard(A, St)};
ex_guard1({Op, Meta, [A, B]} = Ast, St) when is_atom(Op) ->
    case lists:keyfind(Op, 1, ?EX_OPS) of
        {_, ErlOp} -> {ErlOp, ex_guard(A, St), ex_guard(B, St)};
        false -> throw({ex, Meta, ex_unsupported(Ast)})
    end;
ex_guard1({'{}', _, Es}, St) when is_list(Es) ->
    {list_to_tuple([ex_guard(E, St) || E <- Es])};
ex_guard1({A, B}, St) ->
    {{ex_guard(A, St), ex_guard(B, St)}};
ex_guard1([{'|', _, [H, T]}], St) ->
    [ex_guard(H, St) | ex_guard(T, St)];
ex_guard1([X | Rest], St) ->
    [ex_guard(X, St) | ex_guard(Rest, St)];
%% map.key
ex_guard1({{'.', Meta, [Map, ?EXA(Key)]}, CallMeta, []} = Ast, St) ->
    case proplists:get_value(no_parens, CallMeta, false) andalso
        ex_literal(Map) =:= error of
        true -> {map_get, ex_const(ex_atom(Key, Meta)), ex_guard(Map, St)};
        false -> throw({ex, Meta, ex_unsupported(Ast)})
    end;
%% :erlang.element(1, t): a guard function of the match spec, Erlang's way
ex_guard1({{'.', Meta, [?EXA(<<"erlang">>), ?EXA(F)]}, _, Args} = Ast, St)
  when is_list(Args) ->
    case ex_existing(F) of
        {ok, Fun} ->
            case lists:member(Fun, ?MS_GUARDS) of
                true -> list_to_tuple([Fun | [ex_guard(A, St) || A <- Args]]);
                false -> throw({ex, ex_meta(Ast, Meta), ex_unsupported(Ast)})
            end;
        error -> throw({ex, ex_meta(Ast, Meta), ex_unsupported(Ast)})
    end;
ex_guard1({?EXA(F), Meta, Args} = Ast, St) when is_list(Args) ->
    ex_guard_call(binary_to_list(F), Args, Meta, Ast, St);
ex_guard1(Ast, _) ->
    throw({ex, ex_meta(Ast), ex_unsupported(Ast)}).

ex_guard_call("elem", [T, I], _, _, St) ->
    Index = case ex_guard(I, St) of
                N when is_integer(N) -> N + 1;
                E -> {'+', E, 1}
            end,
    {element, Index, ex_guard(T, St)};
%% a match spec has no tuple_size/1, and size/1 takes binaries too: the
%% size is looked up under is_tuple(T), so that anything else fails
ex_guard_call("tuple_size", [T], _, _, St) ->
    G = ex_guard(T, St),
    {map_get, {is_tuple, G}, #{true => {size, G}}};
%% match specs have neither is_boolean/1 nor is_bitstring/1; bit strings
%% sort after every other term, and <<>> before every bit string
ex_guard_call("is_boolean", [X], _, _, St) ->
    G = ex_guard(X, St),
    {'orelse', {'=:=', G, true}, {'=:=', G, false}};
ex_guard_call("is_bitstring", [X], _, _, St) ->
    {'>=', ex_guard(X, St), {const, <<>>}};
ex_guard_call("is_nil", [X], _, _, St) ->
    {'=:=', ex_guard(X, St), nil};
ex_guard_call("is_map_key", [Map, Key], _, _, St) ->
    {is_map_key, ex_guard(Key, St), ex_guard(Map, St)};
ex_guard_call("is_struct", [X | Name], _, _, St) when length(Name) =< 1 ->
    G = ex_guard(X, St),
    Field = {map_get, '__struct__', G},
    Is = case Name of
             [] -> {is_atom, Field};
             [N] -> {'=:=', Field, ex_guard(N, St)}
         end,
    {'andalso', {is_map, G}, {'andalso', {is_map_key, '__struct__', G}, Is}};
ex_guard_call(F, Args, Meta, Ast, St) ->
    Arity = length(Args),
    case [Fn || {Fn, As} <- ?EX_GUARD_BIFS, atom_to_list(Fn) =:= F,
                lists:member(Arity, As)] of
        [Fn] -> list_to_tuple([Fn | [ex_guard(A, St) || A <- Args]]);
        [] -> throw({ex, Meta, ex_unsupported(Ast)})
    end.

%% x in [a, b]: x === a or x === b; x in first..last//step: the bounds,
%% and the step when it is not 1
ex_in(X, {'..', Meta, [F, L]}, _) ->
    First = ex_range_int(F, Meta),
    Last = ex_range_int(L, Meta),
    ex_range(X, First, Last, if First =< Last -> 1; true -> -1 end);
ex_in(X, {'..//', Meta, [F, L, S]}, _) ->
    case ex_range_int(S, Meta) of
        0 -> throw({ex, Meta, "a range's step is not 0"});
        Step -> ex_range(X, ex_range_int(F, Meta), ex_range_int(L, Meta), Step)
    end;
ex_in(X, R, Meta) ->
    ex_no_struct(R),
    case ex_literal(R) of
        {ok, List} when is_list(List) ->
            case ex_proper(List) of
                true ->
                    lists:foldr(fun(E, {const, false}) -> {'=:=', X, ex_const(E)};
                                   (E, Acc) -> {'orelse', {'=:=', X, ex_const(E)}, Acc}
                                end, {const, false}, List);
                false -> throw({ex, ex_meta(R, Meta), "in takes a proper list"})
            end;
        _ ->
            throw({ex, ex_meta(R, Meta), "in takes a literal list, a range "
                   "first..last//step of integers or ~w(...)" ?EX_SUPPORTED})
    end.

ex_proper([_ | T]) -> ex_proper(T);
ex_proper([]) -> true;
ex_proper(_) -> false.

ex_range_int(Ast, Meta) ->
    case ex_literal(Ast) of
        {ok, N} when is_integer(N) -> N;
        _ -> throw({ex, ex_meta(Ast, Meta), "a range in a guard is made of "
                    "integers written out, like 1..10 or 1..10//2"})
    end.

ex_range(_, First, Last, Step) when Step > 0, First > Last; Step < 0, First < Last ->
    {const, false};
ex_range(X, First, Last, Step) ->
    In = {'andalso', {is_integer, X},
          {'andalso', {'>=', X, min(First, Last)}, {'=<', X, max(First, Last)}}},
    case abs(Step) of
        1 -> In;
        _ -> {'andalso', In, {'=:=', {'rem', {'-', X, First}, Step}, 0}}
    end.

%% what is not supported, named, and what is
ex_unsupported(Ast) ->
    ex_what(Ast) ++ " is not supported in an Elixir pattern" ?EX_SUPPORTED.

ex_what({{'.', _, [M, F]}, _, Args}) when is_list(Args) ->
    What = case M of
               {'__aliases__', _, Segs} ->
                   string:join([unicode:characters_to_list(ex_name(S)) ||
                                   S <- Segs, is_atom(S) orelse
                                       tuple_size(S) =:= 4], ".");
               ?EXA(N) -> [$: | unicode:characters_to_list(N)];
               _ -> "an expression"
           end,
    case F of
        ?EXA(N1) ->
            io_lib:format("the call ~ts.~ts/~b", [What, N1, length(Args)]);
        _ ->
            "this call"
    end;
ex_what({?EXA(F), _, Args}) when is_list(Args) ->
    io_lib:format("the call ~ts/~b", [F, length(Args)]);
ex_what({'^', _, _}) -> "the pin ^";
ex_what({'<>', _, _}) -> "<> (binary matching)";
ex_what({'<<>>', _, _}) -> "a binary other than literal bytes and strings";
ex_what({'@', _, _}) -> "a module attribute";
ex_what({'&', _, _}) -> "a capture &";
ex_what({'fn', _, _}) -> "fn";
ex_what({'%{}', _, _}) -> "a map update %{m | ...}";
ex_what({'|', _, _}) -> "| outside a list";
ex_what({'..', _, _}) -> "a range outside in";
ex_what({'..//', _, _}) -> "a range outside in";
ex_what({'__block__', _, _}) -> "more than one expression";
ex_what({Op, _, Args}) when is_atom(Op), is_list(Args) ->
    io_lib:format("~ts", [atom_to_list(Op)]);
ex_what(_) -> "this expression".
