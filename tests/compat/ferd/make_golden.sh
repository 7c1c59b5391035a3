#!/usr/bin/env bash
# Regenerates testdata/compat/ferd_simhash.txt.gz with ferd/simhash's own
# Erlang module (its code is not in this repository: pass the path of its
# src/simhash.erl, from github.com/ferd/simhash). Needs Erlang
# (`apt-get install erlang-base`) and ../shared/data.
# Usage: tests/compat/ferd/make_golden.sh PATH/TO/simhash.erl
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
erlc -o "$tmp" "$1" "$here/ferd_driver.erl"
python3 "$here/gen_inputs.py" "$root/../shared/data" > "$tmp/in.txt"
erl -noshell -pa "$tmp" -eval "ferd_driver:main([\"$tmp/in.txt\",\"$tmp/out.txt\"]), halt()."
{ echo "# ferd/simhash simhash:hash/1 (MD5 build, src/simhash.erl at b7237fa) on Erlang/OTP $(erl -noshell -eval 'io:format("~s",[erlang:system_info(otp_release)]), halt().'): input bytes in hex ('-' for none), then the 16 bytes it returned. Made by running the module itself; see crates/neardup/tests/compat.rs."
  cat "$tmp/out.txt"; } | gzip -9n > "$root/testdata/compat/ferd_simhash.txt.gz"
echo "wrote testdata/compat/ferd_simhash.txt.gz ($(wc -l < "$tmp/out.txt") values)"
