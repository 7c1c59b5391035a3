#!/usr/bin/env python3
"""Fail on a Rust function longer than a limit (80 lines by default): a
long function is a sequence of stages that want names.

Counts each `fn` from its signature's first line to its closing brace (a
brace at the signature's indentation), doc comments and attributes left
out; `cargo fmt` formatting is assumed. Prints the long ones, longest
first, and exits 1 if there is one.

Usage: python3 scripts/fn_lengths.py DIR [--max 80]
"""
import argparse
import pathlib
import re
import sys

FN = re.compile(r"^(\s*)(pub(\([^)]*\))?\s+)?(async\s+)?(unsafe\s+)?(const\s+)?(extern\s+\"C\"\s+)?fn\s+(\w+)")


def long_functions(root, limit):
    """(lines, 'file:line name') for each function over `limit` lines."""
    found = []
    for path in sorted(pathlib.Path(root).rglob("*.rs")):
        lines = path.read_text(encoding="utf-8").split("\n")
        i = 0
        while i < len(lines):
            m = FN.match(lines[i])
            if not m:
                i += 1
                continue
            indent = len(m.group(1))
            j = i
            while j < len(lines) and not lines[j].rstrip().endswith(("{", ";")):
                j += 1
            if j >= len(lines) or lines[j].rstrip().endswith(";"):
                i = j + 1
                continue
            k = j + 1
            close = " " * indent + "}"
            while k < len(lines) and not (lines[k].startswith(close) and not lines[k][indent:indent + 1].isspace()):
                k += 1
            n = k - i + 1
            if n > limit:
                found.append((n, f"{path}:{i + 1} {m.group(8)}"))
            i = j + 1
    return sorted(found, reverse=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--max", type=int, default=80)
    args = ap.parse_args()
    found = long_functions(args.dir, args.max)
    for n, where in found:
        print(f"{n} lines: {where}")
    if found:
        print(f"{args.dir}: {len(found)} function(s) over {args.max} lines: split them into named stages")
        return 1
    print(f"{args.dir}: no function over {args.max} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
