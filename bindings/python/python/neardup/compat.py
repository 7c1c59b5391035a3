"""A drop-in for the PyPI ``simhash`` package (2.1.2): change one import.

    from neardup.compat import Simhash, SimhashIndex   # was: from simhash import ...

Same constructor arguments, ``.value``, ``.f``, ``.distance``,
``SimhashIndex.get_near_dups`` / ``add`` / ``delete`` / ``bucket_size``,
same results. Texts with the default ``f``, ``reg`` and ``hashfunc`` are
fingerprinted in Rust (the ``python-simhash`` preset, byte-identical);
anything else (other widths, expressions, hash functions, feature lists)
runs the same algorithm in Python. ``SimhashIndex`` answers from a
``neardup.Index`` (exact, no buckets to scan).

And ferd/simhash (Erlang): ``ferd_hash(data)`` is its ``simhash:hash/1``
(the 16 bytes of the binary it returns, for any bytes), and
``ferd_distance(a, b)`` its ``distance/2``, from the ``ferd`` preset.
"""

import hashlib
import logging
import numbers
import re
from collections.abc import Iterable
from itertools import groupby

from ._neardup import Fingerprinter, Index

__all__ = ["Simhash", "SimhashIndex", "ferd_hash", "ferd_distance"]

_DEFAULT_REG = r"[\w\u4e00-\u9fcc]+"


def _hashfunc(x):
    return hashlib.md5(x).digest()


_RUST = None


def _rust():
    global _RUST
    if _RUST is None:
        _RUST = Fingerprinter("python-simhash")
    return _RUST


_FERD = None


def ferd_hash(data):
    """ferd/simhash's ``simhash:hash(Data)``: 16 bytes. ``data`` is any
    bytes-like object, or a str (taken as its UTF-8 bytes)."""
    global _FERD
    if _FERD is None:
        _FERD = Fingerprinter("ferd")
    if isinstance(data, str):
        data = data.encode("utf-8")
    elif not isinstance(data, bytes):
        data = bytes(memoryview(data))
    return _FERD.fingerprint_bytes(data).to_bytes(16, "big")


def ferd_distance(a, b):
    """ferd/simhash's ``distance(A, B)``: how many bits two ``ferd_hash``
    results differ in."""
    if len(a) != 16 or len(b) != 16:
        raise ValueError("ferd_distance compares two 16-byte ferd_hash results, not {} and {} bytes"
                         .format(len(a), len(b)))
    return (int.from_bytes(a, "big") ^ int.from_bytes(b, "big")).bit_count()


class WidthMismatch(ValueError, AssertionError):
    """Two fingerprints of different widths (the package asserts; this is
    both a ValueError and an AssertionError)."""


class Simhash:
    """A SimHash fingerprint, as the PyPI package makes it."""

    large_weight_cutoff = 50
    batch_size = 200

    def __init__(self, value, f=64, reg=_DEFAULT_REG, hashfunc=_hashfunc, log=None):
        if f % 8:
            raise ValueError("f must be a multiple of 8")
        self.f = f
        self.f_bytes = f // 8
        self.reg = reg
        self.value = None
        self.hashfunc = hashfunc
        self.hashfunc_returns_int = isinstance(hashfunc(b"test"), numbers.Integral)
        self.log = log if log is not None else logging.getLogger("simhash")
        if isinstance(value, Simhash):
            self.value = value.value
        elif isinstance(value, str):
            self.build_by_text(value)
        elif isinstance(value, Iterable):
            self.build_by_features(value)
        elif isinstance(value, numbers.Integral):
            self.value = value
        else:
            raise Exception("Bad parameter with type {}".format(type(value)))

    def __eq__(self, other):
        return self.value == other.value

    def __hash__(self):
        return hash((self.value, self.f))

    def __repr__(self):
        return "Simhash({:#x}, f={})".format(self.value, self.f)

    def _slide(self, content, width=4):
        return [content[i : i + width] for i in range(max(len(content) - width + 1, 1))]

    def _tokenize(self, content):
        content = "".join(re.findall(self.reg, content.lower()))
        return self._slide(content)

    def build_by_text(self, content):
        if self.f == 64 and self.reg == _DEFAULT_REG and self.hashfunc is _hashfunc:
            self.value = _rust().fingerprint(content)
            return
        features = self._tokenize(content)
        features = {k: sum(1 for _ in g) for k, g in groupby(sorted(features))}
        self.build_by_features(features)

    def build_by_features(self, features):
        """``features``: tokens (weight 1), (token, weight) pairs, or a dict."""
        f = self.f
        sums = [0] * f
        count = 0
        mask = (1 << f) - 1
        if isinstance(features, dict):
            features = features.items()
        w = 1
        for feature in features:
            if not isinstance(feature, str):
                feature, w = feature
            count += w
            if self.hashfunc_returns_int:
                h = self.hashfunc(feature.encode("utf-8")) & mask
            else:
                h = int.from_bytes(self.hashfunc(feature.encode("utf-8"))[-self.f_bytes :], "big")
            # Bit i from the most significant end, as the package unpacks bytes.
            for i in range(f):
                if h >> (f - 1 - i) & 1:
                    sums[i] += w
        value = 0
        for i in range(f):
            value = (value << 1) | (1 if sums[i] > count / 2 else 0)
        self.value = value

    def distance(self, another):
        if self.f != another.f:
            raise WidthMismatch("fingerprints of {} and {} bits".format(self.f, another.f))
        return bin((self.value ^ another.value) & ((1 << self.f) - 1)).count("1")


class SimhashIndex:
    """The package's index: ``objs`` is a list of (obj_id, Simhash); ``k``
    the tolerance. Near duplicates come back as str ids, as there."""

    def __init__(self, objs, f=64, k=2, log=None):
        self.k = k
        self.f = f
        self.log = log if log is not None else logging.getLogger("simhash")
        self._index = Index(k=k, f=64 if f <= 64 else 128) if f <= 128 else None
        self._linear = {}
        self._keys = set()
        for i, q in enumerate(objs):
            if i % 10000 == 0 or i == len(objs) - 1:
                self.log.info("%s/%s", i + 1, len(objs))
            self.add(*q)

    def _check(self, simhash):
        if simhash.f != self.f:
            raise WidthMismatch("a {}-bit Simhash in a {}-bit index".format(simhash.f, self.f))

    def _entry(self, obj_id, simhash):
        return "%x,%s" % (simhash.value, obj_id)

    def get_near_dups(self, simhash):
        """The ids (str) of everything within k bits of ``simhash``."""
        self._check(simhash)
        self._keys.update(self.get_keys(simhash))
        if self._index is not None:
            found = [entry for entry, _ in self._index.query(simhash.value & ((1 << self.f) - 1))]
        else:
            found = [e for e, v in self._linear.items() if bin(v ^ simhash.value).count("1") <= self.k]
        return list({entry.split(",", 1)[1] for entry in found})

    def add(self, obj_id, simhash):
        self._check(simhash)
        self._keys.update(self.get_keys(simhash))
        entry = self._entry(obj_id, simhash)
        value = simhash.value & ((1 << self.f) - 1)
        if self._index is not None:
            self._index.insert(entry, value)
        else:
            self._linear[entry] = value

    def delete(self, obj_id, simhash):
        self._check(simhash)
        self._keys.update(self.get_keys(simhash))
        entry = self._entry(obj_id, simhash)
        if self._index is not None:
            self._index.remove(entry)
        else:
            self._linear.pop(entry, None)

    @property
    def offsets(self):
        return [self.f // (self.k + 1) * i for i in range(self.k + 1)]

    def get_keys(self, simhash):
        offsets = self.offsets
        for i, offset in enumerate(offsets):
            end = self.f if i == len(offsets) - 1 else offsets[i + 1]
            c = simhash.value >> offset & ((1 << (end - offset)) - 1)
            yield "%x:%x" % (c, i)

    def bucket_size(self):
        """Distinct bucket keys the package would hold (it creates one for
        every key an add, delete or lookup touches)."""
        return len(self._keys)
