"""What ``neardup.spark`` needs beyond the core package, checked first.

``pip install 'neardup[spark]'`` installs all of it. Without it, importing
``neardup.spark`` raises one ImportError that names every missing package
and the command that installs them (instead of pyspark's own errors, one
package at a time, from deep inside the first job).
"""

from __future__ import annotations

from importlib import metadata, util

# (import name, distribution, lowest version): as pyproject.toml's `spark` extra.
REQUIRED = (("pyspark", "pyspark", (3, 5)), ("pyarrow", "pyarrow", (14,)), ("pandas", "pandas", (2, 2)))
INSTALL = "pip install 'neardup[spark]'"


def _version(dist: str) -> tuple[int, ...]:
    parts = []
    for piece in metadata.version(dist).split(".")[:3]:
        digits = "".join(c for c in piece if c.isdigit())
        if not digits:
            break
        parts.append(int(digits))
    return tuple(parts)


def problems() -> list[str]:
    """Each missing or too old package, in words ('pyarrow is not installed')."""
    out = []
    for module, dist, lowest in REQUIRED:
        want = ".".join(map(str, lowest))
        try:
            found = util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            out.append(f"{dist} is not installed")
            continue
        try:
            have = _version(dist)
        except metadata.PackageNotFoundError:
            continue  # importable but not installed as a distribution (a Spark image's pyspark)
        if have < lowest:
            out.append(f"{dist} {metadata.version(dist)} is older than {want}")
    return out


def check() -> None:
    """Raises ImportError naming what is missing and how to install it."""
    found = problems()
    if found:
        raise ImportError(f"neardup.spark needs pyspark ≥ 3.5, pyarrow ≥ 14 and pandas ≥ 2.2: "
                          f"{'; '.join(found)}. Install them with: {INSTALL}")
