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
tdir="${CARGO_TARGET_DIR:-target}"
case "$tdir" in /*) ;; *) tdir="$PWD/$tdir" ;; esac
venv="$tdir/py-bench-venv"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import maturin, simhash, numpy, gaoya, datasketch, pyarrow' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'maturin>=1.7,<2' 'simhash==2.1.2' 'numpy<2' 'pyarrow<17' gaoya datasketch
fi
cargo build --release --quiet --example indexbench -p neardup
rm -rf "$tdir/bench-wheels"
(cd bindings/python && "$venv/bin/maturin" build --release --quiet -o "$tdir/bench-wheels")
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$tdir"/bench-wheels/neardup-*.whl
exec "$venv/bin/python" bench/python_bench.py
