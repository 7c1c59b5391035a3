#!/usr/bin/env python3
"""A corpus of families of edited copies, from ../shared/data: the corpus
issue 51 measured chaining on, and one made to chain.

Usage: python3 bench/make_copies.py OUT.jsonl [--copies C] [--chain]
       [--touch P] [--rate LO,HI] [--limit N] [--seed S]

Every shared document (docs_en.jsonl and docs_zh.jsonl, 31,456 in all)
is written once, followed by C edited copies of it (default 31: about
10^6 documents, 1.1 GB). An edit substitutes, inserts or deletes a share
of the words (English) or characters (Chinese) drawn from --rate
(default 0.01,0.05) with words or characters of the same language.

- Without --chain every copy edits the original: lightly edited copies.
- With --chain each copy edits the copy before it: near copies of near
  copies, so the first and the last of a family can be far apart.
- --touch P: with probability P a copy also takes the first half of
  another family's document in place of its own second half (families
  that touch).

Each record is {"id", "text", "family", "step"}; prints what it wrote.
Deterministic for a seed.
"""

import argparse
import json
import os
import random
import re

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "shared", "data")
HAN = re.compile(r"[\u4e00-\u9fff]")


def load(name):
    with open(os.path.join(SHARED, name), encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def edit(units, rate, vocabulary, rng):
    """`units` with a share `rate` of them substituted, deleted or with a
    unit inserted after them."""
    out = []
    for u in units:
        if rng.random() >= rate:
            out.append(u)
            continue
        what = rng.randrange(3)
        if what == 0:
            out.append(rng.choice(vocabulary))
        elif what == 1:
            out.extend([u, rng.choice(vocabulary)])
    return out or units


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--copies", type=int, default=31)
    ap.add_argument("--chain", action="store_true")
    ap.add_argument("--touch", type=float, default=0.0)
    ap.add_argument("--rate", default="0.01,0.05")
    ap.add_argument("--limit", type=int, default=0, help="use only the first N documents of each language")
    ap.add_argument("--seed", type=int, default=51)
    a = ap.parse_args()
    lo, hi = map(float, a.rate.split(","))
    rng = random.Random(a.seed)
    docs = []
    for name in ("docs_en.jsonl", "docs_zh.jsonl"):
        d = load(name)
        docs += d[: a.limit] if a.limit else d
    words = [w for d in docs[:2000] if d["lang"] == "en" for w in d["text"].split()[:200]]
    chars = [c for d in docs if d["lang"] == "zh" for c in d["text"][:50] if HAN.match(c)]
    written, size = 0, 0
    with open(a.out, "w", encoding="utf-8") as out:

        def write(rec):
            nonlocal written, size
            line = json.dumps(rec, ensure_ascii=False) + "\n"
            out.write(line)
            written += 1
            size += len(line.encode())

        for f, d in enumerate(docs):
            zh = d["lang"] == "zh"
            units = list(d["text"]) if zh else d["text"].split(" ")
            join = "".join if zh else " ".join
            write({"id": d["id"], "text": d["text"], "family": f, "step": 0})
            base = units
            for c in range(1, a.copies + 1):
                units_c = edit(base, rng.uniform(lo, hi), chars if zh else words, rng)
                if a.touch and rng.random() < a.touch:
                    other = docs[rng.randrange(len(docs))]
                    theirs = list(other["text"]) if other["lang"] == "zh" else other["text"].split(" ")
                    units_c = theirs[: len(theirs) // 2] + units_c[len(units_c) // 2 :]
                write({"id": f"{d['id']}#copy{c}", "text": join(units_c), "family": f, "step": c})
                if a.chain:
                    base = units_c
    print(f"{a.out}: {written} documents, {size / 1e6:.1f} MB ({len(docs)} families of {a.copies + 1})")


if __name__ == "__main__":
    main()
