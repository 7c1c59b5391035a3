#!/usr/bin/env python3
"""The inputs of testdata/compat/ferd_simhash.txt.gz, one hex line each ('-'
for none): ferd/simhash's suite and demo strings, every length 0-39 and 200
longer random byte strings, 300 strings over few-letter alphabets, and 60
Chinese and 60 English documents (first 1,500 bytes) of ../shared/data.

Usage: gen_inputs.py SHARED_DATA_DIR > in.txt"""
import json
import os
import random
import sys

rng = random.Random(5)
ins = [b"My voice is my password.", b"My voice is my passport.", b"the cat sat on the mat", b"the cat sat on a mat",
       b"my car is grey", b"we all scream for ice cream", b"my heart will go on",
       b"bless this mess with all the might you have", b"the fat cat is a rat", b"a scream for the supreme cream",
       b"my car is great", b"my fat hat is a rat", b"unrelated text, entirely!!!", b"my cart will go long",
       b"the crop and top of the cream", b"I dream of ice cream", b"some binary string", b"", b"a", b"ab", b"abc",
       b"abcd", b"abcde", b"aaaaaaaa", b"\x00\x00\x00\x00\x00"]
for n in list(range(0, 40)) + [rng.randint(40, 1000) for _ in range(200)]:
    ins.append(bytes(rng.randrange(256) for _ in range(n)))
for n in range(300):
    alpha = rng.choice([b"ab", b"abc ", b"\x00\xff", bytes(range(256))])
    ins.append(bytes(rng.choice(alpha) for _ in range(rng.randint(0, 200))))
for name in ("docs_zh.jsonl", "docs_en.jsonl"):
    lines = open(os.path.join(sys.argv[1], name), encoding="utf-8").readlines()
    for line in rng.sample(lines, 60):
        ins.append(json.loads(line)["text"].encode()[:1500])
for b in ins:
    print(b.hex() or "-")
