#!/usr/bin/env bash
# The on-disk index of data directories against the in-memory index they
# had before (issue 52), side by side on one store.
#
#   bash bench/disk_index.sh [N] [minhash|simhash] [MEMORY_MB] [DIR] [THREADS]
#
# N (default 10^6) generated sketches are loaded in durable batches
# (crates/store/examples/disk_engine.rs); then, each in a fresh process,
# the store is opened with the in-memory index (rebuilt from the store, as
# before) and with the on-disk one: open time, RssAnon, searches a second
# from every core; then batched durable insert-if-unique on the on-disk
# one. Prints one JSON line per measurement and the ratios; writes
# bench/out/disk_index.jsonl. DIR (default target/disk-index-bench) needs
# about 1 KB a document (MinHash) of free disk.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
method=${2:-minhash}
memory=${3:-256}
dir=${4:-target/disk-index-bench}
# Client threads searching and inserting (default one per core); a
# directory larger than the page cache wants more (64 at 5*10^7).
threads=${5:-$(nproc)}
cargo build --release --quiet -p neardup-store --example disk_engine
B=target/release/examples/disk_engine
mkdir -p bench/out
out=bench/out/disk_index.jsonl
: > "$out"
run() { echo "+ $*" >&2; "$@" | tee -a "$out"; }
echo "# $(lscpu | grep -m1 'Model name' | sed 's/ \+/ /g'); NEARDUP_SIMD=${NEARDUP_SIMD:-auto}" >&2
run $B "$dir" "$n" "$method" 10 load "$memory"
# The in-memory index needs ~2.6 KB a MinHash document: skipped above 5*10^6.
if [ "$n" -le 5000000 ]; then run $B "$dir" "$n" "$method" 10 memory "$memory"; fi
run $B "$dir" "$n" "$method" 10 serve "$memory" "$threads"
python3 - "$out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
get = lambda bench, index: next(r for r in rows if r["bench"] == bench and r.get("index") == index)
load = next(r for r in rows if r["bench"] == "load")
empty = {"seconds": float("nan"), "rss_anon_mb": "-", "per_s": float("nan")}
have = lambda bench, index: any(r["bench"] == bench and r.get("index") == index for r in rows)
mo = get("open", "memory") if have("open", "memory") else empty
ms = get("search", "memory") if have("search", "memory") else empty
do, ds = get("open", "disk"), get("search", "disk")
ins = next(r for r in rows if r["bench"] == "insert")
print(f"\n{load['method']}, {load['docs']:,} documents: disk {load['disk_bytes_per_doc']} B a document "
      f"(store {load['store_bytes_per_doc']}, index {load['index_bytes_per_doc']}); "
      f"loaded at {load['per_s']:,}/s, {load['segments']} segments, write amplification {load['write_amplification']}")
print(f"{'':24}{'in memory (before)':>20}{'on disk':>14}{'ratio':>10}")
print(f"{'open, s':24}{mo['seconds']:>20.3f}{do['seconds']:>14.3f}{mo['seconds'] / max(do['seconds'], 1e-3):>9.0f}x")
print(f"{'RssAnon after open, MB':24}{mo['rss_anon_mb']:>20}{do['rss_anon_mb']:>14}")
print(f"{'RssAnon searching, MB':24}{ms['rss_anon_mb']:>20}{ds['rss_anon_mb']:>14}")
print(f"{'searches/s (2 cores)':24}{ms['per_s']:>20,.0f}{ds['per_s']:>14,}{ds['per_s'] / ms['per_s']:>9.2f}x")
print(f"{'inserts/s (batches)':24}{'':>20}{ins['per_s']:>14,}   RssAnon {ins['rss_anon_mb']} MB")
PY
