"""neardup: near-duplicate text detection with SimHash.

>>> import neardup
>>> fp = neardup.Fingerprinter("default")
>>> a = fp.fingerprint("Near-duplicate detection finds documents that are almost the same.")
>>> b = fp.fingerprint("Near-duplicate detection finds documents that are almost the same!")
>>> neardup.distance(a, b) <= 3
True
"""

from ._neardup import Fingerprinter, Index, NeardupError, dedup, distance, pairs, similarity, __version__

__all__ = ["Fingerprinter", "Index", "NeardupError", "dedup", "distance", "pairs", "similarity", "__version__"]
