"""The per-batch Rust calls of the Spark job, as ``mapInArrow`` functions:
fingerprints (or MinHash signatures) of a text column, table (or band)
keys of distinct fingerprints, the pairs of a shuffled partition and the
split of its components (``SparkPlan`` runs the core's dedup plan;
MinHash's steps are in :mod:`.lsh`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, Optional

import array
from .._neardup import Fingerprinter, MinHasher, SparkPlan, spark_fingerprint, spark_sign

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def fingerprint_frame(df: "DataFrame", text_col: str, fingerprinter: Fingerprinter, allow_empty: bool) -> "DataFrame":
    """``df`` with ``_nd_fp`` (long: the fingerprint, or for a 128-bit
    one its vertex, whose low and high 64 bits are ``_nd_fp_lo`` and
    ``_nd_fp_hi``), ``_nd_features``, ``_nd_chars`` and ``_nd_error`` (why
    a row cannot be fingerprinted, else null) added, by one Rust call per
    Arrow batch."""
    import pyarrow as pa
    from pyspark.sql import types as T

    wide = fingerprinter.bits == 128
    names = ["_nd_fp", "_nd_features", "_nd_chars", "_nd_error"] + (["_nd_fp_lo", "_nd_fp_hi"] if wide else [])
    types = [T.LongType(), T.IntegerType(), T.LongType(), T.StringType(), T.LongType(), T.LongType()]
    schema = T.StructType(df.schema.fields + [T.StructField(n, t) for n, t in zip(names, types)])
    at = df.columns.index(text_col)

    def run(batches: Any) -> Any:
        for b in batches:
            fps, features, chars, errors, halves = spark_fingerprint(fingerprinter, b.column(at), allow_empty)
            messages: list[Optional[str]] = [None] * b.num_rows
            for i, message in errors:
                messages[i] = message
            extra = [_array(pa.int64(), fps), _array(pa.int32(), features), _array(pa.int64(), chars)]
            extra.append(pa.array(messages, pa.string()))
            if halves is not None:
                extra += [_array(pa.int64(), half) for half in halves]
            yield pa.RecordBatch.from_arrays(list(b.columns) + extra, names=list(b.schema.names) + names)

    return df.mapInArrow(run, schema)

def _array(ty: Any, buf: bytes) -> Any:
    import pyarrow as pa

    return pa.Array.from_buffers(ty, len(buf) // ty.byte_width, [None, pa.py_buffer(buf)])

def _whole_partition(batches: Any) -> Any:
    """A partition's batches as one table (runs of a key may cross
    batches, so a partition goes to Rust in one call), or None if empty."""
    import pyarrow as pa

    whole = list(batches)
    if not whole:
        return None
    table = pa.Table.from_batches(whole)
    return table if table.num_rows else None


KEY_COLUMNS = ["pass", "table", "key", "permuted", "features", "permuted_hi"]
"""The columns of a SimHash key row (``permuted_hi``: 128-bit plans only)."""


def key_schema(plan: SparkPlan) -> str:
    """The Spark schema of ``plan``'s key rows."""
    types = ["int", "int", "long", "long", "int", "long"]
    return ", ".join(f"{n} {t}" for n, t in zip(KEY_COLUMNS[: _key_width(plan)], types))


def _key_width(plan: SparkPlan) -> int:
    return 6 if plan.bits == 128 else 5


def _keys_fn(plan: SparkPlan) -> Any:
    """Rows ``(fingerprint, features[, high bits])`` → key rows."""
    import pyarrow as pa

    width = _key_width(plan)
    types = [pa.int32(), pa.int32(), pa.int64(), pa.int64(), pa.int32(), pa.int64()][:width]

    def run(batches: Any) -> Any:
        for b in batches:
            cols = plan.keys(b.column(0), b.column(1), high=b.column(2) if width == 6 else None)
            yield pa.RecordBatch.from_arrays([_array(t, c) for t, c in zip(types, cols)], names=KEY_COLUMNS[:width])

    return run

def _pairs_fn(plan: SparkPlan) -> Any:
    import pyarrow as pa

    def run(batches: Any) -> Any:
        table = _whole_partition(batches)
        if table is None:
            return
        high = table.column("permuted_hi") if _key_width(plan) == 6 else None
        pass_no, table_no, key, permuted, features = (table.column(c) for c in KEY_COLUMNS[:5])
        a, b, d = plan.pairs(pass_no, table_no, key, permuted, features, permuted_high=high)
        yield pa.RecordBatch.from_arrays(
            [_array(pa.int64(), a), _array(pa.int64(), b), _array(pa.int32(), d)], names=["a", "b", "distance"]
        )

    return run


def _split_fn(plan: Any, fingerprinter: Any = None, verify: Optional[float] = None) -> Any:
    """A partition of cluster members ``(_nd_key, _nd_cluster, _nd_fp,
    _nd_features[, _nd_fp_lo, _nd_fp_hi][, text])``, each component's rows adjacent
    and in keep order → ``(key, owner)``: the key of the member each is
    removed for, or its own when kept (the core's split; links verified on
    the texts at ``verify``)."""
    import pyarrow as pa

    def run(batches: Any) -> Any:
        table = _whole_partition(batches)
        if table is None:
            return
        keys = table.column(0).combine_chunks()
        features, groups = table.column("_nd_features"), table.column("_nd_cluster")
        wide = plan.bits == 128
        fp = table.column("_nd_fp_lo" if wide else "_nd_fp")
        high = table.column("_nd_fp_hi") if wide else None
        if verify is not None:
            text = table.column(table.num_columns - 1)
            owners = plan.split(fp, features, groups, fingerprinter, text, verify, high=high)
        else:
            owners = plan.split(fp, features, groups, high=high)
        yield pa.RecordBatch.from_arrays([keys, keys.take(_array(pa.int32(), owners))], names=["_nd_key", "_nd_owner"])

    return run


def _binary(width: int, buf: bytes) -> Any:
    """A binary array of values of ``width`` bytes each, from their concatenation."""
    import pyarrow as pa

    n = len(buf) // width if width else 0
    offsets = array.array("i", range(0, (n + 1) * width, width)).tobytes()
    return pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(buf)])


def sign_frame(df: "DataFrame", text_col: str, minhasher: MinHasher, allow_empty: bool) -> "DataFrame":
    """``df`` with ``_nd_sig`` (binary: K little-endian u32s), ``_nd_fp``
    (the signature's vertex, a long), ``_nd_features``, ``_nd_chars`` and
    ``_nd_error`` added, by one Rust call per Arrow batch. A row without
    features (under ``allow_empty``) has ``_nd_features`` 0."""
    import pyarrow as pa
    from pyspark.sql import types as T

    names = ["_nd_sig", "_nd_fp", "_nd_features", "_nd_chars", "_nd_error"]
    schema = T.StructType(
        df.schema.fields
        + [
            T.StructField("_nd_sig", T.BinaryType()),
            T.StructField("_nd_fp", T.LongType()),
            T.StructField("_nd_features", T.IntegerType()),
            T.StructField("_nd_chars", T.LongType()),
            T.StructField("_nd_error", T.StringType()),
        ]
    )
    at = df.columns.index(text_col)
    width = 4 * minhasher.permutations

    def run(batches: Any) -> Any:
        for b in batches:
            sigs, vertices, features, chars, errors = spark_sign(minhasher, b.column(at), allow_empty)
            messages: list[Optional[str]] = [None] * b.num_rows
            for i, message in errors:
                messages[i] = message
            extra = [
                _binary(width, sigs),
                _array(pa.int64(), vertices),
                _array(pa.int32(), features),
                _array(pa.int64(), chars),
                pa.array(messages, pa.string()),
            ]
            yield pa.RecordBatch.from_arrays(list(b.columns) + extra, names=list(b.schema.names) + names)

    return df.mapInArrow(run, schema)
