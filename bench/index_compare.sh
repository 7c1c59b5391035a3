#!/usr/bin/env bash
# Exact index speed, this tree against an older build, side by side:
# 10^7 random fingerprints, k = 3 queries on one thread, then all pairs at
# 10^7, the two builds alternated for ROUNDS rounds.
#
#   OLD_INDEXBENCH=path/to/old/indexbench bash bench/index_compare.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
: "${OLD_INDEXBENCH:?set OLD_INDEXBENCH to examples/indexbench of the older build}"
cargo build --release --quiet --example indexbench -p neardup
new=target/release/examples/indexbench
data=target/indexbench
mkdir -p "$data"
[ -e "$data/e7" ] || "$new" gen 10000000 200000 3 "$data/e7"
for r in $(seq "$rounds"); do
  for b in old new; do
    bin=$new; [ "$b" = old ] && bin=$OLD_INDEXBENCH
    echo "round $r $b query: $("$bin" query "$data/e7" 3)"
    echo "round $r $b pairs: $("$bin" pairs 10000000 3)"
  done
done
