"""The Spark job's inputs, found and read as ``neardup dedup`` finds and
reads them.

Local paths (no scheme, or ``file:``) are planned by neardup's own reader
(:func:`neardup.plan_inputs`: the same files in the same order, the same
format and compression detection) and each file is read in a task by
:func:`neardup.read`, so a folder gives the Spark job exactly the records,
ids and order that ``neardup dedup`` and ``neardup.read`` get. Other
Hadoop paths (``hdfs://``, ``s3a://``) are listed by the same rules (in
name order, ``.``/``_`` names skipped inside directories) and read by
Spark's readers, by file name.
"""

from __future__ import annotations

import os
from typing import Any, Iterator, Optional, Sequence
from urllib.parse import urlparse

from .. import plan_inputs
from .job import BadInputError

#: Spark's reader for a file name's extension (other Hadoop paths).
FORMATS = {".jsonl": "json", ".ndjson": "json", ".json": "json", ".parquet": "parquet", ".csv": "csv"}
#: The columns of a DataFrame read by neardup's reader.
READ_SCHEMA = "_nd_file int, _nd_row long, id string, text string, _nd_raw string, _nd_malformed string"
#: Records per Arrow batch handed to Spark.
BATCH = 4096


def is_local(path: str) -> bool:
    """Whether ``path`` is on the local file system (no scheme, or ``file:``)."""
    scheme = urlparse(path).scheme
    return scheme in ("", "file") or len(scheme) == 1  # a Windows drive letter


def local_path(path: str) -> str:
    """``file:/x`` and ``file:///x`` as ``/x``; other paths as they are."""
    parsed = urlparse(path)
    return parsed.path if parsed.scheme == "file" else path


def read_local(
    spark: Any,
    inputs: Sequence[str],
    input_format: str = "auto",
    text_field: Optional[str] = None,
    id_field: Optional[str] = None,
    allow_empty: bool = False,
    max_doc_bytes: int = 64 << 20,
) -> tuple[Any, list[str]]:
    """The records of local inputs, read by neardup's reader in tasks (one
    file a task): columns ``id`` and ``text``, ``_nd_raw`` (the record as
    ``kept.jsonl`` writes it), ``_nd_malformed`` (why a record is bad:
    pass it to :func:`dedup` as ``error_col``) and ``_nd_file``/``_nd_row``
    for the order (``order_cols``); and the files, in order."""
    try:
        planned = plan_inputs([local_path(p) for p in inputs], input_format, text_field=text_field, id_field=id_field)
    except (OSError, ValueError) as e:
        raise BadInputError(spark_names(str(e))) from None
    files = [path for path, _, _ in planned]
    rows = [(i, path, fmt) for i, (path, fmt, _) in enumerate(planned)]
    options = dict(text_field=text_field, id_field=id_field, allow_empty=allow_empty, max_doc_bytes=max_doc_bytes)

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        for batch in batches:
            for rank, path, fmt in zip(*(batch.column(i).to_pylist() for i in range(3))):
                yield from read_file(rank, path, fmt, options)

    tasks = max(1, len(rows))
    df = spark.createDataFrame(spark.sparkContext.parallelize(rows, tasks), "rank int, path string, format string")
    return df.mapInArrow(run, READ_SCHEMA), files


_SPARK_NAMES = (
    ("--text-field", "--text-col"),
    ("text_field=", "text_col="),
    ("--id-field", "--id-col"),
    ("id_field=", "id_col="),
)
"""The reader's option names (the CLI's and neardup.read's) as the Spark job
names them."""


def spark_names(message: str) -> str:
    """A reader's message with the Spark job's names for its options
    (``--text-col`` where ``neardup dedup`` says ``--text-field``)."""
    for reader, job in _SPARK_NAMES:
        message = message.replace(reader, job)
    return message


def read_file(rank: int, path: str, fmt: str, options: dict[str, Any]) -> Iterator[Any]:
    """One file's records as Arrow batches of :data:`READ_SCHEMA`."""
    import pyarrow as pa

    from .. import read

    reader = read([path], input_format=fmt, keep_raw=True, on_error="keep", **options)
    row = 0
    while True:
        cols = reader.columns(BATCH)
        n = len(cols["text"])
        if n == 0:
            return
        ids = [i if i is None or isinstance(i, str) else str(i) for i in cols["id"]]
        errors = [None if e is None else f"{o}: {spark_names(e)}" for o, e in zip(cols["origin"], cols["error"])]
        yield pa.RecordBatch.from_arrays(
            [
                pa.array([rank] * n, pa.int32()),
                pa.array(range(row, row + n), pa.int64()),
                pa.array(ids, pa.string()),
                pa.array(cols["text"], pa.large_string()).cast(pa.string()),
                pa.array(cols["raw"], pa.string()),
                pa.array(errors, pa.string()),
            ],
            names=["_nd_file", "_nd_row", "id", "text", "_nd_raw", "_nd_malformed"],
        )
        row += n


def _fs(spark: Any, path: str) -> tuple[Any, Any]:
    jvm = getattr(spark, "_jvm")
    conf = getattr(spark, "_jsc").hadoopConfiguration()
    return jvm.org.apache.hadoop.fs.Path(path).getFileSystem(conf), jvm


def _hidden(name: str) -> bool:
    return name.startswith((".", "_"))


def list_files(spark: Any, inputs: Sequence[str]) -> list[str]:
    """Hadoop paths' files in the reader's order, as qualified paths: inputs
    in order, a directory's files by name, recursively, without ``.``/``_``
    names (a file named on its own is always read)."""
    files: list[str] = []
    for given in inputs:
        fs, jvm = _fs(spark, given)
        path = fs.makeQualified(jvm.org.apache.hadoop.fs.Path(given))
        if not fs.exists(path):
            raise BadInputError(f"{given}: no such file or directory")
        if fs.getFileStatus(path).isFile():
            files.append(path.toString())
            continue
        found = []
        it = fs.listFiles(path, True)
        while it.hasNext():
            p = it.next().getPath()
            rel = p.toString()[len(path.toString()) :]
            if not any(_hidden(part) for part in rel.split("/") if part):
                found.append(p.toString())
        files.extend(sorted(found, key=lambda f: f.split("/")))
    return files


def spark_format(name: str) -> Optional[str]:
    """Spark's reader for a file, by its name as neardup's reader decides
    (a compression extension is looked through: ``c4.json.gz`` is JSON
    lines)."""
    stem, ext = os.path.splitext(name.lower())
    if ext in (".gz", ".gzip", ".zst", ".zstd", ".bz2", ".xz"):
        ext = os.path.splitext(stem)[1]
    return FORMATS.get(ext)


def read_hadoop(spark: Any, inputs: Sequence[str], input_format: str) -> tuple[Any, list[str]]:
    """The records of Hadoop inputs, read by Spark's readers, with
    ``_nd_file`` (file rank) and ``_nd_row`` (increasing within a file)."""
    from pyspark.sql import functions as F

    files = list_files(spark, inputs)
    if not files:
        raise BadInputError(f"{', '.join(inputs)}: no input files")
    if input_format == "auto":
        kinds = {spark_format(f) for f in files}
        if None in kinds or len(kinds) != 1:
            raise BadInputError(
                "outside the local file system the Spark job reads one format of JSON lines, Parquet or "
                f"CSV, told by the file names ({', '.join(sorted({os.path.basename(f) for f in files})[:5])}): "
                "pass --input-format jsonl|parquet|csv, or copy the inputs to a local or mounted path"
            )
        fmt = kinds.pop()
    else:
        fmt = {"jsonl": "json"}.get(input_format, input_format)
    reader = spark.read
    if fmt == "json":
        reader = reader.option("mode", "PERMISSIVE").option("columnNameOfCorruptRecord", "_corrupt_record")
    elif fmt == "csv":
        reader = reader.option("header", "true").option("multiLine", "true").option("escape", '"')
    df = reader.format(fmt).load(files)
    # Row order within a file: a file's splits are read in offset order by
    # increasing partition ids, so monotonically_increasing_id follows it.
    df = df.withColumn("_nd_row", F.monotonically_increasing_id()).withColumn("_nd_path", F.col("_metadata.file_path"))
    ranks = spark.createDataFrame([(f, i) for i, f in enumerate(files)], "_nd_path string, _nd_file int")
    return df.join(F.broadcast(ranks), "_nd_path"), files
