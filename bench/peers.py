#!/usr/bin/env python3
"""Throughput of the Python peers on the same documents neardup is measured on.

Usage: peers.py DOCS_EN.jsonl DOCS_ZH.jsonl MAX_MB
Prints one JSON object per measurement.
"""
import json
import statistics
import sys
import time


def load(path, max_bytes):
    texts, total = [], 0
    with open(path, encoding='utf-8') as f:
        for line in f:
            t = json.loads(line)['text']
            n = len(t.encode('utf-8'))
            if total + n > max_bytes:
                break
            total += n
            texts.append(t)
    return texts, total


def timed(fn, texts, runs):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for t in texts:
            fn(t)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    en_path, zh_path, max_mb = sys.argv[1], sys.argv[2], float(sys.argv[3])
    max_bytes = int(max_mb * (1 << 20))
    en, en_bytes = load(en_path, max_bytes)
    zh, zh_bytes = load(zh_path, max_bytes)

    from simhash import Simhash
    s = timed(lambda t: Simhash(t).value, en, 2)
    print(json.dumps({'peer': 'pypi-simhash', 'lang': 'en', 'docs': len(en), 'bytes': en_bytes,
                      'median_s': s, 'mb_per_s': en_bytes / 1e6 / s}))

    import jieba
    import jieba.analyse
    jieba.setLogLevel(60)
    t0 = time.perf_counter()
    jieba.initialize()
    jieba.analyse.extract_tags('预热', topK=20, withWeight=True)
    load_s = time.perf_counter() - t0
    s = timed(lambda t: jieba.analyse.extract_tags(t, topK=20, withWeight=True), zh, 2)
    print(json.dumps({'peer': 'jieba.analyse.extract_tags', 'lang': 'zh', 'docs': len(zh), 'bytes': zh_bytes,
                      'median_s': s, 'mb_per_s': zh_bytes / 1e6 / s, 'load_s': load_s}))


if __name__ == '__main__':
    main()
