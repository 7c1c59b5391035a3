#!/usr/bin/env python3
"""Differential test: neardup's `python-simhash` preset against the real PyPI
`simhash` package (2.1.2), on generated and real texts.

Usage: diff_python_simhash.py NEARDUP_BINARY [SHARED_DATA_DIR]

Fingerprints at least 1,000 texts with both and exits 1 on any difference.
Run it in a virtualenv with `simhash==2.1.2` and `numpy<2` (numpy 2 makes the
package crash on counts above 255): tests/compat/run.sh sets that up.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

from simhash import Simhash

SEED = 20261121


def special_chars():
    # Characters whose handling differs between Python and naive ports.
    return (
        list('ΣσςΑΒΓ') + ['İ', 'ı', 'ß', 'ẞ', 'ﬁ', 'ǅ', 'Ǆ', '_', '٣', 'Ⅷ', '½', '²', 'ª', 'º', '〇', '々']
        + [chr(c) for c in range(0x300, 0x370, 7)]            # combining marks
        + [chr(c) for c in range(0x1F600, 0x1F650, 5)]        # emoji
        + ['\u200d', '\ufe0f', '\u00ad', '\u0345', '\u2160']  # ZWJ, VS16, soft hyphen, ypogegrammeni
        + [chr(c) for c in (0x9FCC, 0x9FCD, 0x9FFF, 0x3400, 0x20000, 0x2A700, 0x31350)]
        + ['\t', '\n', ' ', '\u3000', '\u00a0']
    )


def random_char(rng, specials):
    r = rng.random()
    if r < 0.25:
        return chr(rng.randrange(0x20, 0x7F))
    if r < 0.45:
        return chr(rng.randrange(0x4E00, 0xA000))
    if r < 0.60:
        return rng.choice(specials)
    if r < 0.75:
        return chr(rng.randrange(0x80, 0x800))
    if r < 0.90:
        c = rng.randrange(0x800, 0x10000)
        return chr(c) if not 0xD800 <= c <= 0xDFFF else 'x'
    c = rng.randrange(0x10000, 0x110000)
    return chr(c)


def generated(rng):
    specials = special_chars()
    texts = ['', ' ', '\t\n ', '\u3000', 'a', 'ab', 'abc', 'abcd', 'ΑΣ', 'ΑΣ Α', 'Σ', '___', '....', 'İİ', '中']
    for _ in range(700):
        n = rng.choice([1, 2, 3, 4, 5, 8, 20, 60, 200, 1000])
        texts.append(''.join(random_char(rng, specials) for _ in range(n)))
    # Repetitive text: counts above 50 take the package's other code path,
    # and above 255 overflow numpy 2's uint8 arithmetic.
    for _ in range(40):
        unit = ''.join(random_char(rng, specials) for _ in range(rng.randrange(1, 6)))
        texts.append(unit * rng.choice([60, 300, 1000]))
    words = ['the', 'quick', 'Brown', 'fox', '中文', '测试', 'ΟΔΟΣ', 'naïve', 'straße', '123', '_id']
    for _ in range(200):
        texts.append(' '.join(rng.choice(words) for _ in range(rng.randrange(1, 80))))
    # Texts over 100 KB.
    for i in range(3):
        texts.append(''.join(random_char(rng, specials) for _ in range(40_000 + i)) * 3)
    return texts


def real(rng, data_dir):
    out = []
    if data_dir and os.path.isdir(data_dir):
        for name in ('docs_en.jsonl', 'docs_zh.jsonl'):
            path = os.path.join(data_dir, name)
            with open(path, encoding='utf-8') as f:
                lines = f.readlines()
            for line in rng.sample(lines, 100):
                out.append(json.loads(line)['text'])
    else:
        here = os.path.dirname(os.path.abspath(__file__))
        testdata = os.path.join(here, '..', '..', 'testdata')
        for name in sorted(os.listdir(testdata)):
            # The documents, not the labelled pairs (which have text_a/text_b).
            if name.startswith('docs_') and name.endswith('.jsonl'):
                with open(os.path.join(testdata, name), encoding='utf-8') as f:
                    out.extend(json.loads(line)['text'] for line in f if line.strip())
    return out


def main():
    binary = sys.argv[1]
    data_dir = sys.argv[2] if len(sys.argv) > 2 else None
    rng = random.Random(SEED)
    texts = generated(rng) + real(rng, data_dir)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'texts.jsonl')
        with open(path, 'w', encoding='utf-8') as f:
            for i, t in enumerate(texts):
                f.write(json.dumps({'id': i, 'text': t}) + '\n')
        res = subprocess.run(
            [binary, 'fingerprint', '--preset', 'python-simhash', '--input-format', 'jsonl',
             '--allow-empty', path],
            capture_output=True, text=True, check=False)
        if res.returncode != 0:
            print(res.stderr, file=sys.stderr)
            sys.exit(f'neardup failed with exit code {res.returncode}')
        ours = {}
        for line in res.stdout.splitlines():
            rec = json.loads(line)
            ours[rec['id']] = int(rec['fingerprint'], 16)
    bad = 0
    for i, t in enumerate(texts):
        want = Simhash(t).value
        got = ours.get(i)
        if got != want:
            bad += 1
            if bad <= 10:
                print(f'MISMATCH #{i}: python {want:016x} neardup {got if got is None else format(got, "016x")}'
                      f' text {t[:80]!r}', file=sys.stderr)
    total = len(texts)
    big = sum(len(t.encode()) > 100_000 for t in texts)
    print(f'python-simhash differential: {total - bad} passed, {bad} failed '
          f'({total} texts, {big} over 100 KB, real documents from {data_dir or "testdata/"})')
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
