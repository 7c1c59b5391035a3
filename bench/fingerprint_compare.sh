#!/usr/bin/env bash
# Fingerprinting speed of two builds, alternated in one run (the hosts are
# shared and drift): OLD_FPBENCH (the fpbench example of an earlier build)
# against this tree's, per preset, one thread, ROUNDS rounds of each.
#
#   OLD_FPBENCH=/path/to/old/examples/fpbench bash bench/fingerprint_compare.sh [MAX_MB] [ROUNDS]
#
# Prints the median MB/s of each build per preset and their ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${OLD_FPBENCH:?set OLD_FPBENCH to the fpbench binary of the earlier build}"
max_mb=${1:-4}
rounds=${2:-3}
data=../shared/data
[ -d "$data" ] || { echo "bench/fingerprint_compare.sh needs ../shared/data" >&2; exit 2; }
cargo build --release --quiet --example fpbench -p neardup
new=target/release/examples/fpbench
out=$(mktemp)
for r in $(seq "$rounds"); do
  for case in "default $data/docs_en.jsonl" "default $data/docs_zh.jsonl" "keywords $data/docs_zh.jsonl" \
              "python-simhash $data/docs_en.jsonl"; do
    set -- $case
    for build in old new; do
      bin=$OLD_FPBENCH; [ $build = new ] && bin=$new
      printf '%s %s %s ' "$build" "$1" "$(basename "$2")" >> "$out"
      "$bin" "$1" "$2" 1 5 "$max_mb" | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["mb_per_s"])' >> "$out"
    done
  done
done
python3 - "$out" <<'PY'
import statistics, sys
from collections import defaultdict
runs = defaultdict(list)
for line in open(sys.argv[1]):
    build, preset, data, mbs = line.split()
    runs[(preset, data, build)].append(float(mbs))
print(f"{'preset':16} {'data':16} {'old MB/s':>9} {'new MB/s':>9} {'new/old':>8}")
for preset, data in dict.fromkeys((p, d) for p, d, _ in runs):
    o, n = statistics.median(runs[(preset, data, "old")]), statistics.median(runs[(preset, data, "new")])
    print(f"{preset:16} {data:16} {o:9.1f} {n:9.1f} {n / o:8.3f}")
PY
rm -f "$out"
