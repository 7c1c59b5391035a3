#!/usr/bin/env bash
# Chinese against English, and our Chinese against its peers, side by side
# in one run (issue 38's targets), one thread:
#
#   bash bench/chinese.sh [MB]     (default 3: megabytes of each language for the peers)
#
# 1. The pipelines: examples/minhashbench (the `minhash` and `default`
#    presets, text -> signature or fingerprint) on the first 16 MB of
#    docs_zh.jsonl and of docs_en.jsonl, medians of 3 passes.
# 2. Keywords: examples/fpbench `keywords` (jieba TF-IDF top 20) against
#    Python's jieba.analyse.extract_tags(topK=20) on the same first MB
#    megabytes of docs_zh.jsonl (installs jieba in target/bench-jieba).
# 3. Start-up: the median wall time of 11 runs of `neardup fingerprint`
#    on one short document per preset (loading the dictionary included).
# Segmentation alone is bench/segment.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
mb=${1:-3}
data=../shared/data
[ -d "$data" ] || { echo "bench/chinese.sh needs ../shared/data" >&2; exit 2; }
. bench/venv.sh
bench_venv bench-jieba "jieba" jieba
cargo build --release --quiet -p neardup --example minhashbench --example fpbench
cargo build --release --quiet -p neardup-cli
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), one thread"
head -c 16000000 "$data/docs_zh.jsonl" | head -n -1 > "$tdir/bench-zh16.jsonl"
head -c 16000000 "$data/docs_en.jsonl" | head -n -1 > "$tdir/bench-en16.jsonl"
zh=$("$tdir/release/examples/minhashbench" "$tdir/bench-zh16.jsonl" 3)
en=$("$tdir/release/examples/minhashbench" "$tdir/bench-en16.jsonl" 3)
kw=$("$tdir/release/examples/fpbench" keywords "$data/docs_zh.jsonl" 1 5 "$mb")
py=$("$venv/bin/python" - "$data/docs_zh.jsonl" "$mb" <<'PY'
import json, statistics, sys, time
path, mb = sys.argv[1], float(sys.argv[2])
texts, total = [], 0
for line in open(path, encoding='utf-8'):
    t = json.loads(line)['text']
    n = len(t.encode('utf-8'))
    if total + n > mb * (1 << 20):
        break
    texts.append(t)
    total += n
import jieba, jieba.analyse
jieba.setLogLevel(60)
t0 = time.perf_counter()
jieba.initialize()
jieba.analyse.extract_tags('预热', topK=20, withWeight=True)
load = time.perf_counter() - t0
times = []
for _ in range(2):
    t0 = time.perf_counter()
    for t in texts:
        jieba.analyse.extract_tags(t, topK=20, withWeight=True)
    times.append(time.perf_counter() - t0)
print(json.dumps({'docs': len(texts), 'bytes': total, 'mb_per_s': total / 1e6 / statistics.median(times), 'load_s': load}))
PY
)
echo '{"id":"a","text":"近似重复检测：找出几乎相同的文本。Near-duplicate detection."}' > "$tdir/bench-one.jsonl"
startup() {
  python3 - "$tdir/release/neardup" "$1" "$tdir/bench-one.jsonl" <<'PY'
import statistics, subprocess, sys, time
times = []
for _ in range(11):
    t0 = time.perf_counter()
    subprocess.run([sys.argv[1], 'fingerprint', '--preset', sys.argv[2], sys.argv[3]], check=True, stdout=subprocess.DEVNULL)
    times.append(time.perf_counter() - t0)
print(f"{statistics.median(times) * 1e3:.1f}")
PY
}
python3 - "$zh" "$en" "$kw" "$py" <<'PY'
import json, sys
zh, en, kw, py = (json.loads(a) for a in sys.argv[1:5])
print(f"{'pipeline':34} {'Chinese MB/s':>13} {'English MB/s':>13} {'zh/en':>6}  target")
for name, key in (('minhash', 'minhash_mb_per_s'), ('default (SimHash)', 'simhash_default_mb_per_s')):
    print(f"{name:34} {zh[key]:13.1f} {en[key]:13.1f} {zh[key] / en[key]:6.2f}  zh >= 100 MB/s")
assert kw['docs'] == py['docs'], (kw, py)
print(f"keywords, {kw['docs']} docs ({kw['bytes'] / 1e6:.1f} MB): neardup {kw['mb_per_s']:.2f} MB/s, "
      f"jieba.analyse {py['mb_per_s']:.3f} MB/s, ratio {kw['mb_per_s'] / py['mb_per_s']:.0f}x (target >= 50x); "
      f"load {kw['load_s'] * 1e3:.0f} ms vs {py['load_s'] * 1e3:.0f} ms")
PY
for p in python-simhash default keywords yanyiwu; do
  echo "start-up, neardup fingerprint --preset $p, one document: $(startup $p) ms (median of 11; target <= 50)"
done
