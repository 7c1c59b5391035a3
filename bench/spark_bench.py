#!/usr/bin/env python3
"""The Spark job against single-process `neardup dedup`, side by side.

Run through bench/spark.sh. For each COPIES (default 1 and 4), the input is
../shared/data/docs_{en,zh}.jsonl repeated COPIES times, every copy after
the first with a word appended to each text (new ids), so copies are near
duplicates, not identical ones. Measured in one run:

1. `neardup dedup` (one process, both cores): wall time, median of 3.
2. `python -m neardup.spark dedup --master local[2]`: wall time of a cold
   run (JVM and session start-up included).
3. In one warm session: the start-up alone (session + a trivial job), then
   the job (`neardup.spark.cli.run`: read, dedup, write) three times, median;
   stage times from the job's summary; shuffle bytes per stage from Spark's
   event log (jobs are described as `neardup: STAGE`).
4. Rust call overhead per Arrow batch: `spark_fingerprint` on a one-row
   batch and the whole per-batch wrapper of the job, and `SparkPlan.pairs`
   on a one-row partition, microseconds per call.
5. A projection for 10^9 documents on 200 cores from the marginal rates
   (the slope between COPIES values, which cancels fixed costs).
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import shutil
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data")
OUT = os.path.join(ROOT, "bench", "out", "spark.jsonl")
RUNS = 3  # warm runs of the job per size (the first warms the JVM's JIT)


def log(rec, out):
    print(json.dumps(rec), flush=True)
    out.write(json.dumps(rec) + "\n")


def make_input(copies, where):
    """The corpus repeated `copies` times (copy j > 0: ' copy{j}' appended)."""
    paths = []
    for lang in ("en", "zh"):
        src = os.path.join(DATA, f"docs_{lang}.jsonl")
        dst = os.path.join(where, f"docs_{lang}_x{copies}.jsonl")
        with open(src, encoding="utf-8") as f:
            docs = [json.loads(line) for line in f]
        with open(dst, "w", encoding="utf-8") as f:
            for j in range(copies):
                for d in docs:
                    row = {"id": d["id"] if j == 0 else f"{d['id']}#{j}", "text": d["text"] + (f" copy{j}" if j else "")}
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
        paths.append(dst)
    return paths


def timed(cmd):
    t = time.perf_counter()
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{cmd[0]} failed:\n{run.stderr[-3000:]}")
    return time.perf_counter() - t


def shuffle_bytes(event_dir):
    """{job description: shuffle bytes written} from the newest event log."""
    logs = sorted(glob.glob(os.path.join(event_dir, "*")), key=os.path.getmtime)
    newest = logs[-1]
    # Spark 4 writes rolling logs: a directory of event files.
    files = sorted(glob.glob(os.path.join(newest, "events_*"))) if os.path.isdir(newest) else [newest]
    stage_job, written = {}, {}
    for path in files:
        with open(path, encoding="utf-8") as f:
            for line in f:
                e = json.loads(line)
                if e["Event"] == "SparkListenerJobStart":
                    desc = (e.get("Properties") or {}).get("spark.job.description") or "other"
                    for s in e["Stage IDs"]:
                        stage_job[s] = desc
                elif e["Event"] == "SparkListenerTaskEnd":
                    m = (e.get("Task Metrics") or {}).get("Shuffle Write Metrics") or {}
                    written[e["Stage ID"]] = written.get(e["Stage ID"], 0) + m.get("Shuffle Bytes Written", 0)
    by_job = {}
    for stage, b in written.items():
        by_job[stage_job.get(stage, "other")] = by_job.get(stage_job.get(stage, "other"), 0) + b
    return by_job


def call_overhead(out):
    import pyarrow as pa

    import neardup
    from neardup._neardup import SparkPlan, spark_fingerprint
    from neardup.spark import _pairs_fn, fingerprint_frame  # noqa: F401

    fingerprinter = neardup.Fingerprinter()
    one = pa.array(["a"])
    n = 20000
    t = time.perf_counter()
    for _ in range(n):
        spark_fingerprint(fingerprinter, one, True)
    rust_call = (time.perf_counter() - t) / n * 1e6
    batch = pa.RecordBatch.from_arrays([pa.array(["x"]), pa.array(["a"])], names=["id", "text"])

    def wrapper(batches):
        from neardup.spark import _array

        for b in batches:
            fps, feats, chars, errors, _ = spark_fingerprint(fingerprinter, b.column(1), True)
            msgs = [None] * b.num_rows
            yield pa.RecordBatch.from_arrays(
                list(b.columns)
                + [_array(pa.int64(), fps), _array(pa.int32(), feats), _array(pa.int64(), chars), pa.array(msgs, pa.string())],
                names=list(b.schema.names) + ["_nd_fp", "_nd_features", "_nd_chars", "_nd_error"],
            )

    t = time.perf_counter()
    for _ in range(n):
        for _ in wrapper([batch]):
            pass
    per_batch = (time.perf_counter() - t) / n * 1e6
    plan = SparkPlan([(600, 8)], 4, 10**6)
    cols = [pa.array([0], pa.int32()), pa.array([0], pa.int32()), pa.array([1]), pa.array([1]), pa.array([5], pa.int32())]
    t = time.perf_counter()
    for _ in range(n):
        plan.pairs(*cols)
    pairs_call = (time.perf_counter() - t) / n * 1e6
    # Per-row cost for comparison: fingerprinting a typical batch.
    with open(os.path.join(DATA, "docs_en.jsonl"), encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for line in f]
    arr = pa.array(texts)
    t = time.perf_counter()
    spark_fingerprint(fingerprinter, arr, True)
    per_doc = (time.perf_counter() - t) / len(texts) * 1e6
    rec = {
        "what": "call overhead",
        "spark_fingerprint_one_row_us": round(rust_call, 2),
        "fingerprint_batch_wrapper_one_row_us": round(per_batch, 2),
        "pairs_one_row_us": round(pairs_call, 2),
        "fingerprint_per_english_doc_us": round(per_doc, 2),
        "batch_rows_default": 10000,
    }
    log(rec, out)
    return rec


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("copies", nargs="*", type=int, default=[1, 4, 16])
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="a Spark setting for the warm session (e.g. spark.io.compression.codec=zstd)")
    args = ap.parse_args()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    work = tempfile.mkdtemp(prefix="neardup-spark-bench-")
    events = os.path.join(work, "events")
    os.makedirs(events)
    from pyspark.sql import SparkSession

    from neardup.spark import cli

    results = {}
    with open(OUT, "w") as out:
        log({"what": "machine", "cores": os.cpu_count(), "python": sys.version.split()[0]}, out)
        overhead = call_overhead(out)
        for copies in args.copies:
            inputs = make_input(copies, work)
            docs = sum(1 for p in inputs for _ in open(p, encoding="utf-8"))
            mb = sum(os.path.getsize(p) for p in inputs) / 1e6
            cli_times = [timed([args.bin, "dedup", *inputs, "-o", os.path.join(work, "cli")]) for _ in range(3)]
            cold = timed(
                [sys.executable, "-m", "neardup.spark", "dedup", "--input", *inputs, "--output",
                 os.path.join(work, "cold"), "--overwrite", "--master", "local[2]"]
            )
            t = time.perf_counter()
            spark = (
                SparkSession.builder.master("local[2]")
                .config("spark.sql.shuffle.partitions", "8")
                .config("spark.driver.memory", cli.local_driver_memory())
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.eventLog.enabled", "true")
                .config("spark.eventLog.dir", "file://" + events)
                .config("spark.eventLog.compress", "false")
                .config("spark.eventLog.rolling.enabled", "false")
                .config(map=dict(c.split("=", 1) for c in args.conf))
                .getOrCreate()
            )
            spark.sparkContext.setLogLevel("ERROR")
            spark.range(10).count()
            startup = time.perf_counter() - t
            warm, summaries = [], []
            for _ in range(RUNS):
                ns = cli.parser().parse_args(
                    ["dedup", "--input", *inputs, "--output", os.path.join(work, "warm"), "--overwrite", "--format", "parquet"]
                )
                t = time.perf_counter()
                cli.run(spark, ns)
                warm.append(time.perf_counter() - t)
                with open(os.path.join(work, "warm", "summary.json")) as f:
                    summaries.append(json.load(f))
            spark.stop()
            shuffled = shuffle_bytes(events)
            s = summaries[-1]
            rec = {
                "what": "dedup",
                "copies": copies,
                "documents": docs,
                "mb": round(mb, 1),
                "kept": s["kept"],
                "method": s.get("method", "simhash"),
                # SimHash counts distinct fingerprints, MinHash (the default) signatures.
                "distinct": s.get("distinct_fingerprints", s.get("distinct_signatures")),
                "edges": s["edges"],
                "passes": s.get("passes"),
                "cli_s": round(statistics.median(cli_times), 3),
                "spark_cold_s": round(cold, 2),
                "spark_startup_s": round(startup, 2),
                "spark_job_s": round(statistics.median(warm), 2),
                "stages_s": s["seconds"]["stages"],
                "shuffle_bytes_by_stage": {k: v // RUNS for k, v in shuffled.items()},  # RUNS runs in the log
                "shuffle_bytes_per_doc": round(sum(shuffled.values()) / RUNS / docs, 1),
            }
            rec["cli_docs_per_s"] = round(docs / rec["cli_s"])
            rec["spark_docs_per_s"] = round(docs / rec["spark_job_s"])
            rec["spark_vs_cli"] = round(rec["cli_s"] / rec["spark_job_s"], 3)
            shutil.rmtree(events)
            os.makedirs(events)
            results[copies] = rec
            log(rec, out)
        if len(results) >= 2:
            lo, hi = min(results), max(results)
            a, b = results[lo], results[hi]
            extra = b["documents"] - a["documents"]
            slope_spark = (b["spark_job_s"] - a["spark_job_s"]) / extra
            slope_cli = (b["cli_s"] - a["cli_s"]) / extra
            fixed = a["spark_job_s"] - slope_spark * a["documents"]
            cores = 2
            per_core = 1 / slope_spark / cores
            proj_s = 1e9 / (per_core * 200)
            rec = {
                "what": "marginal rates and projection",
                "spark_marginal_docs_per_s": round(1 / slope_spark),
                "spark_marginal_docs_per_s_per_core": round(per_core),
                "cli_marginal_docs_per_s": round(1 / slope_cli),
                "spark_fixed_job_s": round(fixed, 2),
                "shuffle_bytes_per_doc": b["shuffle_bytes_per_doc"],
                "projection_1e9_on_200_cores_min": round(proj_s / 60, 1),
                "projection_shuffle_tb": round(b["shuffle_bytes_per_doc"] * 1e9 / 1e12, 2),
                "anchor_text_dedup_docs_per_s_per_core": round(42e6 / (40 * 60) / 160),
                "rust_call_us": overhead["spark_fingerprint_one_row_us"],
            }
            log(rec, out)


if __name__ == "__main__":
    main()
