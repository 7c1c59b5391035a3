#!/usr/bin/env python3
"""A 20-page paper checked against a passage library of N documents.

The library: ../shared/data's texts (docs and pairs, both languages) cut
into N documents of about 500 bytes at line ends, built with `index build
--passages -o DIR` (time and peak memory by /usr/bin/time). The
paper: about 52 KB of English documents that are not in the library, with
10 indexed blocks pasted in at paragraph breaks (bench/page.py's paper).
Measured, median of --runs: `neardup report PAPER --against DIR --no-verify`
(a whole process: opening included) and `POST /v1/report` to one `neardup
serve --data DIR` (opened once), with what each found: the share of the
paper, the sources, and how many of the 10 pasted blocks were found.

Usage: python3 bench/library_report.py [--docs 100000] [--bin target/release/neardup]
"""
import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from library_corpus import held_out_host, pieces, texts  # noqa: E402

p = argparse.ArgumentParser()
p.add_argument("--bin", default="target/release/neardup")
p.add_argument("--data", default="../shared/data")
p.add_argument("--docs", type=int, default=100_000)
p.add_argument("--runs", type=int, default=5)
p.add_argument("--work", default="target/bench-library")
args = p.parse_args()

work = os.path.join(args.work, str(args.docs))
os.makedirs(work, exist_ok=True)
rng = random.Random(55)




host, held = held_out_host(args.data)  # the held-out English host, not indexed

corpus = os.path.join(work, "corpus.jsonl")
if not os.path.exists(corpus):
    n, skip = 0, held
    with open(corpus + ".tmp", "w", encoding="utf-8") as f:
        for t in texts(args.data, repeat=True):
            if skip:
                skip -= 1
                continue
            for piece in pieces(t):
                f.write(json.dumps({"id": f"d{n}", "text": piece}, ensure_ascii=False) + "\n")
                n += 1
                if n == args.docs:
                    break
            if n == args.docs:
                break
    os.rename(corpus + ".tmp", corpus)
docs = []
with open(corpus, encoding="utf-8") as f:
    for i, line in enumerate(f):
        if i >= 20_000:
            break
        docs.append(json.loads(line))

data = os.path.join(work, "data")
built = ""
if not os.path.exists(os.path.join(data, "passages", "MANIFEST.json")):
    shutil.rmtree(data, ignore_errors=True)
    t = time.time()
    r = subprocess.run(["/usr/bin/time", "-v", args.bin, "index", "build", "--passages", corpus, "-o", data,
                        "--on-error", "skip"], capture_output=True, text=True, check=True)
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr).group(1)
    built = f"built in {time.time() - t:.1f} s, peak RSS {int(peak) / 1024:.0f} MB"
size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(data) for f in fs)

paras = [x for x in host.split("\n\n") if x.strip()]
en_docs = [d for d in docs if d["text"].isascii() and len(d["text"]) > 400][:2000]
pasted = rng.sample(en_docs, 10)
for d in pasted:
    paras.insert(rng.randrange(len(paras) + 1), d["text"].strip())
paper = "\n\n".join(paras)
paper_path = os.path.join(work, "paper.txt")
open(paper_path, "w", encoding="utf-8").write(paper)


def found_blocks(report):
    """Pasted blocks at least 90% covered by matches (the library holds
    copies of many texts, so the source named may be another copy)."""
    raw, n = paper.encode(), 0
    for d in pasted:
        start = raw.find(d["text"].strip().encode())
        end = start + len(d["text"].strip().encode())
        got = sum(max(0, min(end, m["a"]["end"]) - max(start, m["a"]["start"])) for m in report["matches"])
        n += got >= 0.9 * (end - start)
    return n


cli = []
for _ in range(args.runs):
    t = time.perf_counter()
    out = subprocess.run([args.bin, "report", paper_path, "--against", data, "--no-verify", "--format", "json",
                          "--max-sources", "1000"],
                         capture_output=True, text=True, check=True).stdout
    cli.append(time.perf_counter() - t)
rep = json.loads(out)

t = time.perf_counter()
serve = subprocess.Popen([args.bin, "serve", "--data", data, "--listen", "127.0.0.1:0", "--no-verify"],
                         stderr=subprocess.PIPE, text=True)
url = None
while url is None:
    line = serve.stderr.readline()
    if not line:
        sys.exit("neardup serve stopped")
    m = re.search(r"http://127\.0\.0\.1:\d+", line)
    url = m and m.group(0)
opened = time.perf_counter() - t
api = []
for _ in range(args.runs):
    req = urllib.request.Request(url + "/v1/report", data=json.dumps({"text": paper, "max_sources": 1000}).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    t = time.perf_counter()
    with urllib.request.urlopen(req) as r:
        body = json.loads(r.read())
    api.append(time.perf_counter() - t)
status = open(f"/proc/{serve.pid}/status").read()
hwm = int(re.search(r"VmHWM:\s+(\d+)", status).group(1))
serve.terminate()
serve.wait()
assert [m["a"] for m in body["matches"]] == [m["a"] for m in rep["matches"]], "the API and the CLI differ"
print(f"library: {args.docs} documents, {size / 1e6:.1f} MB on disk ({size / args.docs:.0f} bytes a document); "
      f"paper {len(paper.encode()) / 1000:.1f} KB")
if built:
    print(f"  {built}")
print(f"  serve: up in {opened:.2f} s (--no-verify)")
print(f"  report --against (a process, opening included): median {1000 * statistics.median(cli):.0f} ms")
print(f"  POST /v1/report (server opened once): median {1000 * statistics.median(api):.0f} ms; server VmHWM {hwm / 1024:.0f} MB")
print(f"  found: {100 * rep['similarity']:.1f}% of the paper, {len(rep['sources'])} sources listed,"
      f" {found_blocks(rep)} of 10 pasted blocks found")
