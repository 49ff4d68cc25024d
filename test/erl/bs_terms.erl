%% bs_terms: random terms of every type, sent to a traced process, each
%% with the target's own rendering of it, for the differential test of
%% beamscope's renderers (test/t0360-render.sh).
-module(bs_terms).
-export([start/0, run/4, term/1]).

start() ->
    %% a running system has its struct modules loaded: beamscope learns
    %% their fields when it attaches
    _ = [code:ensure_loaded(M) || M <- ['Elixir.BsTerms.Order', 'Elixir.BsTerms.Line',
                                        'Elixir.BsTerms.Oops']],
    P = spawn(fun sink/0),
    register(bs_terms_sink, P),
    ok.

sink() ->
    receive _ -> sink() end.

%% N terms from Seed, sent to the sink in order; File gets one line a term:
%% the base64 of the target's own rendering in Syntax (erlang | elixir),
%% a space, the base64 of its Erlang rendering (to show it).
run(N, Seed, Syntax, File) ->
    rand:seed(exsss, {Seed, Seed + 1, Seed + 2}),
    Sink = whereis(bs_terms_sink),
    Lines = [one(I, Sink, Syntax) || I <- lists:seq(1, N)],
    ok = file:write_file(File, Lines),
    N.

one(I, Sink, Syntax) ->
    T = term(3),
    Erl = unicode:characters_to_binary(io_lib:format("~0tp", [T])),
    Own = case Syntax of
              erlang -> Erl;
              elixir -> 'Elixir.Kernel':inspect(T, [{limit, infinity},
                                                     {printable_limit, infinity}])
          end,
    Sink ! T,
    %% room for the tracer's workers: no drops
    case I rem 200 of 0 -> timer:sleep(15); _ -> ok end,
    [base64:encode(Own), $\s, base64:encode(Erl), $\n].

pick(L) -> lists:nth(rand:uniform(length(L)), L).

term(0) -> scalar();
term(D) ->
    case rand:uniform(14) of
        1 -> [term(D - 1) || _ <- lists:seq(1, rand:uniform(4) - 1)];
        2 -> list_to_tuple([term(D - 1) || _ <- lists:seq(1, rand:uniform(4) - 1)]);
        3 -> maps:from_list([{term(D - 1), term(D - 1)} || _ <- lists:seq(1, rand:uniform(4) - 1)]);
        4 -> maps:from_list([{atom(), term(D - 1)} || _ <- lists:seq(1, rand:uniform(4))]);
        5 -> [{atom(), term(D - 1)} || _ <- lists:seq(1, rand:uniform(3))];
        6 -> [term(D - 1) | scalar()];
        7 -> {term(D - 1), term(D - 1)};
        8 -> struct(D);
        9 when D >= 2 -> maps:from_list([{K, K * 2} || K <- lists:seq(1, 33 + rand:uniform(10))]);
        _ -> scalar()
    end.

struct(D) ->
    case code:ensure_loaded('Elixir.BsTerms.Order') of
        {error, _} -> {order, term(D - 1)};
        _ ->
            case rand:uniform(6) of
                1 -> #{'__struct__' => 'Elixir.BsTerms.Order', id => rand:uniform(100),
                       items => [binary(), binary()], status => atom(), total => float()};
                2 -> #{'__struct__' => 'Elixir.BsTerms.Oops', '__exception__' => true,
                       message => binary(), reason => term(D - 1)};
                3 -> #{'__struct__' => 'Elixir.BsTerms.Line', sku => binary(),
                       qty => rand:uniform(9), at => term(D - 1), price => float()};
                %% maps that only look like structs: a field missing, one
                %% too many, a module that is none
                4 -> #{'__struct__' => 'Elixir.BsTerms.Line', sku => binary(),
                       qty => rand:uniform(9)};
                5 -> #{'__struct__' => 'Elixir.BsTerms.Order', id => 1, items => [],
                       status => atom(), total => float(), extra => term(D - 1)};
                6 -> #{'__struct__' => 'Elixir.BsTerms.Nope', id => rand:uniform(9)}
            end
    end.

scalar() ->
    case rand:uniform(13) of
        1 -> atom();
        2 -> atom();
        3 -> rand:uniform(600) - 300;
        4 -> (rand:uniform(1 bsl 62) - (1 bsl 61)) * pick([1, 1, 1 bsl 40, -(1 bsl 100), 1 bsl 190]);
        5 -> float();
        6 -> float();
        7 -> binary();
        8 -> binary();
        9 -> string();
        10 -> pick([self(), make_ref(), hd(erlang:ports()), list_to_pid("<0.0.0>")]);
        11 -> pick([<<1:3>>, <<"ab", 5:4>>, <<1, 2, 3:4>>, bitstring(), bitstring(),
                    <<>>, [], {}, #{}, "", -0.0, 0.0]);
        12 -> string();
        13 -> rand:uniform(1 bsl 40) - (1 bsl 39)
    end.

atom() ->
    case rand:uniform(3) of
        1 -> pick([ok, error, nil, true, false, undefined, 'receive', 'end', 'Elixir',
                   'Elixir.Shop.Cache', 'Elixir.Elixir.X', 'Elixir.shop', 'Elixir.A-B',
                   'Foo', 'foo@bar', 'foo?', 'foo!', 'fo?o', '+', '::', '..', '%{}', 'λx', 'Жук',
                   '//', '..//', '->', '<|>', '&&&', 'a b', '', 'é', 'aé', 'ÿz', 'Éa',
                   'Ω', 'aΩ', '€', 'hé!', 'ça_va', 'it\'s', '"q"', 'a\\b', '#{x}',
                   'a\nb', [0], [1, 2, 127], [128, 159, 160], '_', '_x', 'A.B', 'x.y',
                   '@', 'a@', 'é@b', 'when', 'not', 'in', '\x{FEFF}']);
        _ ->
            Cs = [pick("abcxyzABZ_@09 .?!'\"\\#{}-+é") || _ <- lists:seq(1, rand:uniform(6))],
            %% '...' and '#Fun' are what the tracer leaves where it cut
            case Cs of "..." -> atom(); _ -> list_to_atom(Cs) end
    end.

float() ->
    case rand:uniform(6) of
        1 -> pick([300.0, 312.5, 1.0e-10, 1.0e20, 1.0e15, 1.0e16, 0.1, 1.0e-5, 0.0001,
                   100.0, 123.456, 9007199254740993.0, 1.7976931348623157e308,
                   5.0e-324, 2.2250738585072014e-308, -3.0e-7, 1.0e21, 1.0e22,
                   123456789012345678.0, 0.30000000000000004, 1.0e23]);
        2 -> float(rand:uniform(1 bsl 60) - (1 bsl 59)) * pick([1, 1.0e-3, 1024, 1.0e10]);
        3 -> (rand:uniform() - 0.5) * math:pow(10, rand:uniform(40) - 20);
        4 -> float(rand:uniform(100000)) / pick([1, 2, 4, 8, 10, 100, 1000]);
        _ -> bits_float()
    end.

bits_float() ->
    <<B:64>> = crypto_bytes(8),
    case <<B:64>> of
        <<F:64/float>> -> F;
        _ -> bits_float()
    end.

crypto_bytes(N) -> << <<(rand:uniform(256) - 1)>> || _ <- lists:seq(1, N) >>.

string() ->
    N = rand:uniform(8) - 1,
    case rand:uniform(5) of
        1 -> [pick(" az~\"\\'#{}\n\t\e\v\b\f\r\a") || _ <- lists:seq(1, N + 1)];
        2 -> [rand:uniform(256) - 1 || _ <- lists:seq(1, N)];
        3 -> [pick([$a, 160, 200, 255, 233]) || _ <- lists:seq(1, N + 1)];
        4 -> [pick([$a, 955, 8364, 127, 0, 27]) || _ <- lists:seq(1, N + 1)];
        5 -> [rand:uniform(127) || _ <- lists:seq(1, N + 1)]
    end.

%% whole bytes, then 1 to 7 bits
bitstring() ->
    B = rand:uniform(7),
    <<(crypto_bytes(rand:uniform(6) - 1))/binary, (rand:uniform(1 bsl B) - 1):B>>.

binary() ->
    N = rand:uniform(10) - 1,
    case rand:uniform(6) of
        1 -> crypto_bytes(N);
        2 -> list_to_binary([pick(" az~\"\\'#{}\n\t\e\v\b\f\r\a\d") || _ <- lists:seq(1, N)]);
        3 -> unicode:characters_to_binary([pick([$a, 233, 955, 8364, 65279, 128512, 160, 133, 0, $#, ${])
                                           || _ <- lists:seq(1, N)]);
        4 -> list_to_binary([pick([$a, 160, 200, 255, 233, 150]) || _ <- lists:seq(1, N)]);
        5 -> list_to_binary([rand:uniform(95) + 31 || _ <- lists:seq(1, N)]);
        6 -> pick([<<>>, <<"book">>, <<"#{x}">>, <<"Ã©">>, <<194, 160>>])
    end.
