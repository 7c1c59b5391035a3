"""Bad input into every entry point: a clear error of the right type that
names the argument or the item, never a crash and never a silent answer."""

import pytest

import neardup

NOT_STR = [None, 1, 1.5, b"bytes", bytearray(b"x"), ["list"], object()]
NOT_FP = [-1, 2**128, "ff", None, 1.5, b"\x01"]
TEXT = "Near-duplicate detection finds documents that are almost the same."
SURROGATE = "abc\udcff def"


@pytest.mark.parametrize("bad", NOT_STR)
def test_non_str_texts_into_every_text_entry_point(bad):
    fingerprinter = neardup.Fingerprinter()
    ty = type(bad).__name__
    with pytest.raises(TypeError, match=rf"^text must be str, not {ty}"):
        fingerprinter.fingerprint(bad)
    with pytest.raises(TypeError, match=rf"^text must be str, not {ty}"):
        fingerprinter.explain(bad)
    with pytest.raises(TypeError, match=rf"^texts\[2\] must be str, not {ty}"):
        fingerprinter.fingerprint_batch([TEXT, TEXT, bad])
    with pytest.raises(TypeError, match=rf"^texts\[1\] must be str, not {ty}"):
        neardup.dedup([TEXT, bad])


def test_error_messages_say_what_to_do():
    fingerprinter = neardup.Fingerprinter()
    with pytest.raises(TypeError, match=r"decode it first"):
        fingerprinter.fingerprint_batch([b"abc"])
    with pytest.raises(TypeError, match=r"drop or fill missing texts"):
        fingerprinter.fingerprint_batch(["a", None])


def test_one_str_where_a_batch_belongs():
    fingerprinter = neardup.Fingerprinter()
    with pytest.raises(TypeError, match=r"not one str; wrap it"):
        fingerprinter.fingerprint_batch(TEXT)
    with pytest.raises(TypeError, match=r"not one str"):
        neardup.dedup(TEXT)
    with pytest.raises(TypeError, match=r"ids must be a list"):
        neardup.dedup([TEXT, TEXT], ids="ab")
    with pytest.raises(TypeError, match=r"ids must be a list"):
        neardup.Index().insert_batch("ab", [1, 2])


def test_lone_surrogates_are_value_errors_naming_the_item():
    fingerprinter = neardup.Fingerprinter()
    with pytest.raises(ValueError, match=r"^text is not valid Unicode.*errors='replace'"):
        fingerprinter.fingerprint(SURROGATE)
    with pytest.raises(ValueError, match=r"^texts\[1\] is not valid Unicode"):
        fingerprinter.fingerprint_batch([TEXT, SURROGATE])
    with pytest.raises(ValueError, match=r"^ids\[0\] is not valid Unicode"):
        neardup.Index().insert_batch([SURROGATE], [1])


def test_not_iterable():
    with pytest.raises(TypeError):
        neardup.Fingerprinter().fingerprint_batch(5)
    with pytest.raises(TypeError):
        neardup.pairs(5)


@pytest.mark.parametrize("bad", NOT_FP)
def test_bad_fingerprints_into_every_fingerprint_entry_point(bad):
    index = neardup.Index()
    with pytest.raises(ValueError, match=r"^a must be a fingerprint"):
        neardup.distance(bad, 0)
    with pytest.raises(ValueError, match=r"^b must be a fingerprint"):
        neardup.similarity(0, bad)
    with pytest.raises(ValueError, match=r"^fingerprint must be a fingerprint"):
        index.insert("x", bad)
    with pytest.raises(ValueError, match=r"^fingerprint must be a fingerprint"):
        index.query(bad)
    with pytest.raises(ValueError, match=r"^fingerprints\[1\] must be a fingerprint"):
        index.insert_batch(["a", "b"], [0, bad])
    with pytest.raises(ValueError, match=r"^fingerprints\[1\] must be a fingerprint"):
        index.query_batch([0, bad])
    with pytest.raises(ValueError, match=r"^fingerprints\[2\] must be a fingerprint"):
        neardup.pairs([0, 1, bad])
    # Nothing of a refused batch went in.
    assert len(index) == 0


def test_too_wide_fingerprints_and_radii():
    index = neardup.Index()
    with pytest.raises(ValueError, match=r"^fingerprint is a 128-bit fingerprint for a 64-bit index"):
        index.insert("x", 2**64)
    with pytest.raises(ValueError, match=r"^fingerprints\[0\] is a 128-bit"):
        index.query_batch([2**100])
    with pytest.raises(ValueError, match=r"more than 64 bits; pass f=128"):
        neardup.pairs([0, 2**64])
    with pytest.raises(ValueError, match=r"k = 65 is more than the 64 bits"):
        neardup.pairs([0, 1], k=65)
    with pytest.raises(ValueError, match=r"k = 65 is more than the 64 bits"):
        neardup.dedup([TEXT], k=65)
    with pytest.raises(ValueError, match=r"k = 65"):
        index.query(0, k=65)
    with pytest.raises(ValueError, match=r"f must be 64 or 128, not 32"):
        neardup.Index(f=32)
    with pytest.raises(ValueError, match=r"f must be 64 or 128"):
        neardup.pairs([0], f=32)


@pytest.mark.parametrize("bad", [None, 1.5, b"id", ("a",), 2**70])
def test_bad_ids(bad):
    index = neardup.Index()
    with pytest.raises((TypeError, ValueError), match=r"^id"):
        index.insert(bad, 1)
    with pytest.raises((TypeError, ValueError), match=r"^ids\[1\]"):
        index.insert_batch(["ok", bad], [1, 2])
    assert len(index) == 0
    assert bad not in index


def test_mismatched_lengths():
    with pytest.raises(ValueError, match=r"2 ids but 1 fingerprints"):
        neardup.Index().insert_batch(["a", "b"], [1])
    with pytest.raises(ValueError, match=r"2 texts but 1 ids"):
        neardup.dedup([TEXT, TEXT], ids=["a"])


@pytest.mark.parametrize(
    "toml, says",
    [
        ("this is not = [ toml", "TOML"),
        ('bits = 65\ntokenizer = { type = "words" }', "bits"),
        ('format_version = 99\ntokenizer = { type = "words" }', "format_version 99"),
        ('hash = "no-such-hash"\ntokenizer = { type = "words" }', "no-such-hash"),
        ('colour = "blue"\ntokenizer = { type = "words" }', "colour"),
    ],
)
def test_invalid_configs_say_what(tmp_path, toml, says):
    with pytest.raises(ValueError, match=says):
        neardup.Fingerprinter.from_toml(toml)
    path = tmp_path / "pipeline.toml"
    path.write_text(toml)
    with pytest.raises(ValueError, match=says):
        neardup.Fingerprinter(config=path)


def test_missing_or_unreadable_config(tmp_path):
    with pytest.raises(OSError, match="no-such.toml"):
        neardup.Fingerprinter(config=tmp_path / "no-such.toml")
    with pytest.raises(OSError):
        neardup.Fingerprinter(config=tmp_path)  # a directory
    with pytest.raises(ValueError, match="no-such-preset"):
        neardup.Fingerprinter("no-such-preset")


def test_bad_index_files(tmp_path):
    index = neardup.Index()
    index.insert("a", 1)
    with pytest.raises(OSError):
        index.save(tmp_path / "no-such-dir" / "x.ndx")
    with pytest.raises(OSError):
        neardup.Index.load(tmp_path / "missing.ndx")
    empty = tmp_path / "empty.ndx"
    empty.write_bytes(b"")
    with pytest.raises((OSError, neardup.NeardupError)):
        neardup.Index.load(empty)
    good = tmp_path / "good.ndx"
    index.save(good)
    data = good.read_bytes()
    truncated = tmp_path / "truncated.ndx"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises((OSError, neardup.NeardupError)):
        neardup.Index.load(truncated)
    flipped = bytearray(data)
    flipped[-9] ^= 0xFF
    damaged = tmp_path / "damaged.ndx"
    damaged.write_bytes(bytes(flipped))
    with pytest.raises((OSError, neardup.NeardupError)):
        neardup.Index.load(damaged)
    # A failed save leaves nothing half-written beside it.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["damaged.ndx", "empty.ndx", "good.ndx", "truncated.ndx"]


def test_huge_and_odd_texts_are_fine():
    fingerprinter = neardup.Fingerprinter()
    big = "word " * 2_000_000  # 10 MB
    assert fingerprinter.fingerprint_batch([big]) == [fingerprinter.fingerprint(big)]
    # Empty, blank, NUL-only and featureless texts fingerprint to 0, as in the core.
    assert fingerprinter.fingerprint_batch(["", "   ", "\0\0", "!!!"]) == [0, 0, 0, 0]
