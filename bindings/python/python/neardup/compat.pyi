"""Type stubs for neardup.compat (the PyPI ``simhash`` 2.1.2 API)."""

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Union

__all__ = ["Simhash", "SimhashIndex"]

_Features = Union[Iterable[str], Iterable[tuple[str, int]], Mapping[str, int]]

class WidthMismatch(ValueError, AssertionError): ...

class Simhash:
    large_weight_cutoff: int
    batch_size: int
    f: int
    f_bytes: int
    reg: str
    value: int
    hashfunc: Callable[[bytes], Any]
    hashfunc_returns_int: bool
    log: logging.Logger
    def __init__(
        self,
        value: Union["Simhash", str, _Features, int],
        f: int = 64,
        reg: str = ...,
        hashfunc: Callable[[bytes], Any] = ...,
        log: Union[logging.Logger, None] = None,
    ) -> None: ...
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...
    def _slide(self, content: str, width: int = 4) -> list[str]: ...
    def _tokenize(self, content: str) -> list[str]: ...
    def build_by_text(self, content: str) -> None: ...
    def build_by_features(self, features: _Features) -> None: ...
    def distance(self, another: "Simhash") -> int: ...

class SimhashIndex:
    k: int
    f: int
    log: logging.Logger
    def __init__(
        self,
        objs: list[tuple[Any, Simhash]],
        f: int = 64,
        k: int = 2,
        log: Union[logging.Logger, None] = None,
    ) -> None: ...
    def get_near_dups(self, simhash: Simhash) -> list[str]: ...
    def add(self, obj_id: Any, simhash: Simhash) -> None: ...
    def delete(self, obj_id: Any, simhash: Simhash) -> None: ...
    @property
    def offsets(self) -> list[int]: ...
    def get_keys(self, simhash: Simhash) -> Iterator[str]: ...
    def bucket_size(self) -> int: ...
