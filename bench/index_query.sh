#!/usr/bin/env bash
# `neardup index query --fingerprints` at scale, through the CLI: an index
# file of N random 64-bit fingerprints (index build --fingerprints), then Q
# queries (half within 3 bits of a stored fingerprint) answered at k = 3,
# against one query (the cost of opening the index); prints queries per
# second with the open cost taken off (median of REPEAT runs each).
#
# Usage: [BLOCKS=M] bench/index_query.sh [N=10000000] [Q=1000000] [REPEAT=3]
#   BLOCKS: the layout's blocks (index build --blocks), else its own choice.
set -euo pipefail
n=${1:-10000000}
q=${2:-1000000}
repeat=${3:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
cargo build --release -q -p neardup-cli --manifest-path "$here/Cargo.toml"
bin="$here/target/release/neardup"
work=$(mktemp -d "${TMPDIR:-/tmp}/index-query.XXXXXX")
trap 'rm -rf "$work"' EXIT
python3 - "$n" "$q" "$work" <<'PY'
import random, sys
n, q, work = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = random.Random(35)
base = [rng.getrandbits(64) for _ in range(n)]
with open(f"{work}/base.tsv", "w") as f:
    f.writelines(f"d{i}\t{w:016x}\n" for i, w in enumerate(base))
with open(f"{work}/queries.tsv", "w") as f:
    for i in range(q):
        w = base[rng.randrange(n)]
        if i % 2 == 0:
            for _ in range(rng.randrange(4)):
                w ^= 1 << rng.randrange(64)
        else:
            w = rng.getrandbits(64)
        f.write(f"q{i}\t{w:016x}\n")
    f.close()
with open(f"{work}/one.tsv", "w") as f:
    f.write(f"q0\t{base[0]:016x}\n")
PY
"$bin" index build --fingerprints "$work/base.tsv" -o "$work/idx.ndx" ${BLOCKS:+--blocks $BLOCKS} 2>&1 | tail -1
echo "cpu: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) threads; N=$n, Q=$q"
for r in $(seq "$repeat"); do
  /usr/bin/time -f "%e" -o "$work/t1" "$bin" index query "$work/idx.ndx" --fingerprints "$work/one.tsv" --k 3 -o "$work/one.jsonl"
  /usr/bin/time -f "%e %U %S" -o "$work/tq" "$bin" index query "$work/idx.ndx" --fingerprints "$work/queries.tsv" --k 3 -o "$work/q.jsonl"
  echo "$(cat "$work/t1") $(cat "$work/tq")" >> "$work/runs"
done
python3 - "$work/runs" "$q" "$work/q.jsonl" <<'PY'
import json, statistics, sys
runs = [list(map(float, l.split())) for l in open(sys.argv[1])]
q = int(sys.argv[2])
one = statistics.median(r[0] for r in runs)
wall = statistics.median(r[1] for r in runs)
cpu = statistics.median(r[2] + r[3] for r in runs)
matched = sum(1 for l in open(sys.argv[3]) if json.loads(l)["matches"])
print(f"open (one query): {one:.2f} s; {q} queries: {wall:.2f} s wall, {cpu:.2f} s CPU; "
      f"{q / max(wall - one, 1e-9):,.0f} queries/s without the open; {matched} queries matched")
PY
