"""MinHash from Python: `neardup.MinHasher` gives the core's signatures
(the golden file pins them), `MinHashIndex` finds what a brute-force scan
over signatures finds, and `neardup.dedup(method="minhash")`, `neardup
dedup --method minhash` and the Spark job give the same clusters.

The CLI comes from NEARDUP_BIN (else target/release/neardup); the Spark
half needs pyspark and Java (required where NEARDUP_REQUIRE_PEERS is set)."""

import json
import math
import pickle
import random
import subprocess
import sys

import pytest
from test_spark import ROOT, SHARED, TESTDATA, cli_dedup, neardup_bin, read_ordered, spark, spark_result  # noqa: F401

import neardup
from neardup import pipeline

KEEPS = ("first", "longest", "shortest")
GOLDEN = ROOT / "crates" / "neardup" / "tests" / "golden" / "minhash.txt"


def read_jsonl(paths):
    ids, texts = [], []
    for p in paths:
        for line in p.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            ids.append(r["id"])
            texts.append(r["text"])
    return ids, texts


def planted(tmp_path):
    """The bundled sample plus, for every third document, a copy with every
    eleventh token (or, for Chinese, character) dropped and one with a
    sentence added: near duplicates at Jaccard ~0.6–0.9. Written to a
    JSONL file; returns its path."""
    ids, texts = read_jsonl([TESTDATA / "docs_en.jsonl", TESTDATA / "docs_zh.jsonl"])
    rows = [{"id": i, "text": t} for i, t in zip(ids, texts)]
    for n, (i, t) in enumerate(zip(ids, texts)):
        if n % 3:
            continue
        parts = t.split(" ") if " " in t else list(t)
        joiner = " " if " " in t else ""
        dropped = joiner.join(p for j, p in enumerate(parts) if j % 11 != 5)
        rows.append({"id": f"{i}~dropped", "text": dropped})
        rows.append({"id": f"{i}~added", "text": t + " And one more sentence was added at the end."})
    path = tmp_path / "planted.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def half_up(x):
    """x to 4 places, halves away from zero, as neardup dedup writes it."""
    return math.floor(x * 1e4 + 0.5) / 1e4


def python_dedup(ids, texts, minhasher, **kw):
    """neardup.dedup in cli_dedup's shape: [(id, representative, similarity)]."""
    sigs = dict(zip(ids, minhasher.signature_batch(texts)))
    position = {i: n for n, i in enumerate(ids)}
    rows, removed = [], set()
    for c in neardup.dedup(texts, ids=ids, **kw):
        rep = c[0]
        removed.update(c[1:])
        rows += [(m, rep, half_up(neardup.jaccard(sigs[m], sigs[rep]))) for m in sorted(c, key=position.get)]
    return rows, set(ids) - removed


def test_signatures_are_the_golden_ones():
    _, texts = read_jsonl([TESTDATA / "docs_en.jsonl", TESTDATA / "docs_zh.jsonl"])
    m = neardup.MinHasher()
    lines = GOLDEN.read_text().splitlines()
    assert len(lines) == len(texts)
    for text, line, batch in zip(texts, lines, m.signature_batch(texts)):
        want = line.split("\t")[0]
        if want == "-":
            assert batch is None
            with pytest.raises(ValueError, match="no features"):
                m.signature(text)
            continue
        sig = m.signature(text)
        assert sig == batch and len(sig) == 128
        assert " ".join(f"{v:08x}" for v in sig[:8]) == want.rsplit(" ", 1)[0]
        # Shingles made elsewhere give the same signature as the text.
        assert m.signature_of_features(m.features(text)) == sig


def test_estimate_tracks_exact_jaccard():
    _, texts = read_jsonl([TESTDATA / "docs_en.jsonl"])
    m = neardup.MinHasher()
    rng = random.Random(7)
    errors = []
    for t in texts[:10]:
        words = t.split()
        variant = " ".join(w for w in words if rng.random() > 0.2)
        exact = m.exact_jaccard(t, variant)
        errors.append(neardup.jaccard(m.signature(t), m.signature(variant)) - exact)
    # K = 128: the standard error is at most 0.045; the mean error is near 0.
    assert max(abs(e) for e in errors) < 0.2
    assert abs(sum(errors) / len(errors)) < 0.06


def test_index_finds_what_a_scan_over_signatures_finds():
    rng = random.Random(3)
    m = neardup.MinHasher()
    bands, rows = m.banding
    base = [[rng.randrange(2**32) for _ in range(128)] for _ in range(60)]
    sigs = {}
    for n, b in enumerate(base):
        sigs[f"d{n}"] = b
        for v in range(3):  # variants sharing 40–95 % of the values
            keep = rng.uniform(0.4, 0.95)
            sigs[f"d{n}.{v}"] = [x if rng.random() < keep else rng.randrange(2**32) for x in b]
    index = m.index()
    index.insert_batch(list(sigs), list(sigs.values()))
    assert len(index) == len(sigs) and "d0.1" in index and index.banding == (bands, rows)

    def scan(q, t):
        def shares(a):
            return any(a[i * rows : (i + 1) * rows] == q[i * rows : (i + 1) * rows] for i in range(bands))

        found = [(i, neardup.jaccard(q, a)) for i, a in sigs.items() if shares(a) and neardup.jaccard(q, a) >= t]
        return sorted(found, key=lambda x: (-x[1], x[0]))

    for t in (0.3, 0.5, 0.8):
        for q in list(sigs.values())[::7]:
            assert [(i, s) for i, s in index.query(q, threshold=t)] == scan(q, t)
    assert index.remove("d0") and not index.remove("d0") and "d0" not in index
    assert all(i != "d0" for i, _ in index.query(sigs["d0"]))


def test_python_equals_cli(tmp_path):
    path = planted(tmp_path)
    ids, texts = read_jsonl([path])
    m = neardup.MinHasher()
    for keep in KEEPS:
        want = cli_dedup([path], tmp_path / keep, "--method", "minhash", "--keep", keep)
        assert want[0], "planted near duplicates are found"
        assert python_dedup(ids, texts, m, method="minhash", keep=keep) == want, keep
        assert python_dedup(ids, texts, m, fingerprinter=m, keep=keep) == want, keep
    want = cli_dedup([path], tmp_path / "t8", "--threshold", "0.8", "--verify", "jaccard:0.5")
    got = python_dedup(ids, texts, m, threshold=0.8, verify=0.5)
    assert got == want and len(got[1]) > len(cli_dedup([path], tmp_path / "t5", "--method", "minhash")[1])


def test_bad_arguments_are_named():
    m = neardup.MinHasher()
    sig = m.signature("a few words to sign for the test")
    with pytest.raises(ValueError, match="method is minhash, not simhash"):
        neardup.dedup(["a b c"], k=3, fingerprinter=m)
    with pytest.raises(ValueError, match="not both"):
        neardup.dedup(["a b c"], k=3, threshold=0.5)
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        neardup.dedup(["a b c"], threshold=1.5)
    with pytest.raises(ValueError, match="method must be simhash or minhash"):
        neardup.dedup(["a b c"], method="lsh")
    with pytest.raises(TypeError, match="Fingerprinter or a neardup.MinHasher"):
        neardup.dedup(["a b c"], fingerprinter="minhash")
    with pytest.raises(ValueError, match="method is simhash"):
        neardup.MinHasher("default")
    with pytest.raises(ValueError, match="has 3 values, not the 128"):
        m.index().insert("x", [1, 2, 3])
    with pytest.raises(ValueError, match="signatures\\[1\\] has 2 values"):
        m.index().insert_batch(["a", "b"], [sig, [1, 2]])
    with pytest.raises(ValueError, match="features is empty"):
        m.signature_of_features([])
    with pytest.raises(TypeError, match=r"feature_sets\[0\]\[1\] must be str, not int"):
        m.signature_of_features_batch([["a", 1]])
    with pytest.raises(ValueError, match=r"texts\[1\] has no features"):
        m.signature_batch(["words here", "   "], numpy=True)
    assert m.signature_batch(["words here", "   "])[1] is None
    with pytest.raises(ValueError, match="threshold must be in"):
        neardup.MinHashIndex(threshold=0)
    with pytest.raises(ValueError, match="bands"):
        neardup.MinHashIndex(bands=40, rows=5)


def test_an_index_without_a_banding_bands_as_the_pipeline_does():
    assert neardup.MinHashIndex().banding == neardup.MinHasher().index().banding == (32, 4)
    assert neardup.MinHashIndex(threshold=0.5, bands=25, rows=5).banding == (25, 5)


def test_features_read_in_place_or_not_sign_alike():
    # Exact strs are read in place; anything else (a str subclass, a tuple,
    # an item without UTF-8) goes the general way, from that item on.
    class Sub(str):
        pass

    m = neardup.MinHasher()
    feats = [f"shingle number {i}" for i in range(50)]
    want = m.signature_of_features(feats)
    assert m.signature_of_features(tuple(feats)) == want
    assert m.signature_of_features(feats[:10] + [Sub(f) for f in feats[10:]]) == want
    assert m.signature_of_features_batch([feats, feats[:25] + [Sub(feats[25])] + feats[26:]]) == [want, want]
    with pytest.raises(ValueError, match=r"^features\[30\] is not valid Unicode"):
        m.signature_of_features(feats[:30] + ["bad \udcff"] + feats[30:])
    with pytest.raises(TypeError, match=r"^features\[49\] must be str, not bytes"):
        m.signature_of_features(feats[:49] + [b"x"])


def test_minhasher_pickles_and_takes_a_threshold():
    m = neardup.MinHasher(threshold=0.7)
    assert m.threshold == 0.7 and m.banding != neardup.MinHasher().banding
    again = pickle.loads(pickle.dumps(m))
    assert again.pipeline_id == m.pipeline_id and again.threshold == 0.7 and again.banding == m.banding
    assert isinstance(neardup.MinHasher.from_toml(m.config_toml()), neardup.MinHasher)


def test_spark_equals_cli_for_every_keep(spark, tmp_path):  # noqa: F811
    from neardup.spark import dedup

    path = planted(tmp_path)
    df = read_ordered(spark, [path]).cache()
    for keep in KEEPS:
        want = cli_dedup([path], tmp_path / keep, "--method", "minhash", "--keep", keep)
        result = dedup(df, order_cols=["_nd_file", "_nd_row"], method="minhash", keep=keep)
        assert spark_result(result) == want, keep
        assert result.summary["method"] == "minhash" and result.summary["bands"] == 32
        assert result.kept.columns == df.columns
    want = cli_dedup([path], tmp_path / "t7", "--threshold", "0.7")
    assert spark_result(dedup(df, order_cols=["_nd_file", "_nd_row"], threshold=0.7)) == want
    df.unpersist()


def test_spark_components_paths_and_modes_equal_cli(spark, tmp_path):  # noqa: F811
    """Exact copies (one signature for several documents: a self link in
    the candidates), the DataFrame components path (cc_threshold=0) and
    whole components (--clusters components) give the CLI's clusters."""
    from neardup.spark import dedup

    path = planted(tmp_path)
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows += [{"id": f"{r['id']}~copy{c}", "text": r["text"]} for r in rows[1::7] for c in range(2)]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    df = read_ordered(spark, [path]).cache()
    for mode in ["justified", "components"]:
        want = cli_dedup([path], tmp_path / mode, "--method", "minhash", "--clusters", mode, "--keep", "longest")
        assert any(cid.endswith("~copy0") or i.endswith("~copy1") for i, cid, _ in want[0])
        for cc in [0, 5_000_000]:
            got = dedup(df, order_cols=["_nd_file", "_nd_row"], method="minhash", clusters=mode, keep="longest",
                        cc_threshold=cc)
            assert spark_result(got) == want, (mode, cc)
            assert got.summary["components"]["path"] == ("dataframe" if cc == 0 else "driver")
    df.unpersist()


def test_the_readme_sample_gives_the_same_clusters_everywhere(spark, tmp_path):  # noqa: F811
    # The README's first command, with no settings: CLI, Python and Spark
    # remove the same five copies (testdata/copies.jsonl).
    from neardup.spark import dedup

    inputs = [TESTDATA / "docs_en.jsonl", TESTDATA / "docs_zh.jsonl", TESTDATA / "copies.jsonl"]
    ids, texts = read_jsonl(inputs)
    want = cli_dedup(inputs, tmp_path / "cli")
    assert len(want[1]) == 65 and len(want[0]) == 10, "five clusters of two"
    assert python_dedup(ids, texts, neardup.MinHasher()) == want
    assert spark_result(dedup(read_ordered(spark, inputs), order_cols=["_nd_file", "_nd_row"])) == want


@pytest.mark.skipif(not SHARED.exists(), reason="../shared/data is not beside the repository")
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_spark_and_python_equal_cli_on_shared_data(spark, tmp_path, lang):  # noqa: F811
    from neardup.spark import dedup

    inputs = [SHARED / f"docs_{lang}.jsonl"]
    ids, texts = read_jsonl(inputs)
    want = cli_dedup(inputs, tmp_path / "cli", "--method", "minhash", "--keep", "longest")
    assert want[0], "the shared corpus has clusters"
    assert python_dedup(ids, texts, neardup.MinHasher(), method="minhash", keep="longest") == want
    df = read_ordered(spark, inputs)
    assert spark_result(dedup(df, order_cols=["_nd_file", "_nd_row"], method="minhash", keep="longest")) == want


def test_spark_command_line_minhash(tmp_path):
    path = planted(tmp_path)
    want = cli_dedup([path], tmp_path / "cli", "--method", "minhash")
    out = tmp_path / "spark"
    run = subprocess.run(
        [sys.executable, "-m", "neardup.spark", "dedup", "--input", str(path), "--output", str(out),
         "--format", "jsonl", "--master", "local[2]", "--method", "minhash"],
        capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    rows = [json.loads(line) for p in sorted((out / "clusters").glob("part-*")) for line in p.read_text().splitlines()]
    assert [(r["id"], r["cluster_id"], r["similarity"]) for r in rows] == want[0]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["method"] == "minhash" and summary["threshold"] == 0.5
    bad = subprocess.run(
        [sys.executable, "-m", "neardup.spark", "dedup", "--input", str(path), "--output", str(tmp_path / "x"),
         "--master", "local[1]", "--preset", "minhash", "--k", "3"],
        capture_output=True, text=True,
    )
    assert bad.returncode == 2 and "method is minhash, not simhash" in bad.stderr


def test_defaults_agree_everywhere(spark, tmp_path):  # noqa: F811
    """With no method, threshold or pipeline, every front end runs dedup's
    default method (MinHash, preset minhash) and finds the same clusters."""
    from neardup.spark import dedup

    path = planted(tmp_path)
    ids, texts = read_jsonl([path])
    want = cli_dedup([path], tmp_path / "cli")
    summary = json.loads((tmp_path / "cli" / "summary.json").read_text())
    assert summary["method"] == "minhash" and want[0]
    assert python_dedup(ids, texts, neardup.MinHasher()) == want
    result = dedup(read_ordered(spark, [path]), order_cols=["_nd_file", "_nd_row"])
    assert spark_result(result) == want and result.summary["method"] == "minhash"
    assert pipeline().pipeline_id == neardup.MinHasher().pipeline_id


def test_the_default_pipeline_answers_as_compare(tmp_path):
    """`neardup.pipeline()` with nothing given is the default method's (as
    every command's), and its index (`pipeline().index()`) finds a
    labelled pair's `a` by `b` exactly when `neardup compare` (default
    settings) calls them near duplicates; its rule is the one compare
    prints. Both pipelines sign by the empty-document rule."""
    p = neardup.pipeline()
    assert (p.method, type(p)) == ("minhash", neardup.MinHasher)
    simhash = neardup.pipeline(k=3)
    assert (simhash.method, simhash.rule) == ("simhash", "k = 3")
    for q in (p, simhash, neardup.Fingerprinter()):
        with pytest.raises(ValueError, match="no features"):
            q.sign("，。！")
    near = 0
    for lang in ("en", "zh"):
        for line in (TESTDATA / f"pairs_{lang}.jsonl").read_text(encoding="utf-8").splitlines():
            pair = json.loads(line)
            a, b = pair["text_a"], pair["text_b"]
            out = subprocess.run(
                [str(neardup_bin()), "compare", "--text", a, "--text", b],
                capture_output=True, text=True, check=True,
            ).stdout
            assert out.splitlines()[0] == f"method      MinHash, {p.rule}"
            index = p.index()
            index.insert("a", p.sign(a))
            found = [i for i, _ in index.query(p.sign(b))] == ["a"]
            assert found == ("verdict     near duplicates" in out), (a[:60], b[:60], out)
            near += found
    assert near > 10


def test_features_batch_on_one_thread_folds_as_it_reads():
    """On one thread, `signature_of_features_batch` folds each list's
    hashes into its signature as it reads them: the same signatures as
    on all cores and as one set at a time, for lists, tuples, str
    subclasses, non-ASCII and empty sets, and the same errors naming the
    item."""
    script = r"""
import json, neardup
m = neardup.MinHasher()
class Sub(str):
    pass
sets = [["a b c", "b c d", "中文 分词"], ("x y z", "y z w"), [Sub("a b c"), "b c d", "中文 分词"], [], ["é è", "plain"]]
out = {"batch": m.signature_of_features_batch(sets),
       "one": [m.signature_of_features(s) if s else None for s in sets]}
for bad in (["ok", "bad \udcff"], ["ok", b"x"]):
    try:
        m.signature_of_features_batch([["fine"], bad])
    except (ValueError, TypeError) as e:
        out.setdefault("errors", []).append(str(e))
print(json.dumps(out))
"""
    runs = {}
    for threads in ("1", "2"):
        env = {**__import__("os").environ, "RAYON_NUM_THREADS": threads}
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
        runs[threads] = json.loads(run.stdout)
    one, two = runs["1"], runs["2"]
    assert one == two
    assert one["batch"] == one["one"] and one["batch"][0] == one["batch"][2] and one["batch"][3] is None
    assert one["errors"][0].startswith("feature_sets[1][1] is not valid Unicode")
    assert one["errors"][1].startswith("feature_sets[1][1] must be str, not bytes")
