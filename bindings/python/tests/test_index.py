"""neardup.Index against a brute-force scan, persistence and bad input."""

import random

import pytest

import neardup


def scan(items, q, k):
    out = [(i, bin(f ^ q).count("1")) for i, f in items.items()]
    return sorted([(i, d) for i, d in out if d <= k], key=lambda x: (x[1], str(x[0])))


def clustered(rng, n, bits=64):
    centres = [rng.getrandbits(bits) for _ in range(20)]
    out = []
    for _ in range(n):
        v = rng.choice(centres)
        for _ in range(rng.randrange(6)):
            v ^= 1 << rng.randrange(bits)
        out.append(v)
    return out


@pytest.mark.parametrize("bits", [64, 128])
def test_index_equals_a_scan(bits):
    rng = random.Random(bits)
    fps = clustered(rng, 3000, bits)
    index = neardup.Index(k=3, f=bits)
    items = {}
    index.insert_batch([f"d{i}" for i in range(2000)], fps[:2000])
    items.update({f"d{i}": f for i, f in enumerate(fps[:2000])})
    for i, f in enumerate(fps[2000:]):
        index.insert(i, f)  # int ids too
        items[i] = f
    for i in range(0, 2000, 7):
        assert index.remove(f"d{i}")
        del items[f"d{i}"]
    assert not index.remove("no-such-id")
    index.insert("d1", fps[5])  # replaces
    items["d1"] = fps[5]
    assert len(index) == len(items) and "d1" in index and "d0" not in index
    queries = [rng.choice(fps) ^ (1 << rng.randrange(bits)) for _ in range(200)]
    for k in (0, 3, 5):
        batch = index.query_batch(queries, k=k)
        for q, got in zip(queries, batch):
            want = scan(items, q, k)
            assert sorted(got, key=lambda x: (x[1], str(x[0]))) == want
            assert sorted(index.query(q, k=k), key=lambda x: (x[1], str(x[0]))) == want


def test_save_and_load_round_trip(tmp_path):
    rng = random.Random(3)
    fps = clustered(rng, 500)
    index = neardup.Index()
    index.insert_batch([f"doc-{i}" for i in range(500)], fps)
    index.remove("doc-7")
    path = tmp_path / "x.ndx"
    index.save(path)
    again = neardup.Index.load(str(path))
    assert len(again) == 499 and again.k == 3
    for q in fps[:50]:
        assert sorted(again.query(q)) == sorted(index.query(q))
    with pytest.raises(OSError):
        neardup.Index.load(tmp_path / "missing.ndx")
    (tmp_path / "bad.ndx").write_bytes(b"not an index at all, just some bytes here")
    with pytest.raises(neardup.NeardupError, match="not a neardup index"):
        neardup.Index.load(tmp_path / "bad.ndx")


def test_bad_input():
    index = neardup.Index()
    with pytest.raises(TypeError, match="str or int"):
        index.insert(1.5, 0)
    with pytest.raises(ValueError, match="fingerprint"):
        index.insert("a", -1)
    with pytest.raises(ValueError, match="128-bit"):
        index.insert("a", 2**100)
    with pytest.raises(ValueError, match="ids but"):
        index.insert_batch(["a", "b"], [1])
    with pytest.raises(ValueError, match="more than"):
        index.query(0, k=65)
    with pytest.raises(ValueError, match="64 or 128"):
        neardup.Index(f=32)
    assert index.query(0) == []


def test_insert_batch_with_repeated_ids_keeps_the_last():
    index = neardup.Index()
    index.insert("a", 1)
    index.insert_batch(["a", "b", "b", "c"], [2**40, 7, 2**50, 2**60])
    assert len(index) == 3
    assert index.query(1, k=0) == []
    assert index.query(2**40, k=0) == [("a", 0)]
    assert index.query(7, k=0) == []
    assert index.query(2**50, k=0) == [("b", 0)]
