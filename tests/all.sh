#!/usr/bin/env bash
# Every test: the Rust workspace (unit, integration, golden, property and
# doc tests, README examples included), the differential tests against the
# real peers (PyPI `simhash`, cppjieba), and the Python package's tests
# (every ```python block of the READMEs included), and the HTTP API against
# its own OpenAPI description (schemathesis).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each suite's start, with the time so far.
suite() { echo "== tests/all.sh: $* [$((SECONDS / 60))m$((SECONDS % 60))s]"; }
suite "the Rust workspace (cargo test)"
cargo test --workspace
# The kernels' unit tests run every SIMD level the CPU has; the golden and
# compatibility fingerprints run once more with no SIMD at all.
suite "golden and compatibility fingerprints at NEARDUP_SIMD=portable"
NEARDUP_SIMD=portable cargo test -q -p neardup --test tests -- golden compat
suite "differential tests against PyPI simhash and cppjieba (release build)"
cargo build --release -p neardup-cli
tests/compat/run.sh "${CARGO_TARGET_DIR:-target}/release/neardup"

# The Python package (bindings/python), installed the way users install
# it — `pip install ./bindings/python` (maturin as the PEP 517 backend) —
# into a fresh virtualenv with the test peers, then pytest
# (NEARDUP_REQUIRE_PEERS makes a missing peer fail instead of skip).
tdir="${CARGO_TARGET_DIR:-target}"
case "$tdir" in /*) ;; *) tdir="$PWD/$tdir" ;; esac
venv="$tdir/py-test-venv"
pip_q=(--quiet --disable-pip-version-check)
suite "the Python package (pip install ./bindings/python, pytest, Spark)"
python3 -m venv --clear "$venv"
"$venv/bin/pip" install "${pip_q[@]}" 'pytest>=7' 'simhash==2.1.2' 'numpy>=1.24' 'pyarrow>=14' 'mypy==2.4.1' \
  'pyspark==4.3.0' 'pandas>=2.2,<3' 'datasketch==2.0.0' 'playwright==1.57.0'
# datasketch's own tests for MinHash, LeanMinHash and MinHashLSH, run against
# neardup.datasketch: from the newest sdist that ships them (1.7.0), fetched
# from PyPI here and never committed.
ds_tests="$tdir/datasketch-tests"
if [ ! -f "$ds_tests/test/test_lsh.py" ]; then
  rm -rf "$ds_tests" && mkdir -p "$ds_tests"
  "$venv/bin/pip" download "${pip_q[@]}" --no-deps --no-binary :all: 'datasketch==1.7.0' -d "$ds_tests"
  tar -xzf "$ds_tests"/datasketch-1.7.0.tar.gz -C "$ds_tests" --strip-components=1 datasketch-1.7.0/test
fi
export NEARDUP_DATASKETCH_TESTS="$ds_tests/test"
CARGO_TARGET_DIR="$tdir" "$venv/bin/pip" install "${pip_q[@]}" ./bindings/python
# The Spark tests (local[2], Java 17) compare with this build of the CLI.
# pytest's temporary folders under target/, not /tmp/pytest-of-USER (which keeps
# the last three runs' and outlives the checkout).
NEARDUP_BIN="$tdir/release/neardup" NEARDUP_REQUIRE_PEERS=1 "$venv/bin/python" -m pytest -q -rs --durations=5 -p no:cacheprovider \
  --basetemp="$tdir/pytest-tmp" bindings/python/tests

# The page of `neardup serve` in headless Chromium (Debian's, driven by
# Playwright; required where NEARDUP_REQUIRE_CHROMIUM=1, as in CI), and
# the same spans from the page, POST /v1/report and `report --against`.
suite "the page in headless Chromium (Playwright)"
NEARDUP_BIN="$tdir/release/neardup" "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider \
  --basetemp="$tdir/pytest-tmp-page" tests/page

# The API contract: schemathesis (every check, about a minute) against a
# live `neardup serve`, with and without a token, SimHash and MinHash.
suite "the HTTP API against its OpenAPI document (schemathesis)"
st_venv="$tdir/api-test-venv"
python3 -m venv --clear "$st_venv"
"$st_venv/bin/pip" install "${pip_q[@]}" 'schemathesis==4.32.5'
tests/api/schemathesis.sh "$tdir/release/neardup" "$st_venv/bin/schemathesis"
suite "done"
