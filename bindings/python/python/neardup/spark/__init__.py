"""Near-duplicate dedup on Spark, with the Rust core doing the work.

The same fingerprints and the same clusters as ``neardup dedup`` on one
machine, for corpora that outgrow it::

    from neardup.spark import dedup
    result = dedup(df, text_col="text", id_col="id")      # a Spark DataFrame in
    result.kept        # the surviving records, the input's columns
    result.clusters    # id, cluster_id (the representative's id), distance
    result.summary     # counts, layout, timings (a dict)

Or from the command line (also through ``spark-submit``)::

    python -m neardup.spark dedup --input docs.jsonl --output out/

The job (docs/SPARK.md has the cost model):

1. each Arrow batch is fingerprinted by one Rust call (``mapInArrow``);
2. identical fingerprints are collapsed (one row per distinct value, with
   its shortest document's feature count, which sets its radius);
3. every distinct fingerprint emits one row per table of the core's
   pigeonhole layout (per pass of a length-dependent radius), with the
   fewest tables whose key groups stay small: each table is a row to
   shuffle, while long runs are split in Rust for free;
4. rows are repartitioned and sorted by (pass, table, key) and each
   partition's runs are verified by one Rust call, over-long runs split;
5. connected components: a Rust union-find on the driver while the edges
   fit (``cc_threshold``), else large-star/small-star in DataFrames;
6. documents are labelled by component; each cluster keeps one
   representative (first, longest or shortest; ties go to the earliest).
"""

import importlib
from typing import TYPE_CHECKING, Any

from ._requires import check as _check_requires

if TYPE_CHECKING:  # what __getattr__ below loads, for type checkers
    from .frames import _array, _keys_fn, _pairs_fn, fingerprint_frame  # noqa: F401
    from .job import (  # noqa: F401
        BROADCAST_BITMAP_BYTES,
        BROADCAST_DROPPED,
        CACHED_BATCH_ROWS,
        CLUSTERS,
        KEEP,
        ON_ERROR,
        BadInputError,
        DedupResult,
        _kept,
        check_columns,
        dedup,
    )

# Loaded on first use, after checking that pyspark, pyarrow and pandas are
# installed (`pip install 'neardup[spark]'`): a missing one is one clear
# ImportError, and `import neardup.spark` itself always works.
_FROM = {
    ".frames": ("_array", "_keys_fn", "_pairs_fn", "fingerprint_frame"),
    ".job": ("BROADCAST_BITMAP_BYTES", "BROADCAST_DROPPED", "CACHED_BATCH_ROWS", "CLUSTERS", "KEEP",
             "ON_ERROR",
             "BadInputError", "DedupResult", "_kept", "check_columns", "dedup"),
}

__all__ = ["BadInputError", "DedupResult", "dedup"]


def __getattr__(name: str) -> Any:
    for module, names in _FROM.items():
        if name in names:
            _check_requires()
            value = getattr(importlib.import_module(module, __name__), name)
            globals()[name] = value
            return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
