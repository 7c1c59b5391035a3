#!/usr/bin/env bash
# The Spark job (local[2]) against single-process `neardup dedup` on the same
# data, with Spark's fixed start-up cost separated; Rust call overhead per
# Arrow batch; shuffle bytes per document (from Spark's event log); and a
# projection for 10^9 documents on 200 cores.
#
#   bash bench/spark.sh [COPIES ...]      # default: 1 4 16 (copies of ../shared/data)
#
# Installs the package (pip install ./bindings/python) and pyspark into
# target/py-spark-bench-venv. Writes bench/out/spark.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/venv.sh
bench_venv py-spark-bench-venv "pyspark, pyarrow, pandas" 'pyspark==4.3.0' 'pandas>=2.2,<3' 'pyarrow>=14'
cargo build --release --quiet -p neardup-cli
CARGO_TARGET_DIR="$tdir" "$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps ./bindings/python
exec "$venv/bin/python" bench/spark_bench.py --bin "$tdir/release/neardup" "$@"
