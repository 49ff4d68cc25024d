%% beamscope_ms.hrl: what the agent and beamscope_elixir both know of
%% match specs.

%% the guard functions a match spec may call (ms_check/2 in the agent
%% refuses anything else; an Elixir head's guard calls only these)
-define(MS_GUARDS, [is_atom, is_float, is_integer, is_list, is_number, is_pid,
                    is_port, is_reference, is_tuple, is_map, is_map_key,
                    is_binary, is_bitstring, is_boolean, is_function,
                    is_record, 'and', 'or', 'not', 'xor', 'andalso', 'orelse',
                    abs, element, hd, tl, length, map_get, map_size, max, min,
                    node, float, round, floor, ceil, trunc, size, bit_size,
                    byte_size, tuple_size, binary_part, '+', '-', '*', '/',
                    'div', 'rem', 'band', 'bor', 'bxor', 'bnot', 'bsl', 'bsr',
                    '>', '>=', '<', '=<', '=:=', '==', '=/=', '/=']).
