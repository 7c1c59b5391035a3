#!/usr/bin/env python3
"""A class at once: P papers of about 20 pages checked against each other
and a passage library of N documents (`neardup class PAPERS --against DIR`).

The library: ../shared/data's Chinese documents and the pairs' texts (both
languages) cut into N documents of about 500 bytes (bench/library_corpus.py),
built with `index build --passages -o DIR`. The papers: ../shared/data's
English documents, never indexed, cut into P hosts of --host-kb; into
each, 10 library documents are pasted at paragraph breaks, and 2 passages of
another paper's host (classmates copying). Measured: the whole `neardup
class` process (reading, keying the class, every report), the median of
--runs, with its peak RSS; and what it found: pasted library blocks and
classmates' passages at least 90% covered by the paper's matches.

Usage: python3 bench/class_check.py [--papers 300] [--docs 100000] [--bin target/release/neardup]
"""
import argparse
import csv
import io
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from library_corpus import pieces  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--bin", default="target/release/neardup")
p.add_argument("--data", default="../shared/data")
p.add_argument("--papers", type=int, default=300)
p.add_argument("--docs", type=int, default=100_000)
p.add_argument("--runs", type=int, default=3)
p.add_argument("--host-kb", type=int, default=36, help="held-out text per paper (docs_en.jsonl holds 300 of 36 KB)")
p.add_argument("--work", default="target/bench-class")
args = p.parse_args()

work = os.path.join(args.work, f"{args.papers}x{args.docs}")
os.makedirs(work, exist_ok=True)
rng = random.Random(68)


def library_texts():
    for line in open(os.path.join(args.data, "docs_zh.jsonl"), encoding="utf-8"):
        yield json.loads(line)["text"]
    while True:
        for name in ("pairs_en.jsonl", "pairs_zh.jsonl"):
            for line in open(os.path.join(args.data, name), encoding="utf-8"):
                pair = json.loads(line)
                yield pair["text_a"]
                yield pair["text_b"]


corpus = os.path.join(work, "library.jsonl")
lib_docs = []
if not os.path.exists(corpus):
    with open(corpus + ".tmp", "w", encoding="utf-8") as f:
        n = 0
        for t in library_texts():
            for piece in pieces(t):
                f.write(json.dumps({"id": f"d{n}", "text": piece}, ensure_ascii=False) + "\n")
                n += 1
                if n == args.docs:
                    break
            if n == args.docs:
                break
    os.rename(corpus + ".tmp", corpus)
with open(corpus, encoding="utf-8") as f:
    for i, line in enumerate(f):
        d = json.loads(line)
        if d["text"].isascii() and len(d["text"]) > 400:
            lib_docs.append(d["text"].strip())
        if len(lib_docs) >= 20_000:
            break

data = os.path.join(work, "data")
built = ""
if not os.path.exists(os.path.join(data, "passages", "MANIFEST.json")):
    shutil.rmtree(data, ignore_errors=True)
    t = time.time()
    subprocess.run([args.bin, "index", "build", "--passages", corpus, "-o", data, "--on-error", "skip"],
                   capture_output=True, text=True, check=True)
    built = f"library built in {time.time() - t:.1f} s"

# The hosts: consecutive English documents, --host-kb each.
hosts, cur = [], ""
for line in open(os.path.join(args.data, "docs_en.jsonl"), encoding="utf-8"):
    for para in json.loads(line)["text"].split("\n\n"):
        cur += para + "\n\n"
        if len(cur.encode()) >= args.host_kb * 1000:
            hosts.append(cur)
            cur = ""
    if len(hosts) >= args.papers:
        hosts = hosts[:args.papers]
        break
if len(hosts) < args.papers:
    sys.exit(f"only {len(hosts)} hosts of {args.host_kb} KB in docs_en.jsonl")

papers_dir = os.path.join(work, "papers")
shutil.rmtree(papers_dir, ignore_errors=True)
os.makedirs(papers_dir)
planted = []  # per paper: the pasted texts, library and classmates'
for i, host in enumerate(hosts):
    paras = [x for x in host.split("\n\n") if len(x.strip()) > 0]
    blocks = rng.sample(lib_docs, 10)
    other = [x for x in hosts[(i + 1) % len(hosts)].split("\n\n") if len(x) > 400]
    mates = rng.sample(other, min(2, len(other)))
    for b in blocks + mates:
        paras.insert(rng.randrange(len(paras) + 1), b.strip())
    with open(os.path.join(papers_dir, f"paper{i:03}.txt"), "w", encoding="utf-8") as f:
        f.write("\n\n".join(paras))
    planted.append((blocks, mates))

times, peak = [], 0
for _ in range(args.runs):
    t = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-v", args.bin, "class", papers_dir, "--against", data, "--no-verify",
                        "--format", "json", "-o", os.path.join(work, "class.json"), "--max-sources", "1000"],
                       capture_output=True, text=True, check=True)
    times.append(time.perf_counter() - t)
    peak = max(peak, int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1)))
out = json.load(open(os.path.join(work, "class.json"), encoding="utf-8"))
reports = {os.path.basename(r["a"]["path"]): r for r in out["reports"]}


def covered(report, text):
    raw = open(os.path.join(papers_dir, report_name), encoding="utf-8").read().encode()
    start = raw.find(text.strip().encode())
    end = start + len(text.strip().encode())
    got = sum(max(0, min(end, m["a"]["end"]) - max(start, m["a"]["start"])) for m in report["matches"])
    return start >= 0 and got >= 0.9 * (end - start)


lib_found = mate_found = lib_total = mate_total = 0
for i, (blocks, mates) in enumerate(planted):
    report_name = f"paper{i:03}.txt"
    rep = reports[report_name]
    lib_found += sum(covered(rep, b) for b in blocks)
    mate_found += sum(covered(rep, m) for m in mates)
    lib_total += len(blocks)
    mate_total += len(mates)
size = sum(os.path.getsize(os.path.join(papers_dir, f)) for f in os.listdir(papers_dir))
print(f"{args.papers} papers ({size / 1e6:.1f} MB, {size / args.papers / 1000:.0f} KB each) against each other "
      f"and a library of {args.docs} documents{'; ' + built if built else ''}")
print(f"  neardup class: median {statistics.median(times):.1f} s of {args.runs} "
      f"({', '.join(f'{t:.1f}' for t in times)}), peak RSS {peak / 1024:.0f} MB")
print(f"  found: {lib_found} of {lib_total} pasted library blocks, {mate_found} of {mate_total} classmates' passages")
