%% beamscope_scan: reading the text of a pattern into tokens without
%% making an atom on the node (see below), for beamscope_pattern.  A
%% helper of beamscope_agent, run only in the agent's process.
-module(beamscope_scan).

-export([scan/1]).
%% for beamscope_pattern
-export([no_atom/3, typed_name/2, typed_names/2]).

%% reading a pattern without making atoms (see there): the names a
%% variable may take, and a name the node has no atom for (this module's
%% atoms, so they exist while it is loaded); what erl_scan takes for a
%% name
-define(VARS, {'BsVar01', 'BsVar02', 'BsVar03', 'BsVar04', 'BsVar05',
               'BsVar06', 'BsVar07', 'BsVar08', 'BsVar09', 'BsVar10',
               'BsVar11', 'BsVar12', 'BsVar13', 'BsVar14', 'BsVar15',
               'BsVar16', 'BsVar17', 'BsVar18', 'BsVar19', 'BsVar20',
               'BsVar21', 'BsVar22', 'BsVar23', 'BsVar24', 'BsVar25',
               'BsVar26', 'BsVar27', 'BsVar28', 'BsVar29', 'BsVar30',
               'BsVar31', 'BsVar32'}).
-define(NO_ATOMS, {bs_no_atom_01, bs_no_atom_02, bs_no_atom_03, bs_no_atom_04,
                   bs_no_atom_05, bs_no_atom_06, bs_no_atom_07, bs_no_atom_08,
                   bs_no_atom_09, bs_no_atom_10, bs_no_atom_11, bs_no_atom_12,
                   bs_no_atom_13, bs_no_atom_14, bs_no_atom_15, bs_no_atom_16}).

-define(DIGIT(C), (C >= $0 andalso C =< $9)).
-define(UPPER(C), ((C >= $A andalso C =< $Z) orelse
                   (C >= 16#C0 andalso C =< 16#DE andalso C =/= 16#D7))).
-define(LOWER(C), ((C >= $a andalso C =< $z) orelse
                   (C >= 16#DF andalso C =< 16#FF andalso C =/= 16#F7))).
-define(NAMECHAR(C), (?DIGIT(C) orelse ?UPPER(C) orelse ?LOWER(C) orelse
                      C =:= $_ orelse C =:= $@)).

%%% Reading a pattern without making atoms ----------------------------------
%%
%% erl_scan makes an atom of every name it reads, atoms and variables
%% alike, and the node never frees one: a pattern of unknown names would
%% leave them on the node for good.  So names and quoted atoms are read
%% here, and erl_scan reads only the text between them (numbers, strings,
%% characters, operators), which makes no atom:
%%  * a name the node has an atom for is that atom (a reserved word is
%%    its keyword, as erl_scan makes it);
%%  * a name it has none for cannot be in any term on the node, so no
%%    call or message can carry it: it stands in as one of ?NO_ATOMS
%%    while the pattern is read (so that what is wrong with its form is
%%    said first), and a pattern that still holds one once compiled is
%%    refused, naming it; in the module's place it is a module that is
%%    not loaded, in the function's a function that is not there;
%%  * a variable whose name is no atom of the node takes one of ?VARS
%%    instead.
%% Messages say the names as they were typed.
%% What is text and what is a name is told as erl_scan tells it (OTP 25
%% to 29); a sigil or a triple-quoted string, whose insides are not, is
%% refused.

%% {ok, Tokens, End, Renamed} as erl_scan:string(Text, {1, 1}) gives,
%% Renamed the names that stand in: [{Given, Typed, var | atom, Loc}]
%% (where the name was first typed); or {error, {L, C, Msg}}
scan(Text) ->
    try
        Spans = spans(Text, {1, 1}, []),
        Names = [{var, N, L} || {var, N, L} <- Spans, N =/= "_"] ++
            [{atom, N, L} || {name, N, L} <- Spans] ++
            [{atom, quoted_name(B, L), L} || {quoted, B, L} <- Spans],
        Typed = [N || {_, N, _} <- Names],
        Renamed = rename([{K, N, L} || {K, N, L} <- Names, not exists(N)],
                         [V || V <- tuple_to_list(?VARS),
                               not lists:member(atom_to_list(V), Typed)],
                         [A || A <- tuple_to_list(?NO_ATOMS),
                               not lists:member(atom_to_list(A), Typed)],
                         []),
        {Tokens, End} = tokens(Spans, Renamed, [], {1, 1}),
        {ok, Tokens, End, Renamed}
    catch
        throw:{scan, Loc, Msg} -> {error, located(Loc, Msg)}
    end.

exists(Name) ->
    try list_to_existing_atom(Name) of
        _ -> true
    catch
        error:badarg -> false
    end.

%% each distinct name the node has no atom for, a stand-in of its kind
rename([], _, _, Acc) ->
    lists:reverse(Acc);
rename([{K, N, L} | Rest], Vs, As, Acc) ->
    case lists:keymember(N, 2, [R || {_, _, K1, _} = R <- Acc, K1 =:= K]) of
        true ->
            rename(Rest, Vs, As, Acc);
        false ->
            case {K, Vs, As} of
                {var, [V | Vs1], _} -> rename(Rest, Vs1, As, [{V, N, K, L} | Acc]);
                {atom, _, [A | As1]} -> rename(Rest, Vs, As1, [{A, N, K, L} | Acc]);
                _ -> throw({scan, L, io_lib:format(
                                       "too many names the node has no atom "
                                       "for; a pattern takes ~b variables and ~b "
                                       "such names", [tuple_size(?VARS),
                                                      tuple_size(?NO_ATOMS)])})
            end
    end.

stand_in(K, Name, Renamed) ->
    case [G || {G, N, K1, _} <- Renamed, K1 =:= K, N =:= Name] of
        [G | _] -> G;
        [] -> list_to_existing_atom(Name)
    end.

%% The text cut into spans: {text, Chars, Loc} for erl_scan,
%% {var, Name, Loc}, {name, Name, Loc} and {quoted, Body, Loc}, in order
spans([], _, Acc) ->
    lists:reverse(Acc);
spans([C | _] = Cs, Loc, Acc) when ?LOWER(C); ?UPPER(C); C =:= $_ ->
    {Name, Rest} = lists:splitwith(fun(X) -> ?NAMECHAR(X) end, Cs),
    Kind = case ?LOWER(C) of true -> name; false -> var end,
    spans(Rest, advance(Name, Loc), [{Kind, Name, Loc} | Acc]);
spans([$' | Cs], Loc, Acc) ->
    {Body, Rest} = quoted(Cs, $', Loc),
    spans(Rest, advance([$' | Body] ++ "'", Loc), [{quoted, Body, Loc} | Acc]);
spans(Cs, Loc, Acc) ->
    {Text, Rest} = text(Cs, Loc, []),
    spans(Rest, advance(Text, Loc), [{text, Text, Loc} | Acc]).

%% text up to the next name or quoted atom: what erl_scan reads of it
%% (a number's letters, a character, a string, a comment) is kept whole
text([], _, Acc) ->
    {lists:reverse(Acc), []};
text([C | _] = Cs, _, Acc) when ?LOWER(C); ?UPPER(C); C =:= $_; C =:= $' ->
    {lists:reverse(Acc), Cs};
text([$", $", $" | _], Loc, Acc) ->
    throw({scan, advance(lists:reverse(Acc), Loc),
           "a triple-quoted string is not read in a pattern; write it "
           "plainly, \"...\""});
text([$" | Cs], Loc, Acc) ->
    {Body, Rest} = quoted(Cs, $", advance(lists:reverse(Acc), Loc)),
    text(Rest, Loc, lists:reverse([$" | Body] ++ "\"", Acc));
text([$~ | _], Loc, Acc) ->
    throw({scan, advance(lists:reverse(Acc), Loc),
           "a sigil is not read in a pattern; write the string plainly, "
           "\"...\""});
text([$% | Cs], Loc, Acc) ->
    {Comment, Rest} = lists:splitwith(fun(X) -> X =/= $\n end, Cs),
    text(Rest, Loc, lists:reverse([$% | Comment], Acc));
text([$#, $_ | Cs], Loc, Acc) ->
    %% OTP 29 reads #_ as one token (before it, # and a name)
    case erl_scan:string("#_") of
        {ok, [{'#_', _}], _} -> text(Cs, Loc, [$_, $# | Acc]);
        _ -> {lists:reverse(Acc) ++ "#", [$_ | Cs]}
    end;
text([$$, $\\ | Cs], Loc, Acc) ->
    {Esc, Rest} = escape(Cs),
    text(Rest, Loc, lists:reverse([$$, $\\ | Esc], Acc));
text([$$, C | Cs], Loc, Acc) ->
    text(Cs, Loc, [C, $$ | Acc]);
text([C | _] = Cs, Loc, Acc) when ?DIGIT(C) ->
    case number(Cs) of
        {Num, Rest} ->
            text(Rest, Loc, lists:reverse(Num, Acc));
        illegal_float ->
            throw({scan, advance(lists:reverse(Acc), Loc), "illegal float"})
    end;
text([C | Cs], Loc, Acc) ->
    text(Cs, Loc, [C | Acc]).

%% up to the closing quote Q, escapes skipped; {Body, after the quote}
quoted(Cs, Q, Loc) ->
    quoted(Cs, Q, Loc, []).

quoted([], Q, Loc, _) ->
    throw({scan, Loc, case Q of
                          $' -> "unterminated atom starting with '";
                          $" -> "unterminated string starting with \""
                      end});
quoted([Q | Cs], Q, _, Acc) ->
    {lists:reverse(Acc), Cs};
quoted([$\\, C | Cs], Q, Loc, Acc) ->
    quoted(Cs, Q, Loc, [C, $\\ | Acc]);
quoted([C | Cs], Q, Loc, Acc) ->
    quoted(Cs, Q, Loc, [C | Acc]).

%% after $\ of a character: octal digits (3 at most), x{...}, xHH, ^C or
%% one character
escape([$x, ${ | Cs]) ->
    {Hex, Rest} = lists:splitwith(fun(X) -> X =/= $} end, Cs),
    case Rest of
        [$} | Rest1] -> {[$x, ${ | Hex] ++ "}", Rest1};
        [] -> {[$x, ${ | Hex], []}
    end;
escape([$x | Cs]) ->
    {Hex, Rest} = take(fun is_hex/1, Cs, 2),
    {[$x | Hex], Rest};
escape([C | _] = Cs) when C >= $0, C =< $7 ->
    take(fun(X) -> X >= $0 andalso X =< $7 end, Cs, 3);
escape([$^, C | Cs]) ->
    {[$^, C], Cs};
escape([C | Cs]) ->
    {[C], Cs};
escape([]) ->
    {[], []}.

take(F, Cs, N) ->
    take(F, Cs, N, []).

take(F, [C | Cs], N, Acc) when N > 0 ->
    case F(C) of
        true -> take(F, Cs, N - 1, [C | Acc]);
        false -> {lists:reverse(Acc), [C | Cs]}
    end;
take(_, Cs, _, Acc) ->
    {lists:reverse(Acc), Cs}.

is_hex(C) -> digit_value(C) < 16.

digit_value(C) when ?DIGIT(C) -> C - $0;
digit_value(C) when C >= $a, C =< $z -> C - $a + 10;
digit_value(C) when C >= $A, C =< $Z -> C - $A + 10;
digit_value(_) -> 99.

%% A number, as much of it as erl_scan reads: digits (_ between two),
%% Base#digits of that base, or a float with its exponent; never a
%% letter that erl_scan would read as a name.  illegal_float where
%% erl_scan says so (an e after a fraction, without an exponent).
number(Cs) ->
    {Int, Rest} = digits(Cs, 10),
    case Rest of
        [$# | Rest1] ->
            case list_to_integer([D || D <- Int, D =/= $_]) of
                B when B >= 2, B =< 36 ->
                    {Based, Rest2} = digits(Rest1, B),
                    based_fraction(Int ++ [$# | Based], Rest2, B);
                _ ->
                    {Int, Rest}
            end;
        [$., D | _] when ?DIGIT(D) ->
            {Frac, Rest2} = digits(tl(Rest), 10),
            case exponent(Rest2) of
                {Exp, Rest3} -> {Int ++ [$. | Frac] ++ Exp, Rest3};
                illegal_float -> illegal_float
            end;
        _ ->
            {Int, Rest}
    end.

%% a based number's fraction and exponent, where this node reads them
%% (based_floats/0): .Digits of the base, then #e, a sign and decimal
%% digits
based_fraction(Num, [$., D | _] = Rest, B) ->
    case digit_value(D) < B andalso based_floats() of
        true ->
            {Frac, Rest2} = digits(tl(Rest), B),
            case Rest2 of
                [$#, $e, S, E | Rest3] when (S =:= $+ orelse S =:= $-), ?DIGIT(E) ->
                    {Exp, Rest4} = digits([E | Rest3], 10),
                    {Num ++ [$. | Frac] ++ [$#, $e, S | Exp], Rest4};
                [$#, $e, E | Rest3] when ?DIGIT(E) ->
                    {Exp, Rest4} = digits([E | Rest3], 10),
                    {Num ++ [$. | Frac] ++ [$#, $e | Exp], Rest4};
                _ ->
                    {Num ++ [$. | Frac], Rest2}
            end;
        false ->
            {Num, Rest}
    end;
based_fraction(Num, Rest, _) ->
    {Num, Rest}.

%% digits of base B, a _ only between two of them
digits(Cs, B) ->
    digits(Cs, B, []).

digits([C | Cs], B, Acc) ->
    case digit_value(C) < B of
        true -> digits(Cs, B, [C | Acc]);
        false -> digits_sep([C | Cs], B, Acc)
    end;
digits([], _, Acc) ->
    {lists:reverse(Acc), []}.

digits_sep([$_, C | Cs], B, Acc) when Acc =/= [] ->
    case digit_value(C) < B of
        true -> digits(Cs, B, [C, $_ | Acc]);
        false -> {lists:reverse(Acc), [$_, C | Cs]}
    end;
digits_sep(Cs, _, Acc) ->
    {lists:reverse(Acc), Cs}.

exponent([E, S, D | Cs]) when (E =:= $e orelse E =:= $E),
                              (S =:= $+ orelse S =:= $-), ?DIGIT(D) ->
    {Ds, Rest} = digits([D | Cs], 10),
    {[E, S | Ds], Rest};
exponent([E, D | Cs]) when (E =:= $e orelse E =:= $E), ?DIGIT(D) ->
    {Ds, Rest} = digits([D | Cs], 10),
    {[E | Ds], Rest};
exponent([E | _]) when E =:= $e; E =:= $E ->
    illegal_float;
exponent(Cs) ->
    {[], Cs}.

%% where the text after Chars starts, Chars starting at {L, C}
advance([], Loc) -> Loc;
advance([$\n | Cs], {L, _}) -> advance(Cs, {L + 1, 1});
advance([_ | Cs], {L, C}) -> advance(Cs, {L, C + 1}).

%% The spans as tokens
tokens([], _, Acc, End) ->
    {lists:reverse(Acc), End};
tokens([{text, Text, Loc} | Rest], Renamed, Acc, _) ->
    _ = name_after(Text, Loc, Rest),
    case scan_string(Text, Loc) of
        {ok, Toks, End} ->
            %% a dot at the end of the text, with a name right after it,
            %% is the '.' of a record field, as erl_scan reads it whole
            Toks1 = case {Rest, lists:last(Text), lists:reverse(Toks)} of
                        {[_ | _], $., [{dot, A} | T]} -> lists:reverse([{'.', A} | T]);
                        _ -> Toks
                    end,
            tokens(Rest, Renamed, lists:reverse(Toks1, Acc), End);
        {error, {ELoc, Mod, Desc}, _} ->
            throw({scan, ELoc, Mod:format_error(Desc)})
    end;
tokens([{var, "_", Loc} | Rest], Renamed, Acc, _) ->
    tokens(Rest, Renamed, [{var, Loc, '_'} | Acc], advance("_", Loc));
tokens([{var, Name, Loc} | Rest], Renamed, Acc, _) ->
    tokens(Rest, Renamed, [{var, Loc, stand_in(var, Name, Renamed)} | Acc],
           advance(Name, Loc));
tokens([{name, Name, Loc} | Rest], Renamed, Acc, _) ->
    A = stand_in(atom, Name, Renamed),
    Tok = case erl_scan:reserved_word(A) of
              true -> {A, Loc};
              false -> {atom, Loc, A}
          end,
    tokens(Rest, Renamed, [Tok | Acc], advance(Name, Loc));
tokens([{quoted, Body, Loc} | Rest], Renamed, Acc, _) ->
    A = stand_in(atom, quoted_name(Body, Loc), Renamed),
    tokens(Rest, Renamed, [{atom, Loc, A} | Acc],
           advance([$' | Body] ++ "'", Loc)).

%% erl_scan:string/2, its crash an error (OTP 29's crashes on "2#1.1#e")
scan_string(Text, Loc) ->
    try
        erl_scan:string(Text, Loc)
    catch
        _:_ -> {error, {Loc, erl_scan, {illegal, float}}, Loc}
    end.

%% From OTP 29 on, erl_scan refuses a number with a name right after it
%% ("1e10", "16#FFzz", "1.x"): where this node's erl_scan does so (it
%% refuses "1_"), the text before a name that starts with a letter or _
%% is read with a _ after it, which erl_scan reads as it reads the name.
name_after(Text, Loc, [{K, [C | _], _} | _]) when (K =:= name orelse K =:= var),
                                                  (C =:= $_ orelse
                                                   (C >= $a andalso C =< $z) orelse
                                                   (C >= $A andalso C =< $Z)) ->
    case strict_numbers() of
        true ->
            case scan_string(Text ++ "_", Loc) of
                {error, {ELoc, Mod, Desc}, _} ->
                    ELoc =:= advance(Text, Loc) orelse   %% the _ itself
                        throw({scan, ELoc, Mod:format_error(Desc)});
                _ ->
                    ok
            end;
        false ->
            ok
    end;
name_after(_, _, _) ->
    ok.

strict_numbers() ->
    case erl_scan:string("1_") of
        {error, _, _} -> true;
        _ -> false
    end.

%% Based floats ("2#0.1", "16#1.8#e2"): OTP 29 reads them, before it a
%% based integer ends at the dot
based_floats() ->
    case erl_scan:string("2#0.1") of
        {ok, [{float, _, _}], _} -> true;
        _ -> false
    end.

%% what a quoted atom names, read as erl_scan reads a string
quoted_name(Body, Loc) ->
    case erl_scan:string([$" | dq(Body)] ++ "\"", Loc) of
        {ok, [{string, _, S}], _} -> S;
        {error, {ELoc, Mod, Desc}, _} -> throw({scan, ELoc, Mod:format_error(Desc)})
    end.

%% a quoted atom's body as a string's: its escapes as they are, a bare "
%% escaped
dq([$\\, C | Cs]) -> [$\\, C | dq(Cs)];
dq([$" | Cs]) -> [$\\, $" | dq(Cs)];
dq([C | Cs]) -> [C | dq(Cs)];
dq([]) -> [].

%% A compiled pattern (any term) that holds a name the node has no atom
%% for, refused where that name was typed first: no What (a call, a
%% message) can carry it.
no_atom(Term, Renamed, What) ->
    case lists:keysort(4, [R || {G, _, atom, _} = R <- Renamed, holds(Term, G)]) of
        [] ->
            ok;
        [{_, Name, _, Loc} | _] ->
            {error, located(Loc, io_lib:format(
                                   "the atom ~ts does not exist on the node, "
                                   "so no ~s can carry it; check its spelling",
                                   [atom_text(Name), What]))}
    end.

holds(A, A) -> true;
holds(T, A) when is_tuple(T) -> holds(tuple_to_list(T), A);
holds([H | T], A) -> holds(H, A) orelse holds(T, A);
holds(M, A) when is_map(M) -> holds(maps:to_list(M), A);
holds(_, _) -> false.

%% the name a stand-in atom takes the place of, or false
typed_name(A, Renamed) ->
    case lists:keyfind(A, 1, Renamed) of
        {_, Name, atom, _} -> unicode:characters_to_binary(Name);
        _ -> false
    end.

%% a name as erl_scan would want it written: quoted where it must be
atom_text(Name) ->
    case Name of
        [C | _] when ?LOWER(C) ->
            case lists:all(fun(X) -> ?NAMECHAR(X) end, Name) of
                true -> Name;
                false -> io_lib:write_string(Name, $')
            end;
        _ ->
            io_lib:write_string(Name, $')
    end.

%% a message with the names as they were typed in place of the stand-ins
typed_names(Msg, Renamed) ->
    lists:foldl(fun({G, Name, K, _}, M) ->
                        Given = atom_to_list(G),
                        Typed = case K of
                                    var -> Name;
                                    atom -> lists:flatten(atom_text(Name))
                                end,
                        M1 = string:replace(M, [$' | Given] ++ "'", Typed, all),
                        lists:flatten(string:replace(M1, Given, Typed, all))
                end, lists:flatten(Msg), Renamed).

%% {Line, Col, Message}, as beamscope_pattern's errors are
located({Line, Col}, Msg) -> {Line, Col, lists:flatten(Msg)};
located(Line, Msg) when is_integer(Line) -> {Line, 1, lists:flatten(Msg)}.
