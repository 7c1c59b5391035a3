"""A drop-in for ``datasketch`` (2.0.0): ``MinHash``, ``LeanMinHash`` and
``MinHashLSH`` with the same arguments, values, answers, errors and byte
formats, computed by neardup's kernels.

Change one import::

    from neardup.datasketch import MinHash, LeanMinHash, MinHashLSH

>>> from neardup.datasketch import MinHash, MinHashLSH
>>> a, b = MinHash(), MinHash()
>>> a.update_batch([w.encode() for w in "the quick brown fox jumps over the lazy dog".split()])
>>> b.update_batch([w.encode() for w in "the quick brown fox jumps over the lazy cat".split()])
>>> round(a.jaccard(b), 2)
0.78
>>> lsh = MinHashLSH(threshold=0.5, num_perm=128)
>>> lsh.insert("a", a)
>>> lsh.query(b)
['a']

``MinHash.bulk`` hashes many sets on every core; ``MinHashLSH.insert_many``
and ``query_many`` take many sketches in one call. ``loads``/``dumps`` read
datasketch's pickles and write pickles datasketch reads. Not included:
Redis/Cassandra/MongoDB storage, b-bit and weighted MinHash, LSH Forest and
Ensemble, HyperLogLog, GPU mode.
"""

import importlib.util as _util

if _util.find_spec("numpy") is None:  # pragma: no cover - numpy comes with the extra
    raise ImportError("neardup.datasketch needs numpy (its hashvalues are numpy arrays): pip install 'neardup[datasketch]'")

from ._pickle import dump, dumps, load, loads
from .hashfunc import sha1_hash32, sha1_hash64
from .lean_minhash import LeanMinHash
from .lsh import MinHashLSH, MinHashLSHDeletionSession, MinHashLSHInsertionSession
from .minhash import MinHash

__all__ = [
    "LeanMinHash",
    "MinHash",
    "MinHashLSH",
    "MinHashLSHDeletionSession",
    "MinHashLSHInsertionSession",
    "dump",
    "dumps",
    "load",
    "loads",
    "sha1_hash32",
    "sha1_hash64",
]
