#!/usr/bin/env python3
"""Sweep pipeline configurations over the labelled pairs: the measurements
behind docs/QUALITY.md.

    python3 bench/quality_sweep.py [--data ../shared/data] [--only NAME,...] [--verify jaccard:T]

For every configuration below and each language it runs
`neardup eval PAIRS --config C --json ...` and prints one row per
configuration: F1 at k = 3..8 and the best k with its precision, recall and
F1. Configurations are JSON pipeline configurations (see `neardup config show`).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "neardup")

NFKC_LOWER = [{"type": "nfkc"}, {"type": "lowercase"}]
PUNCT = [{"type": "punctuation"}]
STOP = [{"type": "punctuation"}, {"type": "stopwords", "lists": ["en", "zh"]}]
WORDS = {"type": "words", "hmm": False}


def cfg(tokenizer, weight=None, filters=PUNCT, select=None, bits=64, normalize=NFKC_LOWER, hash="xxh3"):
    return {
        "bits": bits,
        "normalize": normalize,
        "tokenizer": tokenizer,
        "filters": filters,
        "weight": weight or {"type": "tf"},
        "select": select or {"type": "all"},
        "hash": hash,
    }


def shingles(n, over=WORDS):
    return {"type": "shingles", "n": n, "over": over}


def chars(n):
    return {"type": "char-ngrams", "n": n}


TFIDF = {"type": "tfidf"}
CONFIGS = {}
# tokenizers (tf, punctuation dropped)
CONFIGS["words"] = cfg(WORDS)
for n in (2, 3, 4, 5):
    CONFIGS[f"shingles{n}"] = cfg(shingles(n))
CONFIGS["words-hmm"] = cfg({"type": "words", "hmm": True})
for n in (1, 2, 3, 4, 5):
    CONFIGS[f"chars{n}"] = cfg(chars(n), filters=[])
# weights over words
CONFIGS["words-uniform"] = cfg(WORDS, {"type": "uniform"})
CONFIGS["words-tfidf"] = cfg(WORDS, TFIDF)
CONFIGS["words-textrank"] = cfg(WORDS, {"type": "textrank"})
# stop words
CONFIGS["words-stop"] = cfg(WORDS, filters=STOP)
CONFIGS["words-tfidf-stop"] = cfg(WORDS, TFIDF, filters=STOP)
# top-N
CONFIGS["words-tfidf-top20"] = cfg(WORDS, TFIDF, select={"type": "top-n", "n": 20})
CONFIGS["words-tfidf-top64"] = cfg(WORDS, TFIDF, select={"type": "top-n", "n": 64})
# 128 bits
CONFIGS["words-128"] = cfg(WORDS, bits=128)
CONFIGS["words-tfidf-128"] = cfg(WORDS, TFIDF, bits=128)


# the same with HTML to text first
HTML = [{"type": "html"}] + NFKC_LOWER
for name in list(CONFIGS):
    c = dict(CONFIGS[name])
    c["normalize"] = HTML + [n for n in c["normalize"] if n not in NFKC_LOWER]
    CONFIGS["html-" + name] = c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(ROOT, "..", "shared", "data"))
    ap.add_argument("--only", default="")
    ap.add_argument("--verify", default=None)
    ap.add_argument("--langs", default="en,zh")
    a = ap.parse_args()
    names = [n for n in CONFIGS if not a.only or n in a.only.split(",")]
    ks = (3, 4, 5, 6, 7, 8)
    print(f"{'config':<22} {'lang':<4} " + " ".join(f"F1@{k:<3}" for k in ks) + "  best_k   P      R      F1")
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            path = os.path.join(tmp, name + ".json")
            with open(path, "w") as f:
                json.dump(CONFIGS[name], f)
            for lang in a.langs.split(","):
                out = os.path.join(tmp, "out.json")
                cmd = [BIN, "eval", os.path.join(a.data, f"pairs_{lang}.jsonl"), "--config", path,
                       "--json", out, "--max-k", "32"]
                if a.verify:
                    cmd += ["--verify", a.verify]
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                r = json.load(open(out))[0]
                c = r["curve"]
                b = r["at_best_k"]
                print(f"{name:<22} {lang:<4} " + " ".join(f"{c[k]['f1']:.3f} " for k in ks)
                      + f"  {r['best_k']:>4}  {b['precision']:.3f}  {b['recall']:.3f}  {b['f1']:.3f}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
