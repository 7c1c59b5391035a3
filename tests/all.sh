#!/usr/bin/env bash
# Every test: the Rust workspace (unit, integration, golden, property and
# doc tests, README examples included) and the differential test against
# the real PyPI `simhash` package (installed in a virtualenv under target/),
# and the Python package's tests.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace
cargo build --release -p neardup-cli
tests/compat/run.sh "${CARGO_TARGET_DIR:-target}/release/neardup"

# The Python package (bindings/python): build the abi3 wheel with maturin
# into a virtualenv under target/, then pytest, the PyPI simhash
# differential included (NEARDUP_REQUIRE_PEERS makes a missing peer fail).
tdir="${CARGO_TARGET_DIR:-target}"
case "$tdir" in /*) ;; *) tdir="$PWD/$tdir" ;; esac
venv="$tdir/py-test-venv"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import maturin, pytest, simhash, numpy, pyarrow' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'maturin>=1.7,<2' 'pytest>=7' 'simhash==2.1.2' 'numpy<2' 'pyarrow<17'
fi
rm -rf "$tdir/wheels"
(cd bindings/python && "$venv/bin/maturin" build --release --quiet -o "$tdir/wheels")
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$tdir"/wheels/neardup-*.whl
NEARDUP_REQUIRE_PEERS=1 "$venv/bin/python" -m pytest -q bindings/python/tests
