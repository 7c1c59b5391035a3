#!/usr/bin/env python3
"""Differential test: neardup's `yanyiwu` preset against the real cppjieba
(KeywordExtractor from the npm package nodejieba) driving yanyiwu/simhash's
vote (tests/compat/yanyiwu_peer.cpp).

Usage: diff_yanyiwu.py NEARDUP_BINARY PEER_BINARY CPPJIEBA_DICT_DIR [SHARED_DATA_DIR]

Two claims are checked:
- hashing and vote are byte-identical: whenever both sides pick the same
  keywords with the same weights, the fingerprints are equal (required for
  every document);
- segmentation is as close to cppjieba as jieba-rs allows: the share of
  documents with identical keywords and fingerprints is reported and must
  stay above a floor, so a regression shows.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

FLOOR = 0.85  # share of documents with fingerprints identical to cppjieba's (measured: 88.5%)


def texts(data_dir):
    rng = random.Random(11)
    out = []
    if data_dir and os.path.isdir(data_dir):
        for name, n in (('docs_zh.jsonl', 2000), ('docs_en.jsonl', 200)):
            with open(os.path.join(data_dir, name), encoding='utf-8') as f:
                lines = f.readlines()
            out += [json.loads(l)['text'] for l in rng.sample(lines, n)]
    else:
        here = os.path.dirname(os.path.abspath(__file__))
        for name in ('docs_zh.jsonl', 'docs_en.jsonl'):
            with open(os.path.join(here, '..', '..', 'testdata', name), encoding='utf-8') as f:
                out += [json.loads(l)['text'] for l in f if l.strip()]
    return out


def main():
    neardup, peer, dict_dir = sys.argv[1:4]
    data_dir = sys.argv[4] if len(sys.argv) > 4 else None
    docs = texts(data_dir)
    stream = b''.join(str(len(t.encode())).encode() + b'\n' + t.encode() for t in docs)
    res = subprocess.run([peer, dict_dir], input=stream, capture_output=True, check=True)
    theirs = []
    for line in res.stdout.decode().split('\n')[:len(docs)]:
        parts = line.split('\t')
        kws = [(parts[i], float(parts[i + 1])) for i in range(1, len(parts), 2)]
        theirs.append((parts[0], kws))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'docs.jsonl')
        with open(path, 'w', encoding='utf-8') as f:
            for i, t in enumerate(docs):
                f.write(json.dumps({'id': i, 'text': t}) + '\n')
        res = subprocess.run([neardup, 'fingerprint', '--preset', 'yanyiwu', '--features', '--allow-empty',
                              '--input-format', 'jsonl', path], capture_output=True, text=True, check=True)
    ours = [json.loads(l) for l in res.stdout.splitlines()]
    same_fp = same_kw = vote_mismatch = 0
    examples = []
    for i, (o, (tfp, tkw)) in enumerate(zip(ours, theirs)):
        okw = [(f, w) for f, w in o['features']]
        kw_equal = len(okw) == len(tkw) and all(a == c and abs(b - d) <= 1e-9 * max(1.0, abs(d))
                                                 for (a, b), (c, d) in zip(okw, tkw))
        same_kw += kw_equal
        same_fp += o['fingerprint'] == tfp
        if kw_equal and o['fingerprint'] != tfp:
            vote_mismatch += 1
            print(f'VOTE MISMATCH doc {i}: ours {o["fingerprint"]} cppjieba {tfp} keywords {tkw}', file=sys.stderr)
        elif not kw_equal and len(examples) < 3:
            examples.append(f'  doc {i}: ours {okw[:5]}\n          cppjieba {tkw[:5]}')
    n = len(docs)
    print(f'yanyiwu differential: {n} documents; identical fingerprints {same_fp / n:.1%}, '
          f'identical keywords {same_kw / n:.1%}; hash+vote mismatches on identical keywords: {vote_mismatch}')
    if examples:
        print('  segmentation differences, for example:\n' + '\n'.join(examples))
    ok = vote_mismatch == 0 and same_fp / n >= FLOOR
    source = data_dir if data_dir and os.path.isdir(data_dir) else 'testdata/'
    print(f'yanyiwu differential: {"passed" if ok else "FAILED"} ({n} documents from {source}; '
          f'passes with no mismatch on identical keywords and at least {FLOOR:.0%} identical fingerprints)')
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
