#!/usr/bin/env python3
"""MinHash signatures against the peers, one thread, side by side in one run
(issue 17's speed targets).

Run through `bash bench/minhash.sh` (it builds the wheel, installs it and the
peers in target/py-bench-venv, and sets RAYON_NUM_THREADS=1). Prints one
JSON line per measurement and a table of ratios; writes
bench/out/minhash.jsonl.

Data: the first 3 MB of ../shared/data/docs_en.jsonl. K = 128, word
3-shingles everywhere. Each figure is the median of 5 timed passes after a
warm-up, in MB of document text per second:

- text in: neardup `MinHasher.signature` per text (its pipeline: NFKC,
  lower case, UAX #29 words, punctuation dropped, word 3-shingles), and
  `signature_batch` (one thread); gaoya `MinHashStringIndex.insert_document`
  (words, lower case, 3-grams; signature plus its bands into the index).
- shingles in (made once in Python, not timed): neardup
  `signature_of_features_batch` and `signature_of_features`; rensa 0.5.0 `RMinHash.update`, `CMinHash.update`,
  `digest_matrix_from_token_byte_sets` (bytes) and
  `digest_matrix_from_token_sets`; FastSketchLSH 1.0.1
  `FastSimilaritySketch.batch` (one thread; str and bytes); datasketch
  `MinHash.update_batch` (on bytes).
- the Python shingling itself, for scale.
"""

import json
import os
import re
import subprocess
import sys
import time

import neardup

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from python_bench import best_of  # noqa: E402  (the median of timed passes)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data", "docs_en.jsonl")
OUT = os.path.join(ROOT, "bench", "out", "minhash.jsonl")
K = 128
WORD = re.compile(r"\w+")


def log(rec, out):
    print(json.dumps(rec, ensure_ascii=False), flush=True)
    out.write(json.dumps(rec, ensure_ascii=False) + "\n")


def median_of(n, f):
    """The median of n timed passes after an untimed warm-up."""
    f()
    return best_of(n, f)


def shingles(text):
    words = WORD.findall(text.lower())
    return [" ".join(words[i : i + 3]) for i in range(max(len(words) - 2, 1))] if words else []


def minhasher_3():
    """The `minhash` preset with word 3-shingles (the peers' setting)."""
    toml = neardup.MinHasher("minhash").config_toml()
    toml3 = re.sub(r"(\[tokenizer\]\s*type = \"shingles\"\s*n\s*=\s*)\d+", r"\g<1>3", toml)
    if toml3 == toml:
        sys.exit("could not set the shingle size in:\n" + toml)
    return neardup.MinHasher.from_toml(toml3)


def main():
    if not os.path.exists(DATA):
        sys.exit(f"needs {DATA} (the shared data folder)")
    texts, size = [], 0
    with open(DATA, encoding="utf-8") as f:
        for line in f:
            t = json.loads(line)["text"]
            texts.append(t)
            size += len(t.encode("utf-8"))
            if size >= 3_000_000:
                break
    mb = size / 1e6
    cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    model = next((l.split(":", 1)[1].strip() for l in cpu.splitlines() if l.startswith("Model name")), "?")
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    rows = {}
    with open(OUT, "w") as out:
        log({"bench": "data", "docs": len(texts), "mb": round(mb, 2), "cpu": model, "avx512": "avx512f" in cpu,
             "rayon_threads": os.environ.get("RAYON_NUM_THREADS")}, out)

        def row(name, secs, data_mb=mb):
            rows[name] = data_mb / secs
            log({"bench": "minhash", "who": name, "mb_per_s": round(data_mb / secs, 2)}, out)

        mh = minhasher_3()
        assert mh.permutations == K
        row("neardup signature (text in, per text)", median_of(5, lambda: [mh.signature(t) for t in texts]))
        row("neardup signature_batch (text in, 1 thread)", median_of(5, lambda: mh.signature_batch(texts)))

        from gaoya.minhash import MinHashStringIndex

        def gaoya_run():
            index = MinHashStringIndex(32, 0.5, 25, 5, None, "word", True, (3, 3))
            for i, t in enumerate(texts):
                index.insert_document(i, t)

        row("gaoya MinHashStringIndex.insert_document (text in)", median_of(5, gaoya_run))

        secs = median_of(3, lambda: [shingles(t) for t in texts])
        row("Python shingling alone (regex words, 3-grams)", secs)
        sh = [shingles(t) for t in texts]
        sh_bytes = [[s.encode("utf-8") for s in doc] for doc in sh]

        row("neardup signature_of_features_batch (shingles in, 1 thread)",
            median_of(5, lambda: mh.signature_of_features_batch(sh)))
        row("neardup signature_of_features (shingles in, per text)",
            median_of(5, lambda: [mh.signature_of_features(s) for s in sh if s]))

        import rensa

        def rensa_run(cls):
            for doc in sh:
                m = cls(num_perm=K, seed=42)
                m.update(doc)
                m.digest()

        row("rensa RMinHash.update (shingles in)", median_of(5, lambda: rensa_run(rensa.RMinHash)))
        row("rensa CMinHash.update (shingles in)", median_of(5, lambda: rensa_run(rensa.CMinHash)))
        row("rensa digest_matrix_from_token_byte_sets (bytes in)",
            median_of(5, lambda: rensa.RMinHash.digest_matrix_from_token_byte_sets(sh_bytes, num_perm=K, seed=42)))
        row("rensa digest_matrix_from_token_sets (shingles in)",
            median_of(5, lambda: rensa.RMinHash.digest_matrix_from_token_sets(sh, num_perm=K, seed=42)))

        import FastSketchLSH

        sketch = FastSketchLSH.FastSimilaritySketch(K, 42)
        row("FastSketchLSH FastSimilaritySketch.batch (shingles in, 1 thread)",
            median_of(5, lambda: sketch.batch(sh, num_threads=1)))
        row("FastSketchLSH FastSimilaritySketch.batch (bytes in, 1 thread)",
            median_of(5, lambda: sketch.batch(sh_bytes, num_threads=1)))

        from datasketch import MinHash

        subset = sh_bytes[: max(1, len(sh_bytes) // 10)]
        sub_mb = sum(len(t.encode("utf-8")) for t in texts[: len(subset)]) / 1e6

        def datasketch_run():
            for doc in subset:
                m = MinHash(num_perm=K)
                m.update_batch(doc)

        row("datasketch MinHash.update_batch (shingles in, a tenth)", median_of(3, datasketch_run), sub_mb)

        # Agreement: our signatures from our shingles equal those from the text.
        same = sum(a == b for a, b in zip(mh.signature_batch(texts[:50]),
                                          [mh.signature_of_features(mh.features(t)) for t in texts[:50]]))
        log({"bench": "check", "text_vs_own_features_equal": f"{same}/50"}, out)

    ours_text = rows["neardup signature_batch (text in, 1 thread)"]
    ours_sh = rows["neardup signature_of_features_batch (shingles in, 1 thread)"]
    print()
    print(f"{'one thread, K = 128, word 3-shingles, ' + format(mb, '.1f') + ' MB English':64} {'MB/s':>9}")
    for name, v in rows.items():
        print(f"{name:64} {v:>9.1f}")
    print()
    checks = [
        ("text in: neardup >= 150 MB/s", ours_text, 150.0),
        ("text in: neardup / gaoya >= 4", ours_text / rows["gaoya MinHashStringIndex.insert_document (text in)"], 4.0),
        ("text in: neardup / datasketch (shingles in) >= 50",
         ours_text / rows["datasketch MinHash.update_batch (shingles in, a tenth)"], 50.0),
        ("shingles in: neardup / rensa RMinHash >= 1", ours_sh / rows["rensa RMinHash.update (shingles in)"], 1.0),
        ("shingles in: neardup / the fastest peer >= 1.5 (issue 54)", ours_sh / max(
            v for k, v in rows.items() if k.startswith(("rensa", "FastSketchLSH"))), 1.5),
    ]
    for name, got, target in checks:
        print(f"{name:64} {got:>9.2f}  {'met' if got >= target else 'MISSED'}")


if __name__ == "__main__":
    main()
