//! What `plan` finds in a folder and how it reads each file; what
//! `read_all` makes of every format.

use std::io::Write;
use std::path::Path;

use neardup_io::{plan, read_all, Compression, InputFormat, Item, ReadOptions};

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

fn opts(paths: &[&Path]) -> ReadOptions {
    ReadOptions { paths: paths.iter().map(|p| p.to_path_buf()).collect(), ..ReadOptions::default() }
}

fn items(o: &ReadOptions) -> Vec<Item> {
    let mut out = Vec::new();
    read_all(o, |i| -> Result<(), neardup_io::Error> {
        out.push(i);
        Ok(())
    })
    .unwrap();
    out
}

#[test]
fn a_folder_is_planned_by_name_without_hidden_entries() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "b.jsonl", b"{\"text\": \"b\"}\n");
    write(d.path(), "a.txt", b"a");
    write(d.path(), "_SUCCESS", b"");
    write(d.path(), ".part-0.crc", b"\x00\x01");
    write(d.path(), "_temporary/0/x.txt", b"half written");
    write(d.path(), ".git/HEAD", b"ref");
    write(d.path(), "sub/c.json", b"{\"text\": \"c\"}\n");
    write(d.path(), "sub/d.json.gz", &gzip(b"{\"text\": \"d\"}\n"));
    write(d.path(), "sub/e.csv", b"id,text\n1,e\n");
    write(d.path(), "sub/f.data", &gzip(b"plain text, gzip without the name saying so"));
    let planned: Vec<_> = plan(&opts(&[d.path()])).unwrap().into_iter().map(Result::unwrap).collect();
    let names: Vec<String> = planned
        .iter()
        .map(|i| i.path.as_ref().unwrap().strip_prefix(d.path()).unwrap().display().to_string())
        .collect();
    assert_eq!(names, ["a.txt", "b.jsonl", "sub/c.json", "sub/d.json.gz", "sub/e.csv", "sub/f.data"]);
    let kinds: Vec<(InputFormat, Compression)> = planned.iter().map(|i| (i.format, i.compression)).collect();
    assert_eq!(
        kinds,
        [
            (InputFormat::Text, Compression::None),
            (InputFormat::Jsonl, Compression::None),
            (InputFormat::Jsonl, Compression::None),
            (InputFormat::Jsonl, Compression::Gzip),
            (InputFormat::Csv, Compression::None),
            (InputFormat::Text, Compression::Gzip),
        ]
    );
    // A hidden file named on its own is read.
    let crc = d.path().join("_SUCCESS");
    assert_eq!(plan(&opts(&[&crc])).unwrap().len(), 1);
}

#[test]
fn every_format_reads_with_ids_and_origins() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "a.txt", b"one text");
    write(d.path(), "b.jsonl", b"{\"id\": 7, \"text\": \"seven\"}\n\n{\"id\": \"x\", \"text\": \"ex\"}\n");
    write(d.path(), "c.csv", b"id,text\nr1,\"row, one\"\n");
    write(d.path(), "d.jsonl.zst", &zstd::encode_all(&b"{\"text\": \"zst\"}\n"[..], 3).unwrap());
    let got: Vec<(serde_json::Value, String, String)> = items(&opts(&[d.path()]))
        .into_iter()
        .map(|i| {
            let r = i.unwrap();
            let origin = Path::new(&r.origin).strip_prefix(d.path()).unwrap().display().to_string();
            (r.id, r.text, origin)
        })
        .collect();
    let a = d.path().join("a.txt").display().to_string();
    let zst = d.path().join("d.jsonl.zst:1").display().to_string();
    assert_eq!(
        got,
        [
            (a.clone().into(), "one text".to_string(), "a.txt".to_string()),
            (7.into(), "seven".into(), "b.jsonl:1".into()),
            ("x".into(), "ex".into(), "b.jsonl:3".into()),
            ("r1".into(), "row, one".into(), "c.csv:2".into()),
            (zst.into(), "zst".into(), "d.jsonl.zst:1".into()),
        ]
    );
}

#[test]
fn bad_records_name_their_place_and_a_cut_file_loses_its_rest() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "a.jsonl",
        b"{\"text\": \"ok\"}\nnot json\n{\"body\": \"no text\"}\n{\"text\": \"  \"}\n",
    );
    let body: String = (0..2000).map(|i| format!("{{\"text\": \"record {i}\"}}\n")).collect();
    let gz = gzip(body.as_bytes());
    write(d.path(), "b.jsonl.gz", &gz[..gz.len() / 2]);
    let got = items(&opts(&[d.path()]));
    let bad: Vec<_> = got.iter().filter_map(|i| i.as_ref().err()).collect();
    assert!(bad[0].origin.ends_with("a.jsonl:2") && bad[0].message.contains("malformed JSON"), "{bad:?}");
    assert!(bad[1].origin.ends_with("a.jsonl:3") && bad[1].message.contains("no field \"text\""), "{bad:?}");
    assert!(bad[2].origin.ends_with("a.jsonl:4") && bad[2].message.contains("empty document"), "{bad:?}");
    let cut = bad.last().unwrap();
    assert!(cut.rest_lost && cut.origin.contains("b.jsonl.gz:"), "{cut:?}");
    assert!(got.iter().filter(|i| i.is_ok()).count() > 1, "the records before the cut are read");
}

#[test]
fn a_missing_path_stops_before_reading() {
    let d = tempfile::tempdir().unwrap();
    let e = plan(&opts(&[&d.path().join("nope")])).unwrap_err();
    assert!(e.to_string().contains("no such file or directory"), "{e}");
}
