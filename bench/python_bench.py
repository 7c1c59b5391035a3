#!/usr/bin/env python3
"""neardup from Python against the peers, side by side in one run.

Run through bench/python.sh (it builds the wheel and the Rust index bench,
and installs the peers in target/py-bench-venv). Prints one JSON line per
measurement and a table of ratios; writes bench/out/python.jsonl.

1. Fingerprinting ../shared/data/docs_en.jsonl (1,245 English documents):
   neardup `fingerprint_batch` (python-simhash and default presets, all
   cores) against PyPI simhash 2.1.2 (`Simhash(text).value`, one core);
   gaoya's SimHashStringIndex (insert_document: fingerprint + index) and
   datasketch MinHash (128 permutations over words) for reference.
2. Index batch queries: the same 10^6 stored fingerprints and 10^5 queries
   (half within k of a stored one) answered by `neardup.Index.query_batch`
   from Python and by the Rust `indexbench query` (TableIndex batch).
"""

import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import neardup

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data", "docs_en.jsonl")
OUT = os.path.join(ROOT, "bench", "out", "python.jsonl")


def log(rec, out):
    print(json.dumps(rec), flush=True)
    out.write(json.dumps(rec) + "\n")


def best_of(n, f):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    if not os.path.exists(DATA):
        sys.exit(f"needs {DATA} (the shared data folder)")
    with open(DATA, encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f if line.strip()]
    mb = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    rows = {}
    with open(OUT, "w") as out:
        log({"bench": "data", "docs": len(texts), "mb": round(mb, 2), "cpus": os.cpu_count()}, out)
        for preset in ("python-simhash", "default"):
            fingerprinter = neardup.Fingerprinter(preset)
            fingerprinter.fingerprint_batch(texts[:50])  # warm-up (dictionaries)
            secs = best_of(5, lambda: fingerprinter.fingerprint_batch(texts))
            rows[f"neardup {preset}"] = mb / secs
            log({"bench": "fingerprint", "who": f"neardup fingerprint_batch {preset}", "mb_per_s": round(mb / secs, 2)}, out)
        # The same from a pyarrow array (read in place, no str objects).
        import pyarrow as pa

        arrow = pa.array(texts)
        fingerprinter = neardup.Fingerprinter("default")
        secs = best_of(5, lambda: fingerprinter.fingerprint_batch(arrow))
        rows["neardup default, pyarrow array"] = mb / secs
        log({"bench": "fingerprint", "who": "neardup fingerprint_batch default (pyarrow)", "mb_per_s": round(mb / secs, 2)}, out)

        import simhash

        subset = texts[:150]
        smb = sum(len(t.encode("utf-8")) for t in subset) / 1e6
        secs = best_of(3, lambda: [simhash.Simhash(t).value for t in subset])
        rows["PyPI simhash"] = smb / secs
        log({"bench": "fingerprint", "who": "PyPI simhash 2.1.2 (150 docs)", "mb_per_s": round(smb / secs, 3)}, out)
        same = sum(simhash.Simhash(t).value == v for t, v in
                   zip(subset, neardup.Fingerprinter("python-simhash").fingerprint_batch(subset)))
        log({"bench": "agreement", "who": "python-simhash vs PyPI", "equal": same, "of": len(subset)}, out)

        from gaoya.simhash import SimHashStringIndex

        def gaoya_run():
            index = SimHashStringIndex(hash_size=64, num_blocks=4, hamming_distance=3, analyzer="word", lowercase=True)
            for i, t in enumerate(texts):
                index.insert_document(i, t)

        secs = best_of(3, gaoya_run)
        rows["gaoya SimHash (insert_document)"] = mb / secs
        log({"bench": "fingerprint", "who": "gaoya SimHashStringIndex.insert_document", "mb_per_s": round(mb / secs, 2)}, out)

        from datasketch import MinHash

        def minhash_run():
            for t in subset:
                m = MinHash(num_perm=128)
                m.update_batch([w.encode("utf-8") for w in t.split()])

        secs = best_of(3, minhash_run)
        rows["datasketch MinHash (150 docs)"] = smb / secs
        log({"bench": "fingerprint", "who": "datasketch MinHash 128 (150 docs)", "mb_per_s": round(smb / secs, 3)}, out)

        # Index batch queries, Python against Rust on the same files.
        d = os.path.join(ROOT, "target", "py-index-bench")
        os.makedirs(d, exist_ok=True)
        ib = os.path.join(os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target")), "release", "examples", "indexbench")
        subprocess.run([ib, "gen", "1000000", "100000", "3", d], check=True, stdout=subprocess.DEVNULL)
        r = subprocess.run([ib, "query", d, "3"], check=True, capture_output=True, text=True)
        rust = json.loads([l for l in r.stdout.splitlines() if l.startswith("{")][-1])
        log({"bench": "index", "who": "Rust indexbench", **rust}, out)
        base = np.fromfile(os.path.join(d, "base.u64"), dtype="<u8").tolist()
        queries = np.fromfile(os.path.join(d, "queries.u64"), dtype="<u8").tolist()
        index = neardup.Index(k=3)
        t = time.perf_counter()
        index.insert_batch(range(len(base)), base)
        build = time.perf_counter() - t
        secs = best_of(3, lambda: index.query_batch(queries))
        qps = len(queries) / secs
        log({"bench": "index", "who": "Python Index.query_batch", "build_s": round(build, 2), "queries_per_s": round(qps)}, out)
        rows["index"] = (qps, rust)
    print()
    pypi = rows["PyPI simhash"]
    print(f"{'fingerprinting, English':44} {'MB/s':>9} {'vs PyPI':>9}")
    for name, v in rows.items():
        if name == "index":
            continue
        print(f"{name:44} {v:>9.2f} {v / pypi:>8.1f}x")
    qps, rust = rows["index"]
    rust_qps = next((v for k, v in rust.items() if "batch" in k and isinstance(v, (int, float))), None)
    print()
    print(f"index batch queries at 10^6, k = 3: Python {qps:,.0f}/s; Rust {rust}")
    if rust_qps:
        print(f"Python / Rust: {qps / rust_qps:.2f}")


if __name__ == "__main__":
    main()
