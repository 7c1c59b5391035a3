#!/usr/bin/env bash
# `neardup serve` before and after a change, in one run: the same
# bench/serve.py measurements with an earlier build (OLD_BIN, e.g. built
# from the last release: git worktree add /tmp/old REV && cargo build
# --release -p neardup-cli there) and with this tree's build — this build
# both with `-k 3` (the old default) and with its own default (the
# pipeline's radius rule, measured with short and long documents).
#
#   OLD_BIN=/path/to/old/neardup bash bench/serve_compare.sh [serve.py flags]
#
# Writes bench/out/serve-{old,k3,rule}.jsonl and prints their tables.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${OLD_BIN:?set OLD_BIN to the neardup binary of the earlier build}"
bash bench/serve.sh --help >/dev/null   # installs wrk, builds the release binary
for run in old k3 rule; do
  case $run in
    old) flags=(--bin "$OLD_BIN") ;;
    k3) flags=(--serve-arg=-k --serve-arg=3) ;;
    rule) flags=(--rule) ;;
  esac
  echo "== $run"
  python3 bench/serve.py --startup-docs 0 --out "bench/out/serve-$run.jsonl" "${flags[@]}" "$@"
done
