#!/usr/bin/env python3
"""A large JSONL corpus with planted near duplicates, from ../shared/data.

Usage: python3 bench/make_corpus.py N OUT.jsonl [--seed S] [--bytes B]

Each document is a window of about B bytes (default 1000) of a random
English or Chinese source document (half each), with one word in eight (one
character in eight for Chinese) replaced by a random one from the sources,
so that two windows of one source are not near duplicates. Of the N
documents, 15 % are near copies of an earlier one (5-12 % of its words or
characters changed) and 5 % exact copies. Each record is
{"id": "g<number>", "text": ..., "copy_of": id or null}. Prints the bytes
written and the planted counts; deterministic for a seed.
"""

import argparse
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "shared", "data")


def load(name):
    with open(os.path.join(SHARED, name), encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in f]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int)
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=35)
    ap.add_argument("--bytes", type=int, default=1000)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    en = [t.split() for t in load("docs_en.jsonl")]
    en_words = a.bytes // 6
    en = [w for w in en if len(w) > en_words]
    zh = "".join(load("docs_zh.jsonl"))
    zh_chars = sorted(c for c in set(zh) if "\u4e00" <= c <= "\u9fff")
    vocab = [w for ws in en[:200] for w in ws]
    zh_chars_per = a.bytes // 3
    # The last documents made, for copies (a window keeps memory flat).
    recent = []
    planted_near = planted_exact = 0
    written = 0
    with open(a.out, "w", encoding="utf-8") as out:
        for i in range(a.n):
            roll = rng.random()
            copy_of = None
            if recent and roll < 0.20:
                src_id, src_text, lang = recent[rng.randrange(len(recent))]
                copy_of = src_id
                if roll < 0.15:
                    rate = rng.uniform(0.05, 0.12)
                    if lang == "en":
                        ws = src_text.split(" ")
                        text = " ".join(rng.choice(vocab) if rng.random() < rate else w for w in ws)
                    else:
                        text = "".join(rng.choice(zh_chars) if rng.random() < rate else c for c in src_text)
                    planted_near += 1
                else:
                    text = src_text
                    planted_exact += 1
            elif roll < 0.6:
                lang = "en"
                ws = en[rng.randrange(len(en))]
                s = rng.randrange(max(1, len(ws) - en_words))
                text = " ".join(rng.choice(vocab) if rng.random() < 0.125 else w for w in ws[s:s + en_words])
            else:
                lang = "zh"
                s = rng.randrange(len(zh) - zh_chars_per)
                text = "".join(rng.choice(zh_chars) if rng.random() < 0.125 else c for c in zh[s:s + zh_chars_per])
            doc_id = f"g{i}"
            line = json.dumps({"id": doc_id, "text": text, "copy_of": copy_of}, ensure_ascii=False) + "\n"
            out.write(line)
            written += len(line.encode("utf-8"))
            if copy_of is None:
                if len(recent) < 100_000:
                    recent.append((doc_id, text, lang))
                else:
                    recent[rng.randrange(len(recent))] = (doc_id, text, lang)
    print(json.dumps({"documents": a.n, "bytes": written, "near_copies": planted_near,
                      "exact_copies": planted_exact}), file=sys.stderr)


if __name__ == "__main__":
    main()
