#!/usr/bin/env bash
# Corpus cleaning against plain JSONL and datatrove, side by side in one
# run (issue 37): formats, exact dedup, boilerplate, substrings.
#
#   bash bench/clean.sh [CORPUS.jsonl] [clean_bench.py flags...]
#
# Without a corpus, makes one of 2.1 million documents (about 2 GB) from
# ../shared/data with bench/make_corpus.py. Figures: bench/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/venv.sh
corpus="${1:-$tdir/clean-corpus.jsonl}"
shift || true
if [ ! -s "$corpus" ]; then
  python3 bench/make_corpus.py 2100000 "$corpus"
fi
cargo build -q --release -p neardup-cli
bench_venv clean-bench-venv "datatrove, pyarrow, orjson" "datatrove[processing]" pyarrow orjson
NEARDUP_BIN="$tdir/release/neardup" "$venv/bin/python" bench/clean_bench.py "$corpus" "$@"
