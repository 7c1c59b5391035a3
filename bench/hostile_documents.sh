#!/usr/bin/env bash
# Hostile uploads against `neardup serve` at its default limits: p99 of
# /v1/search idle and while 8 clients upload GiB bombs and self-referencing
# PDFs, server memory, and normal uploads during the load and right after
# a bomb (bench/hostile_documents.py; one run, one summary).
#
#   bash bench/hostile_documents.sh [GiB] [--rounds 3] [--seconds 15] [--uploaders 8]
#
# GiB: what each bomb inflates to (default 1). Documents: ../shared/data
# when present, else testdata/.
set -euo pipefail
cd "$(dirname "$0")/.."
gib=1
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then gib="$1"; shift; fi
cargo build --release --quiet -p neardup-cli
dir="target/hostile-$gib"
[ -f "$dir/normal.pdf" ] || cargo run --release --quiet -p neardup-testkit --example hostile -- "$dir" "$gib" >/dev/null
if [ -f ../shared/data/docs_en.jsonl ]; then
  docs=(../shared/data/docs_en.jsonl ../shared/data/docs_zh.jsonl)
else
  docs=(testdata/docs_en.jsonl testdata/docs_zh.jsonl)
fi
exec python3 bench/hostile_documents.py target/release/neardup "$dir" "${docs[@]}" "$@"
