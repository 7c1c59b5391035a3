#!/usr/bin/env bash
# dedup in bounded memory against dedup in memory, side by side in one run:
# for each method, the same corpus deduplicated with --memory 64G (nothing
# spills) and with --memory BUDGET (records and signatures go to --tmp-dir),
# alternating, REPEAT times each; prints wall time and peak RSS (medians),
# the ratio bounded/unbounded, the bytes spilled, and whether the outputs
# are identical (kept.jsonl, clusters.jsonl).
#
# Usage: bench/dedup_memory.sh CORPUS.jsonl [BUDGET=2G] [REPEAT=1] [METHODS="minhash simhash"]
#   CORPUS: e.g. python3 bench/make_corpus.py 10000000 /tmp/c1e7.jsonl
#   SimHash runs at a fixed --k 4: the default rule's k = 8 pass for short
#   documents enumerates dense runs (issue 35, item 7), which is not what
#   this measures.
set -euo pipefail
corpus=${1:?usage: bench/dedup_memory.sh CORPUS.jsonl [BUDGET] [REPEAT] [METHODS]}
budget=${2:-2G}
repeat=${3:-1}
methods=${4:-minhash simhash}
here=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release -q -p neardup-cli --manifest-path "$here/Cargo.toml"
bin="$here/target/release/neardup"
work=$(mktemp -d "${TMPDIR:-/tmp}/dedup-memory.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "corpus: $corpus ($(du -h "$corpus" | cut -f1)), budget $budget, $(nproc) threads"
echo "cpu: $(lscpu | sed -n 's/^Model name: *//p')"
for method in $methods; do
  extra=()
  [ "$method" = simhash ] && extra=(--k 4)
  for r in $(seq "$repeat"); do
    for mem in 64G "$budget"; do
      out="$work/$method-$mem"
      /usr/bin/time -f "%e %M" -o "$work/time" "$bin" dedup "$corpus" -o "$out" --method "$method" "${extra[@]}" \
        --memory "$mem" --on-error skip --show 0 2>/dev/null
      read -r wall rss_kb < "$work/time"
      echo "$method $mem $wall $rss_kb" >> "$work/runs"
      python3 - "$out/summary.json" "$method" "$mem" "$wall" "$rss_kb" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
sp = s["memory"]["spilled_bytes"]
print(f"  {sys.argv[2]:8} --memory {sys.argv[3]:>4}: {float(sys.argv[4]):8.1f} s, peak {int(sys.argv[5])/1024:8.0f} MB, "
      f"spilled {sp['records']/1e9:.2f} GB records + {sp['signatures']/1e9:.2f} GB signatures, "
      f"{s['documents']} documents, {s['duplicates_removed']} removed; stages "
      + ", ".join(f"{k} {v:.1f}" for k, v in s["seconds"]["stages"].items()))
PY
    done
    for f in kept.jsonl clusters.jsonl; do
      cmp -s "$work/$method-64G/$f" "$work/$method-$budget/$f" || { echo "  $method: $f DIFFERS"; exit 1; }
    done
    echo "  $method: kept.jsonl and clusters.jsonl identical"
  done
done
python3 - "$work/runs" "$budget" <<'PY'
import statistics, sys
runs = [l.split() for l in open(sys.argv[1])]
for method in dict.fromkeys(r[0] for r in runs):
    def med(mem, i):
        return statistics.median(float(r[i]) for r in runs if r[0] == method and r[1] == mem)
    wu, wb = med("64G", 2), med(sys.argv[2], 2)
    ru, rb = med("64G", 3) / 1024, med(sys.argv[2], 3) / 1024
    print(f"{method}: unbounded {wu:.1f} s / {ru:.0f} MB; --memory {sys.argv[2]} {wb:.1f} s / {rb:.0f} MB; "
          f"wall ratio {wb / wu:.2f}, memory ratio {rb / ru:.2f}")
PY
