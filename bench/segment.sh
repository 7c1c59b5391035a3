#!/usr/bin/env bash
# Chinese segmentation: our segmenter (crates/jieba) against jieba-rs 0.11,
# one thread, side by side in one run, on the first MB megabytes (16 by
# default) of ../shared/data/docs_zh.jsonl, with and without the HMM. The
# example first checks that both give the same words on every text, then
# prints MB/s, the ratio (medians of 5 runs each) and the load times.
#
#   bash bench/segment.sh [MB]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet -p neardup-jieba --example segbench
lscpu | grep -m1 'Model name'
"${CARGO_TARGET_DIR:-target}/release/examples/segbench" ../shared/data/docs_zh.jsonl "${1:-16}"
