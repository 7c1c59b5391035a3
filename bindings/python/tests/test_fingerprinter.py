"""The Fingerprinter, distance and similarity from Python."""

import pickle

import pytest

import neardup
from conftest import need

EN_A = "Near-duplicate detection finds documents that are almost the same."
EN_B = "Near-duplicate detection finds documents that are almost the same!"
ZH = "今天天气很好，我们去公园散步吧。公园里的花都开了，到处都是游人。"


def test_fingerprint_is_an_int_and_near_texts_are_near():
    fingerprinter = neardup.Fingerprinter()
    a, b = fingerprinter.fingerprint(EN_A), fingerprinter.fingerprint(EN_B)
    assert isinstance(a, int) and 0 <= a < 2**64
    assert neardup.distance(a, b) <= 3
    assert neardup.similarity(a, b) >= 1 - 3 / 64
    assert fingerprinter.bits == 64


def test_batch_equals_one_by_one_in_order():
    fingerprinter = neardup.Fingerprinter("default")
    texts = [EN_A, EN_B, ZH, "", "x" * 10_000] * 50
    assert fingerprinter.fingerprint_batch(texts) == [fingerprinter.fingerprint(t) for t in texts]
    # Any iterable of str.
    assert fingerprinter.fingerprint_batch(iter(texts[:5])) == fingerprinter.fingerprint_batch(texts[:5])
    assert fingerprinter.fingerprint_batch([]) == []


def test_python_simhash_preset_matches_the_known_value():
    # PyPI simhash 2.1.2 (target/bench-venv): Simhash("How are you? I am fine. Thanks.").value
    fingerprinter = neardup.Fingerprinter("python-simhash")
    assert fingerprinter.fingerprint("How are you? I am fine. Thanks.") == 3419227768443824139


@pytest.mark.parametrize("bad", [None, 1, b"bytes", 1.5, ["list"]])
def test_non_str_is_a_type_error_naming_the_item(bad):
    fingerprinter = neardup.Fingerprinter()
    with pytest.raises(TypeError, match="must be str"):
        fingerprinter.fingerprint(bad)
    with pytest.raises(TypeError, match=r"texts\[1\] must be str"):
        fingerprinter.fingerprint_batch(["ok", bad])


def test_bytes_error_says_to_decode():
    with pytest.raises(TypeError, match="decode"):
        neardup.Fingerprinter().fingerprint(b"abc")


def test_bad_preset_and_config_are_errors():
    with pytest.raises(ValueError, match="no-such-preset"):
        neardup.Fingerprinter("no-such-preset")
    with pytest.raises(OSError):
        neardup.Fingerprinter(config="/no/such/file.toml")
    with pytest.raises(ValueError):
        neardup.Fingerprinter.from_toml("this is not = [ toml")


def test_config_round_trip_and_pickle():
    fingerprinter = neardup.Fingerprinter("keywords")
    again = neardup.Fingerprinter.from_toml(fingerprinter.config_toml())
    assert again.fingerprint(ZH) == fingerprinter.fingerprint(ZH)
    clone = pickle.loads(pickle.dumps(fingerprinter))
    assert clone.fingerprint(ZH) == fingerprinter.fingerprint(ZH)
    assert "Fingerprinter(pipeline=" in repr(clone)


def test_distance_and_similarity_check_their_arguments():
    assert neardup.distance(0, 2**64 - 1) == 64
    assert neardup.distance(0, 2**128 - 1) == 128
    assert neardup.similarity(0, 2**128 - 1, bits=128) == 0.0
    for bad in (-1, 2**128, "ff", None):
        with pytest.raises(ValueError, match="fingerprint"):
            neardup.distance(bad, 0)
    with pytest.raises(ValueError, match="bits"):
        neardup.similarity(0, 0, bits=32)
    with pytest.raises(ValueError, match="bits=128"):
        neardup.similarity(2**100, 0)


def test_errors_have_a_common_base():
    assert issubclass(neardup.NeardupError, Exception)
    assert neardup.__version__


def test_numpy_output():
    np = need("numpy")
    fingerprinter = neardup.Fingerprinter()
    texts = [EN_A, EN_B, ZH, ""] * 10
    arr = fingerprinter.fingerprint_batch(texts, numpy=True)
    assert arr.dtype == np.uint64 and arr.shape == (40,)
    assert [int(x) for x in arr] == fingerprinter.fingerprint_batch(texts)
    arr[0] = 1  # a writable copy, not a view of a temporary buffer


def test_pyarrow_input_read_in_place():
    pa = need("pyarrow")
    fingerprinter = neardup.Fingerprinter()
    texts = [EN_A, ZH, EN_B, "", "x" * 5000] * 7
    want = fingerprinter.fingerprint_batch(texts)
    for ty in (pa.string(), pa.large_string()):
        arr = pa.array(texts, type=ty)
        assert fingerprinter.fingerprint_batch(arr) == want
        # Slices read from the right offset; chunked arrays in order.
        assert fingerprinter.fingerprint_batch(arr.slice(3, 9)) == want[3:12]
        chunked = pa.chunked_array([texts[:4], texts[4:4], texts[4:]], type=ty)
        assert fingerprinter.fingerprint_batch(chunked) == want
        assert fingerprinter.fingerprint_batch(pa.array([], type=ty)) == []
        assert fingerprinter.fingerprint_batch(pa.table({"t": arr}).column("t")) == want
    # Other Arrow types go through to_pylist and get the list errors.
    dictionary = pa.array(texts).dictionary_encode()
    assert fingerprinter.fingerprint_batch(dictionary) == want
    with pytest.raises(TypeError, match=r"texts\[0\] must be str, not bytes"):
        fingerprinter.fingerprint_batch(pa.array([b"abc"], type=pa.binary()))


def test_pyarrow_nulls_are_named_by_their_position():
    pa = need("pyarrow")
    fingerprinter = neardup.Fingerprinter()
    with pytest.raises(TypeError, match=r"texts\[1\] must be str, not NoneType \(a null in the Arrow array"):
        fingerprinter.fingerprint_batch(pa.array([EN_A, None]))
    # The position counts across chunks and from a slice's start.
    chunked = pa.chunked_array([[EN_A, EN_B], [ZH, None]])
    with pytest.raises(TypeError, match=r"texts\[3\]"):
        fingerprinter.fingerprint_batch(chunked)
    sliced = pa.array([None, EN_A, EN_B, None]).slice(1, 3)
    with pytest.raises(TypeError, match=r"texts\[2\]"):
        fingerprinter.fingerprint_batch(sliced)
    assert fingerprinter.fingerprint_batch(pa.array([None, EN_A]).slice(1)) == [fingerprinter.fingerprint(EN_A)]


def test_pyarrow_invalid_utf8_is_a_value_error_naming_it():
    pa = need("pyarrow")
    fingerprinter = neardup.Fingerprinter()
    raw = pa.array([b"ok", b"\xff\xfe bad"], type=pa.binary())
    bad = raw.view(pa.string())  # a string array over unchecked bytes
    with pytest.raises(ValueError, match=r"texts\[1\]: not valid UTF-8"):
        fingerprinter.fingerprint_batch(bad)


def test_explain():
    fingerprinter = neardup.Fingerprinter()
    e = fingerprinter.explain(EN_A)
    assert e["fingerprint"] == fingerprinter.fingerprint(EN_A)
    assert len(e["margins"]) == 64 and all(0 <= m <= 1 for m in e["margins"])
    assert e["total_weight"] > 0
    feature, weight, h = e["features"][0]
    assert isinstance(feature, str) and weight > 0 and 0 <= h < 2**64
    # The vote, redone in Python, gives the fingerprint back.
    lanes = [0.0] * 64
    for _, w, h in e["features"]:
        for j in range(64):
            lanes[j] += w if h >> j & 1 else -w
    assert sum(1 << j for j in range(64) if lanes[j] > 0) == e["fingerprint"]
    with pytest.raises(TypeError):
        fingerprinter.explain(None)
