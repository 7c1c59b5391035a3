"""One job, one answer: Python's `neardup.dedup`, `neardup dedup` (the
CLI) and the Spark job give the same SimHash clusters and kept records for
the same input, with the pipeline's radius and with k = 3, for every keep
policy — they all call the core's dedup. (MinHash, the default method:
test_minhash.py.)

The CLI comes from NEARDUP_BIN (else target/release/neardup); the Spark
half needs pyspark and Java (required where NEARDUP_REQUIRE_PEERS is set)."""

import json
from pathlib import Path

import pytest
from conftest import need
from test_spark import SHARED, TESTDATA, cli_dedup, read_ordered, spark, spark_result  # noqa: F401

import neardup

KEEPS = ("first", "longest", "shortest")


def read_jsonl(paths):
    ids, texts = [], []
    for p in paths:
        for line in Path(p).read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            ids.append(r["id"])
            texts.append(r["text"])
    return ids, texts


def python_dedup(ids, texts, **kw):
    """neardup.dedup in cli_dedup's shape: [(id, representative, distance)]
    member by member in input order, cluster by cluster; the kept ids."""
    fingerprinter = neardup.Fingerprinter()
    fps = dict(zip(ids, fingerprinter.fingerprint_batch(texts)))
    position = {i: n for n, i in enumerate(ids)}
    rows, removed = [], set()
    for c in neardup.dedup(texts, ids=ids, method="simhash", **kw):
        rep = c[0]
        removed.update(c[1:])
        rows += [(m, rep, neardup.distance(fps[m], fps[rep])) for m in sorted(c, key=position.get)]
    return rows, set(ids) - removed


@pytest.mark.parametrize("keep", KEEPS)
def test_python_equals_cli_on_testdata(tmp_path, keep):
    inputs = [TESTDATA / "docs_en.jsonl", TESTDATA / "docs_zh.jsonl"]
    ids, texts = read_jsonl(inputs)
    for flags, kw in (((), {}), (("-k", "3"), {"k": 3})):
        want = cli_dedup(inputs, tmp_path / f"{keep}{len(flags)}", "--method", "simhash", "--keep", keep, *flags)
        assert python_dedup(ids, texts, keep=keep, **kw) == want, (keep, flags)


@pytest.mark.skipif(not SHARED.exists(), reason="../shared/data is not beside the repository")
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_python_equals_cli_on_shared_data(tmp_path, lang):
    inputs = [SHARED / f"docs_{lang}.jsonl"]
    ids, texts = read_jsonl(inputs)
    for keep in KEEPS:
        for flags, kw in (((), {}), (("-k", "3"), {"k": 3})):
            want = cli_dedup(inputs, tmp_path / f"{keep}{len(flags)}", "--method", "simhash", "--keep", keep, *flags)
            assert want[0], "the shared corpus has clusters"
            assert python_dedup(ids, texts, keep=keep, **kw) == want, (lang, keep, flags)


@pytest.mark.skipif(not SHARED.exists(), reason="../shared/data is not beside the repository")
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_spark_equals_cli_and_python_for_every_keep(spark, tmp_path, lang):  # noqa: F811
    from neardup.spark import dedup

    inputs = [SHARED / f"docs_{lang}.jsonl"]
    ids, texts = read_jsonl(inputs)
    df = read_ordered(spark, inputs).cache()
    for keep in KEEPS:
        want = cli_dedup(inputs, tmp_path / keep, "--method", "simhash", "--keep", keep)
        got = dedup(df, order_cols=["_nd_file", "_nd_row"], method="simhash", keep=keep)
        assert spark_result(got) == want, (lang, keep)
        assert python_dedup(ids, texts, keep=keep) == want, (lang, keep)
    want3 = cli_dedup(inputs, tmp_path / "k3", "-k", "3", "--keep", "longest")
    assert spark_result(dedup(df, order_cols=["_nd_file", "_nd_row"], keep="longest", k=3)) == want3
    df.unpersist()


def test_the_pipeline_carries_its_radius():
    assert neardup.Fingerprinter().radius == "k = 8 below 600 features, else 4"
    assert neardup.Fingerprinter().radius_steps == ([(600, 8)], 4)
    assert neardup.Fingerprinter("keywords").radius == "k = 3"
    assert neardup.Fingerprinter("python-simhash").radius == "k = 2"
    fingerprinter = neardup.Fingerprinter()
    assert fingerprinter.k_for(100) == 8 and fingerprinter.k_for(100, 1300) == 4 and fingerprinter.k_for(700) == 4
    value, features = fingerprinter.fingerprint_counted("one two three four")
    assert value == fingerprinter.fingerprint("one two three four") and features == 4
    # A configuration written out from a preset keeps the preset's rule.
    assert neardup.Fingerprinter.from_toml(fingerprinter.config_toml()).radius == fingerprinter.radius
    custom = fingerprinter.config_toml().replace("[radius]\nk = 4", "[radius]\nk = 5")
    assert neardup.Fingerprinter.from_toml(custom).radius == "k = 8 below 600 features, else 5"


def test_dedup_keep_and_verify():
    base = "The quick brown fox jumps over the lazy dog near the river bank on a sunny afternoon"
    texts = [base + ".", "Something else entirely, about databases and indexes.", base + "!!!", base + " ..."]
    assert neardup.dedup(texts) == [[0, 2, 3]]
    assert neardup.dedup(texts, keep="longest") == [[3, 0, 2]]
    assert neardup.dedup(texts, keep="shortest") == [[0, 2, 3]]
    assert neardup.dedup(texts, verify=0.99) == [[0, 2, 3]]
    with pytest.raises(ValueError, match="keep"):
        neardup.dedup(texts, keep="biggest")
    with pytest.raises(ValueError, match="verify"):
        neardup.dedup(texts, verify=1.5)
    with pytest.raises(ValueError, match="more than the 64 bits"):
        neardup.dedup(texts, k=65)


@pytest.mark.parametrize("preset", ["default", "keywords", "python-simhash", "yanyiwu", "ferd"])
def test_fingerprints_equal_cli_for_every_simhash_preset(tmp_path, preset):
    """Python's Fingerprinter and `neardup fingerprint` give the same
    fingerprints, preset by preset, on the Chinese and English samples
    (yanyiwu runs the cppjieba segmenter, keywords the jieba one)."""
    import subprocess

    from test_spark import neardup_bin

    paths = [TESTDATA / "docs_zh.jsonl", TESTDATA / "docs_en.jsonl"]
    ids, texts = read_jsonl(paths)
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps({"id": i, "text": t}, ensure_ascii=False) + "\n" for i, t in zip(ids, texts)),
                   encoding="utf-8")
    out = subprocess.run([str(neardup_bin()), "fingerprint", "--preset", preset, "--allow-empty",
                          "--input-format", "jsonl", str(src)], check=True, capture_output=True, text=True).stdout
    cli = {json.loads(line)["id"]: json.loads(line)["fingerprint"] for line in out.splitlines()}
    fingerprinter = neardup.Fingerprinter(preset)
    width = "0{}x".format(fingerprinter.bits // 4)
    ours = {i: format(fingerprinter.fingerprint(t), width) for i, t in zip(ids, texts)}
    assert len(cli) == len(ids) >= 60
    assert ours == cli


def chains_corpus(path, families=24, steps=7, seed=51):
    """Near copies of near copies: each family starts from a sample
    document, and each step changes about an eighth of the words (English)
    or characters (Chinese) of the step before, so neighbours are near
    duplicates and a family's ends are not; now and then a step takes the
    first half of another family's current text (families that touch).
    Written as JSONL with ids `f<family>s<step>`; returns (ids, texts)."""
    import random

    rng = random.Random(seed)
    _, base = read_jsonl([TESTDATA / "docs_en.jsonl", TESTDATA / "docs_zh.jsonl"])
    base = [t for t in base if 300 < len(t) < 4000][:families]
    words = [w for t in base for w in t.split()]
    chars = [c for t in base for c in t if "\u4e00" <= c <= "\u9fff"]

    def chinese(t):
        return any("\u4e00" <= c <= "\u9fff" for c in t[:200])

    current = list(base)
    ids, texts = [], []
    for s in range(steps):
        for f in range(len(base)):
            if s:
                zh = chinese(current[f])
                u = list(current[f]) if zh else current[f].split(" ")
                u = [rng.choice(chars if zh else words) if rng.random() < 0.12 else x for x in u]
                text = ("" if zh else " ").join(u)
                if rng.random() < 0.08:
                    other = current[rng.randrange(len(base))]
                    text = other[: len(other) // 2] + text[len(text) // 2 :]
                current[f] = text
            ids.append(f"f{f}s{s}")
            texts.append(current[f])
    path.write_text("".join(json.dumps({"id": i, "text": t}, ensure_ascii=False) + "\n" for i, t in zip(ids, texts)),
                    encoding="utf-8")
    return ids, texts


@pytest.mark.parametrize("method", ["minhash", "simhash"])
def test_chains_give_justified_clusters_and_one_answer_everywhere(spark, tmp_path, method):  # noqa: F811
    """On a corpus with chains, the CLI, Python and Spark keep the same
    documents, every removed document is within the rule of the one kept
    for it (MinHash: estimate ≥ 0.5; SimHash: at most 8 bits, verified),
    and whole components would have removed more."""
    from neardup.spark import dedup
    from test_minhash import python_dedup as python_dedup_minhash

    path = tmp_path / "chains.jsonl"
    ids, texts = chains_corpus(path)
    df = read_ordered(spark, [path]).cache()
    for keep in ("first", "longest"):
        want = cli_dedup([path], tmp_path / f"{keep}", "--method", method, "--keep", keep)
        if method == "minhash":
            got = python_dedup_minhash(ids, texts, neardup.MinHasher(), method="minhash", keep=keep)
            assert all(c >= 0.5 for _, _, c in want[0]), keep
        else:
            got = python_dedup(ids, texts, keep=keep)
            assert all(c <= 8 for _, _, c in want[0]), keep
        assert got == want, (method, keep)
        result = dedup(df, order_cols=["_nd_file", "_nd_row"], method=method, keep=keep)
        assert spark_result(result) == want, (method, keep)
        assert want[0], "the chains have near duplicates"
        whole = cli_dedup([path], tmp_path / f"{keep}-components", "--method", method, "--keep", keep,
                          "--clusters", "components", "--verify", "none")
        assert len(whole[1]) < len(want[1]), f"{method} {keep}: components remove more along the chains"
    df.unpersist()


def test_spark_runs_128_bit_ferd_as_the_cli(spark, tmp_path):  # noqa: F811
    """A 128-bit pipeline (`ferd`) runs on Spark, each fingerprint as two
    longs, and gives `neardup dedup --preset ferd`'s clusters and kept
    records for every keep, verified or not, on both component paths and
    in both cluster modes."""
    from test_minhash import planted

    from neardup.spark import dedup

    path = planted(tmp_path)
    df = read_ordered(spark, [path]).cache()
    order = ["_nd_file", "_nd_row"]
    for keep in KEEPS:
        want = cli_dedup([path], tmp_path / keep, "--preset", "ferd", "--keep", keep, "--verify", "none")
        assert want[0], "ferd finds the planted copies"
        got = dedup(df, order_cols=order, preset="ferd", keep=keep, verify=False)
        assert spark_result(got) == want, keep
    want = cli_dedup([path], tmp_path / "verified", "--preset", "ferd")
    assert spark_result(dedup(df, order_cols=order, preset="ferd")) == want
    want = cli_dedup([path], tmp_path / "components", "--preset", "ferd", "--clusters", "components", "--verify", "none")
    got = dedup(df, order_cols=order, preset="ferd", clusters="components", verify=False, cc_threshold=0)
    assert spark_result(got) == want and got.summary["components"]["path"] == "dataframe"
    df.unpersist()
