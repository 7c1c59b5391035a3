#!/usr/bin/env bash
# The API contract: schemathesis (every check) against a live `neardup
# serve`, three ways: a SimHash data directory without a token, the same
# with a token, and a MinHash data directory. Fails on any failure.
#
#   tests/api/schemathesis.sh NEARDUP_BIN SCHEMATHESIS_BIN [MAX_EXAMPLES]
#
# One exception is made here, the other in schemathesis.toml (beside this
# script), each because OpenAPI cannot say it:
# --exclude-checks ensure_resource_availability: POST /v1/documents creates
# a document only when it answers "inserted": true (mode "check", or a near
# duplicate under "insert-if-unique", creates none), so the inferred link
# POST -> DELETE /v1/documents/{id} would report a created resource as
# missing. use_after_free (DELETE, then GET is 404) stays on.
set -euo pipefail
bin="$1"
st="$2"
# Absolute: schemathesis runs from a scratch folder (see run below).
case "$st" in /*) ;; */*) st="$PWD/$st" ;; esac
examples="${3:-40}"
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
pid=""
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

# Starts the server with "$@" on a free port; sets $pid and $url.
start() {
  : > "$work/serve.log"
  "$bin" serve --listen 127.0.0.1:0 "$@" 2> "$work/serve.log" &
  pid=$!
  for _ in $(seq 1 100); do
    url="$(grep -o 'http://127.0.0.1:[0-9]*' "$work/serve.log" | head -1 || true)"
    [ -n "$url" ] && return 0
    sleep 0.1
  done
  echo "the server did not start:"; cat "$work/serve.log"; exit 1
}

stop() {
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
}

run() {
  local name="$1"; shift
  echo "== schemathesis: $name"
  # From the scratch folder: schemathesis keeps a cache (.schemathesis/)
  # in the folder it runs from, which must not land in the checkout.
  (cd "$work" && "$st" --config-file "$here/schemathesis.toml" run "$url/openapi.json" \
    --checks all --exclude-checks ensure_resource_availability \
    --max-examples "$examples" --seed 20261124 --no-color "$@") > "$work/st.log" 2>&1 || {
      cat "$work/st.log"; echo "schemathesis found failures ($name)"; exit 1; }
  grep -E "test cases generated|generated, |passed|Test cases:" -A1 "$work/st.log" | tail -2
  # What is skipped, and why (each said where it shows):
  # - test cases that put a NUL byte in a header value: HTTP cannot carry
  #   one (hyper refuses it before any handler runs), which schemathesis
  #   probes first ("Supports NULL byte in headers: ✘") and then skips
  #   such cases; only runs that send a header of their own (the bearer
  #   token) generate them.
  # - the Examples phase: the OpenAPI document gives no examples; the
  #   Coverage, Fuzzing and Stateful phases generate every request.
  if grep -q "generated, .* skipped" "$work/st.log"; then
    if grep -q "Supports NULL byte in headers: *✘" "$work/st.log"; then
      echo "   (skipped: cases with a NUL byte in a header value, which HTTP cannot carry)"
    else
      cat "$work/st.log"; echo "schemathesis skipped test cases for a reason this script does not know ($name)"; exit 1
    fi
  fi
  # POST /v1/fingerprint rejects most generated texts (400: no features),
  # which schemathesis warns of: whether a text has features (not only
  # punctuation or stop words) depends on the pipeline, and no JSON Schema
  # says it; the 400 itself is checked against the schema.
}

mkdir -p "$work/simhash" "$work/minhash"
# The SimHash data directory keeps passages and their texts (POST /v1/report).
"$bin" index build --passages "$here/../../testdata/docs_en.jsonl" -o "$work/simhash" 2> /dev/null
start --data "$work/simhash" --preset default
run "SimHash, no token"
stop

head -c 24 /dev/urandom | base64 > "$work/token"
start --data "$work/simhash" --token-file "$work/token"
run "SimHash, bearer token" -H "Authorization: Bearer $(cat "$work/token")"
stop

start --data "$work/minhash" --preset minhash
run "MinHash, no token"
stop
echo "schemathesis: no failures"
