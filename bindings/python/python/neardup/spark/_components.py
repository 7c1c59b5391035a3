"""Connected components of the near-duplicate graph, two ways.

- ``driver``: the edges are collected as Arrow and joined by the Rust
  union-find (``neardup._neardup.components``) while they fit in memory.
- ``dataframe``: iterative large-star / small-star (Kiveris et al., 2014,
  "Connected Components in MapReduce and Beyond") in DataFrames, for edge
  lists too large for the driver.

Both label every vertex of an edge with the smallest vertex of its
component (Spark's signed long order), so they agree exactly; a self link
``(v, v)`` labels ``v`` (with itself, if it has no other link).
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from .._neardup import components as _rust_components


def _longs(buf: bytes) -> pa.Array:
    return pa.Array.from_buffers(pa.int64(), len(buf) // 8, [None, pa.py_buffer(buf)])


def on_driver(spark: Any, edges: Any) -> Any:
    """Labels ``(vertex, label)`` from edges ``(a, b)`` joined on the driver."""
    table = edges.select("a", "b").toArrow()
    vertices, labels = _rust_components(table.column("a"), table.column("b"))
    out = pa.table({"vertex": _longs(vertices), "label": _longs(labels)})
    return spark.createDataFrame(out, schema="vertex long, label long")


def in_dataframes(edges: Any, max_rounds: int = 100) -> tuple[Any, int]:
    """Labels ``(vertex, label)`` by large-star / small-star rounds until a
    round changes nothing; returns them and the number of rounds."""
    from pyspark.sql import functions as F

    both = edges.select(F.least("a", "b").alias("a"), F.greatest("a", "b").alias("b"))
    # A self link (v, v) puts v in a component of its own if nothing else does.
    selves = both.where("a = b").select(F.col("a").alias("vertex")).distinct()
    e = both.where("a != b").distinct().localCheckpoint()
    for rounds in range(1, max_rounds + 1):
        before = e
        e = _small_star(_large_star(e)).localCheckpoint()
        # Converged when a round (large-star then small-star) changed nothing.
        if before.exceptAll(e).isEmpty() and e.exceptAll(before).isEmpty():
            break
    else:
        raise RuntimeError(f"connected components did not converge in {max_rounds} rounds")
    # Every component is now a star around its smallest vertex: edges (centre, leaf).
    leaves = e.select(F.col("b").alias("vertex"), F.col("a").alias("label"))
    centres = e.select(F.col("a").alias("vertex"), F.col("a").alias("label"))
    labels = leaves.unionByName(centres).distinct()
    alone = selves.join(labels, "vertex", "left_anti").select("vertex", F.col("vertex").alias("label"))
    return labels.unionByName(alone), rounds


def _both_ways(e: Any) -> Any:
    from pyspark.sql import functions as F

    return e.select(F.col("a").alias("u"), F.col("b").alias("v")).unionByName(
        e.select(F.col("b").alias("u"), F.col("a").alias("v"))
    )


def _large_star(e: Any) -> Any:
    """Each vertex u links its larger neighbours to m(u), the smallest of
    u and its neighbours."""
    from pyspark.sql import functions as F

    both = _both_ways(e)
    m = both.groupBy("u").agg(F.least(F.min("v"), F.col("u")).alias("m"))
    out = both.join(m, "u").where(F.col("v") > F.col("u")).select(F.col("v").alias("b"), F.col("m").alias("a"))
    return out.select(F.least("a", "b").alias("a"), F.greatest("a", "b").alias("b")).where("a != b").distinct()


def _small_star(e: Any) -> Any:
    """Each vertex u links itself and its smaller neighbours to the
    smallest of them."""
    from pyspark.sql import functions as F

    # Edges oriented (u, v) with v < u: v is a smaller neighbour of u.
    down = e.select(F.col("b").alias("u"), F.col("a").alias("v"))
    m = down.groupBy("u").agg(F.min("v").alias("m"))
    joined = down.join(m, "u")
    leaves = joined.select(F.col("v").alias("x"), F.col("m"))
    selves = m.select(F.col("u").alias("x"), F.col("m"))
    out = leaves.unionByName(selves).where(F.col("x") != F.col("m"))
    return out.select(F.least("x", "m").alias("a"), F.greatest("x", "m").alias("b")).distinct()
