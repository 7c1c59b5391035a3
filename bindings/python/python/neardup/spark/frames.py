"""The per-batch Rust calls of the Spark job, as ``mapInArrow`` functions:
fingerprints of a text column, table keys of distinct fingerprints, and the
pairs of a shuffled partition (``SparkPlan`` runs the core's dedup plan)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Optional

from .._neardup import Fingerprinter, SparkPlan, spark_fingerprint

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def fingerprint_frame(df: "DataFrame", text_col: str, fingerprinter: Fingerprinter, allow_empty: bool) -> "DataFrame":
    """``df`` with ``_nd_fp`` (long), ``_nd_features``, ``_nd_chars`` and
    ``_nd_error`` (why a row cannot be fingerprinted, else null) added, by
    one Rust call per Arrow batch."""
    import pyarrow as pa
    from pyspark.sql import types as T

    schema = T.StructType(
        df.schema.fields
        + [
            T.StructField("_nd_fp", T.LongType()),
            T.StructField("_nd_features", T.IntegerType()),
            T.StructField("_nd_chars", T.LongType()),
            T.StructField("_nd_error", T.StringType()),
        ]
    )
    at = df.columns.index(text_col)

    def run(batches: Any) -> Any:
        for b in batches:
            fps, features, chars, errors = spark_fingerprint(fingerprinter, b.column(at), allow_empty)
            messages: list[Optional[str]] = [None] * b.num_rows
            for i, message in errors:
                messages[i] = message
            extra = [_array(pa.int64(), fps), _array(pa.int32(), features), _array(pa.int64(), chars)]
            yield pa.RecordBatch.from_arrays(
                list(b.columns) + extra + [pa.array(messages, pa.string())],
                names=list(b.schema.names) + ["_nd_fp", "_nd_features", "_nd_chars", "_nd_error"],
            )

    return df.mapInArrow(run, schema)

def _array(ty: Any, buf: bytes) -> Any:
    import pyarrow as pa

    return pa.Array.from_buffers(ty, len(buf) // ty.byte_width, [None, pa.py_buffer(buf)])

def _keys_fn(plan: SparkPlan) -> Any:
    import pyarrow as pa

    types = [pa.int32(), pa.int32(), pa.int64(), pa.int64(), pa.int32()]
    names = ["pass", "table", "key", "permuted", "features"]

    def run(batches: Any) -> Any:
        for b in batches:
            cols = plan.keys(b.column(0), b.column(1))
            yield pa.RecordBatch.from_arrays([_array(t, c) for t, c in zip(types, cols)], names=names)

    return run

def _pairs_fn(plan: SparkPlan) -> Any:
    import pyarrow as pa

    def run(batches: Any) -> Any:
        # The whole partition in one Rust call: runs may cross batches.
        table = pa.Table.from_batches(list(batches))
        if table.num_rows == 0:
            return
        a, b, d = plan.pairs(*(table.column(c) for c in ("pass", "table", "key", "permuted", "features")))
        yield pa.RecordBatch.from_arrays(
            [_array(pa.int64(), a), _array(pa.int64(), b), _array(pa.int32(), d)], names=["a", "b", "distance"]
        )

    return run
