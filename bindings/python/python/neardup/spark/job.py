"""The Spark job's driver: ``dedup`` and its result, bad-input checks, the
kept and cluster frames, broadcast limits. See the package docstring."""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, Optional, Sequence, Union

from .._neardup import Fingerprinter, MinHasher, MinHashPlan, SparkPlan
from .._neardup import pipeline as resolve_pipeline
from . import _components, lsh
from .frames import _keys_fn, _pairs_fn, _split_fn, fingerprint_frame, key_schema, sign_frame

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["BadInputError", "DedupResult", "dedup"]

KEEP = ("first", "longest", "shortest")
CLUSTERS = ("justified", "components")
ON_ERROR = ("fail", "skip")
CACHED_BATCH_ROWS = 1000
"""Rows per cached batch of the persisted input (Spark's default: 10,000)."""

BROADCAST_DROPPED = 10_000_000
"""Most removed documents whose keys are broadcast to find the kept records
without moving the input's columns (8 bytes a key, ~160 MB at the limit)."""

BROADCAST_BITMAP_BYTES = 512 << 20
"""Beyond :data:`BROADCAST_DROPPED`, the removed documents are broadcast as
bitmaps of their keys (4 KB per 32,768 consecutive keys, ~125 MB for 10^9
documents) up to this size; beyond that the anti-join shuffles the input
once, texts included."""

_HELPERS = ("_nd_key", "_nd_order", "_nd_fp", "_nd_fp_lo", "_nd_fp_hi", "_nd_sig", "_nd_features", "_nd_chars", "_nd_error")
_INTERNAL = (
    "_nd_bucket",
    "_nd_bits",
    "_nd_cluster",
    "_nd_size",
    "_nd_rank",
    "_nd_rep_fp",
    "_nd_rep_lo",
    "_nd_rep_hi",
    "_nd_removed",
    "_nd_rep_id",
    "_nd_first",
    "_nd_vertex",
    "_nd_label",
    "_nd_owner",
    "_nd_component",
)


class BadInputError(ValueError):
    """Input the job cannot use (a missing column, a wrong type, records
    without text or id); the message names the records and what to do."""


@dataclass
class DedupResult:
    """What :func:`dedup` returns."""

    kept: "DataFrame"
    """The surviving records with the input's columns: every document in no
    cluster, and each cluster's representative."""
    clusters: "DataFrame"
    """One row per document in a cluster of two or more: ``id``,
    ``cluster_id`` (the representative's id) and ``distance`` (bits from
    the representative's fingerprint; SimHash) or ``similarity`` (the
    estimated Jaccard similarity to the representative; MinHash)."""
    summary: dict[str, Any] = field(default_factory=dict)
    """Counts, the radius, the layout per pass, the components path and
    the time of each stage in seconds."""
    cached: list["DataFrame"] = field(default_factory=list, repr=False)
    """The intermediate frames ``kept`` and ``clusters`` are computed from,
    persisted (MEMORY_AND_DISK) so that reading both does not fingerprint
    the input twice. Call :meth:`unpersist` when done with the results."""

    def unpersist(self) -> None:
        """Release the cached intermediate frames (the fingerprinted input
        and the cluster members). ``kept`` and ``clusters`` stay usable but
        are recomputed from the input if read again."""
        for frame in self.cached:
            frame.unpersist()
        self.cached.clear()


def dedup(
    df: "DataFrame",
    *,
    text_col: str = "text",
    id_col: str = "id",
    k: Optional[int] = None,
    preset: Optional[str] = None,
    config: Optional[str] = None,
    method: Optional[str] = None,
    threshold: Optional[float] = None,
    keep: str = "first",
    order_cols: Optional[Sequence[str]] = None,
    allow_empty: bool = False,
    on_error: str = "fail",
    cc_threshold: int = 5_000_000,
    partitions: Optional[int] = None,
    error_col: Optional[str] = None,
    blocks: Optional[Sequence[int]] = None,
    clusters: str = "justified",
    verify: Union[float, bool, None] = None,
) -> DedupResult:
    """Deduplicates ``df`` as ``neardup dedup`` would.

    - ``preset`` / ``config`` (a TOML pipeline file): the pipeline; by
      default the preset of ``method``, or of the method ``k`` (SimHash) or
      ``threshold`` (MinHash) implies, else of the default method — as
      ``neardup dedup`` resolves it. SimHash pipelines of 64 or 128 bits.
    - ``method``: ``"simhash"`` or ``"minhash"`` (must be the pipeline's).
    - ``k``: SimHash's radius in bits; by default the pipeline's rule
      (``Fingerprinter.radius``; for ``default``: 8 when the shorter
      document has fewer than 600 features, else 4), as everywhere.
    - ``threshold``: MinHash's Jaccard threshold; by default the
      pipeline's (``minhash``: 0.5), with the banding chosen for it.
    - ``keep``: which member of a cluster survives: ``first`` (in input
      order), ``longest`` or ``shortest`` (in characters; ties: the earliest).
    - ``order_cols``: columns giving the input order (ascending; ties, and
      the order without them, go by the DataFrame's own order,
      ``monotonically_increasing_id``).
    - ``allow_empty``: keep documents without features (SimHash: they all
      share fingerprint 0; MinHash: they are in no cluster); by default
      they are bad records, as in the CLI.
    - ``on_error``: ``fail`` raises :class:`BadInputError` naming the first
      bad records (null or empty text, null id); ``skip`` leaves them out
      and counts them in the summary.
    - ``cc_threshold``: the most edges joined on the driver; above it,
      components are found in DataFrames.
    - ``partitions``: shuffle partitions for the pair search (default: the
      session's ``spark.sql.shuffle.partitions``).
    - ``error_col``: a string column saying why a record is bad (null for
      good ones), e.g. what a reader could not parse; such records are bad
      records, and the column is not in ``kept``.
    - ``blocks``: the pigeonhole block count of each pass (pass 0 at the
      smallest k, then one per larger k); by default each pass takes the
      fewest tables whose key groups stay under 2^23 rows. The result is
      the same for any layout; only the cost changes.
    - ``clusters``: ``justified`` (the default) removes a document only
      when it is near the document kept for it — each component of near
      pairs is split in keep order by the core, one Rust call per shuffled
      partition, as ``neardup dedup`` splits it; ``components`` keeps one
      document per connected component (``--clusters components``).
    - ``verify``: SimHash's links are verified by the Jaccard similarity
      of the texts' word 3-shingles, at the pipeline's default (0.3) unless
      a threshold is given or ``False`` turns it off, as ``neardup dedup
      --verify``. (The Spark job does not verify MinHash.)
    """
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    if keep not in KEEP:
        raise ValueError(f"keep must be one of {', '.join(KEEP)}, not {keep!r}")
    if clusters not in CLUSTERS:
        raise ValueError(f"clusters must be one of {', '.join(CLUSTERS)}, not {clusters!r}")
    if on_error not in ON_ERROR:
        raise ValueError(f"on_error must be one of {', '.join(ON_ERROR)}, not {on_error!r}")
    if k is not None and not 0 <= k < 64:
        raise ValueError(f"k must be from 0 to 63, not {k}")
    check_columns(df, text_col, id_col, list(order_cols or []) + ([error_col] if error_col else []))
    pipeline = resolve_pipeline(preset, config, method, k, threshold)
    if isinstance(pipeline, MinHasher):
        if verify not in (None, False):
            raise ValueError("the Spark job does not verify MinHash pairs: leave verify unset")
        verify_at = None
    elif verify is True:
        raise ValueError("verify: a Jaccard threshold in (0, 1], or False for none")
    else:
        verify_at = pipeline.default_verify if verify is None else (None if verify is False else float(verify))
        if verify_at is not None and not 0 < verify_at <= 1:
            raise ValueError(f"verify: the threshold must be in (0, 1], not {verify_at}")
    spark = df.sparkSession
    timer = _Timer(spark.sparkContext)

    # 1. Fingerprints or signatures, one Rust call per Arrow batch.
    # _nd_key: a record's own number (the DataFrame's order), which also
    # breaks ties of order_cols.
    keyed = df.withColumn("_nd_key", F.monotonically_increasing_id())
    order = F.struct(*[F.col(c) for c in order_cols], F.col("_nd_key")) if order_cols else F.col("_nd_key")
    keyed = keyed.withColumn("_nd_order", order)
    if isinstance(pipeline, MinHasher):
        fped = sign_frame(keyed, text_col, pipeline, allow_empty)
        # A document without features (allow_empty) is in no cluster.
        fped = fped.withColumn("_nd_fp", F.when(F.col("_nd_features") > 0, F.col("_nd_fp")))
    else:
        fped = fingerprint_frame(keyed, text_col, pipeline, allow_empty)
    if error_col:
        fped = fped.withColumn("_nd_error", F.coalesce(F.col(error_col), F.col("_nd_error"))).drop(error_col)
    with _conf(spark, "spark.sql.inMemoryColumnarStorage.batchSize", str(CACHED_BATCH_ROWS)):
        # Cached batches hold the input's columns, texts included: Spark's
        # default of 10,000 rows a batch makes ~100 MB blocks of long
        # documents, which a 1 GB heap cannot read back from disk.
        fped = fped.persist(StorageLevel.MEMORY_AND_DISK)
        records = timer.run("read and fingerprint", fped.count)
    bad_cond = F.col("_nd_error").isNotNull() | F.col(id_col).isNull()
    bad = fped.where(bad_cond)
    skipped = timer.run("check records", bad.count)
    if skipped:
        if on_error == "fail":
            raise BadInputError(_bad_records_message(bad, id_col, skipped, records))
        fped = fped.where(~bad_cond)
    documents = records - skipped
    nparts = partitions or int(spark.conf.get("spark.sql.shuffle.partitions") or 200)

    # 2–4. Keys, shuffle, pairs (SimHash: of distinct fingerprints;
    # MinHash: candidates of band rows) in Rust.
    plan: Union[SparkPlan, MinHashPlan]
    if isinstance(pipeline, MinHasher):
        edges, rule, plan = lsh.candidate_edges(fped, pipeline, nparts)
    else:
        steps, rest = ([], k) if k is not None else pipeline.radius_steps
        edges, rule, plan = _simhash_edges(fped, steps, rest, blocks, nparts, timer, pipeline)
    edge_count = timer.run("pairs", edges.count)

    # 5. Connected components.
    rounds = 0
    if edge_count <= cc_threshold:
        labels = timer.run("components", lambda: _components.on_driver(spark, edges))
        path = "driver"
    else:
        labels, rounds = timer.run("components", lambda: _components.in_dataframes(edges))
        path = "dataframe"

    # 6. Clusters and representatives.
    if isinstance(plan, MinHashPlan):
        clusters_df, dropped, members = lsh.clusters(fped, labels, id_col, keep, clusters, plan, nparts)
    else:
        split = _Split(plan, nparts, verify_at, pipeline, text_col) if clusters == "justified" else None
        clusters_df, dropped, members = _clusters(fped, labels, id_col, keep, split)
    members = members.persist(StorageLevel.MEMORY_AND_DISK)
    sizes = timer.run(
        "clusters",
        lambda: {r[0]: r[1] for r in members.groupBy("_nd_cluster").count().groupBy("count").count().collect()},
    )
    removed = sum((size - 1) * n for size, n in sizes.items())
    kept, kept_by = timer.run("kept", lambda: _kept(fped, dropped, removed))
    summary = {
        "documents": documents,
        "records_read": records,
        "skipped": skipped,
        "kept": documents - removed,
        "duplicates_removed": removed,
        "clusters": sum(sizes.values()),
        "cluster_sizes": {str(s): sizes[s] for s in sorted(sizes)},
        **rule,
        "keep": keep,
        "clusters_by": clusters,
        "verify": f"jaccard:{verify_at}" if verify_at is not None else None,
        "pipeline": pipeline.pipeline_id,
        "edges": edge_count,
        "components": {"path": path, "rounds": rounds, "cc_threshold": cc_threshold},
        "partitions": nparts,
        "kept_by": kept_by,
        "seconds": {"stages": timer.stages, "total": timer.total()},
    }
    edges.unpersist()
    return DedupResult(kept=kept, clusters=clusters_df, summary=summary, cached=[fped, members])


def _simhash_edges(
    fped: "DataFrame",
    steps: Any,
    rest: Any,
    blocks: Optional[Sequence[int]],
    nparts: int,
    timer: "_Timer",
    fingerprinter: Fingerprinter,
) -> tuple["DataFrame", dict[str, Any], SparkPlan]:
    """The edges ``(a, b, distance)`` between distinct fingerprints (the
    core's dedup plan, its tables' keys shuffled; a 128-bit fingerprint
    named by its vertex), persisted; the rule for the summary; and the
    plan."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    # One row per distinct fingerprint, with its shortest document's features.
    # (A 128-bit one: its low and high halves, named by its vertex.)
    wide = fingerprinter.bits == 128
    halves = ["_nd_fp_lo", "_nd_fp_hi"] if wide else ["_nd_fp"]
    groups = fped.groupBy(*dict.fromkeys(["_nd_fp", *halves])).agg(F.min("_nd_features").alias("_nd_features"))
    groups = groups.persist(StorageLevel.MEMORY_AND_DISK)
    distinct = timer.run("collapse", groups.count)
    if wide and timer.run("check vertices", lambda: groups.select(F.countDistinct("_nd_fp")).collect()[0][0]) != distinct:
        # Two 128-bit fingerprints with one vertex: vanishingly rare
        # (about n²/2^65), but naming both by it would merge them.
        raise RuntimeError("two distinct 128-bit fingerprints share a 64-bit vertex; please report this")
    plan = SparkPlan(steps, rest, max(distinct, 1), list(blocks) if blocks else None, fingerprinter.bits)
    keys = groups.select(halves[0], "_nd_features", *halves[1:]).mapInArrow(_keys_fn(plan), key_schema(plan))
    shuffled = keys.repartition(nparts, "pass", "table", "key").sortWithinPartitions("pass", "table", "key")
    edges = shuffled.mapInArrow(_pairs_fn(plan), "a long, b long, distance int")
    edges = edges.persist(StorageLevel.MEMORY_AND_DISK)
    rule = {
        # As `neardup dedup` writes it (the core's rule), then the job's own.
        **json.loads(fingerprinter.rule_json()),
        "distinct_fingerprints": distinct,
        "passes": [
            {"k": kk, "below_features": below, "blocks": blocks, "tables": tables}
            for kk, below, blocks, tables in plan.describe()
        ],
    }
    groups.unpersist()
    return edges, rule, plan


@contextlib.contextmanager
def _conf(spark: Any, key: str, value: str) -> Iterator[None]:
    """Sets a session configuration for the duration of a block."""
    before = spark.conf.get(key, None)
    spark.conf.set(key, value)
    try:
        yield
    finally:
        if before is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, before)


def check_columns(df: "DataFrame", text_col: str, id_col: str, extra_cols: Sequence[str]) -> None:
    """Raises :class:`BadInputError` unless the text column is a string and
    the id column a string or an integer."""
    from pyspark.sql import types as T

    fields = {f.name: f.dataType for f in df.schema.fields}
    for role, name in [("text", text_col), ("id", id_col)] + [("order", c) for c in extra_cols]:
        if name not in fields:
            raise BadInputError(
                f"no {role} column {name!r}; the columns are: {', '.join(fields) or '(none)'} "
                f"(choose one with --{role}-col / {role}_col=)"
            )
    if not isinstance(fields[text_col], T.StringType):
        raise BadInputError(
            f"the text column {text_col!r} is {fields[text_col].simpleString()}, not string: "
            "cast or decode it first (e.g. F.col(...).cast('string'), or F.decode(..., 'UTF-8') for binary)"
        )
    integral = (T.LongType, T.IntegerType, T.ShortType, T.ByteType)
    if not isinstance(fields[id_col], (T.StringType, *integral)):
        raise BadInputError(
            f"the id column {id_col!r} is {fields[id_col].simpleString()}; ids must be strings or "
            "integers: cast it (F.col(...).cast('string')) or choose another column"
        )
    clash = [c for c in fields if c in _HELPERS or c in _INTERNAL]
    if clash:
        raise BadInputError(f"the job uses the column names {', '.join(clash)} itself: rename them")


def _kept(fped: "DataFrame", dropped: "DataFrame", removed: int) -> tuple["DataFrame", str]:
    """The records not in ``dropped`` (keys ``_nd_key``), found without
    moving the input's columns while the removed keys, as a list or as
    bitmaps, are small enough to broadcast; and how they were found."""
    from pyspark.sql import functions as F

    if removed <= BROADCAST_DROPPED:
        return fped.join(F.broadcast(dropped), "_nd_key", "left_anti").drop(*_HELPERS), "broadcast keys"
    # Keys are monotonically_increasing_id: runs of consecutive numbers per
    # partition, so their bitmaps are dense. (Bitmap functions count from 1.)
    key = F.col("_nd_key") + 1
    bucket, position = F.bitmap_bucket_number(key), F.bitmap_bit_position(key)
    bitmaps = dropped.groupBy(bucket.alias("_nd_bucket")).agg(F.bitmap_construct_agg(position).alias("_nd_bits"))
    if bitmaps.count() * 4096 > BROADCAST_BITMAP_BYTES:
        return fped.join(dropped, "_nd_key", "left_anti").drop(*_HELPERS), "shuffle join"
    # Bit `position` of a bitmap: byte position / 8, bit position % 8 from the low end.
    one = F.col("_nd_bits").substr(F.shiftright(position, 3) + 1, F.lit(1))
    is_removed = F.bit_get(F.conv(F.hex(one), 16, 10).cast("int"), position.bitwiseAND(7)) == 1
    joined = fped.withColumn("_nd_bucket", bucket).join(F.broadcast(bitmaps), "_nd_bucket", "left")
    kept = joined.where(F.col("_nd_bits").isNull() | ~is_removed).drop("_nd_bucket", "_nd_bits", *_HELPERS)
    return kept, "broadcast bitmaps"


@dataclass
class _Split:
    """How the components are split into justified clusters: the plan, the
    partitions of the shuffle, and the verification (a threshold, the
    pipeline whose text stages verify, the text column)."""

    plan: Any
    partitions: int
    verify: Optional[float]
    pipeline: Any
    text_col: str


def _clusters(
    fped: "DataFrame",
    labels: "DataFrame",
    id_col: str,
    keep: str,
    split: Optional[_Split] = None,
) -> tuple[Any, Any, Any]:
    """(clusters, the keys of dropped documents, members) from the
    component labels of fingerprints (SimHash; MinHash's are
    :func:`lsh.clusters`). With ``split``, each component is split into
    justified clusters by the core: its members, shuffled by component
    and sorted in keep order, go to one Rust call per partition, which
    says for each the member it is removed for (or itself)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    # The texts travel to the split only when it verifies.
    text = [split.text_col] if split is not None and split.verify is not None else []
    halves = ["_nd_fp_lo", "_nd_fp_hi"] if "_nd_fp_hi" in fped.columns else []
    narrow = fped.select("_nd_key", "_nd_order", id_col, "_nd_fp", *halves, "_nd_features", "_nd_chars", *text)
    labels = labels.select(F.col("vertex").alias("_nd_vertex"), F.col("label").alias("_nd_label"))
    lab = narrow.join(labels, narrow["_nd_fp"] == labels["_nd_vertex"], "left").select(
        "_nd_key",
        "_nd_order",
        id_col,
        "_nd_fp",
        *halves,
        "_nd_features",
        "_nd_chars",
        *text,
        F.coalesce("_nd_label", "_nd_fp").alias("_nd_cluster"),
    )
    whole = Window.partitionBy("_nd_cluster")
    members = lab.withColumn("_nd_size", F.count(F.lit(1)).over(whole)).where("_nd_size >= 2")
    ordering = {
        "first": [F.col("_nd_order")],
        "longest": [F.col("_nd_chars").desc(), F.col("_nd_order")],
        "shortest": [F.col("_nd_chars"), F.col("_nd_order")],
    }[keep]
    if split is not None:
        shuffled = members.repartition(split.partitions, "_nd_cluster").sortWithinPartitions("_nd_cluster", *ordering)
        columns = ["_nd_key", "_nd_cluster", "_nd_fp", "_nd_features", *halves, *text]
        split_fn = _split_fn(split.plan, split.pipeline if text else None, split.verify)
        owners = shuffled.select(*columns).mapInArrow(split_fn, "_nd_key long, _nd_owner long")
        # The justified clusters: each kept member with the members removed
        # for it (a kept member with none is in no cluster).
        members = (
            members.drop("_nd_size", *text)
            .join(owners, "_nd_key")
            .withColumnRenamed("_nd_cluster", "_nd_component")
            .withColumnRenamed("_nd_owner", "_nd_cluster")
        )
        whole = Window.partitionBy("_nd_cluster")
        members = members.withColumn("_nd_size", F.count(F.lit(1)).over(whole)).where("_nd_size >= 2")
    ranked = Window.partitionBy("_nd_cluster").orderBy(*ordering)
    members = (
        members.withColumn("_nd_rank", F.row_number().over(ranked))
        .withColumn("_nd_rep_fp", F.first("_nd_fp").over(ranked))
        .withColumn("_nd_rep_id", F.first(id_col).over(ranked))
        .withColumn("_nd_first", F.min("_nd_order").over(whole))
    )
    distance = F.bit_count(F.col("_nd_fp").bitwiseXOR(F.col("_nd_rep_fp")))
    if halves:
        # The vertex is a hash: the distance is the halves'.
        members = members.withColumn("_nd_rep_lo", F.first("_nd_fp_lo").over(ranked))
        members = members.withColumn("_nd_rep_hi", F.first("_nd_fp_hi").over(ranked))
        distance = F.bit_count(F.col("_nd_fp_lo").bitwiseXOR(F.col("_nd_rep_lo"))) + F.bit_count(
            F.col("_nd_fp_hi").bitwiseXOR(F.col("_nd_rep_hi"))
        )
    clusters = members.select(
        F.col(id_col).alias("id"),
        F.col("_nd_rep_id").alias("cluster_id"),
        distance.cast("int").alias("distance"),
        "_nd_first",
        "_nd_order",
    )
    clusters = clusters.orderBy("_nd_first", "_nd_order").drop("_nd_first", "_nd_order")
    dropped = members.where("_nd_rank > 1").select("_nd_key")
    return clusters, dropped, members


def _bad_records_message(bad: "DataFrame", id_col: str, count: int, total: int) -> str:
    from pyspark.sql import functions as F

    rows = bad.orderBy("_nd_order").select(F.col(id_col).cast("string"), "_nd_error").limit(5).collect()
    named = []
    for rid, error in rows:
        what = error if error is not None else "no id (null)"
        named.append(f"record {rid!r}: {what}" if rid is not None else f"a record without id: {what}")
    more = f" (and {count - len(rows)} more)" if count > len(rows) else ""
    return (
        f"{count} of {total} records cannot be deduplicated — {'; '.join(named)}{more}. "
        "Fix or drop them, or pass on_error='skip' (--on-error skip) to leave them out and count them"
        " (--allow-empty keeps documents without features)"
    )


class _Timer:
    """Times the stages; Spark's UI and event log show each stage's jobs
    under the description ``neardup: STAGE``."""

    def __init__(self, sc: Any) -> None:
        self.sc = sc
        self.start = time.perf_counter()
        self.stages: dict[str, float] = {}

    def run(self, name: str, f: Any) -> Any:
        t = time.perf_counter()
        self.sc.setJobDescription(f"neardup: {name}")
        try:
            out = f()
        finally:
            self.sc.setJobDescription(None)
        self.stages[name] = round(time.perf_counter() - t, 3)
        return out

    def total(self) -> float:
        return round(time.perf_counter() - self.start, 3)
