#!/usr/bin/env python3
"""Precision, recall and F1 of datasketch's MinHashLSH on labelled pairs.

For each pair, text_a goes into a fresh MinHashLSH and text_b is queried:
the pair is found when text_a comes back (datasketch reports candidates; it
does not check the estimate). Shingles are the token 3-shingles of the
labels' own reference (../shared/data/textsim.py: words for English, CJK
characters for Chinese), unless --shingle says otherwise.

Usage (the bench venv has datasketch):
    python bench/quality_peers.py ../shared/data/pairs_en.jsonl [--perm 128] [--threshold 0.5] [--shingle 3]

Prints one line per file: P, R, F1 and the counts; --json adds them as JSON.
"""
import argparse
import json
import os
import sys

from datasketch import MinHash, MinHashLSH


def load_textsim(pairs_path):
    here = os.path.dirname(os.path.abspath(pairs_path))
    sys.path.insert(0, here)
    import textsim  # noqa: E402  (../shared/data/textsim.py)

    return textsim


def signature(textsim, text, perm, n):
    toks = textsim.tokens(text)
    sh = textsim.shingles(toks, n)
    m = MinHash(num_perm=perm)
    m.update_batch([s.encode("utf-8") for s in sh])
    return m


def evaluate(path, perm, threshold, n):
    textsim = load_textsim(path)
    tp = fp = fn = tn = 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            p = json.loads(line)
            if p.get("label") not in (0, 1):
                continue
            lsh = MinHashLSH(threshold=threshold, num_perm=perm)
            lsh.insert("a", signature(textsim, p["text_a"], perm, n))
            found = "a" in lsh.query(signature(textsim, p["text_b"], perm, n))
            dup = p["label"] == 1
            tp += found and dup
            fp += found and not dup
            fn += (not found) and dup
            tn += (not found) and not dup
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0
    return {"file": path, "peer": "datasketch MinHashLSH", "permutations": perm, "threshold": threshold,
            "shingle": n, "precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4),
            "tp": tp, "fp": fp, "fn": fn, "tn": tn}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pairs", nargs="+")
    ap.add_argument("--perm", type=int, default=128)
    ap.add_argument("--threshold", type=float, default=0.5)
    ap.add_argument("--shingle", type=int, default=3)
    ap.add_argument("--json", help="write the results as JSON to this file")
    a = ap.parse_args()
    results = []
    for path in a.pairs:
        r = evaluate(path, a.perm, a.threshold, a.shingle)
        results.append(r)
        print(f"{os.path.basename(path)}  datasketch K={a.perm} t={a.threshold} {a.shingle}-shingles  "
              f"P {r['precision']:.3f}  R {r['recall']:.3f}  F1 {r['f1']:.3f}  "
              f"(tp {r['tp']} fp {r['fp']} fn {r['fn']})")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
