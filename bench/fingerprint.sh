#!/usr/bin/env bash
# Fingerprinting speed, neardup against its peers, side by side in one run.
#
#   bash bench/fingerprint.sh [MAX_MB]     (default: the whole 16 MB of each language)
#
# Needs ../shared/data (the sample corpus). Installs the peers (PyPI simhash
# 2.1.2 with numpy<2, jieba) in target/bench-venv the first time. Prints the
# CPU, its SIMD flags and the SIMD level neardup chose, then a table of
# medians and ratios (python-simhash at every SIMD level the CPU has, forced
# with NEARDUP_SIMD, and whole processes against PyPI simhash), and writes
# bench/out/fingerprint.jsonl.
set -euo pipefail
cd "$(dirname "$0")/.."
max_mb=${1:-16}
data=../shared/data
[ -d "$data" ] || { echo "bench/fingerprint.sh needs ../shared/data" >&2; exit 2; }
en=$data/docs_en.jsonl
zh=$data/docs_zh.jsonl

cargo build --release --quiet --example fpbench -p neardup
cargo build --release --quiet -p neardup-cli
. bench/venv.sh
bench_venv bench-venv "simhash, jieba, numpy" 'simhash==2.1.2' 'numpy<2' jieba
mkdir -p bench/out
out=bench/out/fingerprint.jsonl
: > "$out"
fp=target/release/examples/fpbench
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores"
echo "SIMD flags: $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512bw|bmi2|popcnt)$' | sort | tr '\n' ' ')"
levels=()
for level in avx512 avx2 portable; do
  if ! NEARDUP_SIMD=$level target/release/neardup config show python-simhash 2>&1 >/dev/null | grep -q 'does not support'; then
    levels+=("$level")
  fi
done
echo "SIMD levels this CPU runs: ${levels[*]} (auto picks ${levels[0]})"
# neardup, on the same documents as the peers (MAX_MB), then on the whole corpus.
$fp python-simhash "$en" 1 5 "$max_mb" >> "$out"
for level in "${levels[@]}"; do
  NEARDUP_SIMD=$level $fp python-simhash "$en" 1 5 "$max_mb" | sed 's/^{/{"forced":true,/' >> "$out"
done
# Whole processes: the CLI at every level against PyPI simhash, 3 MB.
"$venv/bin/python" bench/process_ratio.py target/release/neardup "$venv/bin/python" "$en" 3 5 >> "$out"
$fp keywords "$zh" 1 5 "$max_mb" >> "$out"
"$venv/bin/python" bench/peers.py "$en" "$zh" "$max_mb" >> "$out"
$fp default "$en" 1 5 >> "$out"
$fp default "$en" scaling 9 >> "$out"
$fp default "$zh" 1 5 >> "$out"
$fp yanyiwu "$zh" 1 5 >> "$out"
$fp python-simhash "$en" 1 5 >> "$out"
# The machine's own two-core scaling, for reference: sha256sum of 400 MB,
# one process against two at once (shared hosts often give less than 2x).
head -c 400000000 /dev/zero > target/bench-zero.bin
python3 - "$out" <<'PY'
import json, subprocess, sys, time
def run(n):
    t0 = time.perf_counter()
    ps = [subprocess.Popen(['sha256sum', 'target/bench-zero.bin'], stdout=subprocess.DEVNULL) for _ in range(n)]
    for p in ps:
        p.wait()
    return n / (time.perf_counter() - t0)
ratios = []
for _ in range(3):
    one, two = run(1), run(2)
    ratios.append(two / one)
ratios.sort()
with open(sys.argv[1], 'a') as f:
    f.write(json.dumps({'machine_scaling': 'sha256sum 2 processes vs 1', 'ratio': ratios[1]}) + '\n')
PY
rm -f target/bench-zero.bin
# Start-up: a whole process fingerprinting one short Chinese text (loads the
# jieba dictionary), median of 11.
python3 - "$out" <<'PY'
import json, statistics, subprocess, sys, time
times = []
for _ in range(11):
    t0 = time.perf_counter()
    subprocess.run(['target/release/neardup', 'fingerprint', '-'], input='中文文本去重，近似重复检测'.encode(),
                   stdout=subprocess.DEVNULL, check=True)
    times.append(time.perf_counter() - t0)
with open(sys.argv[1], 'a') as f:
    f.write(json.dumps({'startup': 'neardup fingerprint (jieba dictionary)', 'median_s': statistics.median(times),
                        'min_s': min(times)}) + '\n')
PY
python3 - "$out" "$max_mb" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
def ours(preset, threads=1, sub=True):
    c = [r for r in rows if r.get('preset') == preset and r.get('threads') == threads and not r.get('forced')]
    return c[0] if sub else c[-1]
peer = {r['peer']: r for r in rows if 'peer' in r}
startup = [r for r in rows if 'startup' in r][0]
machine = [r for r in rows if 'machine_scaling' in r][0]
py, jb = peer['pypi-simhash'], peer['jieba.analyse.extract_tags']
ps, kw = ours('python-simhash'), ours('keywords')
d1 = ours('default', 1)
sc = [r for r in rows if 'scaling' in r][0]
print(f"fingerprinting, one thread unless noted; medians of 5 passes ({sys.argv[2]} MB per language vs peers)")
print(f"{'what':48} {'MB/s':>9} {'ratio':>9}  target")
print(f"{'PyPI simhash 2.1.2, English':48} {py['mb_per_s']:9.2f}")
print(f"{'neardup python-simhash, same documents':48} {ps['mb_per_s']:9.2f} {ps['mb_per_s']/py['mb_per_s']:8.0f}x  >= 100x ({ps['simd']})")
forced = [r for r in rows if r.get('forced')]
for r in forced:
    print(f"{'  NEARDUP_SIMD=' + r['simd']:48} {r['mb_per_s']:9.2f} {r['mb_per_s']/py['mb_per_s']:8.0f}x")
if forced:
    worst = min(forced, key=lambda r: r['mb_per_s'])
    vec = [r for r in forced if r['simd'] == 'avx2']
    if vec and worst['simd'] == 'portable':
        print(f"{'  portable vs avx2 (slowdown)':48} {'':9} {vec[0]['mb_per_s']/worst['mb_per_s']:8.2f}x  <= 3x")
    if len({r['check'] for r in forced}) != 1:
        sys.exit('fingerprints differ between SIMD levels')
for r in (r for r in rows if 'process' in r):
    label = 'whole process: ' + r['process'] + (' -j 1' if r['process'].startswith('neardup') else '')
    print(f"{label:48} {r['mb_per_s']:9.2f} {r['ratio_vs_pypi']:8.0f}x" + ("  >= 100x" if r['process'] != 'pypi simhash' else ''))
print(f"{'jieba.analyse.extract_tags(topK=20), Chinese':48} {jb['mb_per_s']:9.2f}")
print(f"{'neardup keywords, same documents':48} {kw['mb_per_s']:9.2f} {kw['mb_per_s']/jb['mb_per_s']:8.0f}x  >= 20x")
print(f"{'neardup default, English (16 MB)':48} {d1['mb_per_s']:9.2f} {'':9}  >= 100 MB/s")
print(f"{'neardup default, English, 2 threads':48} {sc['mb_per_s_2']:9.2f} {sc['scaling']:8.2f}x  >= 1.8x (vs 1 thread, alternating passes)")
print(f"{'(machine: sha256sum, 2 processes vs 1)':48} {'':9} {machine['ratio']:8.2f}x")
print(f"{'neardup default, Chinese (16 MB)':48} {ours('default', 1, False)['mb_per_s']:9.2f}")
print(f"{'neardup yanyiwu, Chinese (16 MB)':48} {ours('yanyiwu', 1, False)['mb_per_s']:9.2f}")
print(f"{'neardup python-simhash, English (16 MB)':48} {ours('python-simhash', 1, False)['mb_per_s']:9.2f}")
print(f"{'start-up incl. jieba dictionary (process)':48} {startup['median_s']*1000:8.0f} ms {'':8}  <= 300 ms")
PY
