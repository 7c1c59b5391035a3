"""neardup.pairs and neardup.dedup against brute force."""

import random

import pytest

import neardup


def brute_pairs(fps, k):
    return sorted(
        (i, j, bin(fps[i] ^ fps[j]).count("1"))
        for i in range(len(fps))
        for j in range(i + 1, len(fps))
        if bin(fps[i] ^ fps[j]).count("1") <= k
    )


@pytest.mark.parametrize("bits", [64, 128])
def test_pairs_equal_brute_force(bits):
    rng = random.Random(bits)
    centres = [rng.getrandbits(bits) for _ in range(15)]
    fps = []
    for _ in range(400):
        v = rng.choice(centres)
        for _ in range(rng.randrange(5)):
            v ^= 1 << rng.randrange(bits)
        fps.append(v)
    fps += fps[:20]  # identical fingerprints too
    for k in (0, 2, 4):
        assert neardup.pairs(fps, k=k, f=bits) == brute_pairs(fps, k)


def test_pairs_bad_input():
    with pytest.raises(ValueError, match="f=128"):
        neardup.pairs([2**100], k=3)
    with pytest.raises(ValueError, match=r"fingerprints\[1\]"):
        neardup.pairs([1, -5])
    with pytest.raises(ValueError, match="64 or 128"):
        neardup.pairs([1], f=16)
    assert neardup.pairs([]) == []


def test_dedup_clusters_near_texts():
    base = "The quick brown fox jumps over the lazy dog near the river bank on a sunny afternoon."
    texts = [base, "Something else entirely, about databases and indexes.", base + "!", base.upper(), "今天天气很好"]
    clusters = neardup.dedup(texts, k=3)
    assert [0, 2, 3] in clusters and all(1 not in c and 4 not in c for c in clusters)
    named = neardup.dedup(texts, k=3, ids=["a", "b", "c", "d", "e"])
    assert ["a", "c", "d"] in named
    fingerprinter = neardup.Fingerprinter("python-simhash")
    assert neardup.dedup(texts, fingerprinter=fingerprinter, k=0) == neardup.dedup(texts, fingerprinter=fingerprinter, k=0)
    with pytest.raises(ValueError, match="ids"):
        neardup.dedup(texts, ids=["a"])
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        neardup.dedup(["ok", None])
