#!/usr/bin/env bash
# neardup.datasketch against datasketch 2.0.0 side by side (see
# bench/datasketch_bench.py): builds the Python package in release mode
# into a venv with datasketch, then runs the bench on 3 MB of English.
# Usage: bash bench/datasketch.sh [DOCS.jsonl] [MB] [LSH_N] [MEM_N]
set -euo pipefail
cd "$(dirname "$0")/.."
docs="${1:-../shared/data/docs_en.jsonl}"
venv="${CARGO_TARGET_DIR:-target}/bench-datasketch-venv"
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check 'datasketch==2.0.0' 'numpy>=1.24' maturin
VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" maturin develop --quiet --release -m bindings/python/Cargo.toml
# numpy's BLAS threads would otherwise spin beside the pool (datasketch does not use them).
OPENBLAS_NUM_THREADS=1 "$venv/bin/python" bench/datasketch_bench.py "$docs" "${2:-3}" "${3:-100000}" "${4:-1000000}"
