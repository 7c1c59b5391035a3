"""One reader for every front end: a folder with every format, compression
and odd name gives `neardup dedup` (the CLI), `neardup.read` and the Spark
job the same records in the same order, and the same clusters.

The CLI comes from NEARDUP_BIN (else target/release/neardup); the Spark
half needs pyspark and Java (required where NEARDUP_REQUIRE_PEERS is set)."""

import bz2
import gzip
import json
import lzma
import subprocess
import sys

import pytest
from conftest import need
from test_spark import TESTDATA, neardup_bin, spark  # noqa: F401

import neardup


def documents():
    """Six English documents of the test data, long enough to sign."""
    docs = [json.loads(line)["text"] for line in (TESTDATA / "docs_en.jsonl").read_text().splitlines()]
    return [d for d in docs if len(d.split()) > 80][:6]


def variant(text):
    """A near duplicate: one word changed."""
    words = text.split()
    words[len(words) // 2] = "changed"
    return " ".join(words)


def jsonl(*records):
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


@pytest.fixture()
def corpus(tmp_path):
    """Every format the reader knows, near duplicates across formats, and
    names the reader must skip."""
    pa = need("pyarrow")
    import pyarrow.parquet as pq

    d = documents()
    root = tmp_path / "corpus"
    (root / "sub dir").mkdir(parents=True)
    (root / "_temporary" / "0").mkdir(parents=True)
    (root / "a.txt").write_text(d[0])
    (root / "b.jsonl").write_bytes(jsonl({"id": 1, "text": variant(d[0])}, {"id": "two", "text": d[1], "lang": "en"})
                                   + b"\n")
    (root / "c.csv").write_text('id,text\nc1,"' + variant(d[1]).replace('"', '""') + '"\nc2,"' + d[2] + '"\n')
    (root / "d.json.gz").write_bytes(gzip.compress(jsonl({"id": "d1", "text": d[3]})))
    (root / "e.json").write_bytes(jsonl({"id": "e1", "text": variant(d[3])}))
    pq.write_table(pa.table({"id": [10, 11], "text": [d[4], variant(d[2])]}), root / "f.parquet")
    (root / "sub dir" / "名字.txt.bz2").write_bytes(bz2.compress(variant(d[4]).encode()))
    (root / "sub dir" / "g.jsonl.xz").write_bytes(lzma.compress(jsonl({"id": "g1", "text": d[5]})))
    # What a Spark or Hadoop output folder holds beside its parts, and
    # hidden files: all skipped (each would be a bad record if read).
    (root / "_SUCCESS").write_bytes(b"")
    (root / ".part-0.crc").write_bytes(b"\x00\x01crc")
    (root / ".hidden.jsonl").write_text("not json\n")
    (root / "_temporary" / "0" / "part.jsonl").write_text("half written\n")
    return root


def cli(*args):
    run = subprocess.run([str(neardup_bin()), *map(str, args)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    return run


def cli_records(root):
    """(id, fingerprint) of every record, as `neardup fingerprint` reads them."""
    rows = [json.loads(line) for line in cli("fingerprint", root).stdout.splitlines()]
    return [(str(r["id"]), r["fingerprint"]) for r in rows]


def fingerprints(ids, texts):
    fingerprinter = neardup.Fingerprinter()
    return [(str(i), f"{fp:016x}") for i, fp in zip(ids, fingerprinter.fingerprint_batch(texts))]


def test_python_reads_what_the_cli_reads(corpus):
    records = list(neardup.read([corpus]))
    assert len(records) == 11
    ids = [r["id"] for r in records]
    assert ids[:3] == [str(corpus / "a.txt"), 1, "two"], "a number stays a number, a text's id is its path"
    assert [r["origin"].replace(str(corpus), "") for r in records][1:4] == ["/b.jsonl:1", "/b.jsonl:2", "/c.csv:2"]
    assert fingerprints(ids, [r["text"] for r in records]) == cli_records(corpus)
    # The plan says how each file is read.
    plan = [(p.replace(str(corpus), ""), f, c) for p, f, c in neardup.plan_inputs([corpus])]
    assert plan == [
        ("/a.txt", "text", "plain"),
        ("/b.jsonl", "jsonl", "plain"),
        ("/c.csv", "csv", "plain"),
        ("/d.json.gz", "jsonl", "gzip"),
        ("/e.json", "jsonl", "plain"),
        ("/f.parquet", "parquet", "plain"),
        ("/sub dir/g.jsonl.xz", "jsonl", "xz"),
        ("/sub dir/名字.txt.bz2", "text", "bzip2"),
    ]
    # Columns, a batch at a time, the same records.
    reader = neardup.read([corpus], keep_raw=True)
    first = reader.columns(5)
    rest = reader.columns(100)
    assert first["id"] + rest["id"] == ids and reader.columns(5)["id"] == []
    assert json.loads(first["raw"][2]) == {"id": "two", "text": documents()[1], "lang": "en"}
    assert json.loads(first["raw"][0]) == {"id": str(corpus / "a.txt"), "text": documents()[0]}


def test_bad_records_fail_skip_or_come_out(tmp_path):
    src = tmp_path / "in.jsonl"
    src.write_bytes(b'{"id": "a", "text": "The cat sat on the mat."}\nnot json\n{"id": "c", "text": "  "}\n')
    with pytest.raises(ValueError, match=r"in.jsonl:2: malformed JSON .*on_error=\"skip\""):
        list(neardup.read([src]))
    reader = neardup.read([src], on_error="skip")
    assert [r["id"] for r in reader] == ["a"]
    assert [(o.replace(str(tmp_path), ""), rest) for o, _, rest in reader.skipped] == [
        ("/in.jsonl:2", False), ("/in.jsonl:3", False)
    ]
    kept = list(neardup.read([src], on_error="keep"))
    assert [r.get("error", "")[:14] for r in kept] == ["", "malformed JSON", "empty document"]
    # A gzip file cut in half loses its rest, and says so.
    body = jsonl(*({"text": f"record number {i}"} for i in range(3000)))
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(gzip.compress(body)[: len(gzip.compress(body)) // 2])
    reader = neardup.read([cut], on_error="skip")
    assert 0 < len(list(reader)) < 3000 and reader.files_cut_short and reader.skipped[-1][2]
    with pytest.raises(FileNotFoundError, match="no such file or directory"):
        neardup.read([tmp_path / "absent"])
    with pytest.raises(ValueError, match="input format"):
        neardup.read([src], input_format="xml")


def test_spark_reads_and_clusters_what_the_cli_does(corpus, spark, tmp_path):  # noqa: F811
    from neardup.spark.inputs import read_local

    df, files = read_local(spark, [str(corpus)])
    rows = df.orderBy("_nd_file", "_nd_row").collect()
    assert len(files) == 8 and not any(r["_nd_malformed"] for r in rows)
    assert fingerprints([r["id"] for r in rows], [r["text"] for r in rows]) == cli_records(corpus)

    # The same clusters and kept records from all three.
    cli("dedup", corpus, "-o", tmp_path / "cli")
    clusters = [json.loads(line) for line in (tmp_path / "cli" / "clusters.jsonl").read_text().splitlines()]
    want = [(str(m["id"]), str(c["representative"])) for c in clusters for m in c["members"]]
    assert len(clusters) == 5, clusters
    records = list(neardup.read([corpus]))
    py = neardup.dedup([r["text"] for r in records], ids=[str(r["id"]) for r in records])
    position = {str(r["id"]): n for n, r in enumerate(records)}
    assert [(m, c[0]) for c in py for m in sorted(c, key=position.get)] == want
    out = tmp_path / "spark"
    run = subprocess.run(
        [sys.executable, "-m", "neardup.spark", "dedup", "--input", str(corpus), "--output", str(out),
         "--format", "jsonl", "--master", "local[2]", "--sort"],
        capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    got = [json.loads(line) for p in sorted((out / "clusters").glob("part-*")) for line in p.read_text().splitlines()]
    assert [(r["id"], r["cluster_id"]) for r in got] == want
    kept = [line for p in sorted((out / "kept").glob("part-*")) for line in p.read_text().splitlines()]
    assert kept == (tmp_path / "cli" / "kept.jsonl").read_text().splitlines(), "kept lines as neardup dedup writes"
    # The rule as data: the core's, in both summaries.
    cli_summary = json.loads((tmp_path / "cli" / "summary.json").read_text())
    spark_summary = json.loads((out / "summary.json").read_text())
    rule = json.loads(neardup.MinHasher().rule_json())
    assert rule["method"] == "minhash" and set(rule) <= set(cli_summary)
    assert {k: spark_summary[k] for k in rule} == {k: cli_summary[k] for k in rule} == rule


def test_python_reads_papers_as_the_cli_does(tmp_path):
    """A folder of papers (.docx, .html, .md): one document per file, the
    same texts and fingerprints from `neardup.read` as from the CLI."""
    import io
    import zipfile

    d = documents()
    root = tmp_path / "papers"
    root.mkdir()
    body = "".join(f"<w:p><w:r><w:t>{p}</w:t></w:r></w:p>" for p in d[0].replace("&", "&amp;").replace("<", "&lt;").split("\n\n"))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("word/document.xml", '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
                   f"<w:body>{body}</w:body></w:document>")
    (root / "a.docx").write_bytes(out.getvalue())
    (root / "b.html").write_text("<html><head><title>t</title><script>x()</script></head><body><p>"
                                 + d[1].replace("&", "&amp;").replace("<", "&lt;") + "</p></body></html>")
    (root / "c.md").write_text("# A title\n\n" + d[2])
    records = list(neardup.read([root]))
    assert [r["origin"].replace(str(root), "") for r in records] == ["/a.docx", "/b.html", "/c.md"]
    assert records[2]["text"].startswith("A title\n\n")
    assert " ".join(records[1]["text"].split()) == " ".join(d[1].split())
    plan = [(p.replace(str(root), ""), f) for p, f, _ in neardup.plan_inputs([root])]
    assert plan == [("/a.docx", "docx"), ("/b.html", "html"), ("/c.md", "markdown")]
    assert fingerprints([r["id"] for r in records], [r["text"] for r in records]) == cli_records(root)
    # A renamed program is a bad record that says what it is.
    (root / "d.pdf").write_bytes(b"MZ\x90\x00\x03\x00\x00\x00 a program")
    with pytest.raises(ValueError, match=r"d.pdf: not a PDF: it is a program"):
        list(neardup.read([root]))
