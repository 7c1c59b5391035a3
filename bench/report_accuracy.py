#!/usr/bin/env python3
"""How well `neardup report` finds copied passages, on ../shared/data.

For each trial: a host document H and a source document S (different
documents of the same language, each with at least 12 sentences). A block
of 2-8 consecutive sentences of S is pasted into H between two paragraphs:
A = H[:cut] + "\n\n" + block + "\n\n" + H[cut:], B = S. `neardup report A B
--format json` must find the block: we count trials whose block is found
with exactly the right byte offsets in A (and overlapping the block in B),
character precision/recall of A's matched text against the block, and
spans reported between H and an unrelated document (false alarms).

Usage: python3 bench/report_accuracy.py [--trials 100] [--bin target/release/neardup]
"""
import argparse, json, random, re, subprocess, sys, tempfile, os, time

p = argparse.ArgumentParser()
p.add_argument("--trials", type=int, default=100)
p.add_argument("--bin", default="target/release/neardup")
p.add_argument("--data", default="../shared/data")
p.add_argument("--seed", type=int, default=7)
p.add_argument("--show-misses", type=int, default=0, help="print this many inexact trials")
p.add_argument("--show-alarms", type=int, default=0, help="print this many matches between unrelated documents")
p.add_argument("--against", action="store_true",
               help="check against a passage index of all the language's documents instead of B")
p.add_argument("--index-extra", default="", help="extra flags for neardup index build (with --against)")
p.add_argument("--extra", default="", help="extra flags for neardup report, as one string")
args = p.parse_args()

# Sentence starts: after a stop and whitespace, or after a blank line.
STARTS = {"en": re.compile(r"(?<=[.!?])\s+(?=[A-Z])|\n\s*\n"), "zh": re.compile(r"(?<=[。！？])\s*|\n\s*\n")}

def sentence_spans(text, lang):
    """(start, end) character offsets of sentences, by a simple rule."""
    cuts = [0] + [m.end() for m in STARTS[lang].finditer(text)] + [len(text)]
    out = []
    for a, b in zip(cuts, cuts[1:]):
        seg = text[a:b]
        lead = len(seg) - len(seg.lstrip())
        body = seg.strip()
        if body:
            out.append((a + lead, a + lead + len(body)))
    return out

INDEX = None


def words(t):
    return set(w.lower() for w in re.findall(r"\w+", t)) | set(c for c in t if "\u4e00" <= c <= "\u9fff")


def jaccard(x, y):
    a, b = words(x), words(y)
    return len(a & b) / len(a | b) if a | b else 0.0

def report(a, b):
    with tempfile.TemporaryDirectory() as d:
        pa, pb = os.path.join(d, "a.txt"), os.path.join(d, "b.txt")
        open(pa, "w").write(a)
        open(pb, "w").write(b)
        t = time.perf_counter()
        other = ["--against", INDEX, "--max-sources", "1000"] if INDEX else [pb]
        r = subprocess.run([args.bin, "report", pa, *other, "--format", "json", *args.extra.split()], capture_output=True, text=True)
        dt = time.perf_counter() - t
        if r.returncode != 0:
            sys.exit(f"neardup failed: {r.stderr}")
        return json.loads(r.stdout), dt

rng = random.Random(args.seed)
for lang in ["en", "zh"]:
    docs = [json.loads(l) for l in open(f"{args.data}/docs_{lang}.jsonl")]
    docs = [d for d in docs if len(sentence_spans(d["text"], lang)) >= 12 and len(d["text"]) < 60000]
    if args.against:
        work = tempfile.mkdtemp()
        corpus = os.path.join(work, "corpus.jsonl")
        with open(corpus, "w") as f:
            for d in docs:
                f.write(json.dumps({"id": d["id"], "text": d["text"]}, ensure_ascii=False) + "\n")
        INDEX = os.path.join(work, "library")  # a passage library (a data directory)
        subprocess.run([args.bin, "index", "build", "--passages", corpus, "-o", INDEX, *args.index_extra.split()], check=True, capture_output=True)
    exact = found = alarms = 0
    matches_total = spurious_total = 0
    BY_ID = {d["id"]: d["text"] for d in docs}
    by_n = {}
    tp = fp = fn = 0
    times = []
    for _ in range(args.trials):
        h, s, u = rng.sample(docs, 3)
        hs, ss = h["text"], sentence_spans(s["text"], lang)
        n = rng.randint(2, 8)
        i = rng.randrange(0, len(ss) - n)
        # The block is S's own text from the start of one sentence to the end of another.
        block = s["text"][ss[i][0]:ss[i + n - 1][1]]
        paras = [m.end() for m in re.finditer(r"\n", hs)] or [len(hs)]
        cut = rng.choice(paras)
        a = hs[:cut] + "\n\n" + block + "\n\n" + hs[cut:]
        start = len((hs[:cut] + "\n\n").encode())
        end = start + len(block.encode())
        r, dt = report(a, s["text"])
        times.append(dt)
        if INDEX:
            # Only what the report attributes to S counts; the host H is in
            # the index too and matches A everywhere else.
            all_matches = r["matches"]
            r["matches"] = [m for m in r["matches"] if m["b"]["id"] == s["id"]]
        spans = [(m["a"]["start"], m["a"]["end"]) for m in r["matches"]]
        exact += (start, end) in spans
        by_n.setdefault(n, []).append((start, end) in spans)
        if (start, end) not in spans and args.show_misses > 0:
            args.show_misses -= 1
            ab = a.encode()
            print(f"--- miss ({lang}, {n} sentences): block {start}..{end}")
            print("  block:", repr(block[:300]))
            for m in r["matches"]:
                print(f"  found {m['a']['start']}..{m['a']['end']}:", repr(m["a"]["text"][:200]))
                print(f"     B {m['b']['start']}..{m['b']['end']}:", repr(m["b"]["text"][:200]))
        found += any(s0 < end and start < e0 for s0, e0 in spans)
        ab = a.encode()
        union = []
        for s0, e0 in sorted(spans):
            if union and s0 <= union[-1][1]:
                union[-1][1] = max(union[-1][1], e0)
            else:
                union.append([s0, e0])
        inside = sum(len(ab[max(s0, start):min(e0, end)].decode(errors="ignore")) for s0, e0 in union if s0 < end and start < e0)
        total = sum(len(ab[s0:e0].decode(errors="ignore")) for s0, e0 in union)
        tp += inside; fp += total - inside; fn += len(block) - inside
        if INDEX:
            # Matches in documents other than H and S: spurious unless the
            # matched text of A is really in that document (word Jaccard of
            # A's span and the document's matched bytes >= 0.3).
            spurious = []
            for m in all_matches:
                if m["b"]["id"] in (h["id"], s["id"]):
                    continue
                other = BY_ID[m["b"]["id"]].encode()[m["b"]["start"]:m["b"]["end"]].decode(errors="ignore")
                if jaccard(m["a"]["text"], other) < 0.3:
                    spurious.append({"a": m["a"], "b": {"text": other}})
            r2 = {"matches": spurious}
            matches_total += len([m for m in all_matches if m["b"]["id"] not in (h["id"], s["id"])])
            spurious_total += len(spurious)
        else:
            r2, _ = report(hs, u["text"])
        alarms += len(r2["matches"]) > 0
        if r2["matches"] and args.show_alarms > 0:
            args.show_alarms -= 1
            for m in r2["matches"][:3]:
                print(f"  alarm ({lang}):", repr(m["a"]["text"][:120]), "<->", repr(m["b"]["text"][:120]))
    times.sort()
    print(f"{lang}: {args.trials} trials ({len(docs)} documents with >= 12 sentences)")
    print(f"  block found: {found}/{args.trials}; with exact A offsets: {exact}/{args.trials}")
    print("  exact by block size: " + ", ".join(f"{k}: {sum(v)}/{len(v)}" for k, v in sorted(by_n.items())))
    print(f"  A characters: precision {tp / max(tp + fp, 1):.3f}, recall {tp / max(tp + fn, 1):.3f}")
    if INDEX:
        print(f"  reports with a spurious match (another document whose text is not A's): {alarms}/{args.trials};"
              f" spurious matches {spurious_total} of {matches_total} in other documents")
    else:
        print(f"  unrelated pairs with any match: {alarms}/{args.trials}")
    print(f"  median time per report: {times[len(times) // 2] * 1000:.0f} ms")
