#!/usr/bin/env python3
"""Text alignment measured as PAN measures it: plagdet of `neardup report`.

Plants copied passages of one real document (the source) into another (the
suspicious document), from ../shared/data, in English and Chinese, and
measures what `neardup report SUSP SRC` (the pair path) and `neardup report
SUSP --against LIBRARY` (the library path: a data directory of every source
and as many other documents, built with `index build --passages`)
find, with PAN's definitions (Potthast et al., "An
Evaluation Framework for Plagiarism Detection", COLING 2010):

- a case s and a detection r are each a span of the suspicious document and
  a span of the source; r detects s when both spans overlap;
- precision = mean over detections r of |r's characters inside the cases it
  detects| / |r|; recall = mean over cases s of |s's characters inside the
  detections that detect it| / |s| (characters of both documents counted);
- granularity = mean over detected cases of the number of detections that
  detect them; plagdet = F1 / log2(1 + granularity).

Each suspicious document gets 1-3 passages of 2-12 consecutive sentences
(40-3000 characters) of its source, at paragraph breaks, each obfuscated
one way: `none` (verbatim), `light` (line breaks, dropped punctuation,
case), `edits` (3-10 % of the words, or Chinese characters, replaced,
dropped or inserted), `reorder` (the passage's sentences shuffled). A fifth
of the pairs have nothing planted (a host and an unrelated document): what
is found there is false, except text the two real documents share
unplanted (a man page's footer, a licence header: token 3-shingle Jaccard
of the two spans >= 0.5), which is counted apart. Nothing here is tuned
on: the held-out public corpus judges the method.

Usage: python3 bench/plagdet.py [--pairs 200] [--bin target/release/neardup] [--library]
"""
import argparse
import bisect
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile
import time

p = argparse.ArgumentParser()
p.add_argument("--pairs", type=int, default=200, help="suspicious documents per language")
p.add_argument("--bin", default="target/release/neardup")
p.add_argument("--data", default="../shared/data")
p.add_argument("--seed", type=int, default=11)
p.add_argument("--langs", default="en,zh")
p.add_argument("--library", action="store_true", help="also report against a passage library of the sources")
p.add_argument("--extra", default="", help="extra flags for neardup report")
p.add_argument("--show", type=int, default=0, help="print this many cases not found as one detection")
p.add_argument("--json", help="write the figures here as JSON")
args = p.parse_args()

SPLIT = {"en": re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])|\n\s*\n"), "zh": re.compile(r"(?<=[。！？；])|\n\s*\n")}
KINDS = ["none", "light", "edits", "reorder"]


def sentences(text, lang):
    """Character spans of sentences by a simple rule (not neardup's)."""
    cuts = [0] + [m.end() for m in SPLIT[lang].finditer(text)] + [len(text)]
    out = []
    for a, b in zip(cuts, cuts[1:]):
        seg = text[a:b]
        lead = len(seg) - len(seg.lstrip())
        body = seg.strip()
        if body:
            out.append((a + lead, a + lead + len(body)))
    return out


def obfuscate(block_sents, kind, lang, rng, vocab):
    """The planted text of a passage made of `block_sents` (strings)."""
    if kind == "reorder" and len(block_sents) > 1:
        s = block_sents[:]
        while s == block_sents:
            rng.shuffle(s)
        return (" " if lang == "en" else "").join(s)
    text = (" " if lang == "en" else "").join(block_sents)
    if kind == "none" or kind == "reorder":
        return text
    if kind == "light":
        out = []
        for c in text:
            r = rng.random()
            if c == "\n":
                out.append(" " if lang == "en" else "")
            elif c in ",;:，、；：" and r < 0.3:
                continue
            elif c == " " and r < 0.03:
                out.append("\n")
            elif c.isalpha() and c.isascii() and r < 0.02:
                out.append(c.swapcase())
            else:
                out.append(c)
        return "".join(out)
    # edits: words (en) or characters (zh) replaced, dropped or inserted.
    rate = rng.uniform(0.03, 0.10)
    if lang == "en":
        units = re.findall(r"\S+|\s+", text)
        out = []
        for u in units:
            if u.isspace() or rng.random() >= rate:
                out.append(u)
                continue
            op = rng.choice("rdi")
            if op == "r":
                out.append(rng.choice(vocab))
            elif op == "i":
                out.append(u + " " + rng.choice(vocab))
        return re.sub(r" {2,}", " ", "".join(out)).strip()
    out = []
    for c in text:
        if "\u4e00" <= c <= "\u9fff" and rng.random() < rate:
            op = rng.choice("rdi")
            if op == "r":
                out.append(rng.choice(vocab))
            elif op == "i":
                out.append(c + rng.choice(vocab))
            continue
        out.append(c)
    return "".join(out)


def plant(host, src, lang, rng, vocab):
    """A suspicious document: `host` with 1-3 passages of `src` planted at
    paragraph breaks; its cases as (kind, susp span, src span) in characters."""
    ss = sentences(src, lang)
    breaks = sorted({m.end() for m in re.finditer(r"\n", host)} | {0, len(host)})
    n_cases = rng.randint(1, 3)
    picks = []
    for _ in range(n_cases * 4):
        if len(picks) == n_cases:
            break
        n = rng.randint(2, min(12, len(ss) - 1))
        i = rng.randrange(0, len(ss) - n + 1)
        lo, hi = ss[i][0], ss[i + n - 1][1]
        if not 40 <= hi - lo <= 3000 or any(lo < h and l < hi for l, h, _ in picks):
            continue
        picks.append((lo, hi, [src[a:b] for a, b in ss[i:i + n]]))
    at = sorted(rng.sample(breaks, min(len(picks), len(breaks))))
    rng.shuffle(picks)
    out, cases, last = [], [], 0
    pos = 0
    for cut, (lo, hi, sents) in zip(at, picks):
        out.append(host[last:cut])
        pos += cut - last
        kind = rng.choice(KINDS)
        text = obfuscate(sents, kind, lang, rng, vocab)
        out.append("\n\n")
        pos += 2
        out.append(text)
        cases.append((kind, (pos, pos + len(text)), (lo, hi)))
        pos += len(text)
        out.append("\n\n")
        pos += 2
        last = cut
    out.append(host[last:])
    return "".join(out), cases


class Chars:
    """Byte offsets of a text to character offsets."""

    def __init__(self, text):
        self.starts = []
        b = 0
        for c in text:
            self.starts.append(b)
            b += len(c.encode())
        self.starts.append(b)

    def __call__(self, byte):
        return bisect.bisect_left(self.starts, byte)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {r.stderr}")
    return r.stdout


def overlap(x, y):
    return max(0, min(x[1], y[1]) - max(x[0], y[0]))


def measure(pairs):
    """PAN's measures over `pairs`: [(cases, detections)], each case (kind, a, b), each detection (a, b)."""
    cases = [(c, pi) for pi, (cs, _) in enumerate(pairs) for c in cs]
    dets = [(d, pi) for pi, (_, ds) in enumerate(pairs) for d in ds]

    def detects(d, c):
        return overlap(d[0], c[1]) > 0 and overlap(d[1], c[2]) > 0

    def union_len(spans, within):
        spans = sorted((max(a, within[0]), min(b, within[1])) for a, b in spans if overlap((a, b), within) > 0)
        n, end = 0, -1
        for a, b in spans:
            a = max(a, end)
            if b > a:
                n += b - a
                end = b
        return n

    by_pair = {}
    for d, pi in dets:
        by_pair.setdefault(pi, []).append(d)
    out = {}
    for kind in [None] + KINDS:
        cs = [(c, pi) for c, pi in cases if kind is None or c[0] == kind]
        rec, grans = [], []
        for c, pi in cs:
            ds = [d for d in by_pair.get(pi, []) if detects(d, c)]
            got = union_len([d[0] for d in ds], c[1]) + union_len([d[1] for d in ds], c[2])
            rec.append(got / ((c[1][1] - c[1][0]) + (c[2][1] - c[2][0])))
            if ds:
                grans.append(len(ds))
        prec = []
        for d, pi in dets:
            mine = [c for c, pj in cases if pj == pi and detects(d, c)]
            if kind is not None and (not mine or mine[0][0] != kind):
                continue
            got = union_len([c[1] for c in mine], d[0]) + union_len([c[2] for c in mine], d[1])
            prec.append(got / max(1, (d[0][1] - d[0][0]) + (d[1][1] - d[1][0])))
        P = sum(prec) / len(prec) if prec else 1.0
        R = sum(rec) / len(rec) if rec else 0.0
        G = sum(grans) / len(grans) if grans else 1.0
        F = 2 * P * R / (P + R) if P + R else 0.0
        out[kind or "all"] = {"plagdet": F / math.log2(1 + G), "precision": P, "recall": R,
                              "granularity": G, "cases": len(cs), "detections": len(prec)}
    return out


def shingles(text, lang):
    toks = re.findall(r"\w+", text.lower()) if lang == "en" else [c for c in text if not c.isspace()]
    return {tuple(toks[i:i + 3]) for i in range(max(1, len(toks) - 2))}


def shared(a, b, lang):
    """Whether two spans are the same text (token 3-shingle Jaccard >= 0.5,
    as ../shared/data/textsim.py measures): text the host and the source
    really share (a man page's footer, a licence header), not planted."""
    x, y = shingles(a, lang), shingles(b, lang)
    return len(x & y) >= 0.5 * len(x | y) if x | y else False


def detections(report, susp, src, cases, lang, src_id=None):
    """The report's detections (character offsets), and how many of those
    outside every case are text the two documents really share."""
    cs, cb = Chars(susp), Chars(src)
    out, natural = [], 0
    for m in report["matches"]:
        if src_id is not None and m["b"].get("id") != src_id:
            continue
        d = ((cs(m["a"]["start"]), cs(m["a"]["end"])), (cb(m["b"]["start"]), cb(m["b"]["end"])))
        if not any(overlap(d[0], c[1]) and overlap(d[1], c[2]) for c in cases):
            if shared(susp[d[0][0]:d[0][1]], src[d[1][0]:d[1][1]], lang):
                natural += 1
                continue
        out.append(d)
    return out, natural


def show(figures, path):
    print(f"  {path}:")
    for kind, f in figures.items():
        print(f"    {kind:8} plagdet {f['plagdet']:.3f}  precision {f['precision']:.3f}  recall {f['recall']:.3f}"
              f"  granularity {f['granularity']:.3f}  ({f['cases']} cases, {f['detections']} detections)")


rng = random.Random(args.seed)
results = {}
work = tempfile.mkdtemp(prefix="plagdet.")
for lang in args.langs.split(","):
    docs = [json.loads(l) for l in open(f"{args.data}/docs_{lang}.jsonl")]
    docs = [d for d in docs if len(sentences(d["text"], lang)) >= 12 and 1500 <= len(d["text"]) <= 60000]
    if lang == "en":
        vocab = [w for d in docs[:200] for w in d["text"].split() if w.isalpha()]
    else:
        vocab = [c for d in docs[:200] for c in d["text"] if "\u4e00" <= c <= "\u9fff"]
    trials = []
    for t in range(args.pairs):
        host, src, other = rng.sample(docs, 3)
        if t % 5 == 4:
            trials.append((host["text"], other, [], host["id"]))
        else:
            susp, cases = plant(host["text"], src["text"], lang, rng, vocab)
            trials.append((susp, src, cases, host["id"]))
    # The pair path.
    pair, times, shared_found = [], [], 0
    for n, (susp, src, cases, _) in enumerate(trials):
        pa, pb = os.path.join(work, f"{lang}-{n}-susp.txt"), os.path.join(work, f"{lang}-{n}-src.txt")
        open(pa, "w").write(susp)
        open(pb, "w").write(src["text"])
        t = time.perf_counter()
        r = json.loads(run([args.bin, "report", pa, pb, "--format", "json", *args.extra.split()]))
        times.append(time.perf_counter() - t)
        ds, natural = detections(r, susp, src["text"], cases, lang)
        shared_found += natural
        pair.append((cases, ds))
        if args.show > 0:
            for d in ds:
                if not any(overlap(d[0], c[1]) and overlap(d[1], c[2]) for c in cases) and args.show > 0:
                    args.show -= 1
                    print(f"--- {lang}: false detection {d}:", repr(susp[d[0][0]:d[0][1]][:200]))
            for c in cases:
                hit = [d for d in ds if overlap(d[0], c[1]) and overlap(d[1], c[2])]
                if len(hit) != 1 and args.show > 0:
                    args.show -= 1
                    print(f"--- {lang} {c[0]}: case {c[1]} <- {c[2]}; detections {hit}")
                    print("   planted:", repr(susp[c[1][0]:c[1][1]][:300]))
                    for d in hit:
                        print("   found:", repr(susp[d[0][0]:d[0][1]][:200]))
    times.sort()
    results[lang] = {"pair": measure(pair), "pair_median_ms": 1000 * times[len(times) // 2]}
    print(f"{lang}: {len(trials)} suspicious documents, {sum(len(c) for _, _, c, _ in trials)} planted passages")
    show(results[lang]["pair"], f"pair path (median {results[lang]['pair_median_ms']:.0f} ms per report)")
    print(f"    (left out: {shared_found} detections of text the two documents share unplanted)")
    if args.library:
        lib = os.path.join(work, f"{lang}-library")
        os.makedirs(lib)
        corpus = os.path.join(work, f"{lang}-library.jsonl")
        # Every source and half the other documents; no host (a host's own
        # text would match the suspicious document everywhere else).
        hosts = {h for _, _, _, h in trials}
        srcs = {src["id"] for _, src, _, _ in trials}
        with open(corpus, "w") as f:
            for d in docs:
                if d["id"] in srcs or (d["id"] not in hosts and rng.random() < 0.5):
                    f.write(json.dumps({"id": d["id"], "text": d["text"]}, ensure_ascii=False) + "\n")
        run([args.bin, "index", "build", "--passages", corpus, "-o", lib])
        against, times, shared_found = [], [], 0
        for n, (susp, src, cases, _) in enumerate(trials):
            pa = os.path.join(work, f"{lang}-{n}-susp.txt")
            t = time.perf_counter()
            r = json.loads(run([args.bin, "report", pa, "--against", lib, "--format", "json",
                                "--max-sources", "1000", *args.extra.split()]))
            times.append(time.perf_counter() - t)
            ds, natural = detections(r, susp, src["text"], cases, lang, src["id"])
            shared_found += natural
            against.append((cases, ds))
        times.sort()
        results[lang]["library"] = measure(against)
        results[lang]["library_median_ms"] = 1000 * times[len(times) // 2]
        show(results[lang]["library"], f"library path (median {results[lang]['library_median_ms']:.0f} ms per report)")
        print(f"    (left out: {shared_found} detections of text the two documents share unplanted)")
        ratio = results[lang]["library"]["all"]["recall"] / max(1e-9, results[lang]["pair"]["all"]["recall"])
        print(f"    library recall / pair recall: {ratio:.3f}")
if args.json:
    json.dump(results, open(args.json, "w"), indent=2)
