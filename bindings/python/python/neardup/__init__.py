"""neardup: near-duplicate text detection with SimHash.

>>> import neardup
>>> fingerprinter = neardup.Fingerprinter("default")
>>> a = fingerprinter.fingerprint("Near-duplicate detection finds documents that are almost the same.")
>>> b = fingerprinter.fingerprint("Near-duplicate detection finds documents that are almost the same!")
>>> neardup.distance(a, b) <= 3
True
"""

from ._neardup import Fingerprinter, Index, NeardupError, dedup, distance, pairs, similarity, __version__

__all__ = ["Fingerprinter", "Index", "NeardupError", "dedup", "distance", "pairs", "similarity", "__version__"]
