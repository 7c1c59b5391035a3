"""The command line of the Spark job: read files, run :func:`dedup`, write
``OUTPUT/kept/``, ``OUTPUT/clusters/`` and ``OUTPUT/summary.json``.

Input order is the one ``neardup dedup`` reads: the inputs in the order
given, the files of a directory by name, the records of a file in order.
Output appears all at once: it is written beside ``OUTPUT`` and renamed
into place when complete, so a failed run leaves no half-written output.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import uuid
from typing import Any, Optional, Sequence

from .._neardup import pipeline as resolve_pipeline
from . import CLUSTERS, KEEP, ON_ERROR, BadInputError, dedup
from .inputs import is_local, read_hadoop, read_local

def _verify(text: str) -> Any:
    """``--verify``: ``none`` → False, ``jaccard:T`` → T."""
    if text == "none":
        return False
    if text.startswith("jaccard:"):
        try:
            t = float(text[len("jaccard:") :])
        except ValueError:
            t = -1.0
        if 0 < t <= 1:
            return t
    raise argparse.ArgumentTypeError(f"{text!r}: write jaccard:T with T above 0 and at most 1, or none")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m neardup.spark",
        description="Near-duplicate dedup on Spark with neardup's Rust core: the same clusters as `neardup dedup`.",
    )
    sub = p.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dedup", help="remove near duplicates from a corpus")
    d.add_argument("--input", nargs="+", required=True, metavar="PATH", help="files or directories (any Hadoop path)")
    d.add_argument("--output", required=True, metavar="PATH", help="output directory (must not exist unless --overwrite)")
    d.add_argument("--format", choices=["parquet", "jsonl"], default="parquet", help="output format (default parquet)")
    d.add_argument(
        "--input-format",
        choices=["auto", "text", "lines", "jsonl", "csv", "parquet"],
        default="auto",
        help="input format; auto: as neardup dedup decides, by name and first bytes (JSON lines for "
        ".jsonl/.ndjson/.json, compressed or not; .csv; Parquet; else one text per file)",
    )
    d.add_argument("--text-col", default=None, help="the text field or column (default text)")
    d.add_argument(
        "--id-col", default=None, help="the id field or column, string or integer (default id if present, else FILE:LINE)"
    )
    d.add_argument(
        "--max-doc-bytes", type=int, default=64 << 20, help="the largest document read; larger ones are bad records"
    )
    d.add_argument(
        "--method",
        choices=["simhash", "minhash"],
        default=None,
        help="simhash (fingerprints, a radius) or minhash (signatures, a Jaccard threshold); "
        "default: the pipeline's, else the one --k or --threshold implies, else neardup dedup's default",
    )
    r = d.add_mutually_exclusive_group()
    r.add_argument("--k", type=int, default=None, help="SimHash radius in bits (default: the pipeline's radius, as neardup dedup)")
    r.add_argument(
        "--threshold", type=float, default=None, help="MinHash Jaccard threshold in (0, 1] (default: the pipeline's)"
    )
    g = d.add_mutually_exclusive_group()
    g.add_argument("--preset", default=None, help="pipeline preset (default: default, or minhash for the MinHash method)")
    g.add_argument("--config", default=None, metavar="FILE", help="pipeline configuration (TOML), read on the driver")
    d.add_argument("--keep", choices=KEEP, default="first", help="which member of a cluster survives (default first)")
    d.add_argument(
        "--verify",
        metavar="jaccard:T|none",
        type=_verify,
        default=None,
        help="verify SimHash's links by the texts' 3-shingle Jaccard (default jaccard:0.3; none turns it off)",
    )
    d.add_argument(
        "--clusters",
        choices=CLUSTERS,
        default="justified",
        help="justified (default): a document is removed only when it is near the one kept for it; "
        "components: one document kept per connected component",
    )
    d.add_argument("--on-error", choices=ON_ERROR, default="fail", help="bad records: fail naming them, or skip")
    d.add_argument("--allow-empty", action="store_true", help="keep documents without features")
    d.add_argument("--partitions", type=int, default=None, help="shuffle partitions for the pair search")
    d.add_argument(
        "--blocks",
        type=lambda v: [int(x) for x in v.split(",")],
        default=None,
        metavar="M[,M]",
        help="pigeonhole blocks per pass (default: the fewest tables with small key groups)",
    )
    d.add_argument("--cc-threshold", type=int, default=5_000_000, help="most edges joined on the driver")
    d.add_argument(
        "--sort",
        action="store_true",
        help="write kept/ in input order, as neardup dedup does (one more shuffle of the kept records)",
    )
    d.add_argument("--overwrite", action="store_true", help="replace OUTPUT if it exists")
    d.add_argument("--master", default=None, help="Spark master when not run by spark-submit, e.g. local[2]")
    d.add_argument(
        "--driver-memory",
        default=None,
        metavar="SIZE",
        help="driver heap with a local --master, e.g. 8g (default: half the machine's memory, at most 32g)",
    )
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser().parse_args(argv)
    if args.k is not None and not 0 <= args.k < 64:
        print(f"neardup.spark: --k must be from 0 to 63, not {args.k}", file=sys.stderr)
        return 2
    if args.threshold is not None and not 0 < args.threshold <= 1:
        print(f"neardup.spark: --threshold must be in (0, 1], not {args.threshold}", file=sys.stderr)
        return 2
    if args.config is not None and not os.path.exists(args.config):
        print(f"neardup.spark: {args.config}: no such configuration file", file=sys.stderr)
        return 2
    if args.driver_memory is not None and not re.fullmatch(r"[0-9]+[kmgt]?", args.driver_memory.lower()):
        print(f"neardup.spark: --driver-memory takes a size such as 8g or 512m, not {args.driver_memory!r}", file=sys.stderr)
        return 2
    # The pipeline, resolved as the job will (and as neardup dedup does),
    # before Spark starts: a method that is not the preset's is refused at
    # once, and the method and rule are said.
    try:
        pipeline = resolve_pipeline(args.preset, args.config, args.method, args.k, args.threshold)
    except ValueError as e:
        print(f"neardup.spark: {e}", file=sys.stderr)
        return 2
    method = "SimHash" if pipeline.method == "simhash" else "MinHash"
    print(f"neardup.spark: near duplicates by {method}, {pipeline.rule}", file=sys.stderr)
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = session(args.master, args.driver_memory)
    try:
        return run(spark, args)
    except BadInputError as e:
        print(f"neardup.spark: {e}", file=sys.stderr)
        return 1
    except ValueError as e:
        # A pipeline that cannot run (a method that is not the preset's):
        # a usage error, as neardup dedup says.
        print(f"neardup.spark: {e}", file=sys.stderr)
        return 2
    finally:
        spark.stop()


def session(master: Optional[str], driver_memory: Optional[str] = None) -> Any:
    from pyspark.sql import SparkSession

    b = SparkSession.builder.appName("neardup dedup")
    if master:
        b = b.master(master)
        if master.startswith("local"):
            # 200 shuffle partitions (Spark's default) are tiny tasks on one machine.
            cores = os.cpu_count() or 2
            b = b.config("spark.sql.shuffle.partitions", str(4 * cores)).config("spark.ui.showConsoleProgress", "false")
            # In a local master the whole job runs in the driver's JVM, whose
            # default heap (1 GB) runs out at a few hundred MB of text.
            if "--driver-memory" not in os.environ.get("PYSPARK_SUBMIT_ARGS", ""):
                b = b.config("spark.driver.memory", driver_memory or local_driver_memory())
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def local_driver_memory() -> str:
    """The driver heap for a local master: half the machine's memory, from
    1 to 32 GiB."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return "2g"
    return f"{max(1, min(32, total // 2**31))}g"


def run(spark: Any, args: argparse.Namespace) -> int:
    from pyspark.sql import functions as F

    start = time.perf_counter()
    fs, jvm = _fs(spark, args.output)
    out = jvm.org.apache.hadoop.fs.Path(args.output)
    if fs.exists(out) and not args.overwrite:
        raise BadInputError(f"{args.output} exists: choose another --output or pass --overwrite")
    error_col: Optional[str]
    if all(is_local(p) for p in args.input):
        # neardup's own reader, as neardup dedup reads: the same records.
        df, files = read_local(
            spark, args.input, args.input_format, args.text_col, args.id_col, args.allow_empty, args.max_doc_bytes
        )
        text_col, id_col, error_col = "text", "id", "_nd_malformed"
    else:
        df, files, error_col = _read_hadoop(spark, args)
        text_col, id_col = args.text_col or "text", args.id_col or "id"
    result = dedup(
        df.drop("_nd_path"),
        error_col=error_col,
        text_col=text_col,
        id_col=id_col,
        k=args.k,
        method=args.method,
        threshold=args.threshold,
        preset=args.preset,
        config=args.config,
        keep=args.keep,
        clusters=args.clusters,
        verify=args.verify,
        order_cols=["_nd_file", "_nd_row"],
        allow_empty=args.allow_empty,
        on_error=args.on_error,
        cc_threshold=args.cc_threshold,
        partitions=args.partitions,
    )
    summary = result.summary
    summary["input_files"] = len(files)
    tmp = jvm.org.apache.hadoop.fs.Path(out.getParent(), f".{out.getName()}.tmp-{uuid.uuid4().hex[:8]}")
    t = time.perf_counter()
    spark.sparkContext.setJobDescription("neardup: write")
    try:
        kept = result.kept
        if args.sort:
            kept = kept.orderBy("_nd_file", "_nd_row")
        kept = kept.drop("_nd_file", "_nd_row")
        writer = "parquet" if args.format == "parquet" else "json"
        if "_nd_raw" in kept.columns:
            # Records read by neardup's reader: written as neardup dedup
            # writes kept.jsonl, each record's fields as they were read.
            if args.format == "jsonl":
                kept.select("_nd_raw").write.text(tmp.toString() + "/kept")
            else:
                _raw_frame(spark, kept).write.parquet(tmp.toString() + "/kept")
        else:
            getattr(kept.write, writer)(tmp.toString() + "/kept")
        getattr(result.clusters.write, writer)(tmp.toString() + "/clusters")
        summary["seconds"]["stages"]["write"] = round(time.perf_counter() - t, 3)
        summary["seconds"]["total"] = round(time.perf_counter() - start, 3)
        summary["documents_per_second"] = summary["documents"] / max(summary["seconds"]["total"], 1e-9)
        stream = fs.create(jvm.org.apache.hadoop.fs.Path(tmp, "summary.json"))
        stream.write(bytearray(json.dumps(summary, indent=2).encode() + b"\n"))
        stream.close()
        if fs.exists(out):
            fs.delete(out, True)
        if not fs.rename(tmp, out):
            raise OSError(f"cannot move the finished output into {args.output}")
    except BaseException:
        fs.delete(tmp, True)
        raise
    finally:
        spark.sparkContext.setJobDescription(None)
        result.unpersist()
    n, clusters = summary["documents"], summary["clusters"]
    print(
        f"neardup.spark: {n} document{'s' * (n != 1)}, {summary['kept']} kept, "
        f"{summary['duplicates_removed']} removed in {clusters} cluster{'s' * (clusters != 1)} "
        f"({summary['seconds']['total']:.1f} s); see {args.output}/summary.json",
        file=sys.stderr,
    )
    return 0


def _fs(spark: Any, path: str) -> tuple[Any, Any]:
    jvm = getattr(spark, "_jvm")
    conf = getattr(spark, "_jsc").hadoopConfiguration()
    return jvm.org.apache.hadoop.fs.Path(path).getFileSystem(conf), jvm


def _read_hadoop(spark: Any, args: argparse.Namespace) -> tuple[Any, list[str], Optional[str]]:
    """Inputs outside the local file system, read by Spark's readers: the
    DataFrame, its files, and the column naming malformed lines."""
    from pyspark.sql import functions as F

    df, files = read_hadoop(spark, args.input, args.input_format)
    if all(c.startswith("_nd_") for c in df.columns):
        # Only empty files (the reader found no columns): 0 documents, as
        # neardup dedup says, with empty outputs.
        text_col, id_col = args.text_col or "text", args.id_col or "id"
        df = df.withColumn(text_col, F.lit(None).cast("string")).withColumn(id_col, F.lit(None).cast("string"))
    if "_corrupt_record" not in df.columns:
        return df.drop("_nd_path"), files, None
    # Lines the JSON reader could not parse are bad records, named and
    # failed or skipped with the others.
    bad = F.when(
        F.col("_corrupt_record").isNotNull(),
        F.concat(
            F.lit("malformed JSON (or invalid UTF-8) line in "),
            F.col("_nd_path"),
            F.lit(": "),
            F.substring("_corrupt_record", 1, 80),
        ),
    )
    return df.withColumn("_nd_malformed", bad).drop("_corrupt_record", "_nd_path"), files, "_nd_malformed"


def _raw_frame(spark: Any, kept: Any) -> Any:
    """Kept records read by neardup's reader, as columns again: their
    fields as read, in the schema Spark infers from them (JSON lines and
    CSV have none of their own); `id` and `text` when none is kept."""
    frame = spark.read.json(kept.select("_nd_raw").rdd.map(lambda r: r[0]))
    return frame if frame.columns else kept.select("id", "text")
