"""neardup: near-duplicate text detection with SimHash and MinHash.

>>> import neardup
>>> fingerprinter = neardup.Fingerprinter("default")
>>> a = fingerprinter.fingerprint("Near-duplicate detection finds documents that are almost the same.")
>>> b = fingerprinter.fingerprint("Near-duplicate detection finds documents that are almost the same!")
>>> neardup.distance(a, b) <= 3
True
"""

from ._neardup import (
    Fingerprinter,
    Index,
    MinHasher,
    MinHashIndex,
    NeardupError,
    __version__,
    boilerplate,
    dedup,
    distance,
    jaccard,
    pairs,
    pipeline,
    plan_inputs,
    read,
    similarity,
    substrings,
)

__all__ = [
    "Fingerprinter",
    "Index",
    "MinHashIndex",
    "MinHasher",
    "NeardupError",
    "__version__",
    "boilerplate",
    "dedup",
    "distance",
    "jaccard",
    "pairs",
    "pipeline",
    "plan_inputs",
    "read",
    "similarity",
    "substrings",
]
