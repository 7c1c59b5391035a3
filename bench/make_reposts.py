#!/usr/bin/env python3
"""Labelled pairs of reposts, from ../shared/data: the edits natural
near duplicates carry (issue 51's "reposts with reworded sentences,
inserted boilerplate"), for the defaults' sweep beside the shared pairs.

Usage: python3 bench/make_reposts.py OUT_DIR [--pairs N] [--seed S]

Writes OUT_DIR/reposts_en.jsonl and OUT_DIR/reposts_zh.jsonl (N pairs
each, default 1,000, in the shared pairs' format: text_a, text_b, label,
lang, edit) and copies ../shared/data/textsim.py beside them (what
bench/quality_peers.py shingles with). text_a is a real document of at
least 300 characters, cut at 6,000. Half the pairs are near duplicates:

- reword: 5–15 % of the words (English) or of two-character spans
  (Chinese) replaced by others of the corpus, sentence by sentence;
- boilerplate: a repost header and footer (source line, date, views,
  disclaimer, share links) adding 5–25 % of the length;
- reorder: 2–4 pairs of neighbouring sentences swapped;
- repost: reword at 3–10 % and boilerplate and one swap, together.

The other half are not: another document of the same source (the same
poet, list or manual), or the document reworded at 40–60 %.
Deterministic for a seed.
"""

import argparse
import json
import os
import random
import re
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.join(HERE, "..", "..", "shared", "data")
HAN = re.compile(r"[\u4e00-\u9fff]")
SENTENCE = {"zh": re.compile(r"(?<=[。！？；\n])"), "en": re.compile(r"(?<=[.!?\n])\s")}

HEADERS = {
    "zh": ["转载自{site} {date} 阅读 {n}", "来源：{site}　发布时间：{date}", "【{site}】{date} 原创 作者：小编"],
    "en": ["Originally published on {site} on {date} | {n} views", "Source: {site} ({date})", "Posted {date} by admin at {site}"],
}
FOOTERS = {
    "zh": ["免责声明：本文来源于网络，版权归原作者所有，如有侵权请联系删除。", "分享到：微信 微博 QQ空间　点击关注，获取更多精彩内容！",
           "责任编辑：{n}号编辑　本文由{site}整理发布，转载请注明出处。"],
    "en": ["Disclaimer: this article was republished from the web; all rights belong to the original author.",
           "Share this: Twitter Facebook Email | Subscribe to our newsletter for more stories like this.",
           "Related posts | Leave a comment | © {site}, all rights reserved. Reposting requires attribution."],
}
SITES = {"zh": ["新浪博客", "网易新闻", "知乎专栏", "技术之家", "开源中国"], "en": ["example.com", "TechDaily", "the Wire", "DevNotes"]}


def load(name):
    with open(os.path.join(SHARED, name), encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def reword(text, lang, rate, vocabulary, rng):
    if lang == "en":
        words = text.split(" ")
        return " ".join(rng.choice(vocabulary) if rng.random() < rate else w for w in words)
    out, i = [], 0
    while i < len(text):
        if HAN.match(text[i]) and i + 1 < len(text) and HAN.match(text[i + 1]) and rng.random() < rate:
            out.append(rng.choice(vocabulary))
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def boilerplate(text, lang, rng):
    site, date, n = rng.choice(SITES[lang]), f"20{rng.randrange(15, 25)}-{rng.randrange(1, 13):02}-{rng.randrange(1, 29):02}", rng.randrange(100, 99999)
    fill = lambda s: s.format(site=site, date=date, n=n)  # noqa: E731
    head = fill(rng.choice(HEADERS[lang]))
    foot = [fill(f) for f in rng.sample(FOOTERS[lang], rng.randrange(1, 4))]
    target = len(text) * rng.uniform(0.05, 0.25)
    while sum(map(len, foot)) + len(head) < target:
        foot.append(fill(rng.choice(FOOTERS[lang])))
    return "\n".join([head, text, *foot])


def reorder(text, lang, swaps, rng):
    parts = [p for p in SENTENCE[lang].split(text) if p]
    for _ in range(swaps):
        if len(parts) < 3:
            break
        i = rng.randrange(len(parts) - 1)
        parts[i], parts[i + 1] = parts[i + 1], parts[i]
    return ("" if lang == "zh" else " ").join(parts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--pairs", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=51)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    shutil.copy(os.path.join(SHARED, "textsim.py"), a.out)
    for lang in ("en", "zh"):
        rng = random.Random(f"{a.seed}-{lang}")
        docs = [d for d in load(f"docs_{lang}.jsonl") if len(d["text"]) >= 300]
        by_source = {}
        for d in docs:
            by_source.setdefault(d["source"], []).append(d)
        if lang == "en":
            vocabulary = [w for d in docs[:3000] for w in d["text"].split()[:100]]
        else:
            vocabulary = [m.group() for d in docs[:3000] for m in re.finditer(r"[\u4e00-\u9fff]{2}", d["text"][:200])]
        rows = []
        for i in range(a.pairs):
            d = rng.choice(docs)
            text = d["text"][:6000]
            if i % 2 == 0:
                edit = ("reword", "boilerplate", "reorder", "repost")[(i // 2) % 4]
                if edit == "reword":
                    b = reword(text, lang, rng.uniform(0.05, 0.15), vocabulary, rng)
                elif edit == "boilerplate":
                    b = boilerplate(text, lang, rng)
                elif edit == "reorder":
                    b = reorder(text, lang, rng.randrange(2, 5), rng)
                else:
                    b = boilerplate(reorder(reword(text, lang, rng.uniform(0.03, 0.10), vocabulary, rng), lang, 1, rng), lang, rng)
                rows.append({"text_a": text, "text_b": b, "label": 1, "lang": lang, "edit": edit})
            else:
                same = [o for o in by_source[d["source"]] if o["id"] != d["id"]]
                if same and (i // 2) % 2 == 0:
                    b, edit = rng.choice(same)["text"][:6000], "hardneg_same_source"
                else:
                    b, edit = reword(text, lang, rng.uniform(0.4, 0.6), vocabulary, rng), "heavy_reword"
                rows.append({"text_a": text, "text_b": b, "label": 0, "lang": lang, "edit": edit})
        path = os.path.join(a.out, f"reposts_{lang}.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            for r in rows:
                f.write(json.dumps(r, ensure_ascii=False) + "\n")
        print(f"{path}: {len(rows)} pairs")


if __name__ == "__main__":
    main()
