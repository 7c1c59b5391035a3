#!/usr/bin/env bash
# Runs every fuzz target for SECONDS (default 8) from its kept corpus
# (fuzz/corpora/TARGET.tar.gz, unpacked into a scratch directory; see
# corpora.sh), failing on any crash. CI's smoke run, built with --dev
# (debug assertions, opt-level 1: cheaper to build than -O; slower runs do
# not matter for a smoke run). On 2 cores of an EPYC Zen 3 the whole smoke
# took 6 min 52 s on 2026-11-25, 5 min 52 s of it building the 171 crates
# with ASAN. A real run:
#   bash fuzz/corpora.sh unpack
#   cd fuzz && cargo +nightly fuzz run -O TARGET -- -max_total_time=600 -max_len=16384
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-8}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cargo +nightly fuzz build --dev
for target in $(cargo +nightly fuzz list); do
  mkdir -p "$scratch/$target"
  [ -f "corpora/$target.tar.gz" ] && tar -C "$scratch" -xzf "corpora/$target.tar.gz"
  echo "-- $target (${secs} s)"
  rc=0
  cargo +nightly fuzz run --dev "$target" "$scratch/$target" -- \
    -max_total_time="$secs" -rss_limit_mb=4096 -max_len=16384 -print_final_stats=1 > "$scratch/$target.log" 2>&1 || rc=$?
  grep -E "^stat::number_of_executed_units|^Done" "$scratch/$target.log" || true
  if [ "$rc" -ne 0 ]; then
    tail -60 "$scratch/$target.log"
    echo "fuzz target $target failed (exit $rc)"
    exit 1
  fi
done
