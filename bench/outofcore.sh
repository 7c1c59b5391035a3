#!/usr/bin/env bash
# SimHash batch dedup of N generated 64-bit fingerprints in memory and out
# of core, side by side in one run (alternating, REPEAT times each): the
# dedup's seconds a million records, peak RSS, and whether the clusters
# are identical (checksum); then the median ratio out-of-core / in-memory.
# With N past what memory holds, pass "ooc" as the fourth argument to run
# only the out-of-core side; "cli" runs `neardup dedup --fingerprints` on
# the same records written as a HEX list instead (the in-memory batch,
# NEARDUP_LIST_IN_MEMORY=1 with --memory 64G, against the out-of-core one
# with --memory MEMORY_MB): wall time, peak RSS, and whether kept.jsonl
# and clusters.jsonl are identical.
#
# Usage: bench/outofcore.sh [N=10000000] [MEMORY_MB=1024] [REPEAT=1] [both|ooc|cli] [TMP_DIR]
#   e.g. bench/outofcore.sh 100000000 1024 3
#        bench/outofcore.sh 1000000000 8192 1 ooc /big/tmp
set -euo pipefail
n=${1:-10000000}
memory=${2:-1024}
repeat=${3:-1}
only=${4:-both}
tmp=${5:-${TMPDIR:-/tmp}}
here=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release -q -p neardup --example outofcorebench --manifest-path "$here/Cargo.toml"
bin="$here/target/release/examples/outofcorebench"
echo "N=$n, --memory ${memory} MB, $(nproc) threads, cpu: $(lscpu | sed -n 's/^Model name: *//p')"
runs=$(mktemp)
trap 'rm -f "$runs"' EXIT
if [ "$only" = cli ]; then
  cargo build --release -q -p neardup-cli --manifest-path "$here/Cargo.toml"
  work=$(mktemp -d "$tmp/outofcore-cli.XXXXXX")
  trap 'rm -f "$runs"; rm -rf "$work"' EXIT
  "$bin" "$n" 3 list "$work/list.txt"
  echo "list: $(du -h "$work/list.txt" | cut -f1)"
  for r in $(seq "$repeat"); do
    for mem in 64G "${memory}M"; do
      if [ "$mem" = 64G ]; then export NEARDUP_LIST_IN_MEMORY=1; else unset NEARDUP_LIST_IN_MEMORY; fi
      /usr/bin/time -f "%e %M" -o "$work/time" "$here/target/release/neardup" dedup --fingerprints "$work/list.txt" \
        -o "$work/$mem" --k 3 --memory "$mem" --tmp-dir "$work" --show 0 2>/dev/null
      read -r wall rss_kb < "$work/time"
      echo "--memory $mem: $wall s, peak $((rss_kb / 1024)) MB"
      echo "$mem $wall" >> "$runs"
    done
    for f in kept.jsonl clusters.jsonl; do
      cmp -s "$work/64G/$f" "$work/${memory}M/$f" && echo "  $f identical" || { echo "  $f DIFFERS"; exit 1; }
    done
  done
  python3 - "$runs" "${memory}M" <<'PY'
import statistics, sys
runs = [l.split() for l in open(sys.argv[1])]
med = lambda m: statistics.median(float(r[1]) for r in runs if r[0] == m)
print(f"out of core / in memory (CLI, wall): {med(sys.argv[2]) / med('64G'):.2f}x")
PY
  exit 0
fi
modes="memory $memory"
[ "$only" = ooc ] && modes="$memory"
for r in $(seq "$repeat"); do
  for mode in $modes; do
    "$bin" "$n" 3 "$mode" "$tmp" | tee -a "$runs"
  done
done
python3 - "$runs" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in runs:
    by.setdefault(r["mode"] == "memory", []).append(r)
for mem, rs in sorted(by.items(), reverse=True):
    name = "in memory" if mem else f"out of core ({rs[0]['mode']} MB)"
    us = statistics.median(r["us_per_record"] for r in rs)
    rss = statistics.median(r["peak_rss_mb"] for r in rs)
    print(f"{name:24} {us:.3f} us a record, peak RSS {rss:.0f} MB ({rss * 2**20 / rs[0]['n']:.1f} B a record), "
          f"checksums {sorted(set(r['checksum'] for r in rs))}")
if len(by) == 2:
    m = statistics.median(r["us_per_record"] for r in by[True])
    o = statistics.median(r["us_per_record"] for r in by[False])
    same = {r["checksum"] for r in runs}
    print(f"out of core / in memory: {o / m:.2f}x the time a record; clusters {'identical' if len(same) == 1 else 'DIFFER'}")
PY
