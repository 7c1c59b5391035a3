#!/usr/bin/env python3
"""False pairs of a dedup run: reported pairs whose reference similarity is low.

Reads the documents (JSONL with id and text) and the pairs.jsonl that
`neardup dedup --pairs` wrote for them, and measures every pair with the
labels' reference (../shared/data/textsim.py: Jaccard of token 3-shingles,
words for English, CJK characters for Chinese). A pair below --below
(0.25: where the labelled data calls a pair "not a near duplicate") is a
false pair. Prints the counts and the worst pairs.

Usage:
    python bench/false_pairs.py OUT/pairs.jsonl DOCS.jsonl [DOCS.jsonl ...] [--below 0.25] [--show 10]
"""
import argparse
import json
import os
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pairs")
    ap.add_argument("docs", nargs="+")
    ap.add_argument("--below", type=float, default=0.25)
    ap.add_argument("--show", type=int, default=10)
    ap.add_argument("--textsim", help="the folder of textsim.py (default: beside the first DOCS)")
    a = ap.parse_args()
    sys.path.insert(0, a.textsim or os.path.dirname(os.path.abspath(a.docs[0])))
    import textsim  # noqa: E402

    texts = {}
    for path in a.docs:
        with open(path, encoding="utf-8") as f:
            for line in f:
                d = json.loads(line)
                texts[json.dumps(d["id"])] = d["text"]
    shingles = {}

    def sh(key):
        if key not in shingles:
            shingles[key] = textsim.shingles(textsim.tokens(texts[key]))
        return shingles[key]

    n = 0
    false = []
    with open(a.pairs, encoding="utf-8") as f:
        for line in f:
            p = json.loads(line)
            ka, kb = json.dumps(p["a"]), json.dumps(p["b"])
            j3 = textsim.jaccard(sh(ka), sh(kb))
            n += 1
            if j3 < a.below:
                false.append((j3, p))
    false.sort(key=lambda x: x[0])
    print(f"{n} pairs reported, {len(false)} false (reference 3-shingle Jaccard < {a.below})")
    for j3, p in false[: a.show]:
        print(f"  J3 {j3:.3f}  {json.dumps(p, ensure_ascii=False)}")


if __name__ == "__main__":
    main()
