#!/usr/bin/env bash
# Differential tests against the real peers:
#   - python-simhash against the PyPI package simhash 2.1.2 (installed in a
#     virtualenv under target/ the first time);
#   - yanyiwu against the real cppjieba (C++ headers from the npm package
#     nodejieba, compiled with g++ the first time): its words (our
#     segmenter's example `cut`), keywords and fingerprints;
# (ferd/simhash's values are pinned by testdata/compat/ferd_simhash.txt.gz,
# made with its own Erlang module by tests/compat/ferd/make_golden.sh and
# checked by `cargo test`.)
# Usage: tests/compat/run.sh NEARDUP_BINARY
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${1:-$root/target/release/neardup}
data="$root/../shared/data"
[ -d "$data" ] || data=""

venv="$root/target/compat-venv"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import simhash, numpy' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'simhash==2.1.2' 'numpy<2'
fi
"$venv/bin/python" "$here/diff_python_simhash.py" "$bin" $data

peers="$root/target/compat-peers"
cppjieba="$peers/package/submodules/cppjieba"
if [ ! -x "$peers/yanyiwu_peer" ]; then
  mkdir -p "$peers"
  (cd "$peers" && npm pack --silent nodejieba@3.5.8 >/dev/null && tar xzf nodejieba-3.5.8.tgz)
  g++ -O2 -std=c++11 -w -I "$cppjieba/include" -I "$cppjieba/deps/limonp/include" \
    -o "$peers/yanyiwu_peer" "$here/yanyiwu_peer.cpp"
fi
if [ ! -x "$peers/yanyiwu_peer" ] || [ "$here/yanyiwu_peer.cpp" -nt "$peers/yanyiwu_peer" ]; then
  g++ -O2 -std=c++11 -w -I "$cppjieba/include" -I "$cppjieba/deps/limonp/include" \
    -o "$peers/yanyiwu_peer" "$here/yanyiwu_peer.cpp"
fi
(cd "$root" && cargo build -q --release -p neardup-jieba --example cut)
python3 "$here/diff_yanyiwu.py" "$bin" "$peers/yanyiwu_peer" "$cppjieba/dict" \
  "${CARGO_TARGET_DIR:-$root/target}/release/examples/cut" $data
