# mypy: ignore-errors
# (datasketch's numpy arithmetic, kept as datasketch writes it, is dynamically typed.)
"""``LeanMinHash``: a frozen MinHash without permutations, identical to
datasketch 2.0.0's, including its ``serialize`` bytes and pickles."""

from __future__ import annotations

import struct
from typing import Iterable, Optional

from .minhash import (
    _SCHEME_CODES,
    _SCHEME_CODES_INV,
    _SCHEME_LEGACY,
    _VALID_SCHEMES,
    MinHash,
    _union_values,
)

_SCHEME_VALUE_FMTS = {_SCHEME_LEGACY: "I", "affine32": "I", "affine64": "Q"}


class LeanMinHash(MinHash):
    """A MinHash with its state frozen (no ``update``): from a MinHash, or
    from ``seed``, ``hashvalues`` and ``scheme``."""

    __slots__ = ("hashvalues", "scheme", "seed")

    def _initialize_slots(self, seed, hashvalues, scheme=_SCHEME_LEGACY):
        if scheme not in _VALID_SCHEMES:
            raise ValueError("scheme must be one of %s, got %r" % (", ".join(_VALID_SCHEMES), scheme))
        self.seed = seed
        self.scheme = scheme
        self.hashvalues = self._parse_hashvalues(hashvalues)
        if scheme != _SCHEME_LEGACY and len(self.hashvalues) == 0:
            raise ValueError("hashvalues must not be empty")

    def __init__(
        self,
        minhash: Optional[MinHash] = None,
        seed: Optional[int] = None,
        hashvalues: Optional[Iterable] = None,
        scheme: Optional[str] = None,
    ):
        if minhash is not None:
            if scheme is not None and scheme != minhash.scheme:
                raise ValueError(
                    "scheme %r conflicts with the scheme %r of the given MinHash" % (scheme, minhash.scheme)
                )
            self._initialize_slots(minhash.seed, minhash.hashvalues, minhash.scheme)
        elif hashvalues is not None and seed is not None:
            if scheme is None:
                raise ValueError(
                    "scheme must be specified explicitly when initializing from existing "
                    "hash values: pass the scheme of the MinHash they came from, or "
                    "scheme='legacy' for hash values created by datasketch before 2.0.0."
                )
            self._initialize_slots(seed, hashvalues, scheme)
        else:
            raise ValueError(
                "Init parameters cannot be None: make sure to set either minhash or both of hash values and seed"
            )

    def update(self, b) -> None:
        """Not available: raises TypeError."""
        raise TypeError("Cannot update a LeanMinHash")

    def copy(self) -> "LeanMinHash":
        lmh = object.__new__(LeanMinHash)
        lmh._initialize_slots(self.seed, self.hashvalues, self.scheme)
        return lmh

    def _value_fmt(self) -> str:
        return _SCHEME_VALUE_FMTS[self.scheme]

    def bytesize(self, byteorder="@") -> int:
        """Bytes ``serialize`` writes."""
        if self.scheme == _SCHEME_LEGACY:
            return struct.calcsize("%sqi%dI" % (byteorder, len(self)))
        return struct.calcsize("%sqiB%d%s" % (byteorder, len(self), self._value_fmt()))

    def _pack(self, buf, byteorder: str) -> None:
        values = [int(v) for v in self.hashvalues]
        if self.scheme == _SCHEME_LEGACY:
            struct.pack_into("%sqi%dI" % (byteorder, len(self)), buf, 0, self.seed, len(self), *values)
        else:
            fmt = "%sqiB%d%s" % (byteorder, len(self), self._value_fmt())
            struct.pack_into(fmt, buf, 0, self.seed, -len(self), _SCHEME_CODES[self.scheme], *values)

    def serialize(self, buf, byteorder="@") -> None:
        """Write datasketch's byte format into ``buf`` (seed, the number of
        values — negated for the affine schemes, then a scheme code — and
        the values)."""
        if len(buf) < self.bytesize(byteorder):
            raise ValueError("The buffer does not have enough space for holding this MinHash.")
        self._pack(buf, byteorder)

    @classmethod
    def _unpack(cls, buf, byteorder: str) -> "LeanMinHash":
        head = "%sqi" % byteorder
        try:
            seed, num_perm = struct.unpack_from(head, buf, 0)
        except TypeError:
            buf = memoryview(buf)
            seed, num_perm = struct.unpack_from(head, buf, 0)
        if num_perm >= 0:
            scheme = _SCHEME_LEGACY
            offset = struct.calcsize(head)
        else:
            num_perm = -num_perm
            (code,) = struct.unpack_from(byteorder + "B", buf, struct.calcsize(head))
            if code not in _SCHEME_CODES_INV:
                raise ValueError("Unknown permutation scheme code: %d" % code)
            scheme = _SCHEME_CODES_INV[code]
            offset = struct.calcsize("%sqiB0%s" % (byteorder, _SCHEME_VALUE_FMTS[scheme]))
        hashvalues = struct.unpack_from("%s%d%s" % (byteorder, num_perm, _SCHEME_VALUE_FMTS[scheme]), buf, offset)
        lmh = object.__new__(LeanMinHash)
        lmh._initialize_slots(seed, hashvalues, scheme)
        return lmh

    @classmethod
    def deserialize(cls, buf, byteorder="@") -> "LeanMinHash":
        """Read datasketch's byte format (pre-2.0.0 buffers as ``legacy``)."""
        return cls._unpack(buf, byteorder)

    def __getstate__(self):
        buf = bytearray(self.bytesize())
        self._pack(buf, "")
        return buf

    def __setstate__(self, buf):
        other = LeanMinHash._unpack(buf, "")
        self._initialize_slots(other.seed, other.hashvalues, other.scheme)

    def __hash__(self) -> int:
        return hash((self.scheme, self.seed, tuple(self.hashvalues)))

    @classmethod
    def union(cls, *lmhs: "LeanMinHash") -> "LeanMinHash":
        """A new LeanMinHash, the union of at least two."""
        hashvalues = _union_values(
            lmhs, "The unioning MinHash must have the same seed, number of permutation functions and scheme."
        )
        lmh = object.__new__(LeanMinHash)
        lmh._initialize_slots(lmhs[0].seed, hashvalues, lmhs[0].scheme)
        return lmh

