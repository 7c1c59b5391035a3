"""The Spark job's MinHash steps, as the core's ``ShardedLsh`` cuts them:
each signature moves once.

1. Band rows ``(key, vertex)`` — two longs per band — packed per batch
   and destination partition (the core's ``ShardedLsh::part``), shuffled;
   each partition's candidates (a spanning forest of its runs, and
   ``(v, v)`` for a signature two documents share), one Rust call.
2. The components of the candidates name each document's group.
3. The documents of the groups, signatures included, shuffled by group
   and sorted in input order; one Rust call per partition runs the core's
   LSH batch on each group and says, for each document, the one it is
   removed for, its cluster's first member and its similarity.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .._neardup import MinHasher, MinHashPlan
from .frames import _array, _whole_partition

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

BROADCAST_LABELS = 10_000_000
"""Most group labels broadcast to the signed documents (16 bytes each,
~160 MB at the limit); beyond that the labels are joined by a shuffle,
which moves each signature once more."""


def candidate_edges(fped: "DataFrame", minhasher: MinHasher, nparts: int) -> tuple["DataFrame", dict[str, Any], MinHashPlan]:
    """The candidate links ``(a, b)`` between signature vertices,
    persisted; the rule for the summary; and the plan."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    plan = MinHashPlan.of(minhasher)
    signed = fped.where(F.col("_nd_fp").isNotNull()).select("_nd_fp", "_nd_sig")
    # Band rows go packed, one Spark row per batch and partition (Spark's
    # cost is per row): "part" is a number Spark's hash partitioning sends
    # to the partition the core chose for the rows.
    parts = partition_numbers(fped.sparkSession, nparts)
    rows = signed.mapInArrow(_packed_rows_fn(plan, parts), "part long, rows binary")
    edges = rows.repartition(nparts, "part").mapInArrow(_candidates_fn(plan), "a long, b long")
    edges = edges.persist(StorageLevel.MEMORY_AND_DISK)
    # As `neardup dedup` writes it: the core's rule.
    return edges, json.loads(minhasher.rule_json()), plan


def clusters(
    fped: "DataFrame",
    labels: "DataFrame",
    id_col: str,
    keep: str,
    mode: str,
    plan: MinHashPlan,
    nparts: int,
) -> tuple["DataFrame", "DataFrame", "DataFrame"]:
    """(clusters, the keys of removed documents, members) from the group
    labels ``(vertex, label)`` of the candidates' components. Members are
    the clustered documents: ``_nd_key``, ``_nd_cluster`` (the kept
    member's key), ``id``, ``cluster_id``, ``similarity``, ``_nd_first``
    and ``_nd_order`` (their cluster's first order and their own) and
    ``_nd_removed``."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    labels = labels.select(F.col("vertex").alias("_nd_fp"), F.col("label").alias("_nd_label"))
    if labels.count() <= BROADCAST_LABELS:
        labels = F.broadcast(labels)
    narrow = fped.where(F.col("_nd_fp").isNotNull()).select(
        "_nd_key", "_nd_order", id_col, "_nd_fp", "_nd_chars", "_nd_sig"
    )
    grouped = narrow.join(labels, "_nd_fp").repartition(nparts, "_nd_label")
    grouped = grouped.sortWithinPartitions("_nd_label", "_nd_order")
    fields = {f.name: f.dataType for f in fped.schema.fields}
    schema = T.StructType(
        [
            T.StructField("_nd_key", T.LongType()),
            T.StructField("_nd_cluster", T.LongType()),
            T.StructField("id", fields[id_col]),
            T.StructField("cluster_id", fields[id_col]),
            T.StructField("similarity", T.DoubleType()),
            T.StructField("_nd_first", fields["_nd_order"]),
            T.StructField("_nd_order", fields["_nd_order"]),
            T.StructField("_nd_removed", T.BooleanType()),
        ]
    )
    members = grouped.mapInArrow(_groups_fn(plan, id_col, keep, mode), schema)
    clusters_df = (
        members.select("id", "cluster_id", "similarity", "_nd_first", "_nd_order")
        .orderBy("_nd_first", "_nd_order")
        .drop("_nd_first", "_nd_order")
    )
    return clusters_df, members.where("_nd_removed").select("_nd_key"), members


def partition_numbers(spark: Any, n: int) -> list[int]:
    """For each of ``n`` shuffle partitions, a number that
    ``repartition(n, col)`` (``pmod(hash(col), n)``) sends there."""
    from pyspark.sql import functions as F

    found: dict[int, int] = {}
    span = 64 * n
    while len(found) < n:
        part = F.expr(f"pmod(hash(id), {n})").alias("p")
        rows = spark.range(span - 64 * n, span).groupBy(part).agg(F.min("id").alias("id")).collect()
        for r in rows:
            found.setdefault(r["p"], r["id"])
        span += 64 * n
    return [found[j] for j in range(n)]


def _packed_rows_fn(plan: MinHashPlan, parts: list[int]) -> Any:
    """Rows ``(vertex, signature)`` → ``(part, rows)``: for each shuffle
    partition, the batch's band rows ``(key, vertex)`` bound there, packed."""
    import pyarrow as pa

    def run(batches: Any) -> Any:
        for b in batches:
            packed = plan.packed_keys(b.column(0), b.column(1), len(parts))
            keep = [j for j, p in enumerate(packed) if p]
            yield pa.RecordBatch.from_arrays(
                [pa.array([parts[j] for j in keep], pa.int64()), pa.array([packed[j] for j in keep], pa.binary())],
                names=["part", "rows"],
            )

    return run


def _candidates_fn(plan: MinHashPlan) -> Any:
    """A shuffled partition of packed band rows → its candidate links ``(a, b)``."""
    import pyarrow as pa

    def run(batches: Any) -> Any:
        table = _whole_partition(batches)
        if table is None:
            return
        a, b = plan.packed_candidates(table.column("rows"))
        yield pa.RecordBatch.from_arrays([_array(pa.int64(), a), _array(pa.int64(), b)], names=["a", "b"])

    return run


def _groups_fn(plan: MinHashPlan, id_col: str, keep: str, mode: str) -> Any:
    """A partition of whole groups, each in input order → its clustered
    members (see :func:`clusters`)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    def run(batches: Any) -> Any:
        table = _whole_partition(batches)
        if table is None:
            return
        t = table.combine_chunks()
        column = t.column
        owner, first, similarity, clustered = plan.owners(
            column("_nd_sig"), column("_nd_fp"), column("_nd_label"), column("_nd_chars"), keep, mode
        )
        owner_at, first_at = _array(pa.uint32(), owner), _array(pa.uint32(), first)
        key, ids, order = (column(c).chunk(0) for c in ("_nd_key", id_col, "_nd_order"))
        removed = pc.not_equal(owner_at, pa.array(range(t.num_rows), pa.uint32()))
        out = pa.RecordBatch.from_arrays(
            [
                key,
                key.take(owner_at),
                ids,
                ids.take(owner_at),
                _array(pa.float64(), similarity),
                order.take(first_at),
                order,
                removed,
            ],
            names=["_nd_key", "_nd_cluster", "id", "cluster_id", "similarity", "_nd_first", "_nd_order", "_nd_removed"],
        )
        yield out.filter(_array(pa.uint8(), clustered).cast(pa.bool_()))

    return run
