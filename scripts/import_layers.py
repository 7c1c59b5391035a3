#!/usr/bin/env python3
"""Fail on an import circle between a crate's top-level modules (the core's
by default; CI checks the CLI's too, `--src crates/cli/src`).

Reads every `.rs` file under `crates/neardup/src` (or `--src`), assigns it to its
top-level module (`src/index/keyed.rs` -> `index`, `src/config.rs` ->
`config`; `lib.rs` is the crate root and is left out: it only re-exports),
collects the `crate::NAME` paths it mentions (in `use` items, in grouped
`use crate::{a, b::c}` lists and in code), and draws an edge from the
file's module to each other top-level module it names. Code under
`#[cfg(test)]` counts as well: a test that needs a higher layer belongs in
`tests/`.

Prints the modules by layer (each importing only those in lower layers)
and exits 1 with the circle(s) found if there is one. Optional rules
(`--forbid A:B,C`) fail when module A imports B or C.

Usage: python3 scripts/import_layers.py [--src DIR] [--forbid index:config,dedup]
"""
import argparse
import os
import re
import sys

USE_CRATE = re.compile(r"\bcrate::(\{|[A-Za-z_][A-Za-z0-9_]*)")


def strip_comments(text):
    """Removes // and /* */ comments and string literals (roughly: enough
    that a path named in prose or a string is not taken for an import)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append('""')
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            close = '"' + m.group(1)
            j = text.find(close, i + len(m.group(0)))
            i = n if j < 0 else j + len(close)
            out.append('""')
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 12]):
            m = re.match(r"'(\\[^']*|[^\\'])'", text[i:])
            i += len(m.group(0)) if m else 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def grouped_heads(text, start):
    """The first path segment of each item of `crate::{...}` starting at the brace."""
    depth, i, heads, item_start = 0, start, [], start + 1
    while i < len(text):
        c = text[i]
        if c == "{":
            depth += 1
            if depth == 1:
                item_start = i + 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                heads.append(text[item_start:i])
                break
        elif c == "," and depth == 1:
            heads.append(text[item_start:i])
            item_start = i + 1
        i += 1
    names = []
    for h in heads:
        m = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)", h)
        if m:
            names.append(m.group(1))
    return names


def module_of(src, path):
    rel = os.path.relpath(path, src)
    first = rel.split(os.sep)[0]
    if first.endswith(".rs"):
        first = first[:-3]
    return first


_KNOWN = {}


def edges_known(src):
    """The crate's top-level module names (files and folders under src)."""
    if src not in _KNOWN:
        _KNOWN[src] = {e[:-3] if e.endswith(".rs") else e for e in os.listdir(src)} - {"lib"}
    return _KNOWN[src]


def reexports(src):
    """Names `lib.rs` re-exports (`pub use config::{PipelineConfig, …}`),
    mapped to the module they come from: `crate::Fingerprinter` is an
    import of the module that defines it."""
    text = strip_comments(open(os.path.join(src, "lib.rs"), encoding="utf-8").read())
    names = {}
    for m in re.finditer(r"pub use\s+(?:crate::)?([a-z_][a-z0-9_]*)::(\{[^;]*\}|[A-Za-z_][A-Za-z0-9_]*)\s*;", text):
        module, items = m.group(1), m.group(2)
        for item in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", items):
            names.setdefault(item, module)
    return names


def graph(src):
    aliases = reexports(src)
    edges = {}
    for root, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith(".rs"):
                continue
            path = os.path.join(root, f)
            mod = module_of(src, path)
            if mod == "lib":
                continue
            text = strip_comments(open(path, encoding="utf-8").read())
            deps = edges.setdefault(mod, {})
            for m in USE_CRATE.finditer(text):
                names = grouped_heads(text, m.start(1)) if m.group(1) == "{" else [m.group(1)]
                for name in names:
                    name = aliases.get(name, name) if name[:1].isupper() or name not in edges_known(src) else name
                    if name not in ("self", "super", "crate") and name != mod:
                        line = text.count("\n", 0, m.start()) + 1
                        deps.setdefault(name, f"{os.path.relpath(path, src)}:{line}")
    # Only modules that exist count (a name may be a re-export of lib.rs).
    known = set(edges)
    for mod in edges:
        edges[mod] = {d: w for d, w in edges[mod].items() if d in known}
    return edges


def cycles(edges):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def layers(edges):
    level = {}

    def depth(v, seen=()):
        if v in level:
            return level[v]
        if v in seen:
            return 0
        d = 0
        for w in edges.get(v, {}):
            d = max(d, depth(w, seen + (v,)) + 1)
        level[v] = d
        return d

    for v in edges:
        depth(v)
    by = {}
    for v, d in level.items():
        by.setdefault(d, []).append(v)
    return by


def self_test():
    """The checker on a made-up crate: a circle through a grouped import, a
    re-export of lib.rs and a folder module is found; comments, strings and
    `super::` paths are not imports."""
    import tempfile
    with tempfile.TemporaryDirectory() as src:
        files = {
            "lib.rs": "pub mod a;\npub mod b;\npub mod c;\npub use c::Thing;\n",
            "a.rs": "use crate::{b::X, error};\n// crate::c in a comment\nconst S: &str = \"crate::c\";\n",
            "b/mod.rs": "mod inner;\nuse super::inner;\n",
            "b/inner.rs": "fn f() -> crate::Thing { todo!() }\n",
            "c.rs": "pub struct Thing;\n",
            "error.rs": "",
        }
        for name, text in files.items():
            path = os.path.join(src, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            open(path, "w").write(text)
        e = graph(src)
        assert e == {"a": {"b": "a.rs:1", "error": "a.rs:1"}, "b": {"c": "b/inner.rs:1"}, "c": {}, "error": {}}, e
        assert cycles(e) == []
        open(os.path.join(src, "c.rs"), "w").write("use crate::a;\npub struct Thing;\n")
        assert cycles(graph(src)) == [["a", "b", "c"]], cycles(graph(src))
    print("self-test passed")
    return 0


def sibling_imports(src, parent):
    """(child, sibling, file) for each child module of `parent` that names
    another child: `crate::PARENT::SIBLING` or `super::SIBLING`."""
    root = os.path.join(src, parent)
    children = sorted(
        name[:-3] if name.endswith(".rs") else name
        for name in os.listdir(root)
        if name != "mod.rs" and (name.endswith(".rs") or os.path.isdir(os.path.join(root, name)))
    )
    found = []
    for child in children:
        path = os.path.join(root, child)
        files = [path + ".rs"] if os.path.isfile(path + ".rs") else [
            os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs if f.endswith(".rs")
        ]
        for f in files:
            text = strip_comments(open(f, encoding="utf-8").read())
            top = os.path.dirname(f) == root or os.path.basename(f) == "mod.rs" and os.path.dirname(f) == path
            for sibling in children:
                if sibling == child:
                    continue
                pats = [rf"\bcrate::{parent}::{sibling}\b"] + ([rf"\bsuper::{sibling}\b"] if top else [])
                if any(re.search(p, text) for p in pats):
                    found.append((child, sibling, os.path.relpath(f)))
    return found


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default=os.path.join(here, "..", "crates", "neardup", "src"))
    ap.add_argument("--forbid", action="append", default=[],
                    help="MODULE:DEP,DEP… — MODULE must not import any DEP")
    ap.add_argument("--siblings", action="append", default=[],
                    help="MODULE — its child modules (src/MODULE/*) must not import each other "
                         "(the CLI's commands: shared pieces move down)")
    ap.add_argument("--quiet", action="store_true", help="print only failures")
    ap.add_argument("--self-test", action="store_true", help="check the checker on a made-up crate")
    args = ap.parse_args()
    if args.self_test:
        return self_test()
    edges = graph(args.src)
    failed = False
    for comp in cycles(edges):
        failed = True
        print("import circle between: " + ", ".join(comp))
        members = set(comp)
        for a in comp:
            for b, where in sorted(edges[a].items()):
                if b in members:
                    print(f"  {a} -> {b}  ({where})")
    for rule in args.forbid:
        mod, _, deps = rule.partition(":")
        for dep in deps.split(","):
            if dep in edges.get(mod, {}):
                failed = True
                print(f"forbidden import: {mod} -> {dep}  ({edges[mod][dep]})")
    for parent in args.siblings:
        for child, sibling, where in sibling_imports(args.src, parent):
            failed = True
            print(f"{parent}::{child} imports its sibling {parent}::{sibling}  ({where})")
    if not failed and not args.quiet:
        for d, mods in sorted(layers(edges).items()):
            print(f"layer {d}: " + ", ".join(
                f"{m}" + (f" (uses {', '.join(sorted(edges[m]))})" if edges[m] else "")
                for m in sorted(mods)))
    crate = os.path.relpath(os.path.normpath(os.path.join(args.src, "..")))
    if failed:
        print(f"{crate}: its modules must form layers: move the shared piece down (see ARCHITECTURE.md)")
        return 1
    print(f"{crate}: no import circle between its top-level modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
