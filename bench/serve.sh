#!/usr/bin/env bash
# `neardup serve` on loopback under wrk: search at 10^6 documents,
# insert-if-unique single and in batches of 1,000 (durable), start-up at
# 10^6 and 10^7 from the snapshot and from a rebuild — one run, one table.
#
#   bash bench/serve.sh [--docs N] [--startup-docs N] [--seconds S]
#   bash bench/serve.sh --minhash [--docs N] [--words W] [--seconds S]   # a MinHash data directory (bench/serve_minhash.py)
#
# Installs wrk (and GNU time) with apt-get when missing (as root). Writes bench/out/serve.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v wrk >/dev/null || [ ! -x /usr/bin/time ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get install -y wrk time >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk time >/dev/null; }
  else
    echo "bench/serve.sh needs wrk and GNU time (apt-get install wrk time)" >&2
    exit 1
  fi
fi
cargo build --release --quiet -p neardup-cli
if [ "${1:-}" = --minhash ]; then
  shift
  exec python3 bench/serve_minhash.py "$@"
fi
exec python3 bench/serve.py "$@"
