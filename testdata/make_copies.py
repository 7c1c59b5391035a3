"""Builds testdata/copies.jsonl: near duplicates of documents in the sample.

The README's first command deduplicates docs_en.jsonl, docs_zh.jsonl and
this file. Each record here repeats another record of the sample, made in
one of two ways (its "made" field says which and how):

- edited: a copy of a sample document edited the way copies are edited in
  the wild (a re-published article, a mail delivered with another list
  footer, a Chinese page with its punctuation and a few characters
  changed);
- found: a pair that occurs naturally in ../shared/data (the same Debian
  manual chapter published twice; two man pages from one template).

Run from the project root with ../shared present:
    python3 testdata/make_copies.py
It prints each copy's token 3-shingle Jaccard (the labels' definition in
../shared/data/textsim.py) with the document it repeats.
"""
import json
import re
import sys
import unicodedata

ROOT = "testdata"
SHARED = "../shared/data"
CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
TOKEN = re.compile(r"[%s]|[^\W_%s]+" % (CJK, CJK))


def j3(a, b):
    def shingles(text):
        t = TOKEN.findall(unicodedata.normalize("NFKC", text).lower())
        return {"\x1f".join(t[i:i + 3]) for i in range(len(t) - 2)}
    sa, sb = shingles(a), shingles(b)
    return len(sa & sb) / len(sa | sb)


def load(path):
    with open(path, encoding="utf-8") as f:
        return {d["id"]: d for d in map(json.loads, f)}


def edit(text, *changes):
    for old, new in changes:
        if old not in text:
            sys.exit(f"make_copies: {old!r} is not in the text")
        text = text.replace(old, new, 1)
    return text


def unwrap(text):
    """Joins hard-wrapped lines into paragraphs (a web page's copy of a mail)."""
    return "\n\n".join(" ".join(p.split("\n")) for p in text.split("\n\n"))


def repost(doc):
    body = doc["text"].split("\n\n", 2)[2]  # drop the mail's Subject and URL/Date lines
    body = edit(
        unwrap(body),
        ("In this in-depth special report, I show", "Here I show"),
        ("Ejct the DVD.", "Eject the DVD."),
        ("I could share it via a P2P network. ", ""),
        ("whose opinion I highly respect on these matters", "whose opinion on these matters I respect"),
    )
    text = ("Heinous DVD Pirates\n\nBy Aaron Swartz. First published on aaronsw.com, "
            "8 October 2002; reposted with permission.\n\n" + body +
            "\n\nUpdate: readers confirm that the Collector's Edition disc is not encrypted.\n\n"
            "Share this: Email · Print")
    return {"title": "Heinous DVD Pirates (repost)", "text": text,
            "made": "edited: the mail re-published as a web article, a new header, "
                    "lines rejoined, a typo fixed, two phrases reworded, a sentence dropped, an update added"}


def other_footer(doc):
    text = edit(
        doc["text"],
        ("This sf.net email is sponsored by: OSDN - Tired of that same old\n"
         "cell phone?  Get a new here for FREE!\n"
         "https://www.inphonic.com/r.asp?r=sourceforge1&refcode1=vs3390",
         "This sf.net email is sponsored by: ThinkGeek\n"
         "Welcome to geek heaven.\nhttp://thinkgeek.com/sf"),
    )
    return {"title": doc["title"], "text": text,
            "made": "edited: the same mail as delivered a day later, with another sponsor footer"}


ASCII_PUNCT = str.maketrans({"，": ", ", "。": ". ", "：": ": ", "？": "? ", "（": "(", "）": ")",
                             "“": '"', "”": '"', "、": ", "})


def zh_mirror(doc):
    text = edit(
        doc["text"],
        ("未经过 Debian 微调的内核吗？\n\n10.2", "未经过 Debian 修改的内核吗？\n\n10.2"),
        ("只有一个常见的坑", "只有一个常见的问题"),
        ("较新版本内核编译系统", "新版本内核编译系统"),
        ("手册页找到", "说明页找到"),
        ("然而，很少需要编辑该文件", "不过，很少需要编辑该文件"),
    ).translate(ASCII_PUNCT)
    return {"title": doc["title"] + " (转载)", "text": text,
            "made": "edited: full-width punctuation made ASCII, five words changed, as a mirror site republishes it"}


def main():
    sample = load(f"{ROOT}/docs_en.jsonl") | load(f"{ROOT}/docs_zh.jsonl")
    shared = load(f"{SHARED}/docs_en.jsonl") | load(f"{SHARED}/docs_zh.jsonl")
    out = []
    for new_id, of, make in (
        ("en/blog/heinous-dvd-pirates", "en/spamassassin/easy-ham-1/02349", repost),
        ("en/spamassassin/easy-ham-1/01429-resent", "en/spamassassin/easy-ham-1/01429", other_footer),
        ("zh/mirror/debian-faq/kernel", "zh/debian-faq/kernel.zh-cn", zh_mirror),
    ):
        doc = sample[of]
        out.append({"id": new_id, "lang": doc["lang"], "source": doc["source"], "copy_of": of} | make(doc))
    for found_id, of, why in (
        ("en/debian-policy/menu-policy-1", None, "found: the Menu sub-policy as one page"),
        ("en/debian-policy/menu-policy.html/ch2", "en/debian-policy/menu-policy-1",
         "found: its chapter 2 published again as a page of the HTML manual"),
        ("zh/man/man1/svnlook.1", "zh/man/man1/svnadmin.1",
         "found: a man page made from the same template as svnadmin(1)"),
    ):
        doc = shared[found_id]
        rec = {k: doc[k] for k in ("id", "lang", "source", "version", "title")}
        if of:
            rec["copy_of"] = of
        rec["made"] = why
        out.append(rec | {"text": doc["text"]})
    every = sample | {d["id"]: d for d in out}
    with open(f"{ROOT}/copies.jsonl", "w", encoding="utf-8") as f:
        for rec in out:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
            if "copy_of" in rec:
                print(f"{j3(rec['text'], every[rec['copy_of']]['text']):.3f}  {rec['id']}  repeats  {rec['copy_of']}")


if __name__ == "__main__":
    main()
