#!/usr/bin/env bash
# MinHash signatures from neardup against gaoya, rensa, FastSketchLSH and datasketch, one
# thread, side by side in one run (bench/minhash_peers.py), plus the Rust
# signature rate (examples/minhashbench) on the same 3 MB.
#
#   bash bench/minhash.sh
#
# Builds the wheel (maturin); installs it and the peers in target/py-bench-venv.
# Writes bench/out/minhash.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/venv.sh
bench_venv py-bench-venv "maturin, simhash, numpy, gaoya, datasketch, pyarrow, rensa, FastSketchLSH" \
  'maturin>=1.7,<2' 'simhash==2.1.2' numpy pyarrow gaoya datasketch 'rensa==0.5.0' 'FastSketchLSH==1.0.1'
rm -rf "$tdir/bench-wheels"
(cd bindings/python && "$venv/bin/maturin" build --release --quiet -o "$tdir/bench-wheels")
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$tdir"/bench-wheels/neardup-*.whl
cargo build --release --quiet --example minhashbench -p neardup
echo "Rust, one thread (examples/minhashbench, preset minhash: word 2-shingles; 3 MB):"
"$tdir/release/examples/minhashbench" ../shared/data/docs_en.jsonl 5 3
RAYON_NUM_THREADS=1 exec "$venv/bin/python" bench/minhash_peers.py
