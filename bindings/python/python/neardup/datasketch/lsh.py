# mypy: ignore-errors
# (datasketch's numpy arithmetic, kept as datasketch writes it, is dynamically typed.)
"""``MinHashLSH``: datasketch 2.0.0's LSH index with its in-memory (dict)
storage, giving the same band parameters, buckets and query answers, with
the band tables in neardup's compact exact ``Bands`` (Rust) instead of a
dict of sets per band. Redis, Cassandra and MongoDB storage are not
supported: a ValueError names the backend."""

from __future__ import annotations

import pickle
from typing import Any, Callable, Hashable, Iterable, List, Optional

import numpy as np

from .._neardup import Bands, optimal_param
from .minhash import _check_scheme_consistency


def _optimal_param(threshold, num_perm, false_positive_weight, false_negative_weight):
    """The (b, r) datasketch's optimizer picks."""
    return optimal_param(float(threshold), int(num_perm), float(false_positive_weight), float(false_negative_weight))


class _PyBands:
    """Band tables keyed by what a user's ``hashfunc`` returns (any
    hashable): plain dicts, as datasketch keeps them; the same interface
    as ``Bands``."""

    def __init__(self, bands: int):
        self._tables: List[dict] = [{} for _ in range(bands)]
        self._entries: List[Optional[tuple]] = []
        self._free: List[int] = []

    def insert(self, hs: tuple) -> int:
        i = self._free.pop() if self._free else len(self._entries)
        if i == len(self._entries):
            self._entries.append(None)
        self._entries[i] = hs
        for h, t in zip(hs, self._tables):
            t.setdefault(h, set()).add(i)
        return i

    def remove(self, i: int) -> bool:
        hs = self._entries[i] if i < len(self._entries) else None
        if hs is None:
            return False
        for h, t in zip(hs, self._tables):
            s = t[h]
            s.discard(i)
            if not s:
                del t[h]
        self._entries[i] = None
        self._free.append(i)
        return True

    def query(self, hs: tuple, bands: int) -> set:
        out: set = set()
        for h, t in zip(hs[:bands], self._tables[:bands]):
            out.update(t.get(h, ()))
        return out

    def bucket(self, band: int, h) -> List[int]:
        return list(self._tables[band].get(h, ()))

    def buckets(self, band: int):
        return [(h, list(ids)) for h, ids in self._tables[band].items()]

    def bucket_count(self, band: int) -> int:
        return len(self._tables[band])

    def get(self, i: int):
        return self._entries[i] if i < len(self._entries) else None

    def __len__(self) -> int:
        return len(self._entries) - len(self._free)


class _BandView:
    """Band ``i``'s table, read-only, as datasketch's ``DictSetStorage``:
    band key (bytes) → set of keys."""

    def __init__(self, lsh: "MinHashLSH", band: int):
        self._lsh = lsh
        self._band = band

    def _items(self):
        lsh = self._lsh
        if lsh._bands is None:
            return []
        return [(h, {lsh._key_of(i) for i in ids}) for h, ids in lsh._bands.buckets(self._band)]

    def keys(self):
        return dict.fromkeys(h for h, _ in self._items()).keys()

    def items(self):
        return self._items()

    def values(self):
        return [s for _, s in self._items()]

    def get(self, key):
        lsh = self._lsh
        if lsh._bands is None:
            return set()
        return {lsh._key_of(i) for i in lsh._bands.bucket(self._band, key)}

    def __getitem__(self, key):
        return self.get(key)

    def has_key(self, key) -> bool:
        return bool(self.get(key))

    __contains__ = has_key

    def size(self) -> int:
        return 0 if self._lsh._bands is None else self._lsh._bands.bucket_count(self._band)

    __len__ = size

    def __iter__(self):
        return iter(self.keys())

    def itemcounts(self, **kwargs) -> dict:
        return {h: len(s) for h, s in self._items()}

    def getmany(self, *keys):
        return [self.get(k) for k in keys]


class _KeysView:
    """The index's keys, read-only, as datasketch's ``DictListStorage``:
    key → its band keys."""

    def __init__(self, lsh: "MinHashLSH"):
        self._lsh = lsh

    def keys(self):
        return dict.fromkeys(self._lsh._ids).keys()

    def get(self, key):
        return self._lsh._band_keys_of(key)

    def __getitem__(self, key):
        return self.get(key)

    def has_key(self, key) -> bool:
        return key in self._lsh._ids

    __contains__ = has_key

    def size(self) -> int:
        return len(self._lsh._ids)

    __len__ = size

    def __iter__(self):
        return iter(list(self._lsh._ids))

    def itemcounts(self, **kwargs) -> dict:
        return {k: len(self.get(k)) for k in self._lsh._ids}

    def getmany(self, *keys):
        return [self.get(k) for k in keys]


class _Scheme:
    """Something with a ``scheme``, for the scheme check of a batch."""

    def __init__(self, scheme: str):
        self.scheme = scheme


_UNSUPPORTED = {"redis": "Redis", "cassandra": "Cassandra", "mongo": "MongoDB", "aiomongo": "MongoDB", "aioredis": "Redis"}


class MinHashLSH:
    """LSH index of MinHashes for Jaccard threshold queries, identical to
    ``datasketch.MinHashLSH`` with dict storage. Beyond datasketch:
    ``insert_many`` and ``query_many`` take many sketches in one call."""

    def __init__(
        self,
        threshold: float = 0.9,
        num_perm: int = 128,
        weights: tuple = (0.5, 0.5),
        params: Optional[tuple] = None,
        storage_config: Optional[dict] = None,
        prepickle: Optional[bool] = None,
        hashfunc: Optional[Callable[[bytes], Any]] = None,
    ) -> None:
        storage_config = storage_config if storage_config else {"type": "dict"}
        kind = storage_config.get("type")
        if kind != "dict":
            name = _UNSUPPORTED.get(kind, repr(kind))
            raise ValueError(
                "neardup.datasketch.MinHashLSH keeps its tables in memory: %s storage (storage_config type %r) "
                "is not supported. Use storage_config={'type': 'dict'} (the default), or datasketch itself "
                "for external storage." % (name, kind)
            )
        self._buffer_size = 50000
        if threshold > 1.0 or threshold < 0.0:
            raise ValueError("threshold must be in [0.0, 1.0]")
        if num_perm < 2:
            raise ValueError("Too few permutation functions")
        if any(w < 0.0 or w > 1.0 for w in weights):
            raise ValueError("Weight must be in [0.0, 1.0]")
        if sum(weights) != 1.0:
            raise ValueError("Weights must sum to 1.0")
        self.h = num_perm
        if params is not None:
            self.b, self.r = params
            if self.b * self.r > num_perm:
                raise ValueError(
                    "The product of b and r in params is "
                    f"{self.b} * {self.r} = {self.b * self.r} -- it must be less than num_perm {num_perm}. "
                    "Did you forget to specify num_perm?"
                )
        else:
            false_positive_weight, false_negative_weight = weights
            self.b, self.r = _optimal_param(threshold, num_perm, false_positive_weight, false_negative_weight)
        if self.b < 2:
            raise ValueError("The number of bands are too small (b < 2)")
        self.prepickle = False if prepickle is None else prepickle
        self.hashfunc = hashfunc
        self.hashranges = [(i * self.r, (i + 1) * self.r) for i in range(self.b)]
        self._minhash_scheme: Optional[str] = None
        self._reset()

    def _reset(self) -> None:
        self._bands: Any = _PyBands(self.b) if self.hashfunc else None
        self._ids: dict = {}  # key -> id, or a list of ids (check_duplication=False)
        self._keys: list = []  # id -> key
        self._dups = False  # a key was inserted twice (check_duplication=False)
        self._query_buffer: list = []
        self.hashtables = [_BandView(self, i) for i in range(self.b)]
        self.keys = _KeysView(self)

    # -- band keys -----------------------------------------------------------

    def _byteswap(self, hs):
        return bytes(hs.byteswap().data)

    def _hashed_byteswap(self, hs):
        if self.hashfunc is None:
            raise RuntimeError("Hash function not configured.")
        return self.hashfunc(bytes(hs.byteswap().data))

    def _entry(self, minhash):
        """A sketch's band keys: the native bytes of its first b·r values
        (``Bands`` turns them into datasketch's big-endian keys), or a tuple
        of ``hashfunc`` values."""
        hv = minhash.hashvalues
        if self.hashfunc:
            return tuple(self._hashed_byteswap(hv[s:e]) for s, e in self.hashranges)
        return np.ascontiguousarray(hv[: self.b * self.r]).tobytes()

    def _ensure_bands(self, minhash) -> None:
        if self._bands is None:
            hv = np.asarray(minhash.hashvalues)
            self._bands = Bands(self.b, self.r * hv[:1].size, hv.dtype.itemsize)

    def _ensure_bands_raw(self, entry: bytes) -> None:
        """Bands for entries given as key bytes (from a pickle or another
        index): 4-byte values for affine32 sketches, else 8."""
        if self._bands is None:
            width = 4 if self._minhash_scheme == "affine32" else 8
            self._bands = Bands(self.b, len(entry) // self.b // width, width)

    def _band_keys_of(self, key) -> list:
        ids = self._ids.get(key)
        if ids is None:
            return []
        out: list = []
        for i in ids if isinstance(ids, list) else [ids]:
            out.extend(self._split(self._bands.get(i)))
        return out

    def _split(self, entry) -> list:
        if isinstance(entry, tuple):
            return list(entry)
        n = len(entry) // self.b
        return [entry[i * n : (i + 1) * n] for i in range(self.b)]

    def _key_of(self, i: int):
        return self._keys[i]

    def _check(self, minhash) -> None:
        if len(minhash) != self.h:
            raise ValueError("Expecting minhash with length %d, got %d" % (self.h, len(minhash)))

    # -- datasketch's API ----------------------------------------------------

    @property
    def buffer_size(self) -> int:
        return self._buffer_size

    @buffer_size.setter
    def buffer_size(self, value: int) -> None:
        self._buffer_size = value

    def insert(self, key: Hashable, minhash, check_duplication: bool = True):
        """Insert a key with the MinHash of its set."""
        self._insert(key, minhash, check_duplication=check_duplication)

    def _insert(self, key, minhash, check_duplication=True, buffer=False):
        self._check(minhash)
        self._minhash_scheme = _check_scheme_consistency(getattr(self, "_minhash_scheme", None), minhash)
        if self.prepickle:
            key = pickle.dumps(key)
        if check_duplication and key in self._ids:
            raise ValueError("The given key already exists")
        if self.hashfunc:
            self._insert_entry(key, self._entry(minhash))
        else:
            self._ensure_bands(minhash)
            self._add_id(key, self._bands.insert_many(self._entry(minhash))[0])

    def _insert_entry(self, key, entry) -> None:
        """Insert a key by its band keys as stored (key bytes, or a tuple of
        ``hashfunc`` values)."""
        if self.hashfunc:
            i = self._bands.insert(entry)
        else:
            self._ensure_bands_raw(entry)
            i = self._bands.insert_many(entry, False)[0]
        self._add_id(key, i)

    def _add_id(self, key, i: int) -> None:
        if i == len(self._keys):
            self._keys.append(key)
        else:
            self._keys[i] = key
        old = self._ids.get(key)
        if old is None:
            self._ids[key] = i
        else:
            self._dups = True
            if isinstance(old, list):
                old.append(i)
            else:
                self._ids[key] = [old, i]

    def insert_many(self, items: Iterable, check_duplication: bool = True) -> None:
        """Insert many (key, minhash) pairs in one call: as ``insert`` one
        by one, the band tables filled by one call into the kernels."""
        items = list(items)
        if not items:
            return
        keys = [k for k, _ in items]
        minhashes = [m for _, m in items]
        if set(map(len, [m.hashvalues for m in minhashes])) != {self.h}:
            for m in minhashes:
                self._check(m)
        known = self._minhash_scheme
        for scheme in {getattr(m, "scheme", None) for m in minhashes} - {None, known}:
            known = _check_scheme_consistency(known, _Scheme(scheme))
        self._minhash_scheme = known
        if self.prepickle:
            keys = [pickle.dumps(k) for k in keys]
        if check_duplication:
            ids = self._ids
            if len(set(keys)) != len(keys) or any(k in ids for k in keys):
                raise ValueError("The given key already exists")
        if self.hashfunc:
            for key, m in zip(keys, minhashes):
                self._insert_entry(key, self._entry(m))
            return
        self._ensure_bands(minhashes[0])
        new = self._bands.insert_many(self._blob(minhashes), True, self._row_values(minhashes[0]))
        fresh_ids = len(self._keys) == new[0] and new[-1] == new[0] + len(new) - 1
        new_keys = check_duplication or (len(set(keys)) == len(keys) and not any(k in self._ids for k in keys))
        if fresh_ids and new_keys:
            # Ids appended in order to keys not seen before: C loops.
            self._keys.extend(keys)
            self._ids.update(zip(keys, new))
            return
        for key, i in zip(keys, new):
            self._add_id(key, i)

    def _blob(self, minhashes) -> np.ndarray:
        """The native bytes of each sketch's values, whole (``Bands`` reads
        the first b·r of each ``h``; a ValueError, as ``query`` gives, for a
        sketch of another length)."""
        hvs = [m.hashvalues for m in minhashes]
        if set(map(len, hvs)) != {self.h}:
            for m in minhashes:
                self._check(m)
        return np.concatenate(hvs)

    def _row_values(self, minhash) -> int:
        """Values per sketch in ``_blob``'s rows (h, times the width of a
        2-D sketch's rows)."""
        return self.h * np.asarray(minhash.hashvalues)[:1].size

    def merge(self, other: "MinHashLSH", check_overlap: bool = False):
        """Add every key of ``other`` (same num_perm, b and r)."""
        if type(self) is type(other) and self.h == other.h and self.b == other.b and self.r == other.r:
            known, other_known = self._minhash_scheme, other._minhash_scheme
            if known is not None and other_known is not None and known != other_known:
                raise ValueError(
                    "Cannot merge MinHashLSH indexed with MinHash scheme %r into one indexed with scheme %r"
                    % (other_known, known)
                )
            if check_overlap and set(self._ids).intersection(set(other._ids)):
                raise ValueError("The keys are overlapping, duplicate key exists.")
            if known is None:
                self._minhash_scheme = other_known
            for key, ids in list(other._ids.items()):
                for i in ids if isinstance(ids, list) else [ids]:
                    self._insert_entry(key, other._bands.get(i))
        else:
            if type(self) is not type(other):
                raise ValueError(f"Cannot merge type MinHashLSH and type {type(other).__name__}.")
            raise ValueError("Cannot merge MinHashLSH with different initialization parameters.")

    def insertion_session(self, buffer_size: int = 50000) -> "MinHashLSHInsertionSession":
        """A context manager for inserting many keys."""
        return MinHashLSHInsertionSession(self, buffer_size=buffer_size)

    def deletion_session(self, buffer_size: int = 50000) -> "MinHashLSHDeletionSession":
        """A context manager for removing many keys."""
        return MinHashLSHDeletionSession(self, buffer_size=buffer_size)

    def _candidate_keys(self, minhash, bands: int) -> list:
        """The keys sharing one of the first ``bands`` bands, each once."""
        if self._bands is None or not len(self._bands):
            return []
        entry = self._entry(minhash)
        keys = self._keys
        if self.hashfunc:
            ids = self._bands.query(entry, bands)
        elif not self._dups:
            return self._bands.query_many(entry, bands, keys)[0]
        else:
            ids = self._bands.query_many(entry, bands)[0]
        if self._dups:
            return list({keys[i] for i in ids})
        return [keys[i] for i in ids]

    def _candidates(self, minhash, bands: int) -> set:
        return set(self._candidate_keys(minhash, bands))

    def query(self, minhash) -> list:
        """The keys sharing at least one band with ``minhash``."""
        self._check(minhash)
        _check_scheme_consistency(getattr(self, "_minhash_scheme", None), minhash)
        candidates = self._candidate_keys(minhash, self.b)
        if self.prepickle:
            return [pickle.loads(key) for key in candidates]
        return candidates

    def query_many(self, minhashes: Iterable) -> list:
        """``query`` of many sketches in one call (in parallel)."""
        minhashes = list(minhashes)
        for scheme in {getattr(m, "scheme", None) for m in minhashes} - {None}:
            _check_scheme_consistency(self._minhash_scheme, _Scheme(scheme))
        if self.hashfunc or self._bands is None or not minhashes:
            return [self.query(m) for m in minhashes]
        keys = self._keys
        blob, per = self._blob(minhashes), self._row_values(minhashes[0])
        if self._dups:
            found = self._bands.query_many(blob, self.b, None, per)
            out = [list({keys[i] for i in ids}) for ids in found]
        else:
            out = self._bands.query_many(blob, self.b, keys, per)
        if self.prepickle:
            out = [[pickle.loads(k) for k in keys_] for keys_ in out]
        return out

    def add_to_query_buffer(self, minhash) -> None:
        """Buffer a query; ``collect_query_buffer`` answers them together."""
        self._check(minhash)
        _check_scheme_consistency(getattr(self, "_minhash_scheme", None), minhash)
        self._query_buffer.append(self._candidates(minhash, self.b))

    def collect_query_buffer(self) -> list:
        """The keys every buffered query found (their intersection)."""
        buffered, self._query_buffer = self._query_buffer, []
        if not buffered:
            return []
        candidates = set.intersection(*buffered)
        if self.prepickle:
            return [pickle.loads(key) for key in candidates]
        return list(candidates)

    def __contains__(self, key) -> bool:
        if self.prepickle:
            key = pickle.dumps(key)
        return key in self._ids

    def remove(self, key) -> None:
        """Remove a key (ValueError if absent)."""
        self._remove(key)

    def _remove(self, key, buffer=False) -> None:
        if self.prepickle:
            key = pickle.dumps(key)
        if key not in self._ids:
            raise ValueError("The given key does not exist")
        ids = self._ids.pop(key)
        # datasketch removes the key from the buckets of its first bands
        # only; a second insertion (check_duplication=False) stays there.
        first = ids[0] if isinstance(ids, list) else ids
        self._bands.remove(first)
        self._keys[first] = None

    def is_empty(self) -> bool:
        return self._bands is None or len(self._bands) == 0

    def _query_b(self, minhash, b):
        self._check(minhash)
        _check_scheme_consistency(getattr(self, "_minhash_scheme", None), minhash)
        if b > self.b:
            raise ValueError("b must be less or equal to the number of hash tables")
        candidates = self._candidates(minhash, b)
        if self.prepickle:
            return {pickle.loads(key) for key in candidates}
        return candidates

    def get_counts(self) -> list:
        """Per band: band key → how many keys have it."""
        return [t.itemcounts() for t in self.hashtables]

    def get_subset_counts(self, *keys) -> list:
        """``get_counts`` restricted to ``keys``."""
        key_set = [pickle.dumps(key) for key in set(keys)] if self.prepickle else list(set(keys))
        tables: list = [{} for _ in range(self.b)]
        for key in key_set:
            hs = self._band_keys_of(key)
            for h, t in zip(hs, tables):
                t.setdefault(h, set()).add(key)
        return [{h: len(s) for h, s in t.items()} for t in tables]

    # -- pickling ------------------------------------------------------------

    def __getstate__(self):
        bands = self._bands
        entries = [] if bands is None else [(k, bands.get(i)) for i, k in enumerate(self._keys) if bands.get(i) is not None]
        return {
            "neardup_lsh": 1,
            "h": self.h,
            "b": self.b,
            "r": self.r,
            "prepickle": self.prepickle,
            "hashfunc": self.hashfunc,
            "_buffer_size": self._buffer_size,
            "_minhash_scheme": self._minhash_scheme,
            "entries": entries,
        }

    def __setstate__(self, state):
        self.h, self.b, self.r = state["h"], state["b"], state["r"]
        self.prepickle = state.get("prepickle", False)
        self.hashfunc = state.get("hashfunc")
        self._buffer_size = state.get("_buffer_size", 50000)
        self._minhash_scheme = state.get("_minhash_scheme")
        self.hashranges = [(i * self.r, (i + 1) * self.r) for i in range(self.b)]
        self._reset()
        if "neardup_lsh" in state:
            for key, entry in state["entries"]:
                self._insert_entry(key, entry)
            return
        # datasketch's own state: the keys storage holds each key's band keys.
        for key, hs in state["keys"]._dict.items():
            for start in range(0, len(hs), self.b):
                part = hs[start : start + self.b]
                self._insert_entry(key, tuple(part) if self.hashfunc else b"".join(part))


class MinHashLSHInsertionSession:
    """Inserts into a MinHashLSH (a context manager)."""

    def __init__(self, lsh: MinHashLSH, buffer_size: int):
        self.lsh = lsh
        self.lsh.buffer_size = buffer_size

    def __enter__(self) -> "MinHashLSHInsertionSession":
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        self.close()

    def close(self) -> None:
        pass

    def insert(self, key, minhash, check_duplication=True) -> None:
        self.lsh._insert(key, minhash, check_duplication=check_duplication, buffer=True)


class MinHashLSHDeletionSession:
    """Removes from a MinHashLSH (a context manager)."""

    def __init__(self, lsh: MinHashLSH, buffer_size: int):
        self.lsh = lsh
        self.lsh.buffer_size = buffer_size

    def __enter__(self) -> "MinHashLSHDeletionSession":
        return self

    def __exit__(self, exc_type, exc_val, exc_tb) -> None:
        self.close()

    def close(self) -> None:
        pass

    def remove(self, key) -> None:
        self.lsh._remove(key, buffer=True)
