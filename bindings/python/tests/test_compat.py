"""neardup.compat against the PyPI simhash package: its own test cases
(restated from its repository, tests/test_simhash.py, with the values that
release 2.1.2 gives — the repository's older file pins values of an earlier
algorithm: 6560575042654586091, bucket size 6) and a differential test on
1,000 random texts against the real package when it is installed."""

import random

import neardup

import pytest

from conftest import need
from neardup.compat import Simhash, SimhashIndex

TEXT = "How are you? I AM fine. Thanks. And you?"
OTHER = "How old are you ? :-) i am fine. Thanks. And you?"

def test_value_64_and_32_bits():
    assert Simhash(TEXT, f=64).value == 13831624873712969754
    assert Simhash(TEXT, f=32).value == 538863642

def test_distance():
    assert Simhash(TEXT).distance(Simhash(OTHER)) == 7
    sh2 = Simhash(OTHER)
    assert sh2.distance(Simhash(sh2)) == 0
    assert Simhash("1").distance(Simhash("2")) != 0
    assert Simhash(TEXT, f=32).distance(Simhash(OTHER, f=32)) == 3
    assert Simhash(TEXT, f=32).distance(Simhash(TEXT, f=32)) == 0
    with pytest.raises(ValueError):
        Simhash(TEXT, f=32).distance(Simhash(TEXT, f=64))
    with pytest.raises(AssertionError):
        Simhash(TEXT, f=32).distance(Simhash(TEXT, f=64))

def test_chinese():
    assert Simhash("你好　世界！　　呼噜。").distance(Simhash("你好，世界　呼噜")) == 0

def test_features_int_and_bad_values():
    by_text = Simhash("aaaa bbbb")
    assert Simhash(["aaaa", "bbbb"]).value == Simhash([("aaaa", 1), ("bbbb", 1)]).value
    assert Simhash({"aaaa": 3}).value == Simhash([("aaaa", 3)]).value
    assert Simhash(by_text.value).value == by_text.value
    with pytest.raises(ValueError):
        Simhash("x", f=60)
    with pytest.raises(Exception, match="Bad parameter"):
        Simhash(1.5)

@pytest.mark.parametrize("f, found, also", [(64, [], []), (32, ["1"], ["1"])])
def test_index(f, found, also):
    data = {
        1: "How are you? I Am fine. blar blar blar blar blar Thanks.",
        2: "How are you i am fine. blar blar blar blar blar than",
        3: "This is simhash test.",
    }
    index = SimhashIndex([(str(k), Simhash(v, f=f)) for k, v in data.items()], f=f)
    assert index.bucket_size() == 7
    near = Simhash("How are you i am fine. blar blar blar blar blar thank", f=f)
    assert sorted(index.get_near_dups(near)) == found
    # `also`: at 32 bits text 1 is within k = 2 of text 2 (as in the package).
    exact = Simhash(data[2], f=f)
    assert sorted(index.get_near_dups(exact)) == also + ["2"]
    index.delete("2", exact)
    assert sorted(index.get_near_dups(exact)) == also
    index.add("4", exact)
    assert sorted(index.get_near_dups(exact)) == also + ["4"]

def random_texts(n, seed):
    rng = random.Random(seed)
    words = ["near", "duplicate", "text", "the", "a", "of", "fine", "thanks", "你好", "世界", "今天", "天气",
             "很好", "ÉCOLE", "naïve", "x1", "42", "—", "!!", "emoji🙂", "tab\t", "line\n"]
    out = []
    for _ in range(n):
        out.append(" ".join(rng.choice(words) for _ in range(rng.randrange(0, 40))))
    return out

def test_differential_against_the_real_package():
    real = need("simhash")
    texts = random_texts(1000, 7)
    for f in (64, 32):
        for t in texts:
            assert Simhash(t, f=f).value == real.Simhash(t, f=f).value, (f, t)
    objs = [(str(i), real.Simhash(t)) for i, t in enumerate(texts[:300])]
    ours = SimhashIndex([(i, Simhash(s.value)) for i, s in objs], k=3)
    theirs = real.SimhashIndex(objs, k=3)
    for t in texts[300:400]:
        assert sorted(ours.get_near_dups(Simhash(t))) == sorted(theirs.get_near_dups(real.Simhash(t)))
    assert ours.bucket_size() == theirs.bucket_size()


def test_ferd_hash_equals_the_erlang_module_on_its_values():
    """`ferd_hash` is ferd/simhash's `simhash:hash/1`: the 685 values its
    Erlang module returned (testdata/compat/ferd_simhash.txt.gz), bytes and
    bytes-likes alike; str is its UTF-8."""
    import gzip
    from pathlib import Path

    from neardup.compat import ferd_distance, ferd_hash

    path = Path(__file__).resolve().parents[3] / "testdata" / "compat" / "ferd_simhash.txt.gz"
    lines = [l for l in gzip.open(path, "rt").read().splitlines() if not l.startswith("#")]
    assert len(lines) == 685
    for line in lines:
        data, want = line.split(" ")
        data = b"" if data == "-" else bytes.fromhex(data)
        assert ferd_hash(data).hex() == want, line[:80]
        assert ferd_hash(bytearray(data)).hex() == want
    assert ferd_hash("中文 text") == ferd_hash("中文 text".encode("utf-8"))
    a, b = ferd_hash(b"My voice is my password."), ferd_hash(b"My voice is my passport.")
    assert ferd_distance(a, b) == ferd_distance(b, a) > 0 and ferd_distance(a, a) == 0
    with pytest.raises(ValueError, match="16-byte"):
        ferd_distance(a, b"short")
    with pytest.raises(ValueError, match="not UTF-8"):
        neardup.Fingerprinter("default").fingerprint_bytes(b"\xff\xfe")
