#!/usr/bin/env bash
# The Spark job (local[2]) against single-process `neardup dedup` on the same
# data, with Spark's fixed start-up cost separated; Rust call overhead per
# Arrow batch; shuffle bytes per document (from Spark's event log); and a
# projection for 10^9 documents on 200 cores.
#
#   bash bench/spark.sh [COPIES ...]      # default: 1 4 (copies of ../shared/data)
#
# Installs the package (pip install ./bindings/python) and pyspark into
# target/py-spark-bench-venv. Writes bench/out/spark.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
tdir="${CARGO_TARGET_DIR:-target}"
case "$tdir" in /*) ;; *) tdir="$PWD/$tdir" ;; esac
venv="$tdir/py-spark-bench-venv"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import pyspark, pyarrow, pandas' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'pyspark==4.3.0' 'pandas>=2.2,<3' 'pyarrow>=14'
fi
cargo build --release --quiet -p neardup-cli
CARGO_TARGET_DIR="$tdir" "$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps ./bindings/python
exec "$venv/bin/python" bench/spark_bench.py --bin "$tdir/release/neardup" "$@"
