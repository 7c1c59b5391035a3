//! The formats corpora ship in: every compressed JSONL and Parquet input
//! round-trips (records in = records kept + removed, every field kept, the
//! same answer as plain JSONL), and a truncated or corrupt file is a clear
//! error that names the file and where, with no output left behind.

use std::io::Write;
use std::path::Path;

use serde_json::Value;

use super::{neardup, testdata, tmp};

/// The sample corpus with its planted copies, as JSONL lines.
fn corpus_lines() -> Vec<String> {
    let mut lines = Vec::new();
    for f in ["docs_en.jsonl", "docs_zh.jsonl", "copies.jsonl"] {
        lines.extend(std::fs::read_to_string(testdata(f)).unwrap().lines().map(str::to_owned));
    }
    lines
}

fn compress(kind: &str, data: &[u8]) -> Vec<u8> {
    match kind {
        "gz" => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        "zst" => zstd::encode_all(data, 3).unwrap(),
        "bz2" => {
            let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        "xz" => {
            let mut e = liblzma::write::XzEncoder::new(Vec::new(), 6);
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        _ => unreachable!(),
    }
}

fn decompress(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    let mut out = String::new();
    let name = path.to_str().unwrap();
    let mut r: Box<dyn std::io::Read> = if name.ends_with(".gz") {
        Box::new(flate2::read::MultiGzDecoder::new(&bytes[..]))
    } else if name.ends_with(".zst") {
        Box::new(zstd::Decoder::new(&bytes[..]).unwrap())
    } else if name.ends_with(".bz2") {
        Box::new(bzip2::read::BzDecoder::new(&bytes[..]))
    } else if name.ends_with(".xz") {
        Box::new(liblzma::read::XzDecoder::new(&bytes[..]))
    } else {
        Box::new(&bytes[..])
    };
    r.read_to_string(&mut out).unwrap();
    out
}

/// How many records the clusters of a run removed.
fn removed(out: &Path) -> usize {
    let clusters = std::fs::read_to_string(out.join("clusters.jsonl")).unwrap();
    clusters
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["size"].as_u64().unwrap() as usize - 1)
        .sum()
}

#[test]
fn compressed_jsonl_round_trips_in_its_own_format() {
    let dir = tmp();
    let lines = corpus_lines();
    let body = lines.join("\n") + "\n";
    neardup_testkit::cli::write(dir.path(), "plain.jsonl", body.as_bytes());
    let plain = neardup(&["dedup", "plain.jsonl", "-o", "out-plain", "--show", "0"], dir.path(), None).ok();
    drop(plain);
    let want = std::fs::read_to_string(dir.path().join("out-plain/kept.jsonl")).unwrap();
    let want_removed = removed(&dir.path().join("out-plain"));
    assert!(want_removed > 0, "the sample has copies to remove");
    assert_eq!(want.lines().count() + want_removed, lines.len());
    for kind in ["gz", "zst", "bz2", "xz"] {
        let name = format!("corpus.jsonl.{kind}");
        neardup_testkit::cli::write(dir.path(), &name, &compress(kind, body.as_bytes()));
        let out = format!("out-{kind}");
        neardup(&["dedup", &name, "-o", &out, "--show", "0"], dir.path(), None).ok();
        let kept = dir.path().join(&out).join(format!("kept.jsonl.{kind}"));
        assert_eq!(decompress(&kept), want, "{kind}: the same records kept, every field as it was");
        assert_eq!(removed(&dir.path().join(&out)), want_removed, "{kind}");
        // Asked for plain JSONL, it writes that, and no other kept file.
        neardup(&["dedup", &name, "-o", &out, "--show", "0", "--output-format", "jsonl"], dir.path(), None)
            .ok();
        assert_eq!(std::fs::read_to_string(dir.path().join(&out).join("kept.jsonl")).unwrap(), want);
        assert!(!kept.exists(), "{kind}: the earlier run's kept file is gone");
    }
    // Dolma's .json.gz holds JSON lines; a compressed file read by its
    // magic bytes, whatever its name; several gzip members.
    let gz = compress("gz", body.as_bytes());
    neardup_testkit::cli::write(dir.path(), "dolma.json.gz", &gz);
    neardup(&["dedup", "dolma.json.gz", "-o", "out-dolma", "--show", "0"], dir.path(), None).ok();
    assert_eq!(decompress(&dir.path().join("out-dolma/kept.jsonl.gz")), want);
    let half = lines.len() / 2;
    let mut two = compress("gz", (lines[..half].join("\n") + "\n").as_bytes());
    two.extend(compress("gz", (lines[half..].join("\n") + "\n").as_bytes()));
    neardup_testkit::cli::write(dir.path(), "members.jsonl", &two);
    neardup(&["dedup", "members.jsonl", "-o", "out-members", "--show", "0"], dir.path(), None).ok();
    assert_eq!(decompress(&dir.path().join("out-members/kept.jsonl.gz")), want);
}

#[test]
fn truncated_and_corrupt_compressed_files_name_the_file_and_line() {
    let dir = tmp();
    let body = corpus_lines().join("\n") + "\n";
    let big: String = (0..40).map(|_| body.as_str()).collect();
    for kind in ["gz", "zst", "bz2", "xz"] {
        let packed = compress(kind, big.as_bytes());
        let name = format!("cut.jsonl.{kind}");
        neardup_testkit::cli::write(dir.path(), &name, &packed[..packed.len() * 2 / 3]);
        let out = format!("out-{kind}");
        let r = neardup(&["dedup", &name, "-o", &out], dir.path(), None).fails(1, &format!("{name}:"));
        let err = r.stderr();
        assert!(err.contains("ends in the middle") || err.contains("corrupt"), "{kind}: {err}");
        assert!(!dir.path().join(&out).join("summary.json").exists(), "{kind}: no finished run");
        assert!(!dir.path().join(&out).join(format!("kept.jsonl.{kind}")).exists(), "{kind}: no kept file");
        // Skipping bad records keeps what was read, but a file cut short is
        // not one skipped record: the rest of it is lost, said as such, and
        // the exit code is 1.
        let r = neardup(&["dedup", &name, "-o", &out, "--on-error", "skip", "--show", "0"], dir.path(), None)
            .fails(1, "the rest of this file could not be read");
        assert!(r.stderr().contains("1 input file cut short"), "{kind}: {}", r.stderr());
        assert!(!r.stderr().contains("skipped 1 of"), "{kind}: {}", r.stderr());
        let summary: Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join(&out).join("summary.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(summary["skipped"], Value::from(0), "{kind}: {summary}");
        let cut = summary["files_cut_short"].as_array().unwrap();
        assert!(cut.len() == 1 && cut[0].as_str().unwrap().starts_with(&format!("{name}:")), "{summary}");
        let mut bad = packed.clone();
        let mid = bad.len() / 2;
        bad[mid..mid + 200].iter_mut().for_each(|b| *b ^= 0x3c);
        let name = format!("bad.jsonl.{kind}");
        neardup_testkit::cli::write(dir.path(), &name, &bad);
        neardup(&["dedup", &name, "-o", &out], dir.path(), None).fails(1, &format!("{name}:"));
    }
}

#[cfg(feature = "parquet")]
mod parquet_files {
    use std::sync::Arc;

    use ::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    use ::parquet::arrow::ArrowWriter;
    use ::parquet::file::properties::WriterProperties;
    use arrow_array::{ArrayRef, Float64Array, Int64Array, RecordBatch, StringArray};
    use arrow_schema::{DataType, Field, Schema};

    use super::*;

    /// The sample corpus as a Parquet file: an integer id, the text, the
    /// title (sometimes null) and a float; row groups of 7 rows.
    fn write_parquet(path: &Path, lines: &[String]) -> Arc<Schema> {
        let recs: Vec<Value> = lines.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
        let schema = Arc::new(Schema::new(vec![
            Field::new("row", DataType::Int64, false),
            Field::new("text", DataType::Utf8, false),
            Field::new("title", DataType::Utf8, true),
            Field::new("score", DataType::Float64, false),
        ]));
        let props = WriterProperties::builder().set_max_row_group_row_count(Some(7)).build();
        let mut w =
            ArrowWriter::try_new(std::fs::File::create(path).unwrap(), schema.clone(), Some(props)).unwrap();
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from_iter_values(0..recs.len() as i64)),
            Arc::new(StringArray::from_iter_values(recs.iter().map(|r| r["text"].as_str().unwrap()))),
            Arc::new(StringArray::from_iter(recs.iter().enumerate().map(|(i, r)| {
                if i % 3 == 0 {
                    None
                } else {
                    r["title"].as_str()
                }
            }))),
            Arc::new(Float64Array::from_iter_values((0..recs.len()).map(|i| i as f64 / 4.0))),
        ];
        w.write(&RecordBatch::try_new(schema.clone(), cols).unwrap()).unwrap();
        w.close().unwrap();
        schema
    }

    fn read_parquet(path: &Path) -> (Arc<Schema>, Vec<RecordBatch>) {
        let b = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(path).unwrap()).unwrap();
        let schema = b.schema().clone();
        (schema, b.build().unwrap().map(|b| b.unwrap()).collect())
    }

    #[test]
    fn parquet_round_trips_in_its_schema_and_agrees_with_jsonl() {
        let dir = tmp();
        let lines = corpus_lines();
        let schema = write_parquet(&dir.path().join("corpus.parquet"), &lines);
        let jsonl: String = lines
            .iter()
            .enumerate()
            .map(|(i, l)| {
                let v: Value = serde_json::from_str(l).unwrap();
                format!("{}\n", serde_json::json!({"row": i, "text": v["text"]}))
            })
            .collect();
        neardup_testkit::cli::write(dir.path(), "corpus.jsonl", jsonl.as_bytes());
        let a = ["dedup", "corpus.parquet", "-o", "out-pq", "--id-field", "row", "--show", "0"];
        neardup(&a, dir.path(), None).ok();
        neardup(
            &["dedup", "corpus.jsonl", "-o", "out-jsonl", "--id-field", "row", "--show", "0"],
            dir.path(),
            None,
        )
        .ok();
        let (kept_schema, batches) = read_parquet(&dir.path().join("out-pq/kept.parquet"));
        assert_eq!(kept_schema.fields(), schema.fields(), "kept.parquet has the input's schema");
        let kept_rows: Vec<i64> = batches
            .iter()
            .flat_map(|b| {
                let a = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
                a.values().to_vec()
            })
            .collect();
        let jsonl_rows: Vec<i64> = std::fs::read_to_string(dir.path().join("out-jsonl/kept.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["row"].as_i64().unwrap())
            .collect();
        assert_eq!(kept_rows, jsonl_rows, "Parquet and JSONL inputs keep the same records");
        assert_eq!(kept_rows.len() + removed(&dir.path().join("out-pq")), lines.len());
        // Every column of a kept row is as it was, nulls included.
        let (_, input) = read_parquet(&dir.path().join("corpus.parquet"));
        let all = arrow_select::concat::concat_batches(&schema, &input).unwrap();
        let kept = arrow_select::concat::concat_batches(&schema, &batches).unwrap();
        let idx = arrow_array::UInt64Array::from_iter_values(kept_rows.iter().map(|&r| r as u64));
        let want = arrow_select::take::take_record_batch(&all, &idx).unwrap();
        assert_eq!(kept, want);
        // Asked for JSONL, every column is a field.
        let a =
            ["dedup", "corpus.parquet", "-o", "out-pq", "--id-field", "row", "--output-format", "jsonl.zst"];
        neardup(&a, dir.path(), None).ok();
        let first: Value = serde_json::from_str(
            decompress(&dir.path().join("out-pq/kept.jsonl.zst")).lines().next().unwrap(),
        )
        .unwrap();
        assert_eq!(first["row"], 0);
        assert_eq!(first["score"], 0.0);
        assert!(first["text"].is_string());
        assert!(!dir.path().join("out-pq/kept.parquet").exists());
    }

    #[test]
    fn broken_parquet_files_are_clear_errors() {
        let dir = tmp();
        let lines = corpus_lines();
        let path = dir.path().join("good.parquet");
        write_parquet(&path, &lines);
        let bytes = std::fs::read(&path).unwrap();
        neardup_testkit::cli::write(dir.path(), "cut.parquet", &bytes[..bytes.len() - 100]);
        let r = neardup(&["dedup", "cut.parquet", "-o", "out"], dir.path(), None).fails(1, "cut.parquet");
        assert!(r.stderr().contains("Parquet"), "{}", r.stderr());
        assert!(!dir.path().join("out/summary.json").exists());
        // A corrupt page in the middle: the rows before it are named.
        let mut bad = bytes.clone();
        let mid = bad.len() / 3;
        bad[mid..mid + 300].iter_mut().for_each(|b| *b ^= 0x55);
        neardup_testkit::cli::write(dir.path(), "bad.parquet", &bad);
        let r = neardup(&["dedup", "bad.parquet", "-o", "out", "--id-field", "row"], dir.path(), None);
        assert_eq!(r.code(), 1, "{}", r.stderr());
        assert!(r.stderr().contains("bad.parquet"), "{}", r.stderr());
        // The wrong column.
        neardup(&["dedup", "good.parquet", "-o", "out", "--text-field", "body"], dir.path(), None)
            .fails(1, "no column \"body\" (columns: row, text, title, score)");
        neardup(&["dedup", "good.parquet", "-o", "out", "--text-field", "score"], dir.path(), None)
            .fails(1, "not a string column");
        // Parquet output needs Parquet input.
        neardup(&["dedup", "good.parquet", "-o", "out"], dir.path(), None).ok();
        neardup_testkit::cli::write(dir.path(), "x.jsonl", b"{\"text\": \"a b c d\"}\n");
        neardup(&["dedup", "x.jsonl", "-o", "out2", "--output-format", "parquet"], dir.path(), None)
            .fails(2, "no input is Parquet");
    }
}
