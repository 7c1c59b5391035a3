#!/usr/bin/env bash
# Index speed, neardup against its peers, side by side in one run.
#
#   bash bench/index.sh [quick|full]
#
# quick (default): 10^5 (vs PyPI simhash's SimhashIndex), 10^7 (vs FAISS
#   IndexBinaryMultiHash and per-k figures for k = 1..8), all-pairs at 10^7.
# full: adds 10^8 queries and all-pairs at 10^8 (needs ~12 GB RAM, ~10 min).
#
# Installs faiss-cpu, numpy<2 and simhash 2.1.2 in target/bench-venv the
# first time. Prints one JSON line per measurement and a table of ratios;
# writes bench/out/index.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-quick}
cargo build --release --quiet --example indexbench -p neardup
. bench/venv.sh
bench_venv bench-venv "simhash, numpy, faiss" 'simhash==2.1.2' 'numpy<2' faiss-cpu
B=target/release/examples/indexbench
py="$venv/bin/python bench/index_peers.py"
data=target/indexbench
mkdir -p bench/out
out=bench/out/index.jsonl
: > "$out"
run() { echo "+ $*" >&2; "$@" | tee -a "$out"; }

# 10^5 against PyPI simhash (one thread each; 2,000 queries for the peer).
$B gen 100000 20000 3 $data/e5
run $B query $data/e5 3 2000
run $py simhash $data/e5 3 2000
# 10^7 against FAISS (one thread each), then every k up to 8.
$B gen 10000000 200000 3 $data/e7
run $B query $data/e7 3
run $py faiss $data/e7 3 20000
for k in 1 2 4 5 6 7 8; do
  $B gen 10000000 20000 $k $data/e7k$k
  run $B query $data/e7k$k $k
  run $B pairs 10000000 $k
done
run $B pairs 10000000 3
if [ "$mode" = full ]; then
  $B gen 100000000 200000 3 $data/e8
  run $B query $data/e8 3
  run $B pairs 100000000 3
fi
rm -rf $data
python3 - "$out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def find(**kw):
    return [r for r in rows if all(r.get(k) == v for k, v in kw.items())]
ours5 = find(bench="query", n=100000, k=3)[0]
sim = [r for r in rows if r.get("peer") == "simhash.SimhashIndex"][0]
print(f"\n10^5, k=3: neardup {ours5['qps_1thread']:,.0f} q/s vs SimhashIndex {sim['qps_1thread']:,.0f} q/s: "
      f"{ours5['qps_1thread'] / sim['qps_1thread']:.0f}x")
ours7 = find(bench="query", n=10000000, k=3)[0]
fa = [r for r in rows if r.get("peer", "").startswith("faiss")][0]
print(f"10^7, k=3: neardup {ours7['qps_1thread']:,.0f} q/s (p99 {ours7['p99_us']:.1f} us) vs FAISS "
      f"{fa['qps_1thread']:,.0f} q/s: {ours7['qps_1thread'] / fa['qps_1thread']:.1f}x")
print("\nk  layout                                   q/s (1 thread)  p99 us  bytes/fp  all-pairs 10^7 s")
for k in range(1, 9):
    q = find(bench="query", n=10000000, k=k)
    p = find(bench="pairs", n=10000000, k=k)
    if q and p:
        q, p = q[0], p[0]
        print(f"{k}  {q['layout'][:40]:40} {q['qps_1thread']:>14,.0f} {q['p99_us']:>7.1f} {q['bytes_per_fp']:>9.1f} {p['seconds']:>17.2f}")
for r in find(bench="query", n=100000000):
    print(f"\n10^8, k=3: {r['qps_1thread']:,.0f} q/s per core, p99 {r['p99_us']:.1f} us, {r['bytes_per_fp']:.1f} B/fp ({r['index_bytes']/2**30:.2f} GiB)")
for r in find(bench="pairs", n=100000000):
    print(f"all-pairs 10^8, k=3: {r['seconds']:.1f} s, peak RSS {r['peak_rss_bytes']/2**30:.2f} GiB")
PY
