#!/usr/bin/env bash
# The first build a new user waits for: a cold release build of the CLI,
# then the Python extension on top, per git revision, side by side.
# Prints seconds, binary sizes and target/ size for each.
#   bash bench/first_build.sh f4a9c55 HEAD      # before and after
#   FRESH_CARGO_HOME=1 bash bench/first_build.sh HEAD   # crates downloaded too
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'git -C "$root" worktree prune; rm -rf "$work"' EXIT
lscpu | grep -m1 "Model name" || true
echo "cores: $(nproc)"
for rev in "${@:-HEAD}"; do
  src="$work/src-$rev" target="$work/target-$rev"
  git -C "$root" worktree add -q --detach "$src" "$rev"
  home=()
  [ -n "${FRESH_CARGO_HOME:-}" ] && home=(env CARGO_HOME="$work/cargo-home-$rev")
  start=$(date +%s.%N)
  (cd "$src" && "${home[@]}" env CARGO_TARGET_DIR="$target" cargo build -q --release -p neardup-cli)
  cli=$(echo "$(date +%s.%N) - $start" | bc)
  start=$(date +%s.%N)
  (cd "$src" && "${home[@]}" env CARGO_TARGET_DIR="$target" cargo build -q --release -p neardup-py)
  py=$(echo "$(date +%s.%N) - $start" | bc)
  printf '%s: CLI cold %.0f s, binary %.1f MB; Python extension then %.0f s, %.1f MB; target/ %.0f MB\n' \
    "$rev" "$cli" "$(echo "$(stat -c %s "$target/release/neardup") / 1000000" | bc -l)" \
    "$py" "$(echo "$(stat -c %s "$target/release/lib_neardup.so") / 1000000" | bc -l)" \
    "$(echo "$(du -sb "$target" | cut -f1) / 1000000" | bc -l)"
  git -C "$root" worktree remove --force "$src"
done
