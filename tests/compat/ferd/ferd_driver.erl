-module(ferd_driver).
-export([main/1]).
%% Reads lines of hex-encoded inputs, prints "HEXIN HEXOUT" per line.
main([In, Out]) ->
    {ok, Data} = file:read_file(In),
    Lines = [L || L <- binary:split(Data, <<"\n">>, [global]), L =/= <<>>],
    Res = [[L, " ", hex(simhash:hash(unhex(L))), "\n"] || L <- Lines],
    ok = file:write_file(Out, Res).
unhex(<<"-">>) -> <<>>;
unhex(H) -> binary:decode_hex(H).
hex(B) -> string:lowercase(binary:encode_hex(B)).
