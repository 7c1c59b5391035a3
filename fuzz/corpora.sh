#!/usr/bin/env bash
# The kept fuzz corpora: fuzz/corpora/TARGET.tar.gz (minimized; 1.5 MB in
# all instead of ~14,000 files in git). fuzz/corpus/ is the working copy
# cargo-fuzz reads and grows (git ignores it).
#   bash fuzz/corpora.sh unpack   # corpora/*.tar.gz -> corpus/TARGET (merged)
#   bash fuzz/corpora.sh pack     # cargo fuzz cmin each target, then corpus/ -> corpora/
set -euo pipefail
cd "$(dirname "$0")"
case "${1:-}" in
  unpack)
    mkdir -p corpus
    for f in corpora/*.tar.gz; do tar -C corpus -xzf "$f"; done
    ;;
  pack)
    mkdir -p corpora
    for target in $(cargo +nightly fuzz list); do
      [ -d "corpus/$target" ] || continue
      cargo +nightly fuzz cmin -O "$target" -- -max_len=16384
      tar -C corpus -czf "corpora/$target.tar.gz" --sort=name --mtime=2026-01-01 \
        --owner=0 --group=0 --numeric-owner "$target"
    done
    ;;
  *) echo "usage: $0 unpack|pack"; exit 2 ;;
esac
