"""Reports crates in Cargo.lock (and fuzz/Cargo.lock, bindings/python's)
that crates.io has yanked, from the sparse index (the one network address
these machines reach). `cargo deny check advisories` reports the same but
needs the RustSec advisory database from GitHub; this does not.

    python3 scripts/yanked.py [LOCKFILE ...]

Exit 1 when a locked version is yanked; 0 otherwise (an index that cannot
be reached is a warning, not a failure: the check needs the network).
"""

import json
import sys
import tomllib
import urllib.request
from concurrent.futures import ThreadPoolExecutor

INDEX = "https://index.crates.io"


def index_path(name: str) -> str:
    n = name.lower()
    if len(n) <= 2:
        return f"{len(n)}/{n}"
    if len(n) == 3:
        return f"3/{n[0]}/{n}"
    return f"{n[:2]}/{n[2:4]}/{n}"


def yanked_versions(name: str) -> set[str]:
    with urllib.request.urlopen(f"{INDEX}/{index_path(name)}", timeout=20) as r:
        lines = r.read().decode().splitlines()
    return {v["vers"] for v in map(json.loads, lines) if v.get("yanked")}


def main() -> int:
    locks = sys.argv[1:] or ["Cargo.lock"]
    locked: set[tuple[str, str]] = set()
    for path in locks:
        with open(path, "rb") as f:
            for p in tomllib.load(f).get("package", []):
                if str(p.get("source", "")).startswith("registry+"):
                    locked.add((p["name"], p["version"]))
    names = sorted({n for n, _ in locked})
    try:
        with ThreadPoolExecutor(16) as pool:
            yanked = dict(zip(names, pool.map(yanked_versions, names)))
    except OSError as e:
        print(f"yanked.py: warning: the crates.io index cannot be reached ({e}); not checked")
        return 0
    bad = sorted((n, v) for n, v in locked if v in yanked[n])
    for n, v in bad:
        print(f"yanked: {n} {v} (cargo update -p {n} --precise <a version that is not yanked>)")
    print(f"yanked.py: {len(locked)} locked crate versions checked, {len(bad)} yanked")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
