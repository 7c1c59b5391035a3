#!/usr/bin/env bash
# Runs the differential tests against the real peers (installs them in a
# virtualenv under target/ the first time). Usage: tests/compat/run.sh NEARDUP_BINARY
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bin=${1:-$root/target/release/neardup}
venv="$root/target/compat-venv"
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import simhash, numpy' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'simhash==2.1.2' 'numpy<2'
fi
data="$root/../shared/data"
[ -d "$data" ] || data=""
"$venv/bin/python" "$here/diff_python_simhash.py" "$bin" $data
