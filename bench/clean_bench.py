#!/usr/bin/env python3
"""Corpus cleaning, measured side by side in one run (issue 37):

1. formats: `neardup dedup` on the same records as plain JSONL, .jsonl.gz,
   .jsonl.zst and Parquet (median of 3, interleaved), and the ratio of each
   to plain JSONL;
2. exact: `neardup dedup --method exact` (normalized and raw text) on a
   JSONL file of about 2 GB, the page cache warm (median of 3);
3. boilerplate: `neardup boilerplate --unit sentences:3 --repeats` against
   datatrove's SentenceDedup (signature, find, filter; its sentence
   splitter replaced by a port of ours, its text normalization reduced to
   lower case and whitespace, no minimum lengths, so both remove the same
   thing by the same rule) on the same 10^5 documents: wall time, and the
   removed sentences compared document by document;
4. substrings: `neardup substrings --min-bytes 100` on about 1 GB of text:
   wall time and peak memory.

Usage: python3 bench/clean_bench.py CORPUS.jsonl [--only formats,exact,boilerplate,substrings]
       [--docs-formats N] [--docs-boilerplate N] [--substring-bytes B]

CORPUS has "id" and "text" (bench/make_corpus.py). NEARDUP_BIN names the
CLI (default target/release/neardup). Needs pyarrow and datatrove.
"""

import argparse
import gzip
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
BIN = os.environ.get("NEARDUP_BIN", os.path.join(ROOT, "target", "release", "neardup"))


def run(args, **kw):
    """Wall seconds and peak resident memory (bytes) of one command."""
    t = time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kw)
    _, status, usage = os.wait4(p.pid, 0)
    secs = time.perf_counter() - t
    err = p.stderr.read().decode()
    p.stderr.close()
    if status != 0:
        sys.exit(f"{' '.join(map(str, args))} failed:\n{err}")
    return secs, usage.ru_maxrss * 1024


def head(corpus, n, out):
    with open(corpus, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
        for i, line in enumerate(f):
            if i >= n:
                break
            o.write(line)


def warm(path):
    with open(path, "rb") as f:
        while f.read(1 << 24):
            pass


def cpu():
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip() + f", {os.cpu_count()} CPUs"
    return "unknown"


def formats(corpus, n, work):
    import pyarrow as pa
    import pyarrow.parquet as pq

    plain = os.path.join(work, "f.jsonl")
    head(corpus, n, plain)
    data = open(plain, "rb").read()
    with gzip.open(plain + ".gz", "wb", compresslevel=6) as g:
        g.write(data)
    subprocess.run(["zstd", "-q", "-3", "-f", plain, "-o", plain + ".zst"], check=True)
    rows = [json.loads(line) for line in data.decode("utf-8").splitlines()]
    table = pa.table({"id": [r["id"] for r in rows], "text": [r["text"] for r in rows],
                      "copy_of": [r.get("copy_of") for r in rows]})
    pq.write_table(table, os.path.join(work, "f.parquet"), row_group_size=50_000, compression="zstd")
    del rows, table
    inputs = {"jsonl": plain, "jsonl.gz": plain + ".gz", "jsonl.zst": plain + ".zst",
              "parquet": os.path.join(work, "f.parquet")}
    for p in inputs.values():
        warm(p)
    # Each input with its kept records in its own format (the default),
    # and with plain kept.jsonl: the cost of reading alone.
    times = {(k, o): [] for k in inputs for o in ("auto", "jsonl") if not (k == "jsonl" and o == "jsonl")}
    for _ in range(3):
        for (name, fmt) in times:
            out = os.path.join(work, f"out-{name}-{fmt}")
            flags = ["--show", "0", "--on-error", "skip", "--output-format", fmt]
            secs, _ = run([BIN, "dedup", inputs[name], "-o", out, *flags])
            times[(name, fmt)].append(secs)
    base = statistics.median(times[("jsonl", "auto")])
    print(f"\n## formats: neardup dedup on {n} documents ({len(data) / 1e6:.0f} MB of JSONL), median of 3")
    print("| input | size (MB) | kept written as | seconds | vs plain JSONL |")
    print("|---|---|---|---|---|")
    for (name, fmt), t in times.items():
        m = statistics.median(t)
        shown = "the input's format" if fmt == "auto" else "plain JSONL"
        print(f"| {name} | {os.path.getsize(inputs[name]) / 1e6:.0f} | {shown} | {m:.2f} | {m / base:.3f}× |")
    kept = {k: sorted(os.listdir(os.path.join(work, f"out-{k}-auto"))) for k in inputs}
    print("kept files:", {k: [f for f in v if f.startswith("kept")] for k, v in kept.items()})


def exact(corpus, work):
    warm(corpus)
    size = os.path.getsize(corpus)
    print(f"\n## exact: neardup dedup --method exact on {size / 1e9:.2f} GB of JSONL (warm page cache), median of 3")
    print("| text | seconds | GB/s | peak RSS (GB) | removed |")
    print("|---|---|---|---|---|")
    for mode in ("normalized", "raw"):
        runs = []
        for _ in range(3):
            out = os.path.join(work, "exact-" + mode)
            runs.append(run([BIN, "dedup", corpus, "--method", "exact", "--exact", mode, "-o", out, "--show", "0"]))
            shutil.rmtree(out, ignore_errors=True) if _ < 2 else None
        secs = statistics.median(r[0] for r in runs)
        summary = json.load(open(os.path.join(work, "exact-" + mode, "summary.json")))
        print(f"| {mode} | {secs:.2f} | {size / 1e9 / secs:.2f} | {max(r[1] for r in runs) / 1e9:.2f} "
              f"| {summary['duplicates_removed']} |")


# A port of neardup's sentence splitter (crates/neardup/src/clean/units.rs).
CJK_END = set("。！？；…｡")
CLOSERS = set("\"')]}”’」』）】》〉")


def sentence_spans(text):
    out = []
    start = 0
    i = 0
    n = len(text)

    def trimmed(a, b):
        s = text[a:b]
        a2 = a + (len(s) - len(s.lstrip()))
        b2 = a + len(s.rstrip())
        if a2 < b2:
            out.append((a2, b2))

    while i < n:
        c = text[i]
        end = None
        if c == "\n":
            end = i
            i += 1
        elif c in CJK_END or c in ".!?":
            j = i + 1
            while j < n and (text[j] in CLOSERS or text[j] in CJK_END or text[j] in ".!?"):
                j += 1
            cjk = any(ch in CJK_END for ch in text[i:j])
            if j >= n or cjk or text[j].isspace():
                end = j
            i = j
        else:
            i += 1
        if end is not None:
            trimmed(start, end)
            start = end
    trimmed(start, n)
    return out


def boilerplate(corpus, n, work):
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.dedup.sentence_dedup import (
        SentDedupConfig,
        SentenceDedupFilter,
        SentenceDedupSignature,
        SentenceFindDedups,
    )
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.writers import JsonlWriter
    from datatrove.utils.text import TextNormConfig
    from datatrove.utils.word_tokenizers import WordTokenizer

    class OurSentences(WordTokenizer):
        def __init__(self):
            super().__init__("en")

        def word_tokenize(self, text):
            return text.split()

        def sent_tokenize(self, text):
            return [text[a:b] for a, b in sentence_spans(text)]

        def span_tokenize(self, text):
            return sentence_spans(text)

    src = os.path.join(work, "bp-in")
    os.makedirs(src, exist_ok=True)
    head(corpus, n, os.path.join(src, "docs.jsonl"))
    norm = TextNormConfig(lowercase=True, norm_whitespace=True, remove_punctuation=False,
                          norm_unicode_diacritics=False, norm_numbers=False)
    config = SentDedupConfig(n_sentences=3, min_doc_words=0, min_num_sentences=0, norm_config=norm)
    tok = OurSentences()
    dt = os.path.join(work, "dt")
    shutil.rmtree(dt, ignore_errors=True)
    import logging

    logging.disable(logging.WARNING)
    from datatrove.utils.logging import logger

    logger.remove()
    # datatrove logs every stage to stderr: keep it out of the report.
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    t = time.perf_counter()
    LocalPipelineExecutor(pipeline=[JsonlReader(src), SentenceDedupSignature(output_folder=f"{dt}/sigs", config=config, language=tok)],
                          tasks=1, workers=1, logging_dir=f"{dt}/logs1").run()
    LocalPipelineExecutor(pipeline=[SentenceFindDedups(data_folder=f"{dt}/sigs", output_folder=f"{dt}/dups", config=config)],
                          tasks=1, workers=1, logging_dir=f"{dt}/logs2").run()
    LocalPipelineExecutor(pipeline=[JsonlReader(src), SentenceDedupFilter(data_folder=f"{dt}/dups", config=config, language=tok),
                                    JsonlWriter(f"{dt}/out", compression=None)],
                          tasks=1, workers=1, logging_dir=f"{dt}/logs3").run()
    dt_secs = time.perf_counter() - t
    os.dup2(saved, 2)
    os.close(devnull)
    ours = {}
    for j in ("1", "2"):
        out = os.path.join(work, "bp-out" + j)
        ours[j] = run([BIN, "-j", j, "boilerplate", src, "-o", out, "--unit", "sentences:3", "--repeats",
                       "--min-chars", "0", "--show", "0"])
    # Removed sentences, document by document, on both sides.
    originals = {}
    for line in open(os.path.join(src, "docs.jsonl"), encoding="utf-8"):
        r = json.loads(line)
        originals[r["id"]] = r["text"]

    def removed_of(kept_texts):
        pairs = set()
        for i, text in originals.items():
            left = kept_texts.get(i, "")
            left_sents = {text[a:b] for a, b in sentence_spans(left)}
            for a, b in sentence_spans(text):
                if text[a:b] not in left_sents:
                    pairs.add((i, a))
        return pairs

    dt_kept = {}
    for name in os.listdir(f"{dt}/out"):
        for line in open(os.path.join(dt, "out", name), encoding="utf-8"):
            r = json.loads(line)
            dt_kept[r["id"]] = r["text"]
    our_kept = {}
    for line in open(os.path.join(work, "bp-out2", "kept.jsonl"), encoding="utf-8"):
        r = json.loads(line)
        our_kept[r["id"]] = r["text"]
    a, b = removed_of(our_kept), removed_of(dt_kept)
    print(f"\n## boilerplate: 3-sentence spans repeated (keep the first) on {n} documents")
    print("| | seconds | vs datatrove |")
    print("|---|---|---|")
    print(f"| datatrove SentenceDedup (3 stages, 1 task) | {dt_secs:.2f} | 1× |")
    for j in ("1", "2"):
        print(f"| neardup boilerplate -j {j} | {ours[j][0]:.2f} | {dt_secs / ours[j][0]:.1f}× faster |")
    both = len(a & b)
    print(f"removed sentences: neardup {len(a)}, datatrove {len(b)}, both {both} "
          f"(agreement {both / max(1, len(a | b)):.4f}); only neardup {len(a - b)}, only datatrove {len(b - a)}")
    for label, only in (("only neardup", sorted(a - b)[:3]), ("only datatrove", sorted(b - a)[:3])):
        for i, pos in only:
            text = originals[i]
            print(f"  {label}: {i} @{pos}: {text[pos:pos + 80]!r}")


def substrings(corpus, want_bytes, work):
    path = os.path.join(work, "ss.jsonl")
    total = 0
    with open(corpus, encoding="utf-8") as f, open(path, "w", encoding="utf-8") as o:
        for line in f:
            total += len(json.loads(line)["text"].encode("utf-8"))
            o.write(line)
            if total >= want_bytes:
                break
    warm(path)
    out = os.path.join(work, "ss-out")
    secs, rss = run([BIN, "substrings", path, "-o", out, "--min-bytes", "100", "--memory", "12G"])
    s = json.load(open(os.path.join(out, "summary.json")))
    print(f"\n## substrings: --min-bytes 100 on {s['text_bytes'] / 1e9:.2f} GB of text ({s['documents']} documents)")
    print("| seconds | read | find (suffix arrays) | cut | peak RSS (GB) | suffix arrays | bytes removed |")
    print("|---|---|---|---|---|---|---|")
    t = s["seconds"]
    print(f"| {secs:.1f} | {t['read']:.1f} | {t['find']:.1f} | {t['cut']:.1f} | {rss / 1e9:.2f} | {s['suffix_arrays']} "
          f"| {s['bytes_removed']} ({s['bytes_removed'] / s['text_bytes']:.1%}) |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("--only", default="formats,exact,boilerplate,substrings")
    ap.add_argument("--docs-formats", type=int, default=300_000)
    ap.add_argument("--docs-boilerplate", type=int, default=100_000)
    ap.add_argument("--substring-bytes", type=float, default=1e9)
    a = ap.parse_args()
    print(f"# corpus cleaning: {cpu()}; {BIN}")
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as work:
        only = a.only.split(",")
        if "formats" in only:
            formats(a.corpus, a.docs_formats, work)
        if "exact" in only:
            exact(a.corpus, work)
        if "boilerplate" in only:
            boilerplate(a.corpus, a.docs_boilerplate, work)
        if "substrings" in only:
            substrings(a.corpus, int(a.substring_bytes), work)


if __name__ == "__main__":
    main()
