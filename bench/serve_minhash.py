#!/usr/bin/env python3
"""`neardup serve` over a MinHash data directory (issue 17's online target).

Run through `bash bench/serve.sh --minhash` (which builds the release binary).
Writes N random documents (WORDS made-up words each, from 50,000) as JSONL,
loads them into a new data directory with `neardup index build --preset
minhash` (the import timed), starts `neardup serve` on 127.0.0.1 and drives
it with wrk (bench/serve/insert_text.lua): insert-if-unique of new random
texts, single documents and batches of 1,000, durable (redb, fsync per
group commit), by the pipeline's threshold. Then start-up (MinHash
directories rebuild their index from the store) and the server's peak RSS.

Prints one JSON line per measurement and a table with the targets; writes
bench/out/serve_minhash.jsonl.
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve  # noqa: E402  (Server, wrk, log, rss_kb)

ROOT = serve.ROOT
OUT = os.path.join(ROOT, "bench", "out", "serve_minhash.jsonl")


def documents(n, words, seed):
    """n random documents as JSONL, made once and kept."""
    path = os.path.join(serve.WORK, f"mh-docs-{n}-{words}-{seed}.jsonl")
    rng = random.Random(seed)
    vocab = ["w%x" % i for i in range(50_000)]
    texts = (" ".join(rng.choices(vocab, k=words)) for _ in range(n))
    return serve.made_once(path, ('{"id": "d%d", "text": "%s"}\n' % (i, t) for i, t in enumerate(texts)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--docs", type=int, default=1_000_000, help="documents stored before the load runs (10^6)")
    ap.add_argument("--words", type=int, default=60, help="words per document")
    ap.add_argument("--seconds", type=int, default=15, help="seconds per load run")
    ap.add_argument("--bin", default=serve.BIN, help="the neardup binary")
    ap.add_argument("--out", default=OUT, help="where the JSON lines go")
    args = ap.parse_args()
    serve.BIN = os.path.abspath(args.bin)
    if not shutil.which("wrk"):
        sys.exit("bench/serve_minhash.py needs wrk: apt-get install wrk")
    os.makedirs(serve.WORK, exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    results = {}
    with open(args.out, "w") as out:
        cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = next((l.split(":", 1)[1].strip() for l in cpu.splitlines() if l.startswith("Model name")), "?")
        serve.log({"bench": "machine", "bin": serve.BIN, "cpus": os.cpu_count(), "cpu": model,
                   "avx512": "avx512f" in cpu, "uname": " ".join(os.uname())}, out)
        docs = documents(args.docs, args.words, 1)
        data = os.path.join(serve.WORK, f"mh-data-{args.docs}")
        shutil.rmtree(data, ignore_errors=True)
        t = time.perf_counter()
        r = subprocess.run(["/usr/bin/time", "-f", "%M", serve.BIN, "index", "build", "--preset", "minhash",
                            docs, "-o", data], check=True, stderr=subprocess.PIPE, text=True)
        secs = time.perf_counter() - t
        store = os.path.getsize(os.path.join(data, "store.redb"))
        serve.log({"bench": "import", "docs": args.docs, "seconds": round(secs, 2),
                   "docs_per_s": round(args.docs / secs),
                   "peak_rss_mb": round(int(r.stderr.strip().splitlines()[-1]) / 1024),
                   "store_mb": round(store / 2**20, 1), "store_bytes_per_doc": round(store / args.docs)}, out)
        s = serve.Server(data)
        ready = s.ready_s
        runs = [
            ("insert-if-unique single, 64 connections", 64, {"RUN": "s64"}),
            ("insert-if-unique single, 1 connection", 1, {"RUN": "s1"}),
            ("insert-if-unique batches of 1,000, 4 connections", 4, {"RUN": "b4", "BATCH": 1000}),
        ]
        for name, conns, env in runs:
            r = serve.wrk("insert_text.lua", s.addr, args.seconds, conns, threads=min(2, conns),
                          WORDS=args.words, **env)
            r.update({"bench": "load", "name": name, "docs": args.docs, "connections": conns})
            serve.log(r, out)
            results[name] = r
        stats = json.loads(subprocess.run(["curl", "-s", f"http://{s.addr}/v1/stats"], capture_output=True,
                                          text=True).stdout or "{}")
        rss = serve.rss_kb(s.proc.pid)
        stop_s, _ = s.stop()
        serve.log({"bench": "after-load", "documents": stats.get("documents"), "index_mb":
                   round(stats.get("index_bytes", 0) / 2**20, 1), "peak_rss_mb": round(rss / 1024) if rss else None,
                   "stop_s": round(stop_s, 2), "first_start_s": round(ready, 2)}, out)
        s = serve.Server(data)
        rss = serve.rss_kb(s.proc.pid)
        stop_s, _ = s.stop()
        restart = {"bench": "startup", "from": s.source, "ready_s": round(s.ready_s, 2),
                   "rss_mb": round(rss / 1024) if rss else None, "says": s.line.strip()}
        serve.log(restart, out)
    print()
    print(f"{'measurement':52} {'figure':>14} {'p99 ms':>8} {'target':>10} {'ratio':>7}")
    targets = {
        "insert-if-unique single, 64 connections": 5_000,
        "insert-if-unique batches of 1,000, 4 connections": 30_000,
    }
    for name, r in results.items():
        target = targets.get(name)
        ratio = f"{r['docs_per_s'] / target:.2f}x" if target else ""
        print(f"{name:52} {r['docs_per_s']:>7,.0f} docs/s {r['p99_ms']:>8.2f} {target or '':>10} {ratio:>7}")
    print(f"{'start-up (index rebuilt from the store)':52} {restart['ready_s']:>12.2f} s")


if __name__ == "__main__":
    main()
