# mypy: ignore-errors
# (datasketch's numpy arithmetic, kept as datasketch writes it, is dynamically typed.)
"""Pickles that cross between datasketch and neardup.datasketch.

``loads`` reads a pickle written by datasketch (MinHash, LeanMinHash,
MinHashLSH with dict storage, and any containers of them) into the
drop-in's classes, whether or not datasketch is installed. ``dumps``
writes the drop-in's objects so that datasketch's ``pickle.loads`` reads
them as its own classes (where datasketch is installed). Within neardup,
plain ``pickle`` works both ways."""

from __future__ import annotations

import copyreg
import importlib
import io
import pickle
from collections import defaultdict
from typing import Any

from . import hashfunc as _hashfunc
from .lean_minhash import LeanMinHash
from .lsh import MinHashLSH, _PyBands
from .minhash import MinHash


class _DictStorage:
    """datasketch's ``DictListStorage``/``DictSetStorage`` as unpickled: its
    ``_dict`` is all ``MinHashLSH.__setstate__`` reads."""

    def __setstate__(self, state):
        self.__dict__.update(state)


_TO_OURS = {
    ("datasketch.minhash", "MinHash"): MinHash,
    ("datasketch.lean_minhash", "LeanMinHash"): LeanMinHash,
    ("datasketch.lsh", "MinHashLSH"): MinHashLSH,
    ("datasketch", "MinHash"): MinHash,
    ("datasketch", "LeanMinHash"): LeanMinHash,
    ("datasketch", "MinHashLSH"): MinHashLSH,
    ("datasketch.storage", "DictListStorage"): _DictStorage,
    ("datasketch.storage", "DictSetStorage"): _DictStorage,
    ("datasketch.hashfunc", "sha1_hash32"): _hashfunc.sha1_hash32,
    ("datasketch.hashfunc", "sha1_hash64"): _hashfunc.sha1_hash64,
}


class _Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        ours = _TO_OURS.get((module, name))
        if ours is not None:
            return ours
        if module == "datasketch" or module.startswith("datasketch."):
            raise pickle.UnpicklingError(
                "%s.%s is not part of neardup.datasketch (MinHash, LeanMinHash and MinHashLSH with dict "
                "storage are): load this pickle with datasketch itself" % (module, name)
            )
        return super().find_class(module, name)


def loads(data: bytes, **kwargs) -> Any:
    """``pickle.loads`` that reads datasketch's classes as the drop-in's."""
    return _Unpickler(io.BytesIO(data), **kwargs).load()


def load(file, **kwargs) -> Any:
    """``pickle.load`` that reads datasketch's classes as the drop-in's."""
    return _Unpickler(file, **kwargs).load()


class _Global:
    """A reference to ``module.name`` written as
    ``getattr(importlib.import_module(module), name)``: it resolves on the
    loading side without neardup, and needs no datasketch when writing."""

    def __init__(self, module: str, name: str):
        self.module, self.name = module, name


class _Module:
    def __init__(self, name: str):
        self.name = name


_TO_DATASKETCH = {
    MinHash: _Global("datasketch.minhash", "MinHash"),
    LeanMinHash: _Global("datasketch.lean_minhash", "LeanMinHash"),
    MinHashLSH: _Global("datasketch.lsh", "MinHashLSH"),
}
_FUNCS = {
    id(_hashfunc.sha1_hash32): _Global("datasketch.hashfunc", "sha1_hash32"),
    id(_hashfunc.sha1_hash64): _Global("datasketch.hashfunc", "sha1_hash64"),
}


class _Storage:
    """A datasketch dict storage to be written: ``cls`` and its ``_dict``."""

    def __init__(self, cls: str, table: dict):
        self.cls, self.table = cls, table


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj):
        if isinstance(obj, _Global):
            return (getattr, (_Module(obj.module), obj.name))
        if isinstance(obj, _Module):
            return (importlib.import_module, (obj.name,))
        if isinstance(obj, _Storage):
            return (copyreg._reconstructor, (_Global("datasketch.storage", obj.cls), object, None), {"_dict": obj.table})
        if callable(obj) and id(obj) in _FUNCS:
            return (getattr, (_Module(_FUNCS[id(obj)].module), _FUNCS[id(obj)].name))
        cls = type(obj)
        if cls in _TO_DATASKETCH:
            if cls is MinHashLSH:
                state = _lsh_state(obj)
            else:
                state = obj.__getstate__()
            return (copyreg._reconstructor, (_TO_DATASKETCH[cls], object, None), state)
        return NotImplemented


def _lsh_state(lsh: MinHashLSH) -> dict:
    """A MinHashLSH's state as datasketch's dict storage holds it."""
    if isinstance(lsh._bands, _PyBands) or lsh.hashfunc:
        method = "_hashed_byteswap"
    else:
        method = "_byteswap"
    tables = [defaultdict(set) for _ in range(lsh.b)]
    for view, table in zip(lsh.hashtables, tables):
        for h, keys in view.items():
            table[h] = set(keys)
    keys = defaultdict(list)
    for key in lsh._ids:
        keys[key] = lsh._band_keys_of(key)
    return {
        "_buffer_size": lsh._buffer_size,
        "h": lsh.h,
        "b": lsh.b,
        "r": lsh.r,
        "prepickle": lsh.prepickle,
        "_require_bytes_keys": False,
        "hashfunc": lsh.hashfunc,
        "_H": _BoundMethod(lsh, method),
        "hashtables": [_Storage("DictSetStorage", t) for t in tables],
        "hashranges": lsh.hashranges,
        "keys": _Storage("DictListStorage", keys),
        "_minhash_scheme": lsh._minhash_scheme,
    }


class _BoundMethod:
    def __init__(self, obj, name: str):
        self.obj, self.name = obj, name

    def __reduce__(self):
        return (getattr, (self.obj, self.name))


def dumps(obj: Any, protocol: int = pickle.DEFAULT_PROTOCOL) -> bytes:
    """``pickle.dumps`` that writes the drop-in's classes as datasketch's,
    for ``pickle.loads`` where datasketch 2.0.0 is installed."""
    buf = io.BytesIO()
    _Pickler(buf, protocol).dump(obj)
    return buf.getvalue()


def dump(obj: Any, file, protocol: int = pickle.DEFAULT_PROTOCOL) -> None:
    """``pickle.dump`` with ``dumps``' mapping."""
    _Pickler(file, protocol).dump(obj)
