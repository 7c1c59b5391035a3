#!/usr/bin/env python3
"""Precision, recall and F1 of text-dedup's MinHash (its defaults) on labelled pairs.

Runs text-dedup's own `embed_func` with the settings its `minhash` command
uses by default (text-dedup 0.4.0: 5-gram word shingles split on \\W,
min_length 5, 250 permutations, threshold 0.7 -> its optimal_param banding,
sha1 hashes, seed 42). A pair is found when the two documents share a band
(text-dedup clusters band by band without checking the estimate); a text
shorter than min_length tokens is dropped by text-dedup and never found.

Usage (text-dedup lives in its own venv; it pins old dependencies):
    python -m venv /tmp/tdvenv && /tmp/tdvenv/bin/pip install text-dedup
    /tmp/tdvenv/bin/python bench/quality_textdedup.py ../shared/data/pairs_en.jsonl ../shared/data/pairs_zh.jsonl
"""
import json
import os
import sys

import numpy as np
from text_dedup.minhash import NON_ALPHA, embed_func
from text_dedup.utils.args import MinHashArgs
from text_dedup.utils.hashfunc import sha1_hash
from text_dedup.utils import optimal_param


def main():
    a = MinHashArgs()
    dtype, max_hash, prime = np.uint64, np.uint32((1 << 32) - 1), np.uint64((1 << 61) - 1)
    rng = np.random.RandomState(a.seed)
    perms = (rng.randint(1, prime, size=(a.num_perm,), dtype=dtype), rng.randint(0, prime, size=(a.num_perm,), dtype=dtype))
    b, r = optimal_param(a.threshold, a.num_perm, false_positive_weight=0.5, false_negative_weight=0.5)
    ranges = [(i * r, (i + 1) * r) for i in range(b)]

    def bands(text):
        if len(NON_ALPHA.split(text.lower())) < a.min_length:
            return None
        return embed_func(text, 0, num_perm=a.num_perm, ngram_size=a.ngram, min_length=a.min_length,
                          hashranges=ranges, permutations=perms, hash_func=lambda d: sha1_hash(d, d=32),
                          dtype=dtype, max_hash=max_hash, modulo_prime=prime)["__signatures__"]

    for path in sys.argv[1:]:
        tp = fp = fn = tn = 0
        for line in open(path, encoding="utf-8"):
            p = json.loads(line)
            if p.get("label") not in (0, 1):
                continue
            x, y = bands(p["text_a"]), bands(p["text_b"])
            found = x is not None and y is not None and any(u == v for u, v in zip(x, y))
            dup = p["label"] == 1
            tp += found and dup
            fp += found and not dup
            fn += (not found) and dup
            tn += (not found) and not dup
        f1 = 2 * tp / (2 * tp + fp + fn)
        print(f"{os.path.basename(path)}  text-dedup defaults ({a.ngram}-grams, K={a.num_perm}, t={a.threshold}, "
              f"{b}x{r})  P {tp / max(tp + fp, 1):.3f}  R {tp / max(tp + fn, 1):.3f}  F1 {f1:.3f}  "
              f"(tp {tp} fp {fp} fn {fn})")


if __name__ == "__main__":
    main()
