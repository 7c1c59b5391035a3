"""Writes a JSONL corpus of about MB megabytes of text made of a source
corpus's documents repeated, each copy with its own id and its copy number
in front of its text (so no two records are exact duplicates, while each
copy is a near duplicate of the others): the same volume of Chinese and of
English for bench/dedup_languages.sh.

    python3 bench/repeat_corpus.py SOURCE.jsonl MB OUT.jsonl [JOIN_BYTES]

With JOIN_BYTES, consecutive source documents are first joined (by a
newline) into documents of about that many bytes: the same volume in
documents as long as another corpus's, so that a comparison of languages
is not one of document counts.
"""
import json
import sys

src, mb, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
docs = [json.loads(line) for line in open(src, encoding="utf-8")]
if len(sys.argv) > 4:
    join, joined, part = int(sys.argv[4]), [], []
    for d in docs:
        part.append(d)
        if sum(len(p["text"].encode("utf-8")) for p in part) >= join:
            joined.append({"id": part[0]["id"], "text": "\n".join(p["text"] for p in part)})
            part = []
    docs = joined
limit = int(mb * 1e6)
written = 0
copy = 0
with open(out, "w", encoding="utf-8") as f:
    while written < limit:
        for d in docs:
            text = f"{copy} {d['text']}"
            f.write(json.dumps({"id": f"{copy}-{d['id']}", "text": text}, ensure_ascii=False) + "\n")
            written += len(text.encode("utf-8"))
            if written >= limit:
                break
        copy += 1
print(json.dumps({"docs_written_mb": written / 1e6, "copies": copy}))
