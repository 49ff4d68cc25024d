%% beamscope_printer: what this node's printers do, told to the Owner once
%% at the start, and the fields of Elixir's structs, so that the Owner
%% renders terms as this node would.  A helper of beamscope_agent, run
%% only in the agent's process; it owns no process and no state.
-module(beamscope_printer).

-export([printer/0, structs/0, struct_fields/1]).

%%% What this node's printers do ------------------------------------------------
%%
%% The Owner renders terms itself, as io_lib:format("~0tp", [T]) and
%% Elixir's inspect/2 print them here.  What they print differs from
%% release to release; each printer is tried once, on a term whose text
%% tells, so that the Owner follows what this node does (bits as
%% src/term/term.h's TD_*).  Nothing here makes an atom.

-define(TD_BIN_UTF8_LEAD, 1).
-define(TD_ERL_MAP_AS_SENT, 2).
-define(TD_EX_MAP_BACK, 4).
-define(TD_EX_SIGIL_C, 8).
-define(TD_EX_STRUCTS, 16).
-define(TD_EX_ESC_INVISIBLE, 32).

printer() ->
    try
        printer1()
    catch
        _:_ -> 0
    end.

printer1() ->
    %% a binary that is UTF-8 at its start and not printable there, then
    %% not UTF-8: bytes where the UTF-8 reading decides, text where the
    %% Latin-1 one does
    Bin = case lists:flatten(io_lib:format("~0tp", [<<200, 160, 233>>])) of
              "<<200" ++ _ -> ?TD_BIN_UTF8_LEAD;
              _ -> 0
          end,
    %% a map of 33 pairs is a hash trie: the order it is encoded in
    %% against the order each printer walks it
    M = maps:from_list([{K, K} || K <- lists:seq(1, 33)]),
    <<131, 116, 33:32, Pairs/binary>> = term_to_binary(M),
    Sent = small_keys(binary_to_list(Pairs)),
    Erl = first_key(lists:flatten(io_lib:format("~0tp", [M])), "#{"),
    ErlMap = case Erl =:= hd(Sent) of
                 true -> ?TD_ERL_MAP_AS_SENT;
                 false -> 0
             end,
    Ex = case erlang:function_exported('Elixir.Kernel', inspect, 1) of
             true ->
                 ExM = first_key(binary_to_list('Elixir.Kernel':inspect(M)), "%{"),
                 Sigil = case 'Elixir.Kernel':inspect([$a]) of
                             <<"~c\"a\"">> -> ?TD_EX_SIGIL_C;
                             _ -> 0
                         end,
                 Blank = case 'Elixir.Kernel':inspect(<<16#A0/utf8>>) of
                             <<"\"\\u00A0\"">> -> ?TD_EX_ESC_INVISIBLE;
                             _ -> 0
                         end,
                 Sigil bor Blank bor ?TD_EX_STRUCTS bor
                     case ExM =:= hd(Sent) of
                         true -> 0;
                         false -> ?TD_EX_MAP_BACK
                     end;
             false ->
                 0
         end,
    Bin bor ErlMap bor Ex.

%% the keys of map pairs of small integers, as encoded (a list: OTP 29
%% does not load this match on a binary as OTP 25 compiles it)
small_keys([97, K, 97, _ | Rest]) -> [K | small_keys(Rest)];
small_keys(_) -> [].

%% the first key of a map of small integers, as a printer wrote it
first_key(Text, Open) ->
    Rest = lists:nthtail(length(Open), Text),
    {Digits, _} = lists:splitwith(fun(C) -> C >= $0 andalso C =< $9 end, Rest),
    list_to_integer(Digits).

%% Elixir prints a struct's fields in the order its module defines them
%% (Module.__info__(:struct)), and a map with __struct__ as a struct only
%% when its keys are those: the struct modules loaded, at most ?STRUCTS_MAX,
%% as [{Module, [Field]}].  A few microseconds a module, once.
-define(STRUCTS_MAX, 8192).

structs() ->
    case erlang:function_exported('Elixir.Kernel', inspect, 1) of
        true ->
            L = [{M, F} || {M, _} <- code:all_loaded(),
                           is_atom(M),
                           lists:prefix("Elixir.", atom_to_list(M)),
                           erlang:function_exported(M, '__struct__', 0),
                           is_list(F = struct_fields(M))],
            lists:sublist(L, ?STRUCTS_MAX);
        false ->
            []
    end.

%% the fields of M's struct in order, false when M has none (or there is
%% no such module: Elixir prints such a map as a map), unknown when that
%% cannot be said.  A module that is not loaded (Elixir loads a struct's
%% module only when something calls it) is not loaded to find out: its
%% fields are read from the debug information in its object file, which
%% Elixir keeps there, without making an atom (beam_struct/1).
struct_fields(M) ->
    case erlang:module_loaded(M) of
        false ->
            case code:which(M) of
                non_existing -> false;
                File when is_list(File) -> beam_struct(File);
                _ -> unknown
            end;
        true ->
            case erlang:function_exported(M, '__info__', 1) andalso
                erlang:function_exported(M, '__struct__', 0) of
                false ->
                    false;
                true ->
                    try M:'__info__'(struct) of
                        L when is_list(L) ->
                            Fs = [field(I) || I <- L],
                            case lists:all(fun is_atom/1, Fs) of
                                true -> Fs;
                                false -> false
                            end;
                        _ ->
                            false
                    catch
                        _:_ -> false
                    end
            end
    end.

%% An object file of at most ?BEAM_MAX bytes, its debug information
%% (Elixir's: {debug_info_v1, elixir_erl, {elixir_v1, #{struct => Fields}, _}})
%% decoded by ext/1: its atoms as binaries, so that none is made.  The
%% field names are sent as binaries then.
-define(BEAM_MAX, 8 * 1024 * 1024).

beam_struct(File) ->
    try
        %% file_info's size (filelib is not loaded on every node)
        {ok, Info} = file:read_file_info(File),
        true = element(2, Info) =< ?BEAM_MAX,
        {ok, {_, [{"Dbgi", Raw}]}} = beam_lib:chunks(File, ["Dbgi"]),
        {{tuple, [{atom, <<"debug_info_v1">>}, {atom, <<"elixir_erl">>},
                  {tuple, [{atom, <<"elixir_v1">>}, {map, Pairs} | _]}]}, _} =
            ext(external(Raw)),
        case lists:keyfind({atom, <<"struct">>}, 1, Pairs) of
            {_, {list, Infos}} ->
                [F || {map, KVs} <- Infos,
                      {{atom, <<"field">>}, {atom, F}} <- KVs];
            _ ->
                false
        end
    catch
        _:_ -> unknown
    end.

external(<<131, 80, _:32, Z/binary>>) -> zlib:uncompress(Z);
external(<<131, Bin/binary>>) -> Bin.

%% The external term format, as much of it as debug information holds:
%% {Decoded, Rest}, atoms {atom, Name}, tuples {tuple, L}, lists {list, L}
%% (a tail that is not [] left out), maps {map, [{K, V}]}; anything else
%% fails.
ext(<<97, I, R/binary>>) -> {I, R};
ext(<<98, I:32/signed, R/binary>>) -> {I, R};
ext(<<70, F:64/float, R/binary>>) -> {F, R};
ext(<<Tag, N:16, A:N/binary, R/binary>>) when Tag =:= 118; Tag =:= 100 -> {{atom, A}, R};
ext(<<Tag, N, A:N/binary, R/binary>>) when Tag =:= 119; Tag =:= 115 -> {{atom, A}, R};
ext(<<104, N, R/binary>>) -> ext_seq(N, R, tuple);
ext(<<105, N:32, R/binary>>) -> ext_seq(N, R, tuple);
ext(<<106, R/binary>>) -> {{list, []}, R};
ext(<<107, N:16, S:N/binary, R/binary>>) -> {{list, binary_to_list(S)}, R};
ext(<<108, N:32, R/binary>>) ->
    {{list, L}, R1} = ext_seq(N, R, list),
    {_, R2} = ext(R1),
    {{list, L}, R2};
ext(<<109, N:32, B:N/binary, R/binary>>) -> {B, R};
ext(<<77, N:32, _, B:N/binary, R/binary>>) -> {B, R};
ext(<<110, N, _, B:N/binary, R/binary>>) -> {{big, B}, R};
ext(<<111, N:32, _, B:N/binary, R/binary>>) -> {{big, B}, R};
ext(<<116, N:32, R/binary>>) ->
    {{tuple, KVs}, R1} = ext_seq(2 * N, R, tuple),
    {{map, pairs(KVs)}, R1}.

ext_seq(N, R, Kind) -> ext_seq(N, R, Kind, []).

ext_seq(0, R, Kind, Acc) -> {{Kind, lists:reverse(Acc)}, R};
ext_seq(N, R, Kind, Acc) ->
    {T, R1} = ext(R),
    ext_seq(N - 1, R1, Kind, [T | Acc]).

pairs([K, V | T]) -> [{K, V} | pairs(T)];
pairs([]) -> [].

field(#{field := F}) -> F;
field({F, _}) -> F;
field(F) -> F.
