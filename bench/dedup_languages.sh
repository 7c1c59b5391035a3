#!/usr/bin/env bash
# `neardup dedup` on the same volume of Chinese and of English (issue 53's
# target: Chinese within 1.5x the time of English), side by side, on every
# core the machine has:
#
#   bash bench/dedup_languages.sh [MB] [RUNS]     (default 1024 MB, 3 runs)
#
# The corpora are ../shared/data/docs_zh.jsonl and docs_en.jsonl repeated
# to MB megabytes of text each (bench/repeat_corpus.py: every copy has its
# own id and its copy number in front of its text, so copies are near
# duplicates, never exact ones). Prints the median wall time of each, its
# stages as summary.json gives them, the documents and the ratio.
# NEARDUP_BIN=path runs another build (an older commit's, for an A/B).
set -euo pipefail
cd "$(dirname "$0")/.."
mb=${1:-1024}
runs=${2:-3}
data=../shared/data
[ -d "$data" ] || { echo "bench/dedup_languages.sh needs ../shared/data" >&2; exit 2; }
. bench/venv.sh
cargo build --release --quiet -p neardup-cli
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores, NEARDUP_SIMD=${NEARDUP_SIMD:-auto}"
work="$tdir/bench-languages"
mkdir -p "$work"
for l in zh en; do
  [ -s "$work/$l-$mb.jsonl" ] || python3 bench/repeat_corpus.py "$data/docs_$l.jsonl" "$mb" "$work/$l-$mb.jsonl" >/dev/null
done
python3 - "${NEARDUP_BIN:-$tdir/release/neardup}" "$work" "$mb" "$runs" <<'PY'
import json, shutil, statistics, subprocess, sys, time
neardup, work, mb, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
result = {}
for _ in range(runs):
    for lang in ("zh", "en"):  # alternating, so both see the same machine
        out = f"{work}/out-{lang}"
        shutil.rmtree(out, ignore_errors=True)
        t0 = time.perf_counter()
        subprocess.run([neardup, "dedup", f"{work}/{lang}-{mb}.jsonl", "-o", out], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        summary = json.load(open(f"{out}/summary.json"))
        result.setdefault(lang, []).append((wall, summary))
for lang, rs in result.items():
    wall = statistics.median(w for w, _ in rs)
    s = rs[0][1]
    stages = ", ".join(f"{k} {statistics.median(r[1]['seconds']['stages'][k] for r in rs):.2f}"
                       for k in s["seconds"]["stages"])
    print(f"{lang}: {s['documents']} documents, {s['input_bytes'] / 1e6:.0f} MB: {wall:.2f} s "
          f"(median of {runs}; {s['input_bytes'] / 1e6 / wall:.0f} MB/s); stages: {stages}")
zh = statistics.median(w for w, _ in result["zh"])
en = statistics.median(w for w, _ in result["en"])
print(f"Chinese / English time: {zh / en:.2f}x (target <= 1.5x)")
PY
