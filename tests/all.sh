#!/usr/bin/env bash
# Every test: the Rust workspace (unit, integration, golden, property and
# doc tests, README examples included) and the differential test against
# the real PyPI `simhash` package (installed in a virtualenv under target/).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace
cargo build --release -p neardup-cli
tests/compat/run.sh "${CARGO_TARGET_DIR:-target}/release/neardup"
