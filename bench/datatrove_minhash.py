#!/usr/bin/env python3
"""datatrove's MinHash dedup pipeline against `neardup dedup` on the same
JSONL corpus, side by side in one run: wall time, peak memory, documents
removed, and, on labelled pairs, the pairs each puts in one cluster that the
other does not.

Usage:
    python3 bench/datatrove_minhash.py CORPUS.jsonl [--tasks 2] [--pairs]

CORPUS has "id" and "text" fields (bench/make_corpus.py makes one). With
--pairs, CORPUS is ignored: the corpus is every text of ../shared/data's
labelled pairs (pairs_en.jsonl, pairs_zh.jsonl), one document each, and the
labels say which clusters are right.

datatrove (pip install 'datatrove[processing]' orjson spacy) runs its four
stages (signatures, buckets, clusters, filter) with LocalPipelineExecutor,
its defaults (word 5-grams, 14 buckets x 8 hashes) and --tasks workers
(signatures and filter; buckets: one task per bucket on --tasks workers).
neardup runs `neardup dedup` (its default: MinHash, 128 values, 25 x 5
bands, Jaccard >= 0.5 of word 2-shingles) with as many threads. Each runs
with its whole process tree's resident memory sampled every 50 ms (the
peak of the sum: datatrove's workers are processes).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SHARED = os.path.join(ROOT, "..", "shared", "data")


def run_datatrove(corpus, work, tasks):
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup.minhash import (
        MinhashConfig, MinhashDedupBuckets, MinhashDedupCluster, MinhashDedupFilter, MinhashDedupSignature)
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter

    config = MinhashConfig()
    reader = lambda: JsonlReader(corpus, glob_pattern="*.jsonl", text_key="text", id_key="id")
    stage = lambda name, p, t, w, d=None: LocalPipelineExecutor(
        pipeline=p, tasks=t, workers=w, logging_dir=f"{work}/logs/{name}", depends=d)
    s1 = stage("signatures", [reader(), MinhashDedupSignature(output_folder=f"{work}/sigs", config=config)],
               tasks, tasks)
    s2 = stage("buckets", [MinhashDedupBuckets(input_folder=f"{work}/sigs", output_folder=f"{work}/buckets",
                                               config=config)], config.num_buckets, tasks, s1)
    s3 = stage("clusters", [MinhashDedupCluster(input_folder=f"{work}/buckets", output_folder=f"{work}/remove_ids",
                                                config=config, save_cluster_id=True)], 1, 1, s2)
    s4 = stage("filter", [reader(), MinhashDedupFilter(input_folder=f"{work}/remove_ids", load_cluster_ids=True,
                                                       exclusion_writer=JsonlWriter(f"{work}/removed",
                                                                                    compression=None)),
                          JsonlWriter(f"{work}/kept", compression=None)], tasks, tasks, s3)
    s4.run()


def tree_rss(root):
    """Resident bytes of `root` and all its descendants (Linux /proc)."""
    children = {}
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                stat = open(f"/proc/{pid}/stat").read()
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(pid))
            except (OSError, ValueError, IndexError):
                pass
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            for line in open(f"/proc/{pid}/status"):
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def timed(cmd):
    """Runs cmd; returns (wall s, peak RSS MB of its whole process tree,
    sampled every 50 ms)."""
    import time
    start = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while p.poll() is None:
        peak = max(peak, tree_rss(p.pid))
        time.sleep(0.05)
    if p.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({p.returncode})")
    return time.monotonic() - start, peak / 2**20


def datatrove_clusters(work):
    """Cluster id of each document datatrove put in a cluster."""
    ids = {}
    for sub in ("kept", "removed"):
        for root, _, files in os.walk(f"{work}/{sub}"):
            for f in files:
                for line in open(os.path.join(root, f), encoding="utf-8"):
                    d = json.loads(line)
                    c = d.get("metadata", {}).get("minhash_cluster_id", -1)
                    if c != -1:
                        ids[d["id"]] = c
    return ids


def neardup_clusters(out):
    ids = {}
    for n, line in enumerate(open(f"{out}/clusters.jsonl", encoding="utf-8")):
        for m in json.loads(line)["members"]:
            ids[m["id"]] = n
    return ids


def count_lines(folder):
    return sum(sum(1 for _ in open(os.path.join(r, f), encoding="utf-8"))
               for r, _, fs in os.walk(folder) for f in fs)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="?")
    ap.add_argument("--tasks", type=int, default=2)
    ap.add_argument("--pairs", action="store_true")
    ap.add_argument("--neardup-args", default="", help="more flags for neardup dedup, one string (e.g. \"--memory 64M\")")
    ap.add_argument("--run-datatrove", nargs=2, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.run_datatrove:
        run_datatrove(a.run_datatrove[0], a.run_datatrove[1], a.tasks)
        return
    work = tempfile.mkdtemp(prefix="datatrove-bench.")
    try:
        labels = []
        corpus = a.corpus
        if a.pairs:
            corpus = f"{work}/pairs_corpus.jsonl"
            with open(corpus, "w", encoding="utf-8") as out:
                for lang in ("en", "zh"):
                    for i, line in enumerate(open(f"{SHARED}/pairs_{lang}.jsonl", encoding="utf-8")):
                        p = json.loads(line)
                        a_id, b_id = f"{lang}{i}a", f"{lang}{i}b"
                        out.write(json.dumps({"id": a_id, "text": p["text_a"]}, ensure_ascii=False) + "\n")
                        out.write(json.dumps({"id": b_id, "text": p["text_b"]}, ensure_ascii=False) + "\n")
                        if p.get("label") in (0, 1):
                            labels.append((a_id, b_id, p["label"], lang))
        docs = sum(1 for _ in open(corpus, encoding="utf-8"))
        size = os.path.getsize(corpus)
        # datatrove reads a file in one task: the corpus is cut into one file
        # per worker, which both tools read as a folder.
        parts = f"{work}/input"
        os.makedirs(parts)
        outs = [open(f"{parts}/part-{i:05d}.jsonl", "w", encoding="utf-8") for i in range(a.tasks)]
        for n, line in enumerate(open(corpus, encoding="utf-8")):
            outs[n * a.tasks // docs].write(line)
        for o in outs:
            o.close()
        shown = corpus
        corpus = parts
        neardup = os.path.join(ROOT, "target", "release", "neardup")
        subprocess.run(["cargo", "build", "--release", "-q", "-p", "neardup-cli"], cwd=ROOT, check=True)
        dt_work = f"{work}/dt"
        os.makedirs(dt_work)
        dt_wall, dt_rss = timed([sys.executable, os.path.abspath(__file__), "--tasks", str(a.tasks),
                                 "--run-datatrove", corpus, dt_work])
        nd_out = f"{work}/nd"
        nd_wall, nd_rss = timed([neardup, "dedup", corpus, "-o", nd_out, "-j", str(a.tasks),
                                 "--on-error", "skip", "--show", "0"] + a.neardup_args.split())
        nd_removed = json.load(open(f"{nd_out}/summary.json"))["duplicates_removed"]
        dt_removed = count_lines(f"{dt_work}/removed")
        cpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        model = next((l.split(":", 1)[1].strip() for l in cpu.splitlines() if l.startswith("Model name")), "?")
        print(f"corpus: {shown}, {docs} documents, {size / 1e6:.1f} MB in {a.tasks} files; "
              f"{a.tasks} workers/threads; cpu: {model}")
        print(f"  datatrove: {dt_wall:8.1f} s, peak {dt_rss:7.0f} MB (all its processes), {dt_removed} removed")
        print(f"  neardup:   {nd_wall:8.1f} s, peak {nd_rss:7.0f} MB, {nd_removed} removed {a.neardup_args}")
        print(f"  neardup is {dt_wall / nd_wall:.1f}x faster")
        if labels:
            dt, nd = datatrove_clusters(dt_work), neardup_clusters(nd_out)
            same = lambda c, x, y: x in c and y in c and c[x] == c[y]
            for lang in ("en", "zh", None):
                rows = [l for l in labels if lang is None or l[3] == lang]
                counts = {}
                for x, y, label, _ in rows:
                    key = (same(dt, x, y), same(nd, x, y), label)
                    counts[key] = counts.get(key, 0) + 1
                def f1(tool):
                    tp = sum(v for k, v in counts.items() if k[tool] and k[2] == 1)
                    fp = sum(v for k, v in counts.items() if k[tool] and k[2] == 0)
                    fn = sum(v for k, v in counts.items() if not k[tool] and k[2] == 1)
                    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0
                only_nd = {l: counts.get((False, True, l), 0) for l in (1, 0)}
                only_dt = {l: counts.get((True, False, l), 0) for l in (1, 0)}
                print(f"  pairs {lang or 'all'} ({len(rows)} labelled): only neardup clusters {only_nd[1]} "
                      f"near + {only_nd[0]} not-near; only datatrove {only_dt[1]} near + {only_dt[0]} not-near; "
                      f"F1 neardup {f1(1):.3f}, datatrove {f1(0):.3f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
