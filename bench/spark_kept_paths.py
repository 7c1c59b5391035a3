"""The three ways the Spark job finds the kept records (a broadcast of the
removed keys, broadcast bitmaps of them, a shuffle join), each forced in
turn on the same input in one local[2] session, two rounds.

    PYSPARK_PYTHON=target/py-spark-bench-venv/bin/python \\
      target/py-spark-bench-venv/bin/python bench/spark_kept_paths.py FILE...

(after `bash bench/spark.sh 16` has installed the venv; the figures in
bench/RESULTS.md used the x16 copies of ../shared/data it writes.) Prints a
JSON line per run: the path, kept count, and the seconds of the kept and
write stages.
"""

import json
import sys
import tempfile
import time

import neardup.spark.job as job
from neardup.spark import cli

PATHS = [("broadcast keys", 10**7, 512 << 20), ("broadcast bitmaps", 0, 512 << 20), ("shuffle join", 0, 0)]


def main() -> None:
    inputs = sys.argv[1:]
    spark = cli.session("local[2]")  # the command line's local session
    out = tempfile.mkdtemp(prefix="neardup-kept-paths-") + "/out"
    for rep in range(2):
        for name, keys, bitmap_bytes in PATHS:
            job.BROADCAST_DROPPED, job.BROADCAST_BITMAP_BYTES = keys, bitmap_bytes
            ns = cli.parser().parse_args(["dedup", "--input", *inputs, "--output", out, "--overwrite"])
            t = time.perf_counter()
            cli.run(spark, ns)
            total = time.perf_counter() - t
            with open(out + "/summary.json", encoding="utf-8") as f:
                s = json.load(f)
            assert s["kept_by"] == name, s["kept_by"]
            stages = s["seconds"]["stages"]
            rec = {"round": rep, "path": name, "kept": s["kept"], "kept_s": stages["kept"], "write_s": stages["write"]}
            print(json.dumps(rec | {"total_s": round(total, 2)}), flush=True)


if __name__ == "__main__":
    main()
