#!/usr/bin/env bash
# neardup from Python against PyPI simhash, gaoya and datasketch, and
# Python index batch queries against Rust, side by side in one run.
#
#   bash bench/python.sh
#
# Builds the wheel (maturin) and crates/neardup/examples/indexbench, installs
# them and the peers in target/py-bench-venv. Writes bench/out/python.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/venv.sh
bench_venv py-bench-venv "maturin, simhash, numpy, gaoya, datasketch, pyarrow, rensa" \
  'maturin>=1.7,<2' 'simhash==2.1.2' 'numpy<2' 'pyarrow<17' gaoya datasketch rensa
cargo build --release --quiet --example indexbench -p neardup
rm -rf "$tdir/bench-wheels"
(cd bindings/python && "$venv/bin/maturin" build --release --quiet -o "$tdir/bench-wheels")
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$tdir"/bench-wheels/neardup-*.whl
exec "$venv/bin/python" bench/python_bench.py
