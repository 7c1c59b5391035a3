"""The Spark job (neardup.spark) on a real local[2] Spark: the same clusters
as `neardup dedup`, both connected-components paths, skew, bad input.

Needs pyspark and Java; skipped without them unless NEARDUP_REQUIRE_PEERS is
set (as in CI). The comparison with `neardup dedup` needs the CLI binary
(NEARDUP_BIN, else target/release/neardup)."""

import contextlib
import json
import os
import pickle
import random
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import need

import neardup

ROOT = Path(__file__).resolve().parents[3]
TESTDATA = ROOT / "testdata"
SHARED = ROOT.parent / "shared" / "data"


@pytest.fixture(scope="module")
def spark():
    need("pyspark")
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local[2]")
        .appName("neardup tests")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def neardup_bin():
    path = Path(os.environ.get("NEARDUP_BIN", ROOT / "target" / "release" / "neardup"))
    if not path.exists():
        if os.environ.get("NEARDUP_REQUIRE_PEERS"):
            pytest.fail(f"the neardup binary is required here but {path} does not exist")
        pytest.skip(f"{path} does not exist (cargo build --release -p neardup-cli)")
    return path


def closeness(row):
    """A cluster member's distance (SimHash) or similarity (MinHash)."""
    return row["distance"] if "distance" in row else row["similarity"]


def cli_dedup(inputs, out, *flags):
    """`neardup dedup`: [(id, representative, distance or similarity)] in
    cluster order, kept ids."""
    subprocess.run([neardup_bin(), "dedup", *map(str, inputs), "-o", out, *flags], check=True, capture_output=True)
    clusters = []
    for line in (out / "clusters.jsonl").read_text().splitlines():
        c = json.loads(line)
        clusters += [(m["id"], c["representative"], closeness(m)) for m in c["members"]]
    kept = {json.loads(line)["id"] for line in (out / "kept.jsonl").read_text().splitlines()}
    return clusters, kept


def spark_result(result, id_col="id"):
    clusters = [(r["id"], r["cluster_id"], closeness(r.asDict())) for r in result.clusters.collect()]
    kept = {r[0] for r in result.kept.select(id_col).collect()}
    return clusters, kept


@contextlib.contextmanager
def broadcast_limits(**limits):
    """Sets neardup.spark's broadcast limits (keys=, bitmap_bytes=) for a block."""
    import neardup.spark.job as job

    names = {"keys": "BROADCAST_DROPPED", "bitmap_bytes": "BROADCAST_BITMAP_BYTES"}
    before = {n: getattr(job, names[n]) for n in limits}
    for n, v in limits.items():
        setattr(job, names[n], v)
    try:
        yield
    finally:
        for n, v in before.items():
            setattr(job, names[n], v)


def groups(result):
    """The clusters as sets of ids, whatever their representatives."""
    by = {}
    for r in result.clusters.collect():
        by.setdefault(r["cluster_id"], set()).add(r["id"])
    return sorted(map(sorted, by.values()))


def read_ordered(spark, paths):
    """The records of `paths` as the Spark command line reads them
    (neardup's reader), ordered by `_nd_file`, `_nd_row`."""
    from neardup.spark.inputs import read_local

    df, _ = read_local(spark, [str(p) for p in paths])
    return df.drop("_nd_raw", "_nd_malformed")


def test_testdata_equals_neardup_dedup_for_every_keep(spark, tmp_path):
    from neardup.spark import dedup

    inputs = [TESTDATA / "docs_en.jsonl", TESTDATA / "docs_zh.jsonl"]
    df = read_ordered(spark, inputs)
    for keep in ("first", "longest", "shortest"):
        # Verified (the default), the sample's one SimHash pair (two
        # chapters of the Debian FAQ, 8 bits apart) is not a near duplicate.
        want = cli_dedup(inputs, tmp_path / keep, "--method", "simhash", "--keep", keep)
        result = dedup(df, order_cols=["_nd_file", "_nd_row"], method="simhash", keep=keep)
        assert spark_result(result) == want, keep
        assert not want[0] and result.summary["verify"] == "jaccard:0.3"
        want = cli_dedup(inputs, tmp_path / f"{keep}-unverified", "--method", "simhash", "--keep", keep, "--verify", "none")
        result = dedup(df, order_cols=["_nd_file", "_nd_row"], method="simhash", keep=keep, verify=False)
        assert spark_result(result) == want, keep
        assert want[0], "the sample has a cluster unverified"
        assert result.summary["documents"] == 64 and result.summary["kept"] == len(want[1])
        assert result.kept.columns == df.columns  # the input columns, nothing added


@pytest.mark.skipif(not SHARED.exists(), reason="../shared/data is not beside the repository")
def test_shared_data_both_languages_equal_neardup_dedup(spark, tmp_path):
    from neardup.spark import dedup

    inputs = [SHARED / "docs_en.jsonl", SHARED / "docs_zh.jsonl"]
    want = cli_dedup(inputs, tmp_path / "cli")
    result = dedup(read_ordered(spark, inputs), order_cols=["_nd_file", "_nd_row"])
    got = spark_result(result)
    assert len(want[0]) > 500, "the shared corpus has clusters"
    assert got[0] == want[0]
    assert got[1] == want[1]
    assert result.summary["documents"] == 31_456
    # A fixed radius too (one pass), with the DataFrame components path.
    want3 = cli_dedup(inputs, tmp_path / "cli3", "-k", "3")
    got3 = spark_result(dedup(read_ordered(spark, inputs), order_cols=["_nd_file", "_nd_row"], k=3, cc_threshold=0))
    assert got3 == want3


def test_command_line_equals_neardup_dedup(tmp_path):
    need("pyspark")
    inputs = [TESTDATA / "docs_en.jsonl", TESTDATA / "docs_zh.jsonl"]
    want = cli_dedup(inputs, tmp_path / "cli", "--method", "simhash", "--verify", "none")
    out = tmp_path / "spark"
    run = subprocess.run(
        [sys.executable, "-m", "neardup.spark", "dedup", "--input", *map(str, inputs), "--output", str(out),
         "--format", "jsonl", "--master", "local[2]", "--sort", "--method", "simhash", "--verify", "none"],
        capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "64 documents, 63 kept, 1 removed" in run.stderr
    rows = [json.loads(line) for p in sorted((out / "clusters").glob("part-*")) for line in p.read_text().splitlines()]
    kept = [json.loads(line)["id"] for p in sorted((out / "kept").glob("part-*")) for line in p.read_text().splitlines()]
    assert [(r["id"], r["cluster_id"], r["distance"]) for r in rows] == want[0]
    # --sort: kept/ in input order, line for line what neardup dedup writes.
    assert kept == [json.loads(line)["id"] for line in (tmp_path / "cli" / "kept.jsonl").read_text().splitlines()]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["kept"] == 63 and summary["input_files"] == 2 and "pairs" in summary["seconds"]["stages"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "no temporary output left"
    # An existing output is refused, not overwritten.
    again = subprocess.run(
        [sys.executable, "-m", "neardup.spark", "dedup", "--input", str(inputs[0]), "--output", str(out),
         "--master", "local[1]"],
        capture_output=True, text=True,
    )
    assert again.returncode == 1 and "exists" in again.stderr and "--overwrite" in again.stderr


def chains_graph(rng):
    """Edges of long chains (shuffled, with random signed longs as vertices),
    a star, a cycle and some isolated pairs; and the expected labels."""
    edges, components = [], []
    used = set()

    def vertex():
        while True:
            v = rng.randrange(-(2**63), 2**63)
            if v not in used:
                used.add(v)
                return v

    for length in (400, 250, 3):
        chain = [vertex() for _ in range(length)]
        edges += list(zip(chain, chain[1:]))
        components.append(chain)
    star = [vertex() for _ in range(50)]
    edges += [(star[0], v) for v in star[1:]]
    components.append(star)
    cycle = [vertex() for _ in range(30)]
    edges += list(zip(cycle, cycle[1:] + cycle[:1]))
    components.append(cycle)
    rng.shuffle(edges)
    edges = [(a, b) if rng.random() < 0.5 else (b, a) for a, b in edges]
    labels = {v: min(c) for c in components for v in c}
    return edges, labels


def test_both_component_paths_agree_on_long_chains(spark):
    from neardup.spark import _components

    edges, want = chains_graph(random.Random(7))
    df = spark.createDataFrame(edges, "a long, b long")
    driver = {r["vertex"]: r["label"] for r in _components.on_driver(spark, df).collect()}
    frames, rounds = _components.in_dataframes(df)
    dataframe = {r["vertex"]: r["label"] for r in frames.collect()}
    assert driver == want
    assert dataframe == want
    assert rounds >= 3, "long chains take several rounds"


def test_dedup_with_dataframe_components_equals_driver(spark):
    from neardup.spark import dedup

    df = read_ordered(spark, [TESTDATA / "docs_en.jsonl", TESTDATA / "docs_zh.jsonl"])
    a = dedup(df, order_cols=["_nd_file", "_nd_row"], k=8, verify=False)
    # b finds the kept records through bitmaps of the removed keys, d by a
    # shuffle join, a by a broadcast of the keys.
    with broadcast_limits(keys=0):
        b = dedup(df, order_cols=["_nd_file", "_nd_row"], k=8, cc_threshold=0, verify=False)
        b_result = spark_result(b)
    with broadcast_limits(keys=0, bitmap_bytes=0):
        d = dedup(df, order_cols=["_nd_file", "_nd_row"], k=8, verify=False)
        d_result = spark_result(d)
    assert a.summary["components"]["path"] == "driver" and b.summary["components"]["path"] == "dataframe"
    assert [x.summary["kept_by"] for x in (a, b, d)] == ["broadcast keys", "broadcast bitmaps", "shuffle join"]
    assert spark_result(a) == b_result == d_result
    assert a.summary["clusters"] >= 1
    # The layout changes the cost, never the result.
    c = dedup(df, order_cols=["_nd_file", "_nd_row"], k=8, blocks=[12], verify=False)
    assert c.summary["passes"][0]["tables"] == 495
    assert spark_result(c) == spark_result(a)
    # Ties in order_cols are broken by the DataFrame's order: nothing is
    # lost (every kept record is one of the input's, counted once).
    from pyspark.sql import functions as F

    tied = dedup(df.withColumn("same", F.lit(0)), order_cols=["same"], k=8, verify=False)
    assert tied.kept.count() == tied.summary["kept"] == a.summary["kept"]
    assert groups(tied) == groups(a)
    # unpersist() releases the cached frames; the results stay readable.
    assert a.cached and all(frame.is_cached for frame in a.cached)
    frames = list(a.cached)
    kept_before = a.kept.count()
    a.unpersist()
    assert not a.cached and not any(frame.is_cached for frame in frames)
    assert a.kept.count() == kept_before


def test_skewed_input_completes_and_equals_one_machine(spark):
    from neardup.spark import dedup

    rng = random.Random(3)
    words = [f"w{i}" for i in range(400)]
    base = " ".join(rng.choice(words) for _ in range(60))
    texts = [base] * 100_000
    for _ in range(300):  # near neighbours: a word or two changed
        t = base.split()
        for _ in range(rng.randrange(1, 3)):
            t[rng.randrange(len(t))] = rng.choice(words)
        texts.append(" ".join(t))
    texts += [" ".join(rng.choice(words) for _ in range(60)) for _ in range(200)]
    ids = [f"d{i}" for i in range(len(texts))]
    df = spark.createDataFrame(list(zip(ids, texts, range(len(texts)))), "id string, text string, n long")
    with broadcast_limits(keys=0):  # 10^5 removed keys in dense bitmaps
        result = dedup(df, k=3, order_cols=["n"], partitions=8)
        kept = result.kept.count()
    assert result.summary["kept_by"] == "broadcast bitmaps"
    got = {}
    for r in result.clusters.collect():
        got.setdefault(r["cluster_id"], set()).add(r["id"])
    want = neardup.dedup(texts, k=3, ids=ids)
    assert sorted(map(sorted, got.values())) == sorted(map(sorted, want))
    assert result.summary["kept"] == kept == len(texts) - sum(len(c) - 1 for c in want)
    assert max(len(c) for c in want) > 100_000


def test_bad_input_is_named(spark):
    from pyspark.sql import functions as F

    from neardup.spark import BadInputError, dedup

    rows = [("a", "The cat sat on the mat."), ("b", None), ("c", ""), (None, "An id-less record.")]
    df = spark.createDataFrame(rows, "id string, text string")
    with pytest.raises(BadInputError) as e:
        dedup(df)
    message = str(e.value)
    assert "3 of 4 records cannot be deduplicated" in message
    assert "record 'b': no text (null)" in message and "record 'c': document has no features" in message
    assert "a record without id: no id (null)" in message and "on_error='skip'" in message
    skipped = dedup(df, on_error="skip")
    assert skipped.summary["skipped"] == 3 and skipped.summary["documents"] == 1
    assert [r["id"] for r in skipped.kept.collect()] == ["a"]
    # Empty documents are kept with allow_empty (they share fingerprint 0).
    assert dedup(df.where("id != 'b'"), allow_empty=True).summary["skipped"] == 0

    with pytest.raises(BadInputError, match=r"no text column 'body'; the columns are: id, text"):
        dedup(df, text_col="body")
    with pytest.raises(BadInputError, match=r"no id column 'key'"):
        dedup(df, id_col="key")
    for bad_id in (F.lit(1.5), F.struct(F.lit(1).alias("x")), F.array(F.lit("x"))):
        with pytest.raises(BadInputError, match=r"ids must be strings or integers: cast it"):
            dedup(df.withColumn("id", bad_id))
    with pytest.raises(BadInputError, match=r"the text column 'text' is binary, not string"):
        dedup(df.withColumn("text", F.col("text").cast("binary")))
    # Integer ids are fine.
    assert dedup(df.where("id = 'a'").withColumn("id", F.lit(7))).summary["kept"] == 1
    with pytest.raises(ValueError, match="keep must be one of"):
        dedup(df, keep="middle")
    with pytest.raises(ValueError, match="k must be from 0 to 63"):
        dedup(df, k=64)


def test_malformed_jsonl_through_the_command_line(tmp_path):
    need("pyspark")
    src = tmp_path / "in.jsonl"
    src.write_bytes(
        b'{"id": "a", "text": "The cat sat on the mat."}\n{"id": "b", "text": \n{"id": "c", "text": "x y z"}\n'
        b'{"id": "d", "text": "caf\xff\xfe au lait"}\n'
    )
    base = [sys.executable, "-m", "neardup.spark", "dedup", "--input", str(src), "--master", "local[1]"]
    run = subprocess.run(base + ["--output", str(tmp_path / "o1")], capture_output=True, text=True)
    assert run.returncode == 1, run.stderr[-2000:]
    assert "2 of 4 records cannot be deduplicated" in run.stderr
    # Named as neardup dedup names them (the same reader reads them).
    assert "in.jsonl:2: malformed JSON (EOF while parsing" in run.stderr
    assert "in.jsonl:4: invalid UTF-8 at byte 24 of the line" in run.stderr
    assert not (tmp_path / "o1").exists()
    run = subprocess.run(base + ["--output", str(tmp_path / "o2"), "--on-error", "skip"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    summary = json.loads((tmp_path / "o2" / "summary.json").read_text())
    assert summary["skipped"] == 2 and summary["documents"] == 2 and summary["records_read"] == 4
    # Only empty files: 0 documents and empty outputs, as neardup dedup.
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    run = subprocess.run(
        [sys.executable, "-m", "neardup.spark", "dedup", "--input", str(empty), "--master", "local[1]",
         "--output", str(tmp_path / "o3")], capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "0 documents, 0 kept, 0 removed" in run.stderr
    assert json.loads((tmp_path / "o3" / "summary.json").read_text())["documents"] == 0
    # The reader's advice names the Spark job's own flags.
    nofield = tmp_path / "nofield.jsonl"
    nofield.write_text('{"id": "a", "body": "The cat sat on the mat."}\n')
    run = subprocess.run(base[:5] + [str(nofield), "--master", "local[1]", "--output", str(tmp_path / "o5")],
                         capture_output=True, text=True)
    assert run.returncode == 1 and 'no field "text"' in run.stderr, run.stderr[-2000:]
    assert "--text-col (Python: text_col=)" in run.stderr and "--text-field" not in run.stderr
    # A malformed --driver-memory is refused before Spark starts.
    run = subprocess.run(base + ["--output", str(tmp_path / "o4"), "--driver-memory", "lots"], capture_output=True, text=True)
    assert run.returncode == 2 and "--driver-memory takes a size such as 8g" in run.stderr


def test_plan_and_fingerprinter_pickle():
    plan = neardup._neardup.SparkPlan([(600, 8)], 4, 1_000_000)
    again = pickle.loads(pickle.dumps(plan))
    assert again.describe() == plan.describe()
    assert [p[0] for p in plan.describe()] == [4, 8]
    with pytest.raises(ValueError, match="does not grow"):
        neardup._neardup.SparkPlan([(600, 2)], 4, 10)
    fingerprinter = neardup.Fingerprinter()
    assert pickle.loads(pickle.dumps(fingerprinter)).pipeline_id == fingerprinter.pipeline_id
