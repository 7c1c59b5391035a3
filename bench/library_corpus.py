"""The library and the paper that bench/page.py and bench/library_report.py
check: ../shared/data's texts cut into documents of about 500 bytes, and a
held-out English host (the first English documents, never indexed)."""
import json
import os


def texts(data, repeat=False):
    """The documents' texts, then the pairs' (again and again with `repeat`,
    for libraries larger than the data)."""
    for name in ("docs_en.jsonl", "docs_zh.jsonl"):
        for line in open(os.path.join(data, name), encoding="utf-8"):
            yield json.loads(line)["text"]
    while True:
        for name in ("pairs_en.jsonl", "pairs_zh.jsonl"):
            for line in open(os.path.join(data, name), encoding="utf-8"):
                pair = json.loads(line)
                yield pair["text_a"]
                yield pair["text_b"]
        if not repeat:
            return


def pieces(text, size=500):
    """`text` cut at line ends into pieces of about `size` bytes."""
    out, cur = [], ""
    for line in text.splitlines(keepends=True):
        cur += line
        if len(cur.encode()) >= size:
            out.append(cur)
            cur = ""
    if cur.strip():
        out.append(cur)
    return [x for x in out if len(x.strip()) > 80]


def held_out_host(data, size=52_000):
    """The host text (the first English documents, at least `size` bytes)
    and how many documents it took (the library skips them)."""
    en = open(os.path.join(data, "docs_en.jsonl"), encoding="utf-8")
    host, held = "", 0
    while len(host.encode()) < size:
        host += json.loads(next(en))["text"] + "\n\n"
        held += 1
    return host, held
