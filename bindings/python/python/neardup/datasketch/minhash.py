# mypy: ignore-errors
# (datasketch's numpy arithmetic, kept as datasketch writes it, is dynamically typed.)
"""``MinHash``: datasketch 2.0.0's MinHash, bit for bit, with the hashing and
the min-update in neardup's kernels (``neardup.minhash.datasketch`` in the
Rust core). The attributes are datasketch's: ``hashvalues`` and
``permutations`` are numpy arrays equal to the ones datasketch computes."""

from __future__ import annotations

import copy
import warnings
from typing import Any, Callable, Iterable, Iterator, Optional

import numpy as np

from .._neardup import Permuter
from . import hashfunc as _hashfunc
from .hashfunc import sha1_hash32, sha1_hash64

hashvalue_byte_size = len(bytes(np.int64(42).data))

_mersenne_prime = np.uint64((1 << 61) - 1)
_max_hash = np.uint64((1 << 32) - 1)
_hash_range = 1 << 32

_SCHEME_LEGACY = "legacy"
_SCHEME_AFFINE32 = "affine32"
_SCHEME_AFFINE64 = "affine64"
_VALID_SCHEMES = (_SCHEME_AFFINE32, _SCHEME_AFFINE64, _SCHEME_LEGACY)
_SCHEME_DTYPES = {
    _SCHEME_LEGACY: np.uint64,
    _SCHEME_AFFINE32: np.uint32,
    _SCHEME_AFFINE64: np.uint64,
}
_SCHEME_MAX_HASHES = {
    _SCHEME_LEGACY: _max_hash,
    _SCHEME_AFFINE32: np.uint32((1 << 32) - 1),
    _SCHEME_AFFINE64: np.uint64((1 << 64) - 1),
}
_SCHEME_CODES = {_SCHEME_AFFINE32: 1, _SCHEME_AFFINE64: 2}
_SCHEME_CODES_INV = {code: scheme for scheme, code in _SCHEME_CODES.items()}

# Permutations drawn for (scheme, seed, num_perm): the kernel and the numpy
# array datasketch would hold (each MinHash gets its own copy of the array).
_DRAWN: dict = {}
_DRAWN_MAX = 64


def _drawn(scheme: str, seed: int, num_perm: int):
    key = (scheme, seed, num_perm)
    hit = _DRAWN.get(key)
    if hit is None:
        kernel = Permuter.draw(scheme, seed, num_perm)
        ab = np.frombuffer(kernel.parameters(), dtype=np.uint64).reshape(2, num_perm)
        if scheme == _SCHEME_LEGACY:
            # datasketch builds (a, b) pairs and transposes them.
            array = np.array(ab.T, dtype=np.uint64).T
        else:
            array = np.array(ab, dtype=_SCHEME_DTYPES[scheme])
        if len(_DRAWN) >= _DRAWN_MAX:
            _DRAWN.pop(next(iter(_DRAWN)))
        hit = _DRAWN[key] = (kernel, array)
    return hit


def _check_scheme_consistency(known: Optional[str], minhash) -> Optional[str]:
    """The scheme an LSH index remembers after seeing ``minhash``; a
    ValueError for a scheme other than the one it knows."""
    scheme = getattr(minhash, "scheme", None)
    if scheme is None:
        return known
    if known is None:
        return scheme
    if scheme != known:
        raise ValueError(
            "MinHash scheme %r does not match scheme %r of the MinHash previously given to this index" % (scheme, known)
        )
    return known


def _union_values(mhs, mismatch: str) -> np.ndarray:
    """The hash values of the union of ``mhs`` (at least two, of one seed,
    length and scheme; else a ValueError, ``mismatch`` for the latter)."""
    if len(mhs) < 2:
        raise ValueError("Cannot union less than 2 MinHash")
    first = mhs[0]
    if any(first.seed != m.seed or len(first) != len(m) or first.scheme != m.scheme for m in mhs):
        raise ValueError(mismatch)
    return np.minimum.reduce([m.hashvalues for m in mhs])


def _is_default_hash(f, scheme: str) -> bool:
    name = "sha1_hash64" if scheme == _SCHEME_AFFINE64 else "sha1_hash32"
    if f is getattr(_hashfunc, name):
        return True
    return getattr(f, "__module__", None) == "datasketch.hashfunc" and getattr(f, "__name__", None) == name


def _numpy_permutations(scheme: str, seed, num_perm: int) -> np.ndarray:
    """The permutations drawn by numpy itself, as datasketch draws them: for
    seeds the kernels do not take (arrays, out of range: numpy's errors)."""
    gen = np.random.RandomState(seed)
    if scheme == _SCHEME_LEGACY:
        return np.array(
            [
                (gen.randint(1, _mersenne_prime, dtype=np.uint64), gen.randint(0, _mersenne_prime, dtype=np.uint64))
                for _ in range(num_perm)
            ],
            dtype=np.uint64,
        ).T
    width = 64 if scheme == _SCHEME_AFFINE64 else 32
    dtype = _SCHEME_DTYPES[scheme]
    a = gen.randint(0, 1 << (width - 1), num_perm, dtype=dtype) * dtype(2) + dtype(1)
    b = gen.randint(0, 1 << width, num_perm, dtype=dtype)
    return np.array([a, b])


class MinHash:
    """MinHash of a set, identical to ``datasketch.MinHash`` (2.0.0): the
    same arguments, attributes, values, errors and pickles. The default
    SHA-1 hashing and the permutations run in neardup's kernels; a Python
    ``hashfunc`` still works (it is called per item, as in datasketch).
    ``gpu_mode`` is accepted; there is no GPU path ("always" raises as
    datasketch does without CUDA)."""

    def __init__(
        self,
        num_perm: int = 128,
        seed: int = 1,
        gpu_mode: str = "disable",
        hashfunc: Optional[Callable] = None,
        hashobj: Optional[object] = None,
        hashvalues: Optional[Any] = None,
        permutations: Optional[Any] = None,
        scheme: Optional[str] = None,
    ) -> None:
        if scheme is None:
            if hashvalues is not None or permutations is not None:
                raise ValueError(
                    "scheme must be specified explicitly when initializing from existing "
                    "hash values or permutations: pass the scheme of the MinHash they came "
                    "from, or scheme='legacy' for values created by datasketch before 2.0.0."
                )
            scheme = _SCHEME_AFFINE32
        elif scheme not in _VALID_SCHEMES:
            raise ValueError("scheme must be one of %s, got %r" % (", ".join(_VALID_SCHEMES), scheme))
        self.scheme = scheme
        if hashvalues is not None:
            num_perm = len(hashvalues)
        if num_perm < 1:
            raise ValueError("num_perm must be positive")
        if num_perm > _hash_range:
            raise ValueError("Cannot have more than %d number of permutation functions" % _hash_range)
        self.seed = seed
        self.num_perm = num_perm
        if hashfunc is None:
            hashfunc = sha1_hash64 if scheme == _SCHEME_AFFINE64 else sha1_hash32
        if not callable(hashfunc):
            raise ValueError("The hashfunc must be a callable.")
        self.hashfunc = hashfunc
        if hashobj is not None:
            warnings.warn("hashobj is deprecated, use hashfunc instead.", DeprecationWarning, stacklevel=2)
        if hashvalues is not None:
            self.hashvalues = self._parse_hashvalues(hashvalues)
        else:
            self.hashvalues = self._init_hashvalues(num_perm)
        if permutations is not None:
            self.permutations = self._parse_permutations(permutations)
        else:
            self.permutations = self._init_permutations(num_perm)
        if len(self) != len(self.permutations[0]):
            raise ValueError("Numbers of hash values and permutations mismatch")
        self._gpu_mode = gpu_mode
        self._a_gpu = None
        self._b_gpu = None

    # -- state -------------------------------------------------------------

    def _init_hashvalues(self, num_perm: int) -> np.ndarray:
        return np.full(num_perm, _SCHEME_MAX_HASHES[self.scheme], dtype=_SCHEME_DTYPES[self.scheme])

    def _init_permutations(self, num_perm: int) -> np.ndarray:
        seed = self.seed
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or not 0 <= int(seed) < 2**32:
            return _numpy_permutations(self.scheme, seed, num_perm)
        kernel, array = _drawn(self.scheme, int(seed), num_perm)
        array = array.copy(order="K")
        self.__dict__["_kernel"] = (array, kernel)
        return array

    def _to_scheme_array(self, values, what: str) -> np.ndarray:
        if isinstance(values, np.ndarray):
            if (
                values.dtype.kind in "iu"
                and values.size
                and (int(values.max()) > int(_SCHEME_MAX_HASHES[self.scheme]) or int(values.min()) < 0)
            ):
                raise ValueError("%s out of range for scheme %r" % (what, self.scheme))
            return values.astype(_SCHEME_DTYPES[self.scheme])
        try:
            return np.array(values, dtype=_SCHEME_DTYPES[self.scheme])
        except OverflowError as err:
            raise ValueError("%s out of range for scheme %r: %s" % (what, self.scheme, err)) from err

    def _parse_hashvalues(self, hashvalues) -> np.ndarray:
        if self.scheme == _SCHEME_LEGACY:
            return np.array(hashvalues, dtype=np.uint64)
        return self._to_scheme_array(hashvalues, "hash values")

    def _parse_permutations(self, permutations):
        if self.scheme == _SCHEME_LEGACY:
            return permutations
        dtype = _SCHEME_DTYPES[self.scheme]
        if (
            isinstance(permutations, np.ndarray)
            and permutations.dtype == dtype
            and permutations.ndim == 2
            and permutations.shape[0] == 2
        ):
            parsed = permutations
        else:
            a = self._to_scheme_array(permutations[0], "permutation parameters")
            b = self._to_scheme_array(permutations[1], "permutation parameters")
            parsed = np.array([a, b])
        if np.any(parsed[0] & dtype(1) == 0):
            raise ValueError("all `a` permutation parameters must be odd for scheme %r" % self.scheme)
        return parsed

    def _hash_input_array(self, hvs) -> np.ndarray:
        try:
            return np.array(hvs, dtype=_SCHEME_DTYPES[self.scheme])
        except OverflowError as err:
            raise ValueError(
                "hashfunc returned a value out of range for scheme %r: %s. "
                "Use a hash function matching the scheme width, or scheme='affine64' "
                "for 64-bit hash values." % (self.scheme, err)
            ) from err

    def _kernel_for(self) -> Permuter:
        """The kernel of this MinHash's permutations (built once per
        permutations object)."""
        perms = self.permutations
        cached = self.__dict__.get("_kernel")
        if cached is not None and cached[0] is perms:
            return cached[1]
        a, b = perms
        a = np.asarray(a, dtype=np.uint64).tolist()
        b = np.asarray(b, dtype=np.uint64).tolist()
        kernel = Permuter(self.scheme, a, b)
        self.__dict__["_kernel"] = (perms, kernel)
        return kernel

    def _values_bytes(self) -> bytes:
        return np.ascontiguousarray(self.hashvalues, dtype=_SCHEME_DTYPES[self.scheme]).tobytes()

    def _set_values(self, raw) -> None:
        self.hashvalues = np.frombuffer(raw, dtype=_SCHEME_DTYPES[self.scheme])

    def _update_hashes(self, hv_list) -> None:
        if self.scheme == _SCHEME_LEGACY:
            hv = np.array(hv_list, dtype=np.uint64)
        else:
            hv = self._hash_input_array(hv_list)
        self._set_values(self._kernel_for().update_hashes(self._values_bytes(), hv.tobytes()))

    # -- datasketch's API ----------------------------------------------------

    def update(self, b) -> None:
        """Update this MinHash with a new value, hashed by ``hashfunc``."""
        if _is_default_hash(self.hashfunc, self.scheme):
            raw = self._kernel_for().update_bytes(self._values_bytes(), (b,))
            if raw is not None:
                self._set_values(raw)
                return
        self._update_hashes([self.hashfunc(b)])

    def update_batch(self, b: Iterable) -> None:
        """Update this MinHash with many values (one call into the kernels
        for ``bytes`` values and the default hash)."""
        items = b if isinstance(b, (list, tuple)) else list(b)
        if _is_default_hash(self.hashfunc, self.scheme) and getattr(self, "_gpu_mode", "disable") != "always":
            if not items:
                return
            raw = self._kernel_for().update_bytes(self._values_bytes(), items)
            if raw is not None:
                self._set_values(raw)
                return
        hv_list = [self.hashfunc(_b) for _b in items]
        if not hv_list:
            return
        if getattr(self, "_gpu_mode", "disable") == "always":
            raise RuntimeError("GPU mode 'always' requested but CuPy/CUDA device is unavailable.")
        self._update_hashes(hv_list)

    def jaccard(self, other: "MinHash") -> float:
        """Estimated Jaccard similarity: the share of equal hash values."""
        if getattr(other, "scheme", None) != self.scheme:
            raise ValueError("Cannot compute Jaccard given MinHash with different permutation schemes")
        if other.seed != self.seed:
            raise ValueError("Cannot compute Jaccard given MinHash with different seeds")
        if len(self) != len(other):
            raise ValueError("Cannot compute Jaccard given MinHash with different numbers of permutation functions")
        return float(np.count_nonzero(self.hashvalues == other.hashvalues)) / float(len(self))

    def count(self) -> float:
        """Estimated cardinality of the set."""
        k = len(self)
        return float(k) / np.sum(self.hashvalues / float(_SCHEME_MAX_HASHES[self.scheme])) - 1.0

    def merge(self, other: "MinHash") -> None:
        """Make this MinHash the union of itself and ``other``."""
        if getattr(other, "scheme", None) != self.scheme:
            raise ValueError("Cannot merge MinHash with different permutation schemes")
        if other.seed != self.seed:
            raise ValueError("Cannot merge MinHash with different seeds")
        if len(self) != len(other):
            raise ValueError("Cannot merge MinHash with different numbers of permutation functions")
        self.hashvalues = np.minimum(other.hashvalues, self.hashvalues)

    def digest(self) -> np.ndarray:
        """A copy of the hash values."""
        return copy.copy(self.hashvalues)

    def is_empty(self) -> bool:
        """True when no value has been added."""
        return not np.any(self.hashvalues != _SCHEME_MAX_HASHES[self.scheme])

    def clear(self) -> None:
        """Reset the hash values."""
        self.hashvalues = self._init_hashvalues(len(self))

    def copy(self) -> "MinHash":
        """A copy sharing the permutations."""
        m = MinHash(
            seed=self.seed,
            hashfunc=self.hashfunc,
            hashvalues=self.digest(),
            permutations=self.permutations,
            gpu_mode=getattr(self, "_gpu_mode", "disable"),
            scheme=self.scheme,
        )
        cached = self.__dict__.get("_kernel")
        if cached is not None:
            m.__dict__["_kernel"] = cached
        return m

    def __len__(self) -> int:
        return len(self.hashvalues)

    def __eq__(self, other) -> bool:
        return (
            type(self) is type(other)
            and self.scheme == other.scheme
            and self.seed == other.seed
            and np.array_equal(self.hashvalues, other.hashvalues)
        )

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def union(cls, *mhs: "MinHash") -> "MinHash":
        """A new MinHash, the union of at least two."""
        hashvalues = _union_values(
            mhs, "The unioning MinHash must have the same seed, number of permutation functions and scheme"
        )
        return cls(
            num_perm=len(mhs[0]),
            seed=mhs[0].seed,
            hashfunc=mhs[0].hashfunc,
            hashvalues=hashvalues,
            permutations=mhs[0].permutations,
            gpu_mode=getattr(mhs[0], "_gpu_mode", "disable"),
            scheme=mhs[0].scheme,
        )

    @classmethod
    def bulk(cls, b: Iterable, **minhash_kwargs) -> list:
        """MinHashes of many sets (lists of bytes): hashed on every core,
        with the GIL released, for the default hash."""
        return list(cls.generator(b, **minhash_kwargs))

    @classmethod
    def generator(cls, b: Iterable, **minhash_kwargs) -> Iterator["MinHash"]:
        """MinHashes of many sets, lazily, computed in parallel blocks."""
        m = cls(**minhash_kwargs)
        fast = _is_default_hash(m.hashfunc, m.scheme) and m._gpu_mode != "always"
        block: list = []
        for _b in b:
            block.append(_b)
            if len(block) == 4096:
                yield from m._sign_block(block, fast)
                block = []
        if block:
            yield from m._sign_block(block, fast)

    def _sign_block(self, sets: list, fast: bool) -> list:
        if fast:
            sets = [s if isinstance(s, (list, tuple)) else list(s) for s in sets]
            raw = self._kernel_for().bulk_bytes(sets)
            if raw is not None:
                values = np.frombuffer(raw, dtype=_SCHEME_DTYPES[self.scheme]).reshape(len(sets), len(self))
                state = dict(self.__dict__)
                out = []
                for row in values:
                    m = object.__new__(MinHash)
                    m.__dict__.update(state)
                    m.hashvalues = row.copy()
                    out.append(m)
                return out
        out = []
        for s in sets:
            m = self.copy()
            m.update_batch(s)
            out.append(m)
        return out

    def __getstate__(self):
        state = {k: v for k, v in self.__dict__.items() if k != "_kernel"}
        state["_a_gpu"] = None
        state["_b_gpu"] = None
        return state

    def __setstate__(self, state):
        state = dict(state)
        state.setdefault("scheme", _SCHEME_LEGACY)
        state.setdefault("_gpu_mode", "disable")
        self.__dict__.update(state)
