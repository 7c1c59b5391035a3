"""neardup.datasketch against the real datasketch 2.0.0: the same
permutations, hash values, digests, Jaccard estimates, byte formats,
pickles (both ways), LSH band parameters, buckets and query answers, on
random and real inputs (both languages, every scheme, several seeds and
num_perm 16–512, thresholds 0.1–0.95, weights)."""

import hashlib
import json
import pickle
import random
import re
from pathlib import Path

import pytest

from conftest import need

np = need("numpy")
ds = need("datasketch")
nd = pytest.importorskip("neardup.datasketch")

ROOT = Path(__file__).resolve().parents[3]
SCHEMES = ["affine32", "affine64", "legacy"]


def _docs():
    out = []
    for name in ("docs_en.jsonl", "docs_zh.jsonl"):
        for line in (ROOT / "testdata" / name).read_text(encoding="utf-8").splitlines():
            text = json.loads(line)["text"]
            if name.endswith("en.jsonl"):
                words = text.lower().split()
                out.append([" ".join(words[i : i + 3]).encode() for i in range(max(1, len(words) - 2))])
            else:
                chars = [c for c in text if not c.isspace()]
                out.append(["".join(chars[i : i + 3]).encode() for i in range(max(1, len(chars) - 2))])
    return out


DOCS = _docs()


def _random_sets(n, seed=0):
    rng = random.Random(seed)
    vocab = [b"tok%d" % i for i in range(300)] + [bytes(rng.randrange(256) for _ in range(rng.randrange(0, 90))) for _ in range(50)]
    base = [rng.sample(vocab, rng.randrange(1, 60)) for _ in range(n // 3 + 1)]
    out = []
    for i in range(n):
        s = list(base[i // 3])
        if i % 3:  # near copies: some items swapped
            k = rng.randrange(0, len(s) // 3 + 1)
            s = s[k:] + rng.sample(vocab, k)
        out.append(s)
    return out


def _same(a, b):
    assert type(a).__name__ == type(b).__name__
    assert a.scheme == b.scheme and a.seed == b.seed
    assert a.hashvalues.dtype == b.hashvalues.dtype
    assert np.array_equal(a.hashvalues, b.hashvalues)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("num_perm", [16, 128, 512])
def test_permutations_and_values_equal_on_real_text(scheme, num_perm):
    for seed in (1, 7, 2**32 - 1):
        ours, theirs = nd.MinHash(num_perm, seed, scheme=scheme), ds.MinHash(num_perm, seed, scheme=scheme)
        assert ours.permutations.dtype == theirs.permutations.dtype
        assert np.array_equal(ours.permutations, theirs.permutations)
        for doc in DOCS[:: 8 if num_perm == 512 else 2]:
            a, b = ours.copy(), theirs.copy()
            a.update_batch(doc)
            b.update_batch(doc)
            _same(a, b)
            np.testing.assert_array_equal(a.digest(), b.digest())
            assert a.count() == b.count()
            one = ours.copy()
            for item in doc[:20]:
                one.update(item)
            two = theirs.copy()
            two.update_batch(doc[:20])
            _same(one, two)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_bulk_generator_jaccard_merge_union_equal(scheme):
    sets = _random_sets(90, seed=3) + DOCS
    ours = nd.MinHash.bulk(sets, num_perm=64, seed=5, scheme=scheme)
    theirs = ds.MinHash.bulk(sets, num_perm=64, seed=5, scheme=scheme)
    for a, b in zip(ours, theirs):
        _same(a, b)
    for a, b in zip(nd.MinHash.generator(sets[:10], num_perm=64, seed=5, scheme=scheme), theirs):
        _same(a, b)
    for i in range(0, len(sets) - 1, 5):
        assert ours[i].jaccard(ours[i + 1]) == theirs[i].jaccard(theirs[i + 1])
    _same(nd.MinHash.union(*ours[:4]), ds.MinHash.union(*theirs[:4]))
    a, b = ours[0].copy(), theirs[0].copy()
    a.merge(ours[1])
    b.merge(theirs[1])
    _same(a, b)
    assert a.is_empty() == b.is_empty() is False
    a.clear()
    b.clear()
    _same(a, b)
    assert a.is_empty() and b.is_empty()


@pytest.mark.parametrize("scheme", SCHEMES)
def test_user_hash_functions_and_their_errors_match(scheme):
    width = 8 if scheme == "affine64" else 4

    def h(b):
        return int.from_bytes(hashlib.md5(b).digest()[:width], "little")

    a, b = nd.MinHash(32, hashfunc=h, scheme=scheme), ds.MinHash(32, hashfunc=h, scheme=scheme)
    items = [b"x%d" % i for i in range(100)]
    a.update_batch(items)
    b.update_batch(items)
    a.update(b"y")
    b.update(b"y")
    _same(a, b)
    # numpy integers hash by their bytes with the default SHA-1, like bytes.
    a, b = nd.MinHash(16, scheme=scheme), ds.MinHash(16, scheme=scheme)
    a.update_batch(np.arange(20))
    b.update_batch(np.arange(20))
    _same(a, b)
    if scheme == "affine32":
        for mh in (nd.MinHash, ds.MinHash):
            m = mh(8, hashfunc=lambda _: 1 << 40, scheme=scheme)
            with pytest.raises(ValueError, match="out of range for scheme"):
                m.update_batch([b"a"])


def _message(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - the type and text are compared
        return type(e).__name__, str(e)
    return None


def test_errors_match():
    cases = [
        lambda m: m.MinHash(hashvalues=[1, 2]),
        lambda m: m.MinHash(scheme="affine16"),
        lambda m: m.MinHash(num_perm=0),
        lambda m: m.MinHash(4, hashfunc=3),
        lambda m: m.MinHash(permutations=([2, 4], [1, 1]), scheme="affine32"),
        lambda m: m.MinHash(hashvalues=[1 << 40], scheme="affine32"),
        lambda m: m.MinHash(4).jaccard(m.MinHash(4, scheme="legacy")),
        lambda m: m.MinHash(4).jaccard(m.MinHash(4, seed=2)),
        lambda m: m.MinHash(4).merge(m.MinHash(5)),
        lambda m: m.MinHash.union(m.MinHash(4)),
        lambda m: m.MinHash.union(m.MinHash(4), m.MinHash(4, scheme="affine64")),
        lambda m: m.MinHash(4).update("a string"),
        lambda m: m.MinHash(4, gpu_mode="always").update_batch([b"a"]),
        lambda m: m.MinHash(4, seed=-1),
        lambda m: m.LeanMinHash(m.MinHash(4)).update(b"a"),
        lambda m: m.LeanMinHash(seed=1, hashvalues=[1, 2]),
        lambda m: m.LeanMinHash(m.MinHash(4), scheme="legacy"),
        lambda m: m.LeanMinHash.deserialize(b"\x01" + b"\x00" * 7 + b"\xff\xff\xff\xff\x09" + b"\x00" * 8),
        lambda m: m.MinHashLSH(threshold=1.5),
        lambda m: m.MinHashLSH(num_perm=1),
        lambda m: m.MinHashLSH(weights=(0.6, 0.6)),
        lambda m: m.MinHashLSH(params=(20, 10), num_perm=128),
        lambda m: m.MinHashLSH(threshold=0.99, num_perm=16),
        lambda m: m.MinHashLSH(0.5, num_perm=16).insert("k", m.MinHash(8)),
        lambda m: m.MinHashLSH(0.5, num_perm=16).remove("absent"),
    ]
    for i, case in enumerate(cases):
        assert _message(lambda: case(nd)) == _message(lambda: case(ds)), i
        assert _message(lambda: case(nd)) is not None, i
    lsh_n, lsh_d = nd.MinHashLSH(0.5, num_perm=16), ds.MinHashLSH(0.5, num_perm=16)
    for lsh, m in ((lsh_n, nd), (lsh_d, ds)):
        lsh.insert("k", m.MinHash(16))
    for lsh, m in ((lsh_n, nd), (lsh_d, ds)):
        assert _message(lambda: lsh.insert("k", m.MinHash(16)))[0] == "ValueError"
        assert _message(lambda: lsh.query(m.MinHash(16, scheme="legacy"))) is not None
    assert _message(lambda: lsh_n.query(nd.MinHash(16, scheme="legacy"))) == _message(
        lambda: lsh_d.query(ds.MinHash(16, scheme="legacy"))
    )


def test_external_storage_is_refused_by_name():
    for kind, name in (("redis", "Redis"), ("cassandra", "Cassandra"), ("mongo", "MongoDB")):
        with pytest.raises(ValueError, match=name):
            nd.MinHashLSH(storage_config={"type": kind, kind: {}})


@pytest.mark.parametrize("scheme", SCHEMES)
def test_lean_bytes_and_pickles_cross_both_ways(scheme):
    ours = nd.MinHash.bulk(DOCS[:6], num_perm=40, scheme=scheme)
    theirs = ds.MinHash.bulk(DOCS[:6], num_perm=40, scheme=scheme)
    for a, b in zip(ours, theirs):
        la, lb = nd.LeanMinHash(a), ds.LeanMinHash(b)
        _same(la, lb)
        assert hash(la) == hash(lb)
        for order in ("@", "=", "<", ">", "!"):
            assert la.bytesize(order) == lb.bytesize(order)
            ba, bb = bytearray(la.bytesize(order)), bytearray(lb.bytesize(order))
            la.serialize(ba, order)
            lb.serialize(bb, order)
            assert ba == bb
            _same(nd.LeanMinHash.deserialize(bb, order), lb)
            _same(ds.LeanMinHash.deserialize(ba, order), la)
        # datasketch's pickles read by the drop-in, and the drop-in's dumps read by datasketch.
        for x, y in ((a, b), (la, lb)):
            _same(nd.loads(pickle.dumps(y)), x)
            _same(pickle.loads(nd.dumps(x)), y)
            _same(pickle.loads(pickle.dumps(x)), x)
        back = nd.loads(pickle.dumps(b))
        back.update(b"more")
        b.update(b"more")
        _same(back, b)
    # A MinHash pickled before 2.0.0 had no scheme: it loads as legacy.
    state = ds.MinHash(8, scheme="legacy").__getstate__()
    del state["scheme"]
    m = object.__new__(nd.MinHash)
    m.__setstate__(state)
    assert m.scheme == "legacy"


def _lsh_pair(threshold, num_perm, weights=(0.5, 0.5), **kw):
    return nd.MinHashLSH(threshold, num_perm, weights, **kw), ds.MinHashLSH(threshold, num_perm, weights, **kw)


def _answers(lsh, sketches):
    return [sorted(map(repr, lsh.query(m))) for m in sketches]


def _tables(lsh):
    return [{h: set(t.get(h)) for h in t.keys()} for t in lsh.hashtables]


@pytest.mark.parametrize("threshold", [0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95])
@pytest.mark.parametrize("num_perm", [16, 64, 128, 256])
def test_lsh_band_parameters_match(threshold, num_perm):
    for weights in ((0.5, 0.5), (0.3, 0.7), (0.8, 0.2)):
        try:
            want = ds.MinHashLSH(threshold, num_perm, weights)
        except ValueError as e:
            with pytest.raises(ValueError, match=re.escape(str(e))):
                nd.MinHashLSH(threshold, num_perm, weights)
            continue
        got = nd.MinHashLSH(threshold, num_perm, weights)
        assert (got.b, got.r, got.hashranges) == (want.b, want.r, want.hashranges)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("threshold,num_perm", [(0.3, 64), (0.5, 128), (0.8, 128), (0.9, 256)])
def test_lsh_answers_buckets_and_pickles_match(scheme, threshold, num_perm):
    sets = _random_sets(240, seed=num_perm) + DOCS
    ours = nd.MinHash.bulk(sets, num_perm=num_perm, scheme=scheme)
    theirs = ds.MinHash.bulk(sets, num_perm=num_perm, scheme=scheme)
    n, d = _lsh_pair(threshold, num_perm)
    keys = [("doc", i) if i % 2 else "doc%d" % i for i in range(len(sets))]
    half = len(sets) // 2
    n.insert_many(zip(keys[:half], ours[:half]))
    with n.insertion_session() as s:
        for k, m in zip(keys[half:], ours[half:]):
            s.insert(k, m)
    for k, m in zip(keys, theirs):
        d.insert(k, m)
    assert _answers(n, ours) == _answers(d, theirs)
    assert [sorted(map(repr, q)) for q in n.query_many(ours)] == _answers(d, theirs)
    assert _tables(n) == _tables(d)
    assert n.get_counts() == d.get_counts()
    assert n.get_subset_counts(*keys[:7]) == d.get_subset_counts(*keys[:7])
    assert {k: n.keys.get(k) for k in keys} == {k: d.keys.get(k) for k in keys}
    assert sorted(map(repr, n._query_b(ours[3], 2))) == sorted(map(repr, d._query_b(theirs[3], 2)))
    for m1, m2 in ((ours[5], theirs[5]), (ours[6], theirs[6])):
        n.add_to_query_buffer(m1)
        d.add_to_query_buffer(m2)
    assert sorted(map(repr, n.collect_query_buffer())) == sorted(map(repr, d.collect_query_buffer()))
    # Removal, membership and emptiness.
    with n.deletion_session() as s:
        for k in keys[::5]:
            s.remove(k)
    for k in keys[::5]:
        d.remove(k)
    assert [k in n for k in keys] == [k in d for k in keys]
    assert _answers(n, ours) == _answers(d, theirs)
    assert _tables(n) == _tables(d)
    assert n.is_empty() == d.is_empty() is False
    # Pickles: datasketch's read by the drop-in, the drop-in's read by datasketch.
    from_d = nd.loads(pickle.dumps(d))
    from_n = pickle.loads(nd.dumps(n))
    assert type(from_n) is ds.MinHashLSH
    assert _answers(from_d, ours) == _answers(from_n, theirs) == _answers(d, theirs)
    assert _answers(pickle.loads(pickle.dumps(n)), ours) == _answers(d, theirs)
    # Merge.
    n2, d2 = _lsh_pair(threshold, num_perm)
    n2.insert("extra", ours[0])
    d2.insert("extra", theirs[0])
    n2.merge(n)
    d2.merge(d)
    assert _answers(n2, ours) == _answers(d2, theirs)
    with pytest.raises(ValueError, match="overlapping"):
        n2.merge(n, check_overlap=True)


def band_hash(b):
    """A band hash for MinHashLSH(hashfunc=…): 2 bytes, so bands collide."""
    return hashlib.sha1(b).digest()[:2]


def test_lsh_with_prepickle_and_a_band_hash_function_matches():
    sets = _random_sets(60, seed=9)
    ours, theirs = nd.MinHash.bulk(sets, num_perm=64), ds.MinHash.bulk(sets, num_perm=64)

    for kw in ({"prepickle": True}, {"hashfunc": band_hash}):
        n, d = _lsh_pair(0.5, 64, **kw)
        for i, (a, b) in enumerate(zip(ours, theirs)):
            n.insert(("k", i), a)
            d.insert(("k", i), b)
        assert _answers(n, ours) == _answers(d, theirs)
        assert n.get_counts() == d.get_counts()
        for i in range(0, 60, 4):
            n.remove(("k", i))
            d.remove(("k", i))
        assert _answers(n, ours) == _answers(d, theirs)
        assert _answers(nd.loads(pickle.dumps(d)), ours) == _answers(d, theirs)
        assert _answers(pickle.loads(nd.dumps(n)), theirs) == _answers(d, theirs)
