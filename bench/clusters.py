#!/usr/bin/env python3
"""Justified clusters against whole components, side by side (issue 51).

Usage: python3 bench/clusters.py CORPUS.jsonl [--bin target/release/neardup]
       [--runs R] [--methods minhash,simhash] [--out DIR] [--extra "FLAGS"]

Runs `neardup dedup --on-error skip` on CORPUS with each method, once with
`--clusters components` (whole connected components: how dedup clustered
before issue 51) and once with the default (justified), alternating the
two R times (default 1), and prints per run: seconds (median), kept,
removed, clusters, the largest cluster, and the removed documents whose
closeness to the document kept for them is below the rule as
clusters.jsonl reports it (MinHash: estimated similarity below the
threshold; SimHash: more bits apart than the widest radius of the rule,
or than the pair's own radius where the rule is fixed). Then the ratios
the issue's targets name: kept justified / kept components, time
justified / time components, and SimHash's time over MinHash's.
Make corpora with bench/make_copies.py.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run(binary, corpus, out, flags):
    t = time.perf_counter()
    cmd = [binary, "dedup", corpus, "-o", out, "--on-error", "skip", "--show", "0", *flags]
    subprocess.run(cmd, check=True, capture_output=True)
    secs = time.perf_counter() - t
    summary = json.load(open(os.path.join(out, "summary.json")))
    below, largest, clusters = 0, 0, 0
    if summary.get("method") == "minhash":
        is_below = lambda m: m.get("similarity", 1.0) < summary["threshold"]  # noqa: E731
    else:
        widest = max([summary["k"]] + [s["k"] for s in summary.get("steps", [])])
        is_below = lambda m: m.get("distance", 0) > widest  # noqa: E731
    with open(os.path.join(out, "clusters.jsonl"), encoding="utf-8") as f:
        for line in f:
            c = json.loads(line)
            clusters += 1
            largest = max(largest, c["size"])
            rep = c["representative"]
            below += sum(1 for m in c["members"] if m["id"] != rep and is_below(m))
    return {
        "seconds": secs,
        "kept": summary["kept"],
        "removed": summary["duplicates_removed"],
        "clusters": clusters,
        "largest": largest,
        "below": below,
        "peak_mb": (summary["memory"]["peak_rss"] or 0) / 1e6,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--bin", default="target/release/neardup")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--methods", default="minhash,simhash")
    ap.add_argument("--out", default=None)
    ap.add_argument("--extra", default="", help="more dedup flags for every run")
    a = ap.parse_args()
    out = a.out or tempfile.mkdtemp(prefix="neardup-clusters-")
    extra = a.extra.split()
    rows = {}
    for method in a.methods.split(","):
        for r in range(a.runs):
            for how in ("components", "justified"):
                got = run(a.bin, a.corpus, os.path.join(out, f"{method}-{how}"), ["--method", method, "--clusters", how, *extra])
                rows.setdefault((method, how), []).append(got)
                print(f"  {method:8} {how:10} run {r + 1}: {got['seconds']:.1f} s", file=sys.stderr)
    print(f"corpus: {a.corpus} ({os.path.getsize(a.corpus) / 1e6:.0f} MB); binary: {a.bin}; runs: {a.runs}")
    print("| method | clusters | seconds (median) | kept | removed | clusters | largest | removed below the rule | peak RSS |")
    print("|---|---|---|---|---|---|---|---|---|")
    med = {}
    for (method, how), runs in rows.items():
        m = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        med[(method, how)] = m
        print(
            f"| {method} | {how} | {m['seconds']:.1f} | {m['kept']:,.0f} | {m['removed']:,.0f} | {m['clusters']:,.0f} "
            f"| {m['largest']:,.0f} | {m['below']:,.0f} | {m['peak_mb']:,.0f} MB |"
        )
    for method in a.methods.split(","):
        c, j = med[(method, "components")], med[(method, "justified")]
        print(
            f"{method}: kept justified/components {j['kept'] / c['kept']:.3f}, "
            f"time justified/components {j['seconds'] / c['seconds']:.2f}"
        )
    if ("simhash", "justified") in med and ("minhash", "justified") in med:
        ratio = med[("simhash", "justified")]["seconds"] / med[("minhash", "justified")]["seconds"]
        print(f"simhash/minhash time (justified, defaults): {ratio:.2f}")


if __name__ == "__main__":
    main()
