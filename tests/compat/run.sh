#!/usr/bin/env bash
# Differential tests against the real peers:
#   - python-simhash against the PyPI package simhash 2.1.2 (installed in a
#     virtualenv under target/ the first time);
#   - yanyiwu against yanyiwu/simhash as it builds today (cppjieba v5.6.7;
#     ../shared/peers/yanyiwu-simhash, compiled with g++ the first time;
#     skipped, saying so, where ../shared is absent): cppjieba's words (our
#     segmenter's example `cut`), keywords and fingerprints, and the
#     fingerprints yanyiwu/simhash's own Simhasher prints;
#   - yanyiwu-nodejieba against the older cppjieba in the npm package
#     nodejieba 3.5.8 (what `yanyiwu` followed before): words, keywords and
#     fingerprints;
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
cut="${CARGO_TARGET_DIR:-$root/target}/release/examples/cut"
python3 "$here/diff_yanyiwu.py" --preset yanyiwu-nodejieba --flavour cppjieba-nodejieba \
  "$bin" "$peers/yanyiwu_peer" "$cppjieba/dict" "$cut" $data

shared_peer="$root/../shared/peers/yanyiwu-simhash"
if [ -d "$shared_peer/cppjieba/include" ]; then
  if [ ! -x "$peers/yanyiwu_peer_5.6.7" ] || [ "$here/yanyiwu_peer.cpp" -nt "$peers/yanyiwu_peer_5.6.7" ]; then
    g++ -O2 -std=c++17 -w -I "$shared_peer/cppjieba/include" -I "$shared_peer/limonp/include" \
      -o "$peers/yanyiwu_peer_5.6.7" "$here/yanyiwu_peer.cpp"
  fi
  if [ ! -x "$peers/yanyiwu_simhash" ] || [ "$shared_peer/fingerprints.cpp" -nt "$peers/yanyiwu_simhash" ]; then
    g++ -O2 -std=c++17 -w -I "$shared_peer/simhash/include" -I "$shared_peer/cppjieba/include" \
      -I "$shared_peer/limonp/include" -o "$peers/yanyiwu_simhash" "$shared_peer/fingerprints.cpp"
  fi
  python3 "$here/diff_yanyiwu.py" --preset yanyiwu --flavour cppjieba --simhasher "$peers/yanyiwu_simhash" \
    "$bin" "$peers/yanyiwu_peer_5.6.7" "$shared_peer/cppjieba/dict" "$cut" $data
else
  echo "SKIPPED: yanyiwu against yanyiwu/simhash (cppjieba v5.6.7): $shared_peer is absent (it is in ../shared/peers)"
fi
