#!/usr/bin/env python3
"""Differential test: a `yanyiwu` preset and its cppjieba segmenter
against the real cppjieba driving yanyiwu/simhash's vote
(tests/compat/yanyiwu_peer.cpp compiled against that cppjieba's headers),
and, when given, against yanyiwu/simhash itself (its own headers and
`Simhasher::make`, ../shared/peers/yanyiwu-simhash/fingerprints.cpp).

Usage: diff_yanyiwu.py [--preset NAME] [--flavour FLAVOUR] [--simhasher BIN]
                       NEARDUP_BINARY PEER_BINARY CPPJIEBA_DICT_DIR CUT_BINARY [SHARED_DATA_DIR]

--preset (default `yanyiwu`) is the preset compared; --flavour (default
`cppjieba`) the argument of crates/jieba's example `cut` (CUT_BINARY: our
segmenter's words): `cppjieba` for cppjieba v5.6.7, `cppjieba-nodejieba`
for the cppjieba of nodejieba 3.5.8. Claims checked on every document,
sample and generated (mixed scripts, numbers with letters and decimals,
full-width forms, long runs without punctuation, unknown names):
- MixSegment's words are ours, word for word;
- the keywords and their weights are cppjieba's KeywordExtractor's;
- the fingerprints are yanyiwu/simhash's vote over them, and (with
  --simhasher) what yanyiwu/simhash itself prints.
"""
import json
import os
import random
import subprocess
import sys
import tempfile


def texts(data_dir):
    rng = random.Random(11)
    out = []
    if data_dir and os.path.isdir(data_dir):
        for name, n in (('docs_zh.jsonl', 3000), ('docs_en.jsonl', 300)):
            with open(os.path.join(data_dir, name), encoding='utf-8') as f:
                lines = f.readlines()
            out += [json.loads(l)['text'] for l in rng.sample(lines, min(n, len(lines)))]
    else:
        here = os.path.dirname(os.path.abspath(__file__))
        for name in ('docs_zh.jsonl', 'docs_en.jsonl'):
            with open(os.path.join(here, '..', '..', 'testdata', name), encoding='utf-8') as f:
                out += [json.loads(l)['text'] for l in f if l.strip()]
    return out


RARE = '鑫淼犇骉羴猋龘靐齉麤爨燚垚焱嫑甭巭兲奣嘦莪侼尛恏芣'
SURNAMES = '赵钱孙李周吴郑王冯陈褚卫蒋沈韩杨朱秦尤许何吕施张孔曹严华金魏陶姜'
PIECES = [
    'Rust 1.75', 'git-credential-cache', 'A.13', '3.0rc1', '100%', 'C++', 'C#', 'AT&T', 'iPhone15Pro',
    'ＡＢＣ', 'ｄｅｆ１２３', '全角：（）！？', '，', '。', '、', '；', '\u3000', '\r\n', '\t', '  ', '\xa0',
    'ひらがなカタカナ', '한국어', 'é ß Σ', '😀🇨🇳', '𠀀𠀁', '〇', '…', '——', '《书名》', '“引号”',
    '3.14.15', '2024年12月31日', 'www.example.com', 'user_name@mail.cn', '#话题#', '@用户',
    # cppjieba v5.6.7's HMM keeps digits followed by letters, and one
    # decimal suffix, in a word.
    '5G3.14', 'abc1.2', 'x.5', '12ab', 'v2.', '1.2.3.4', '3.14元', '型号A7.2s', 'ＧＰＴ4.0', 'Python3.12版',
]


def generated(sample, n=3000):
    """Texts made of the sample's Chinese, cut up and mixed with the pieces
    above, names of rare characters, and long runs with the punctuation
    taken out."""
    rng = random.Random(7)
    zh = [t for t in sample if any('\u4e00' <= c <= '\u9fff' for c in t)]
    out = []
    for i in range(n):
        parts = []
        for _ in range(rng.randint(1, 12)):
            r = rng.random()
            if r < 0.45 and zh:
                t = rng.choice(zh)
                a = rng.randrange(max(1, len(t)))
                parts.append(t[a:a + rng.randint(1, 80)])
            elif r < 0.65:
                parts.append(rng.choice(PIECES))
            elif r < 0.8:
                name = rng.choice(SURNAMES) + ''.join(rng.choice(RARE) for _ in range(rng.randint(1, 2)))
                parts.append(name + rng.choice(['说', '先生', '教授表示', '']))
            elif r < 0.87 and zh:
                t = rng.choice(zh)[:400]
                parts.append(''.join(c for c in t if '\u4e00' <= c <= '\u9fff'))
            elif r < 0.93:
                # Letters, digits and dots as models, versions and prices
                # come (where the HMM's ASCII rules differ by version).
                parts.append(''.join(rng.choice('abcXYZ0123456789....') for _ in range(rng.randint(1, 14))))
            else:
                parts.append(''.join(chr(rng.choice([rng.randint(0x4e00, 0x9fa5), rng.randint(0x21, 0x7e),
                                                      rng.randint(0xff01, 0xff5e), rng.randint(0x3000, 0x303f)]))
                                     for _ in range(rng.randint(1, 20))))
        out.append(''.join(parts))
    return out


def stream(docs):
    return b''.join(str(len(t.encode())).encode() + b'\n' + t.encode() for t in docs)


def main():
    args = sys.argv[1:]
    opts = {'--preset': 'yanyiwu', '--flavour': 'cppjieba', '--simhasher': None}
    while args and args[0] in opts:
        opts[args[0]] = args[1]
        args = args[2:]
    preset, flavour, simhasher = opts['--preset'], opts['--flavour'], opts['--simhasher']
    neardup, peer, dict_dir, cut = args[:4]
    data_dir = args[4] if len(args) > 4 else None
    sample = texts(data_dir)
    docs = sample + generated(sample)
    failures = 0

    # 1. Words: MixSegment against our cppjieba flavour.
    theirs = subprocess.run([peer, dict_dir, 'cut'], input=stream(docs), capture_output=True, check=True).stdout
    ours = subprocess.run([cut, flavour], input=stream(docs), capture_output=True, check=True).stdout
    tw = theirs.decode().split('\x02')[:len(docs)]
    ow = ours.decode().split('\x02')[:len(docs)]
    bad = [i for i, (a, b) in enumerate(zip(ow, tw)) if a != b]
    failures += len(bad)
    for i in bad[:3]:
        a, b = ow[i].split('\x01'), tw[i].split('\x01')
        k = next((j for j in range(min(len(a), len(b))) if a[j] != b[j]), min(len(a), len(b)))
        print(f'  WORDS differ, doc {i} at word {k}: ours {a[k:k + 6]} cppjieba {b[k:k + 6]}', file=sys.stderr)

    # 2. Keywords and fingerprints: the preset against KeywordExtractor + yanyiwu's vote.
    res = subprocess.run([peer, dict_dir], input=stream(docs), capture_output=True, check=True)
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
        res = subprocess.run([neardup, 'fingerprint', '--preset', preset, '--features', '--allow-empty',
                              '--input-format', 'jsonl', path], capture_output=True, text=True, check=True)
    mine = [json.loads(l) for l in res.stdout.splitlines()]
    same_fp = same_kw = 0
    for i, (o, (tfp, tkw)) in enumerate(zip(mine, theirs)):
        okw = [(f, w) for f, w in o['features']]
        kw_equal = len(okw) == len(tkw) and all(a == c and abs(b - d) <= 1e-9 * max(1.0, abs(d))
                                                 for (a, b), (c, d) in zip(okw, tkw))
        same_kw += kw_equal
        same_fp += o['fingerprint'] == tfp
        if (not kw_equal or o['fingerprint'] != tfp) and failures < 6:
            print(f'  DIFFER doc {i}: ours {o["fingerprint"]} {okw[:5]}\n'
                  f'          cppjieba {tfp} {tkw[:5]}', file=sys.stderr)
        failures += (not kw_equal) + (o['fingerprint'] != tfp)
    n = len(docs)
    real = ''
    if simhasher:
        # 3. yanyiwu/simhash itself: texts separated by NUL bytes.
        docs_nul = [t for t in docs if '\0' not in t]
        res = subprocess.run([simhasher, dict_dir], input='\0'.join(docs_nul).encode(), capture_output=True,
                             check=True)
        printed = res.stdout.decode().split()
        by_text = {t: o['fingerprint'] for t, o in zip(docs, mine)}
        diff = [i for i, (t, fp) in enumerate(zip(docs_nul, printed)) if by_text[t] != fp]
        if len(printed) != len(docs_nul):
            print(f'  yanyiwu/simhash printed {len(printed)} fingerprints for {len(docs_nul)} texts', file=sys.stderr)
            failures += 1
        for i in diff[:3]:
            print(f'  DIFFER from yanyiwu/simhash, text {i}: ours {by_text[docs_nul[i]]} theirs {printed[i]}',
                  file=sys.stderr)
        failures += len(diff)
        real = f', fingerprints as yanyiwu/simhash prints them {(len(docs_nul) - len(diff)) / len(docs_nul):.2%}'
    source = data_dir if data_dir and os.path.isdir(data_dir) else 'testdata/'
    print(f'{preset} differential: {len(sample)} documents from {source} and {n - len(sample)} generated; '
          f'identical words {(n - len(bad)) / n:.2%}, keywords {same_kw / n:.2%}, fingerprints {same_fp / n:.2%}'
          f'{real}')
    print(f'{preset} differential: {"passed" if failures == 0 else "FAILED"} (every document must be identical)')
    sys.exit(0 if failures == 0 else 1)


if __name__ == '__main__':
    main()
